// DeviceApi on a real GPU: device memory from the stream-ordered pool (cudaMallocAsync; no
// managed memory), one non-blocking stream per device object, the generic kernels of
// kernels/kernels.cu, and cuBLAS for GEMM.
#ifndef RUNTIME_CUDA_CUDA_DEVICE_H_
#define RUNTIME_CUDA_CUDA_DEVICE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/cuda/device_api.h"

namespace runtime {
namespace cuda {

// How many GPUs this process can use; 0 (not an error) when there is no driver or no device.
// `reason`, when given, receives why there are none ("CUDA driver version is insufficient...").
int CudaDeviceCount(std::string* reason = nullptr);

// A device object on GPU `ordinal` with its own stream. Several objects may share one GPU
// (logical devices); each has its own stream and cuBLAS handle.
absl::StatusOr<std::unique_ptr<DeviceApi>> MakeCudaDevice(int ordinal);

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_CUDA_DEVICE_H_

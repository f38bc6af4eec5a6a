// A DeviceApi on host memory that runs the kernels' host twins synchronously: the CUDA
// executor's logic, checkable without a GPU.
#ifndef RUNTIME_CUDA_HOST_DEVICE_H_
#define RUNTIME_CUDA_HOST_DEVICE_H_

#include <memory>

#include "runtime/cuda/device_api.h"

namespace runtime {
namespace cuda {

std::unique_ptr<DeviceApi> MakeHostDevice();

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_HOST_DEVICE_H_

// One device as the CUDA executor sees it: memory, copies, the generic kernels and GEMM, in
// stream order.
//
// Two implementations: CudaDevice (cuda_device.h: cudaMalloc, one stream, the kernels of
// kernels/kernels.cu, cuBLAS) and HostDevice (host_device.h: host memory and the kernels' host
// twins), which lets the executor run, and be tested, on a machine without a GPU. Operations are
// ordered as issued; CopyToHost and Synchronize wait for everything issued before.
#ifndef RUNTIME_CUDA_DEVICE_API_H_
#define RUNTIME_CUDA_DEVICE_API_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cuda/kernels/kernel_params.h"

namespace runtime {
namespace cuda {

class DeviceApi {
 public:
  virtual ~DeviceApi() = default;

  // "cuda:0 (NVIDIA H200)", "host".
  virtual std::string name() const = 0;
  // The stream collectives are issued on (a cudaStream_t; null for the host device).
  virtual void* stream() = 0;

  // Device memory of `bytes` (> 0), 256-byte aligned. Fails when the device is out of memory.
  virtual absl::StatusOr<void*> Allocate(int64_t bytes) = 0;
  virtual void Free(void* ptr) = 0;

  virtual absl::Status CopyToDevice(void* dst, const void* host_src, int64_t bytes) = 0;
  virtual absl::Status CopyToHost(void* host_dst, const void* src, int64_t bytes) = 0;
  virtual absl::Status CopyOnDevice(void* dst, const void* src, int64_t bytes) = 0;
  // Sets `bytes` bytes of device memory at `dst` to zero.
  virtual absl::Status SetZero(void* dst, int64_t bytes) = 0;
  virtual absl::Status Synchronize() = 0;
  // True when all issued work is done (the collective watchdog polls this).
  virtual absl::StatusOr<bool> IsIdle() = 0;

  virtual absl::Status Elementwise(const spmd_cuda::ElementwiseParams& p) = 0;
  virtual absl::Status StridedCopy(const spmd_cuda::StridedCopyParams& p) = 0;
  virtual absl::Status Reduce(const spmd_cuda::ReduceParams& p) = 0;
  virtual absl::Status Iota(const spmd_cuda::IotaParams& p) = 0;
  virtual absl::Status Gather(const spmd_cuda::GatherParams& p) = 0;
  virtual absl::Status Scatter(const spmd_cuda::ScatterParams& p) = 0;
  virtual absl::Status Im2Col(const spmd_cuda::Im2ColParams& p) = 0;
  virtual absl::Status ReduceWindow(const spmd_cuda::ReduceWindowParams& p) = 0;
  virtual absl::Status SelectWindow(const spmd_cuda::SelectWindowParams& p) = 0;
  virtual absl::Status TopK(const spmd_cuda::TopKParams& p) = 0;
  virtual absl::Status Gemm(const spmd_cuda::GemmParams& p) = 0;
};

// Device memory owned by one holder; freed through its device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceApi* device, void* data, int64_t bytes)
      : device_(device), data_(data), bytes_(bytes) {}
  ~DeviceBuffer() { Reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      Reset();
      device_ = o.device_;
      data_ = o.data_;
      bytes_ = o.bytes_;
      o.data_ = nullptr;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // `bytes` of memory on `device` (at least one byte is allocated).
  static absl::StatusOr<DeviceBuffer> Allocate(DeviceApi& device, int64_t bytes) {
    absl::StatusOr<void*> data = device.Allocate(bytes > 0 ? bytes : 1);
    if (!data.ok()) return data.status();
    return DeviceBuffer(&device, *data, bytes);
  }

  void* data() const { return data_; }
  int64_t bytes() const { return bytes_; }
  void Reset() {
    if (data_ != nullptr) device_->Free(data_);
    data_ = nullptr;
  }

 private:
  DeviceApi* device_ = nullptr;
  void* data_ = nullptr;
  int64_t bytes_ = 0;
};

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_DEVICE_API_H_

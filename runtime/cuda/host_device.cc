// HostDevice: aligned_alloc'd memory, memcpy, and the host twins of the kernels.
#include "runtime/cuda/host_device.h"

#include <cstdlib>
#include <cstring>

#include "hlo/strings.h"
#include "runtime/cuda/kernels/launch.h"

namespace runtime {
namespace cuda {
namespace {

class HostDevice : public DeviceApi {
 public:
  std::string name() const override { return "host"; }
  void* stream() override { return nullptr; }
  absl::StatusOr<void*> Allocate(int64_t bytes) override {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (p == nullptr) return absl::ResourceExhaustedError(hlo::StrCat("out of memory: ", bytes));
    std::memset(p, 0xcd, bytes);  // Poison: reading unwritten memory shows up in tests.
    return p;
  }
  void Free(void* ptr) override { std::free(ptr); }
  absl::Status CopyToDevice(void* dst, const void* src, int64_t bytes) override {
    return Copy(dst, src, bytes);
  }
  absl::Status CopyToHost(void* dst, const void* src, int64_t bytes) override {
    return Copy(dst, src, bytes);
  }
  absl::Status CopyOnDevice(void* dst, const void* src, int64_t bytes) override {
    return Copy(dst, src, bytes);
  }
  absl::Status Synchronize() override { return absl::OkStatus(); }
  absl::StatusOr<bool> IsIdle() override { return true; }
  absl::Status Elementwise(const spmd_cuda::ElementwiseParams& p) override {
    return Check(spmd_cuda::HostElementwise(p));
  }
  absl::Status StridedCopy(const spmd_cuda::StridedCopyParams& p) override {
    return Check(spmd_cuda::HostStridedCopy(p));
  }
  absl::Status Reduce(const spmd_cuda::ReduceParams& p) override {
    return Check(spmd_cuda::HostReduce(p));
  }
  absl::Status Iota(const spmd_cuda::IotaParams& p) override {
    return Check(spmd_cuda::HostIota(p));
  }
  absl::Status Gather(const spmd_cuda::GatherParams& p) override {
    return Check(spmd_cuda::HostGather(p));
  }
  absl::Status Scatter(const spmd_cuda::ScatterParams& p) override {
    return Check(spmd_cuda::HostScatter(p));
  }
  absl::Status Gemm(const spmd_cuda::GemmParams& p) override {
    return Check(spmd_cuda::HostGemm(p));
  }

 private:
  static absl::Status Copy(void* dst, const void* src, int64_t bytes) {
    if (bytes > 0 && dst != src) std::memmove(dst, src, bytes);
    return absl::OkStatus();
  }
  static absl::Status Check(int code) {
    return code == 0 ? absl::OkStatus() : absl::InternalError("host kernel failed");
  }
};

}  // namespace

std::unique_ptr<DeviceApi> MakeHostDevice() { return std::make_unique<HostDevice>(); }

}  // namespace cuda
}  // namespace runtime

// HostDevice: aligned_alloc'd memory, memcpy, and the host twins of the kernels.
#include "runtime/cuda/host_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cuda/kernels/launch.h"

namespace runtime {
namespace cuda {
namespace {

// Every live allocation of every host device (peers read each other's memory in collectives),
// so that a pointer handed to a kernel or copy can be checked to be device memory: a host
// pointer passed as a device pointer works on the host but faults on a GPU.
class Allocations {
 public:
  static Allocations& Get() {
    static Allocations* all = new Allocations;
    return *all;
  }
  void Add(const void* p, int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    live_[static_cast<const char*>(p)] = bytes;
  }
  void Remove(const void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.erase(static_cast<const char*>(p));
  }
  // OK when null (unused) or inside a live allocation.
  absl::Status Check(const void* p, const char* what) {
    if (p == nullptr) return absl::OkStatus();
    const char* c = static_cast<const char*>(p);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.upper_bound(c);
    if (it != live_.begin() &&
        c < std::prev(it)->first + std::max<int64_t>(std::prev(it)->second, 1)) {
      return absl::OkStatus();
    }
    return absl::InternalError(
        hlo::StrCat("host device: ", what,
                    " is not device memory (a host pointer passed as a device "
                    "pointer, or memory already freed): a GPU would fault here"));
  }

 private:
  std::mutex mu_;
  std::map<const char*, int64_t> live_;
};

absl::Status CheckAll(std::initializer_list<std::pair<const void*, const char*>> pointers) {
  for (const auto& [p, what] : pointers) RETURN_IF_ERROR(Allocations::Get().Check(p, what));
  return absl::OkStatus();
}

class HostDevice : public DeviceApi {
 public:
  std::string name() const override { return "host"; }
  void* stream() override { return nullptr; }
  absl::StatusOr<void*> Allocate(int64_t bytes) override {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (p == nullptr) return absl::ResourceExhaustedError(hlo::StrCat("out of memory: ", bytes));
    std::memset(p, 0xcd, bytes);  // Poison: reading unwritten memory shows up in tests.
    Allocations::Get().Add(p, bytes);
    return p;
  }
  void Free(void* ptr) override {
    Allocations::Get().Remove(ptr);
    std::free(ptr);
  }
  absl::Status CopyToDevice(void* dst, const void* src, int64_t bytes) override {
    if (bytes == 0) return absl::OkStatus();
    RETURN_IF_ERROR(CheckAll({{dst, "a host-to-device copy's destination"}}));
    return Copy(dst, src, bytes);
  }
  absl::Status CopyToHost(void* dst, const void* src, int64_t bytes) override {
    if (bytes == 0) return absl::OkStatus();
    RETURN_IF_ERROR(CheckAll({{src, "a device-to-host copy's source"}}));
    return Copy(dst, src, bytes);
  }
  absl::Status CopyOnDevice(void* dst, const void* src, int64_t bytes) override {
    if (bytes == 0 || dst == src) return absl::OkStatus();
    RETURN_IF_ERROR(
        CheckAll({{dst, "a device copy's destination"}, {src, "a device copy's source"}}));
    return Copy(dst, src, bytes);
  }
  absl::Status SetZero(void* dst, int64_t bytes) override {
    if (bytes == 0) return absl::OkStatus();
    RETURN_IF_ERROR(CheckAll({{dst, "a zero fill's destination"}}));
    std::memset(dst, 0, bytes);
    return absl::OkStatus();
  }
  absl::Status Synchronize() override { return absl::OkStatus(); }
  absl::StatusOr<bool> IsIdle() override { return true; }
  absl::Status Elementwise(const spmd_cuda::ElementwiseParams& p) override {
    RETURN_IF_ERROR(CheckAll({{p.in[0], "elementwise operand 0"},
                              {p.in[1], "elementwise operand 1"},
                              {p.in[2], "elementwise operand 2"},
                              {p.out, "elementwise output"}}));
    return Check(spmd_cuda::HostElementwise(p));
  }
  absl::Status StridedCopy(const spmd_cuda::StridedCopyParams& p) override {
    RETURN_IF_ERROR(
        CheckAll({{p.src, "strided copy's source"}, {p.dst, "strided copy's destination"}}));
    return Check(spmd_cuda::HostStridedCopy(p));
  }
  absl::Status Reduce(const spmd_cuda::ReduceParams& p) override {
    RETURN_IF_ERROR(CheckAll(
        {{p.in, "reduce's input"}, {p.init, "reduce's init value"}, {p.out, "reduce's output"}}));
    return Check(spmd_cuda::HostReduce(p));
  }
  absl::Status Iota(const spmd_cuda::IotaParams& p) override {
    RETURN_IF_ERROR(CheckAll({{p.out, "iota's output"}}));
    return Check(spmd_cuda::HostIota(p));
  }
  absl::Status Gather(const spmd_cuda::GatherParams& p) override {
    RETURN_IF_ERROR(CheckAll({{p.operand, "gather's operand"},
                              {p.access.indices, "gather's indices"},
                              {p.out, "gather's output"}}));
    return Check(spmd_cuda::HostGather(p));
  }
  absl::Status Scatter(const spmd_cuda::ScatterParams& p) override {
    RETURN_IF_ERROR(CheckAll({{p.updates, "scatter's updates"},
                              {p.access.indices, "scatter's indices"},
                              {p.out, "scatter's output"}}));
    return Check(spmd_cuda::HostScatter(p));
  }
  absl::Status Im2Col(const spmd_cuda::Im2ColParams& p) override {
    RETURN_IF_ERROR(CheckAll({{p.lhs, "im2col's input"},
                              {p.spatial.coords, "im2col's coordinates"},
                              {p.out, "im2col's output"}}));
    return Check(spmd_cuda::HostIm2Col(p));
  }
  absl::Status ReduceWindow(const spmd_cuda::ReduceWindowParams& p) override {
    RETURN_IF_ERROR(CheckAll({{p.in, "reduce-window's input"},
                              {p.init, "reduce-window's init"},
                              {p.geometry.coords, "reduce-window's coordinates"},
                              {p.out, "reduce-window's output"}}));
    return Check(spmd_cuda::HostReduceWindow(p));
  }
  absl::Status SelectWindow(const spmd_cuda::SelectWindowParams& p) override {
    RETURN_IF_ERROR(CheckAll({{p.in, "select's input"},
                              {p.geometry.coords, "select's coordinates"},
                              {p.selected, "select's output"}}));
    return Check(spmd_cuda::HostSelectWindow(p));
  }
  absl::Status TopK(const spmd_cuda::TopKParams& p) override {
    RETURN_IF_ERROR(CheckAll(
        {{p.in, "topk's input"}, {p.values, "topk's values"}, {p.indices, "topk's indices"}}));
    return Check(spmd_cuda::HostTopK(p));
  }
  absl::Status Gemm(const spmd_cuda::GemmParams& p) override {
    RETURN_IF_ERROR(CheckAll({{p.a, "GEMM's A"}, {p.b, "GEMM's B"}, {p.c, "GEMM's C"}}));
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

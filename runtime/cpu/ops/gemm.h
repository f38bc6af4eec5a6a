// Dense f32/f64 GEMM for the CPU executor: the fastest kernel build this CPU runs, chosen at run
// time, and idle cores borrowed for large products.
//
// The kernels are Eigen's GEMM compiled three times (gemm_kernel_table.h): generic, AVX2 + FMA
// and AVX-512. HostGemmKernels() picks the widest one that __builtin_cpu_supports reports, so
// the binary runs (generic) on any x86-64 CPU and never executes an instruction the CPU lacks.
//
// Splitting: a large product is cut into column (or row) panels, and the panels run on the
// calling thread plus idle cores. The panels depend only on the shape and the machine's core
// count, never on how many cores are idle at the moment, so a result is bit-for-bit the same
// whether the panels ran on one thread or several. Idle means: not claimed by a
// ScopedDeviceThreads (the multi-device runner claims one core per simulated device).
#ifndef RUNTIME_CPU_OPS_GEMM_H_
#define RUNTIME_CPU_OPS_GEMM_H_

#include <cstdint>
#include <vector>

#include "runtime/cpu/ops/gemm_kernel_table.h"

namespace runtime {

// The fastest kernel build this CPU supports (decided once).
const GemmKernels& HostGemmKernels();

// Every kernel build this CPU supports, generic first (for tests and benchmarks).
std::vector<const GemmKernels*> SupportedGemmKernels();

// How a product is cut: `panels` pieces of `panel_size` columns (`split_columns`) or rows
// (the last piece may be smaller).
struct GemmSplit {
  int64_t panels = 1;
  int64_t panel_size = 0;
  bool split_columns = true;
};

// The split for an m x k x n product on a machine with `cores` cores: one panel below about
// 2^26 multiply-adds, else up to `cores` panels of at least 256 columns or rows each, cut in
// whichever of n and m is larger and rounded to a multiple of 64.
GemmSplit ChooseGemmSplit(int64_t m, int64_t k, int64_t n, int64_t cores);

// `problem` computed with `kernels`, cut as ChooseGemmSplit says for this machine, the panels
// shared among the calling thread and up to `max_threads` - 1 idle cores (<= 0: as many as
// are idle). REQUIRES: `kernels` is one of SupportedGemmKernels().
void DenseGemm(const GemmKernels& kernels, const GemmProblem<float>& problem, int max_threads = 0);
void DenseGemm(const GemmKernels& kernels, const GemmProblem<double>& problem, int max_threads = 0);

// Claims `count` cores for the object's lifetime: RunOnDevices holds one around its
// thread-per-device run, so that a GEMM borrows only the cores left over (none when there are
// as many devices as cores or more; one on a 2-core machine while a single device runs).
class ScopedDeviceThreads {
 public:
  explicit ScopedDeviceThreads(int64_t count);
  ~ScopedDeviceThreads();
  ScopedDeviceThreads(const ScopedDeviceThreads&) = delete;
  ScopedDeviceThreads& operator=(const ScopedDeviceThreads&) = delete;

 private:
  int64_t count_;
};

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_GEMM_H_

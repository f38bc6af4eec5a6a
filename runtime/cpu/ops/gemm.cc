// Kernel choice by CPU features, the panel split and the borrowing of idle cores.
//
// Cores (MachineCores): device threads claim them (ScopedDeviceThreads) and running helpers
// borrow them; a GEMM reserves helpers with a compare-and-swap on the borrowed count, so
// concurrent GEMMs never borrow more than is idle. A thread outside any device run (a single
// Evaluator, a test) counts as one claimed core. Helpers are plain std::threads started
// per product (the split threshold keeps a product above ~1 ms, against ~50 us to start one);
// they and the calling thread take panels from a shared counter, so which thread computes a
// panel changes nothing in its result.
#include "runtime/cpu/ops/gemm.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

namespace runtime {
namespace {

constexpr int64_t kMinSplitWork = int64_t{1} << 26;  // Multiply-adds.
constexpr int64_t kMinPanelSize = 256;
constexpr int64_t kPanelAlignment = 64;

std::atomic<int64_t> claimed_cores{0};
std::atomic<int64_t> borrowed_cores{0};

// The cores this process may use: its CPU affinity, capped by a cgroup v2 CPU quota (a
// container limited to 2 CPUs on a larger host sees all the host's CPUs in its affinity).
int64_t MachineCores() {
  static const int64_t cores = [] {
    int64_t n = std::thread::hardware_concurrency();
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
    std::ifstream cpu_max("/sys/fs/cgroup/cpu.max");  // "QUOTA PERIOD" or "max PERIOD".
    std::string quota;
    int64_t period = 0;
    if (cpu_max >> quota >> period && quota != "max" && period > 0) {
      n = std::min<int64_t>(n, (std::atoll(quota.c_str()) + period - 1) / period);
    }
    return std::max<int64_t>(1, n);
  }();
  return cores;
}

// Reserves up to `wanted` idle cores; returns how many it got.
int64_t BorrowCores(int64_t wanted) {
  int64_t borrowed = borrowed_cores.load();
  while (true) {
    const int64_t claimed = std::max<int64_t>(1, claimed_cores.load());
    const int64_t got = std::min(wanted, MachineCores() - claimed - borrowed);
    if (got <= 0) return 0;
    if (borrowed_cores.compare_exchange_weak(borrowed, borrowed + got)) return got;
  }
}

bool Supports(const GemmKernels& kernels) {
  if (&kernels == &kGenericGemmKernels) return true;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (&kernels == &kAvx2GemmKernels) return avx2;
  if (&kernels == &kAvx512GemmKernels) {
    return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  }
#endif
  return false;
}

// `p` restricted to panel [begin, end) of `split`.
template <typename T>
GemmProblem<T> Panel(const GemmProblem<T>& p, const GemmSplit& split, int64_t begin, int64_t end) {
  GemmProblem<T> q = p;
  if (split.split_columns) {
    q.n = end - begin;
    q.b += p.b_col_major ? begin * p.ldb : begin;
    q.c += begin;
  } else {
    q.m = end - begin;
    q.a += p.a_col_major ? begin : begin * p.lda;
    q.c += begin * p.ldc;
  }
  return q;
}

template <typename T>
void RunSplit(void (*kernel)(const GemmProblem<T>&), const GemmProblem<T>& p, int max_threads) {
  const GemmSplit split = ChooseGemmSplit(p.m, p.k, p.n, MachineCores());
  if (split.panels == 1) return kernel(p);
  const int64_t extent = split.split_columns ? p.n : p.m;
  int64_t wanted = split.panels - 1;
  if (max_threads > 0) wanted = std::min<int64_t>(wanted, max_threads - 1);
  const int64_t helpers = BorrowCores(wanted);
  // Every thread takes the next panel until none is left; the first exception (an allocation
  // failure inside Eigen) stops the others and is rethrown here, as without helpers.
  std::atomic<int64_t> next_panel{0};
  std::mutex mu;
  std::exception_ptr error;
  auto work = [&] {
    for (int64_t i = next_panel++; i < split.panels; i = next_panel++) {
      const int64_t begin = i * split.panel_size;
      try {
        kernel(Panel(p, split, begin, std::min(extent, begin + split.panel_size)));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        next_panel = split.panels;
      }
    }
  };
  std::vector<std::thread> threads;
  try {
    for (int64_t h = 0; h < helpers; ++h) threads.emplace_back(work);
  } catch (const std::system_error&) {
    // No thread to be had (memory or process limits): this thread does the rest.
  }
  work();
  for (std::thread& t : threads) t.join();
  borrowed_cores -= helpers;
  if (error) std::rethrow_exception(error);
}

}  // namespace

const GemmKernels& HostGemmKernels() {
  static const GemmKernels* const best = SupportedGemmKernels().back();
  return *best;
}

std::vector<const GemmKernels*> SupportedGemmKernels() {
  std::vector<const GemmKernels*> out;
  for (const GemmKernels* k : {&kGenericGemmKernels, &kAvx2GemmKernels, &kAvx512GemmKernels}) {
    if (Supports(*k)) out.push_back(k);
  }
  return out;
}

GemmSplit ChooseGemmSplit(int64_t m, int64_t k, int64_t n, int64_t cores) {
  GemmSplit split;
  const int64_t extent = std::max(m, n);
  split.split_columns = n >= m;
  split.panel_size = extent;
  // Divide before multiplying: m * k * n may not fit in 64 bits.
  if (cores < 2 || m == 0 || k == 0 || n == 0 || extent < 2 * kMinPanelSize ||
      m * k < kMinSplitWork / n) {
    return split;
  }
  const int64_t panels = std::min(cores, extent / kMinPanelSize);
  const int64_t size = (extent + panels - 1) / panels;
  split.panel_size = (size + kPanelAlignment - 1) / kPanelAlignment * kPanelAlignment;
  split.panels = (extent + split.panel_size - 1) / split.panel_size;
  return split;
}

void DenseGemm(const GemmKernels& kernels, const GemmProblem<float>& problem, int max_threads) {
  RunSplit(kernels.f32, problem, max_threads);
}

void DenseGemm(const GemmKernels& kernels, const GemmProblem<double>& problem, int max_threads) {
  RunSplit(kernels.f64, problem, max_threads);
}

ScopedDeviceThreads::ScopedDeviceThreads(int64_t count) : count_(count) { claimed_cores += count_; }

ScopedDeviceThreads::~ScopedDeviceThreads() { claimed_cores -= count_; }

}  // namespace runtime

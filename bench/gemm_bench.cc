// The CPU executor's dispatched f32 GEMM (runtime/cpu/ops/gemm.h) against the generic build of
// the same Eigen kernels, for 512^3 and 2048^3, measured in the same run.
//
// Benchmarks (argument: the size; `flops`: FLOP/s by wall time, 2*M*N*K per iteration):
//   BM_GemmGeneric      the generic build (the build's flags: SSE2 on x86-64), one thread.
//   BM_GemmDispatched   the build HostGemmKernels() chose for this CPU (label: its name), one
//                       thread.
//   BM_GemmCores        the same with the panels spread over this machine's idle cores.
//   BM_GemmAvx2         the AVX2 + FMA build, one thread (skipped on CPUs without them): what
//                       an AVX-512 CPU would run with AVX-512 left out.
//   BM_GemmRatio        all three in turn within each iteration (machine noise hits them alike):
//                       `dispatched_ratio` and `cores_ratio` are the generic time over the
//                       dispatched one's, single-threaded and on idle cores.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "runtime/cpu/ops/gemm.h"

namespace runtime {
namespace {

struct Operands {
  explicit Operands(int64_t size) : a(size * size), b(size * size), c(size * size) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
    p = {};
    p.a = a.data();
    p.b = b.data();
    p.c = c.data();
    p.m = p.k = p.n = size;
    p.lda = p.ldb = p.ldc = size;
  }
  std::vector<float> a, b, c;
  GemmProblem<float> p;
};

double Flops(const benchmark::State& state) {
  const double size = static_cast<double>(state.range(0));
  return 2 * size * size * size;
}

void Run(benchmark::State& state, const GemmKernels& kernels, int max_threads) {
  const std::vector<const GemmKernels*> supported = SupportedGemmKernels();
  if (std::find(supported.begin(), supported.end(), &kernels) == supported.end()) {
    state.SkipWithError("this CPU does not support the build");
    return;
  }
  Operands ops(state.range(0));
  for (auto _ : state) {
    DenseGemm(kernels, ops.p, max_threads);
    benchmark::DoNotOptimize(ops.c.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(kernels.name);
  state.counters["flops"] =
      benchmark::Counter(Flops(state), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_GemmGeneric(benchmark::State& state) { Run(state, kGenericGemmKernels, 1); }
void BM_GemmDispatched(benchmark::State& state) { Run(state, HostGemmKernels(), 1); }
void BM_GemmCores(benchmark::State& state) { Run(state, HostGemmKernels(), 0); }
void BM_GemmAvx2(benchmark::State& state) { Run(state, kAvx2GemmKernels, 1); }
BENCHMARK(BM_GemmGeneric)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GemmDispatched)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GemmCores)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GemmAvx2)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GemmRatio(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  Operands ops(state.range(0));
  double seconds[3] = {0, 0, 0};  // Generic, dispatched, dispatched on idle cores.
  for (auto _ : state) {
    for (int variant = 0; variant < 3; ++variant) {
      const Clock::time_point start = Clock::now();
      DenseGemm(variant == 0 ? kGenericGemmKernels : HostGemmKernels(), ops.p,
                variant == 2 ? 0 : 1);
      benchmark::DoNotOptimize(ops.c.data());
      benchmark::ClobberMemory();
      seconds[variant] += std::chrono::duration<double>(Clock::now() - start).count();
    }
  }
  const double gflop = Flops(state) * static_cast<double>(state.iterations()) / 1e9;
  state.SetLabel(HostGemmKernels().name);
  state.counters["generic_gflops"] = gflop / seconds[0];
  state.counters["dispatched_gflops"] = gflop / seconds[1];
  state.counters["cores_gflops"] = gflop / seconds[2];
  state.counters["dispatched_ratio"] = seconds[0] / seconds[1];
  state.counters["cores_ratio"] = seconds[0] / seconds[2];
}
BENCHMARK(BM_GemmRatio)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
}  // namespace runtime

BENCHMARK_MAIN();

// Throughput of an f32 1024x1024x1024 dot in the CPU executor, against Eigen's own GEMM on the
// same operands in the same run (the target is at least 80% of Eigen's rate).
//
// The module is one `dot` of two parameters, parsed once; each executor iteration copies the
// two 4 MiB arguments outside the timed region (RunEntry consumes them) and times RunEntry,
// which includes allocating the result. Before any benchmark runs, the executor's result is
// checked against Eigen's, so a broken handler fails loudly instead of timing an error path.
//
// Benchmarks (all report FLOP/s as the `flops` counter, 2*M*N*K per iteration):
//   BM_ExecutorDot  Evaluator::RunEntry on the dot module.
//   BM_EigenGemm    Eigen row-major Map product, noalias, into a preallocated matrix.
//   BM_DotRatio     both, alternating within each iteration (so machine noise hits both
//                   alike); its `executor_vs_eigen` counter is Eigen's time / the executor's
//                   time, i.e. the executor's rate as a fraction of Eigen's.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "hlo/ir/literal.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {
namespace {

constexpr int64_t kSize = 1024;
constexpr double kFlops = 2.0 * kSize * kSize * kSize;

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

const char kModule[] = R"(HloModule dot_bench
ENTRY e {
  a = f32[1024,1024] parameter(0)
  b = f32[1024,1024] parameter(1)
  ROOT d = f32[1024,1024] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

struct Fixture {
  std::unique_ptr<hlo::HloModule> module;
  hlo::Literal a, b;
  RowMajor out{kSize, kSize};
};

hlo::Literal RandomMatrix(std::mt19937& rng) {
  hlo::Literal l(hlo::Shape::Array(hlo::PrimitiveType::kF32, {kSize, kSize}));
  std::uniform_real_distribution<float> dist(-1, 1);
  float* data = reinterpret_cast<float*>(l.mutable_data()->data());
  for (int64_t i = 0; i < kSize * kSize; ++i) data[i] = dist(rng);
  return l;
}

Eigen::Map<const RowMajor> View(const hlo::Literal& l) {
  return Eigen::Map<const RowMajor>(reinterpret_cast<const float*>(l.data().data()), kSize, kSize);
}

hlo::Literal RunExecutor(Fixture& f) {
  absl::StatusOr<hlo::Literal> r = Evaluator(*f.module, {}).RunEntry({f.a, f.b});
  if (!r.ok()) {
    std::fprintf(stderr, "executor dot failed: %s\n", std::string(r.status().message()).c_str());
    std::abort();
  }
  return *std::move(r);
}

// Parses the module, makes the operands, and checks the executor against Eigen once.
Fixture& GetFixture() {
  static Fixture* fixture = [] {
    auto* f = new Fixture();
    auto module = hlo::ParseHloModule(kModule);
    if (!module.ok()) std::abort();
    f->module = *std::move(module);
    std::mt19937 rng(42);
    f->a = RandomMatrix(rng);
    f->b = RandomMatrix(rng);
    hlo::Literal got = RunExecutor(*f);
    f->out.noalias() = View(f->a) * View(f->b);
    const float* g = reinterpret_cast<const float*>(got.data().data());
    for (int64_t i = 0; i < kSize * kSize; ++i) {
      if (std::abs(g[i] - f->out.data()[i]) > 1e-3f * (1 + std::abs(f->out.data()[i]))) {
        std::fprintf(stderr, "executor dot differs from Eigen at %ld\n", static_cast<long>(i));
        std::abort();
      }
    }
    return f;
  }();
  return *fixture;
}

void BM_ExecutorDot(benchmark::State& state) {
  Fixture& f = GetFixture();
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<hlo::Literal> args = {f.a, f.b};
    state.ResumeTiming();
    absl::StatusOr<hlo::Literal> r = Evaluator(*f.module, {}).RunEntry(std::move(args));
    benchmark::DoNotOptimize(r);
  }
  state.counters["flops"] =
      benchmark::Counter(kFlops, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ExecutorDot)->Unit(benchmark::kMillisecond);

void BM_EigenGemm(benchmark::State& state) {
  Fixture& f = GetFixture();
  for (auto _ : state) {
    f.out.noalias() = View(f.a) * View(f.b);
    benchmark::DoNotOptimize(f.out.data());
    benchmark::ClobberMemory();
  }
  state.counters["flops"] =
      benchmark::Counter(kFlops, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_EigenGemm)->Unit(benchmark::kMillisecond);

void BM_DotRatio(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  Fixture& f = GetFixture();
  double executor_s = 0, eigen_s = 0;
  for (auto _ : state) {
    std::vector<hlo::Literal> args = {f.a, f.b};
    Clock::time_point t0 = Clock::now();
    absl::StatusOr<hlo::Literal> r = Evaluator(*f.module, {}).RunEntry(std::move(args));
    benchmark::DoNotOptimize(r);
    Clock::time_point t1 = Clock::now();
    f.out.noalias() = View(f.a) * View(f.b);
    benchmark::DoNotOptimize(f.out.data());
    benchmark::ClobberMemory();
    Clock::time_point t2 = Clock::now();
    executor_s += std::chrono::duration<double>(t1 - t0).count();
    eigen_s += std::chrono::duration<double>(t2 - t1).count();
  }
  state.counters["executor_vs_eigen"] = executor_s > 0 ? eigen_s / executor_s : 0;
  state.counters["executor_gflops"] = kFlops * state.iterations() / executor_s / 1e9;
  state.counters["eigen_gflops"] = kFlops * state.iterations() / eigen_s / 1e9;
}
BENCHMARK(BM_DotRatio)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
}  // namespace runtime

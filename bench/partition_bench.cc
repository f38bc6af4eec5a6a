// The partition pass on generated stacks of MLP blocks with mixed shardings on 8 devices
// (every instruction annotated, so no propagation): 10k, 30k and 100k instructions. Reports
// instructions per second (linear growth keeps it flat across sizes), the process's peak
// resident memory, and the ratio to a plain walk over the same module measured in the same run
// (BM_PlainWalk's definition, as in propagation_bench). Each run partitions a fresh copy
// parsed outside the timed region.
//
//   bazel run -c opt //bench:partition_bench
#include <sys/resource.h>

#include <chrono>
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/strings.h"
#include "spmd/partitioner/spmd_partitioner.h"

namespace {

constexpr int kInstructionsPerBlock = 12;

// Block i: rows split 8 ways in, a [2,4] dot, an elementwise chain in [2,4], a second dot
// against partially replicated weights back to rows split 8 ways, and a residual add.
void AppendBlock(int i, std::string* text) {
  const std::string x = i == 0 ? "x" : hlo::StrCat("r", i - 1);
  const char* rows = "sharding={devices=[8,1]<=[8]}";
  const char* grid = "sharding={devices=[2,4]<=[8]}";
  hlo::StrAppend(text, "  w1.", i, " = f32[128,256] parameter(", 2 * i + 1,
                 "), sharding={devices=[1,8]<=[8]}\n");
  hlo::StrAppend(text, "  w2.", i, " = f32[256,128] parameter(", 2 * i + 2,
                 "), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}\n");
  hlo::StrAppend(text, "  h", i, " = f32[64,256] dot(", x, ", w1.", i,
                 "), lhs_contracting_dims={1}, rhs_contracting_dims={0}, ", grid, "\n");
  hlo::StrAppend(text, "  sq", i, " = f32[64,256] multiply(h", i, ", h", i, "), ", grid, "\n");
  hlo::StrAppend(text, "  cu", i, " = f32[64,256] multiply(sq", i, ", h", i, "), ", grid, "\n");
  hlo::StrAppend(text, "  s", i, " = f32[64,256] add(h", i, ", cu", i, "), ", grid, "\n");
  hlo::StrAppend(text, "  t", i, " = f32[64,256] tanh(s", i, "), ", grid, "\n");
  hlo::StrAppend(text, "  a", i, " = f32[64,256] add(t", i, ", h", i, "), ", grid, "\n");
  hlo::StrAppend(text, "  g", i, " = f32[64,256] multiply(a", i, ", h", i, "), ", grid, "\n");
  hlo::StrAppend(text, "  n", i, " = f32[64,256] negate(g", i, "), ", grid, "\n");
  hlo::StrAppend(text, "  o", i, " = f32[64,128] dot(n", i, ", w2.", i,
                 "), lhs_contracting_dims={1}, rhs_contracting_dims={0}, ", rows, "\n");
  hlo::StrAppend(text, "  r", i, " = f32[64,128] add(", x, ", o", i, "), ", rows, "\n");
}

std::string MlpStackText(int64_t instructions) {
  const int64_t blocks = instructions / kInstructionsPerBlock + 1;
  std::string text = "HloModule mlp_stack, num_partitions=8\n\nENTRY main {\n";
  text += "  x = f32[64,128] parameter(0), sharding={devices=[8,1]<=[8]}\n";
  for (int i = 0; i < blocks; ++i) AppendBlock(i, &text);
  hlo::StrAppend(&text, "  ROOT out = f32[64,128] copy(r", blocks - 1,
                 "), sharding={replicated}\n}\n");
  return text;
}

std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  if (!module.ok()) std::abort();
  return *std::move(module);
}

int64_t PlainWalk(const hlo::HloModule& module) {
  int64_t sum = 0;
  for (const hlo::HloInstruction* instr : module.entry_computation()->MakeInstructionPostOrder()) {
    sum += instr->shape().rank() + instr->operand_count();
  }
  return sum;
}

double PeakRssMiB() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux.
}

void BM_Partition(benchmark::State& state) {
  const std::string text = MlpStackText(state.range(0));
  int64_t instructions = 0;
  double partition_s = 0, walk_s = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<hlo::HloModule> module = Parse(text);
    instructions = module->instruction_count();
    const auto walk_start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(PlainWalk(*module));
    walk_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - walk_start).count();
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    spmd::SpmdPartitioner partitioner;
    absl::StatusOr<bool> changed = partitioner.Run(module.get());
    partition_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!changed.ok()) state.SkipWithError("partitioning failed");
    state.PauseTiming();
    module.reset();  // Freed outside the timed region.
    state.ResumeTiming();
  }
  const double runs = static_cast<double>(state.iterations());
  state.counters["instructions"] = static_cast<double>(instructions);
  state.counters["instr_per_s"] = static_cast<double>(instructions) * runs / partition_s;
  state.counters["ms_per_run"] = partition_s / runs * 1e3;
  state.counters["ratio_vs_walk"] = partition_s / walk_s;
  state.counters["peak_rss_mib"] = PeakRssMiB();
}
BENCHMARK(BM_Partition)
    ->Arg(10000)
    ->Arg(30000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace

BENCHMARK_MAIN();

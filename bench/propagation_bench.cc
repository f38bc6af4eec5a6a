// Sharding propagation throughput on a generated stack of Megatron MLP blocks (100,000+
// instructions; only the weights, the input and the output annotated). Each run of the
// propagate pass starts from the annotated module (inferred shardings are cleared outside the
// timed region). BM_PlainWalk, the baseline measured in the same run, visits every instruction
// of the module in post order and reads its shape and operands: BM_Propagate reports its
// time per run and `ratio_vs_walk`, its time over the walk's.
//
//   bazel run -c opt //bench:propagation_bench
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/strings.h"
#include "spmd/propagation/sharding_propagation.h"

namespace {

constexpr int kInstructionsPerBlock = 12;
constexpr int kBlocks = 100000 / kInstructionsPerBlock + 1;

// Block i: h = x.W1 (W1 split by columns), GeLU-like elementwise chain, o = h.W2 (W2 split by
// rows), x' = x + o.
void AppendBlock(int i, std::string* text) {
  const std::string x = i == 0 ? "x" : hlo::StrCat("r", i - 1);
  hlo::StrAppend(text, "  w1.", i, " = f32[16,64] parameter(", 2 * i + 1,
                 "), sharding={devices=[1,2]<=[2]}\n");
  hlo::StrAppend(text, "  w2.", i, " = f32[64,16] parameter(", 2 * i + 2,
                 "), sharding={devices=[2,1]<=[2]}\n");
  hlo::StrAppend(text, "  h", i, " = f32[8,64] dot(", x, ", w1.", i,
                 "), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  hlo::StrAppend(text, "  sq", i, " = f32[8,64] multiply(h", i, ", h", i, ")\n");
  hlo::StrAppend(text, "  cu", i, " = f32[8,64] multiply(sq", i, ", h", i, ")\n");
  hlo::StrAppend(text, "  s", i, " = f32[8,64] add(h", i, ", cu", i, ")\n");
  hlo::StrAppend(text, "  t", i, " = f32[8,64] tanh(s", i, ")\n");
  hlo::StrAppend(text, "  a", i, " = f32[8,64] add(t", i, ", h", i, ")\n");
  hlo::StrAppend(text, "  g", i, " = f32[8,64] multiply(a", i, ", h", i, ")\n");
  hlo::StrAppend(text, "  n", i, " = f32[8,64] negate(g", i, ")\n");
  hlo::StrAppend(text, "  o", i, " = f32[8,16] dot(n", i, ", w2.", i,
                 "), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  hlo::StrAppend(text, "  r", i, " = f32[8,16] add(", x, ", o", i, ")\n");
}

std::unique_ptr<hlo::HloModule> MakeMlpStack() {
  std::string text = "HloModule mlp_stack, num_partitions=2\n\nENTRY main {\n";
  text += "  x = f32[8,16] parameter(0), sharding={replicated}\n";
  for (int i = 0; i < kBlocks; ++i) AppendBlock(i, &text);
  hlo::StrAppend(&text, "  ROOT out = f32[8,16] copy(r", kBlocks - 1,
                 "), sharding={replicated}\n}\n");
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  if (!module.ok()) std::abort();
  return *std::move(module);
}

hlo::HloModule& Module() {
  static hlo::HloModule* module = MakeMlpStack().release();
  return *module;
}

// Clears what propagation added (annotated instructions are parameters and the root).
void ClearInferred(hlo::HloModule& module) {
  hlo::HloComputation* entry = module.entry_computation();
  for (const auto& instr : entry->instructions()) {
    if (instr->opcode() != hlo::HloOpcode::kParameter && instr.get() != entry->root_instruction()) {
      instr->clear_sharding();
    }
  }
}

int64_t PlainWalk(const hlo::HloModule& module) {
  int64_t sum = 0;
  for (const hlo::HloInstruction* instr : module.entry_computation()->MakeInstructionPostOrder()) {
    sum += instr->shape().rank() + instr->operand_count();
  }
  return sum;
}

double WalkSeconds(const hlo::HloModule& module) {
  const auto start = std::chrono::steady_clock::now();
  constexpr int kWalks = 5;
  for (int i = 0; i < kWalks; ++i) benchmark::DoNotOptimize(PlainWalk(module));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / kWalks;
}

void BM_PlainWalk(benchmark::State& state) {
  hlo::HloModule& module = Module();
  for (auto _ : state) benchmark::DoNotOptimize(PlainWalk(module));
  state.counters["instructions"] = static_cast<double>(module.instruction_count());
}
BENCHMARK(BM_PlainWalk)->Unit(benchmark::kMillisecond);

void BM_Propagate(benchmark::State& state) {
  hlo::HloModule& module = Module();
  const double walk_s = WalkSeconds(module);
  double total_s = 0;
  int64_t runs = 0;
  spmd::ShardingPropagation pass;
  for (auto _ : state) {
    state.PauseTiming();
    ClearInferred(module);
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> changed = pass.Run(&module);
    total_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++runs;
    if (!changed.ok() || !*changed) state.SkipWithError("propagation failed or changed nothing");
  }
  const double per_run_s = total_s / static_cast<double>(runs);
  state.counters["instructions"] = static_cast<double>(module.instruction_count());
  state.counters["assigned"] = static_cast<double>(pass.log().assigned);
  state.counters["ms_per_run"] = per_run_s * 1e3;
  state.counters["walk_ms"] = walk_s * 1e3;
  state.counters["ratio_vs_walk"] = per_run_s / walk_s;
}
BENCHMARK(BM_Propagate)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();

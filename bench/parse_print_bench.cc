// Throughput benchmark for the HLO text parser and printer.
//
// The input is a synthetic module of about 5 MB built deterministically in code (no files, no
// randomness): many layer computations, each a dense block of the instructions real JAX dumps
// are made of (sharded parameters with layouts, dots with dimension numbers, broadcasts,
// reduces that call a scalar region, array constants, elementwise ops, transposes, converts),
// most of them carrying `metadata={op_name=... source_file=... source_line=...}`. An ENTRY
// computation calls every layer. As in an XLA dump, instruction names are unique in the module.
// Before any benchmark runs, the text is checked to parse and to round-trip through the printer,
// so that a generator change that the parser rejects fails loudly instead of benchmarking an
// error path.
//
// Benchmarks (all report bytes/s through SetBytesProcessed):
//   BM_Parse      ParseHloModule over the generated text (freeing the module is not timed).
//   BM_Print      PrintModule of the parsed module (bytes = printed size).
//   BM_Memcpy     memcpy of the text into a preallocated buffer: a same-run baseline.
//   BM_ScanBytes  a byte loop counting newlines and braces: a second same-run baseline that
//                 touches every byte with a data-dependent branch, as a lexer does.
// Absolute times depend on the machine; bench/run.sh reports parse and print as ratios
// against the baselines measured in the same run.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hlo/ir/hlo_printer.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

// Size the generator stops at (bytes); the module ends after the layer that crosses it. The
// environment variable HLO_BENCH_BYTES overrides it (e.g. a smaller input for a profiler).
size_t TargetBytes() {
  const char* env = std::getenv("HLO_BENCH_BYTES");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 5 * 1000 * 1000;
}
// Instruction blocks per layer computation; each block is about 15 instructions.
constexpr int kBlocksPerLayer = 6;

// A small deterministic generator (64-bit LCG) so that constants and shardings vary.
class Lcg {
 public:
  uint64_t Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return state_ >> 33;
  }
  int64_t Below(int64_t n) { return static_cast<int64_t>(Next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t state_ = 0x5eed;
};

const char* const kShardings[] = {
    "{devices=[4,1,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}",
    "{devices=[2,4]<=[8]}",
    "{devices=[1,8]<=[2,4]T(1,0)}",
    "{replicated}",
    "{devices=[2,2,2]<=[8] last_tile_dim_replicate}",
    "{maximal device=0}",
};

void AppendMetadata(Lcg& rng, int layer, std::string_view op, std::string* out) {
  StrAppend(out, ", metadata={op_type=\"", op, "\" op_name=\"jit(train_step)/jit(main)/layer_",
            layer, "/", op,
            "\" source_file=\"/src/model/transformer.py\" source_line=", 100 + rng.Below(900), "}");
}

void AppendFloatArray(Lcg& rng, int rows, int cols, std::string* out) {
  out->push_back('{');
  for (int r = 0; r < rows; ++r) {
    if (r) out->append(", ");
    out->push_back('{');
    for (int c = 0; c < cols; ++c) {
      if (c) out->append(", ");
      int64_t v = rng.Below(20001) - 10000;
      StrAppend(out, static_cast<double>(v) / 256.0);
    }
    out->push_back('}');
  }
  out->push_back('}');
}

// One block of a layer: matmul + bias + activation + normalization-like reduce. `in` is the name
// of an f32[64,128]{1,0} value; returns the name of the block's f32[64,128]{1,0} result.
std::string AppendBlock(Lcg& rng, int layer, int block, const std::string& in, std::string* out) {
  const std::string s = StrCat(".", layer, ".", block);
  auto name = [&](std::string_view base) { return StrCat(base, s); };
  auto line = [&](std::string_view n, std::string_view rest) {
    StrAppend(out, "  %", n, " = ", rest);
  };
  line(name("weight"), StrCat("f32[128,256]{1,0} parameter(", 1 + 2 * block,
                              "), sharding=", kShardings[rng.Below(6)]));
  AppendMetadata(rng, layer, "weight", out);
  out->push_back('\n');
  line(name("bias"), StrCat("f32[256]{0} parameter(", 2 + 2 * block, "), sharding={replicated}"));
  out->push_back('\n');
  line(name("dot"), StrCat("f32[64,256]{1,0} dot(%", in, ", %", name("weight"),
                           "), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
                           "operand_precision={highest,highest}, sharding=",
                           kShardings[rng.Below(6)]));
  AppendMetadata(rng, layer, "dot_general", out);
  out->push_back('\n');
  line(name("bias_bcast"),
       StrCat("f32[64,256]{1,0} broadcast(%", name("bias"), "), dimensions={1}"));
  AppendMetadata(rng, layer, "broadcast_in_dim", out);
  out->push_back('\n');
  line(name("biased"),
       StrCat("f32[64,256]{1,0} add(%", name("dot"), ", %", name("bias_bcast"), ")"));
  AppendMetadata(rng, layer, "add", out);
  out->push_back('\n');
  line(name("zero"), "f32[] constant(0)");
  out->push_back('\n');
  line(name("zeros"), StrCat("f32[64,256]{1,0} broadcast(%", name("zero"), "), dimensions={}"));
  out->push_back('\n');
  line(name("relu"),
       StrCat("f32[64,256]{1,0} maximum(%", name("biased"), ", %", name("zeros"), ")"));
  AppendMetadata(rng, layer, "max", out);
  out->push_back('\n');
  line(name("scale"), "f32[4,8]{1,0} constant(");
  AppendFloatArray(rng, 4, 8, out);
  out->append(")\n");
  line(name("sq"), StrCat("f32[64,256]{1,0} multiply(%", name("relu"), ", %", name("relu"), ")"));
  AppendMetadata(rng, layer, "integer_pow", out);
  out->push_back('\n');
  line(name("sum"), StrCat("f32[64]{0} reduce(%", name("sq"), ", %", name("zero"),
                           "), dimensions={1}, to_apply=%region_add.", layer % 8));
  AppendMetadata(rng, layer, "reduce_sum", out);
  out->push_back('\n');
  line(name("rsqrt"), StrCat("f32[64]{0} rsqrt(%", name("sum"), ")"));
  AppendMetadata(rng, layer, "rsqrt", out);
  out->push_back('\n');
  line(name("norm_bcast"),
       StrCat("f32[64,256]{1,0} broadcast(%", name("rsqrt"), "), dimensions={0}"));
  out->push_back('\n');
  line(name("normed"),
       StrCat("f32[64,256]{1,0} multiply(%", name("relu"), ", %", name("norm_bcast"), ")"));
  AppendMetadata(rng, layer, "mul", out);
  out->push_back('\n');
  line(name("down"), StrCat("f32[256,128]{0,1} parameter(", 2 * kBlocksPerLayer + 1 + block,
                            "), sharding=", kShardings[rng.Below(6)]));
  out->push_back('\n');
  line(name("proj"), StrCat("f32[64,128]{1,0} dot(%", name("normed"), ", %", name("down"),
                            "), lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  AppendMetadata(rng, layer, "dot_general", out);
  out->push_back('\n');
  line(name("proj_t"), StrCat("f32[128,64]{0,1} transpose(%", name("proj"), "), dimensions={1,0}"));
  out->push_back('\n');
  line(name("proj_bf16"), StrCat("bf16[128,64]{0,1} convert(%", name("proj_t"), ")"));
  AppendMetadata(rng, layer, "convert_element_type", out);
  out->push_back('\n');
  line(name("proj_back"), StrCat("f32[128,64]{0,1} convert(%", name("proj_bf16"), ")"));
  out->push_back('\n');
  line(name("out"),
       StrCat("f32[64,128]{1,0} transpose(%", name("proj_back"), "), dimensions={1,0}"));
  out->push_back('\n');
  line(name("residual"), StrCat("f32[64,128]{1,0} add(%", in, ", %", name("out"), ")"));
  AppendMetadata(rng, layer, "add", out);
  out->push_back('\n');
  return name("residual");
}

void AppendLayerSignature(int layer, std::string* out) {
  StrAppend(out, "%layer.", layer, " (x.", layer, ": f32[64,128]");
  for (int b = 0; b < kBlocksPerLayer; ++b) {
    StrAppend(out, ", weight.", layer, ".", b, ": f32[128,256], bias.", layer, ".", b,
              ": f32[256]");
  }
  for (int b = 0; b < kBlocksPerLayer; ++b) {
    StrAppend(out, ", down.", layer, ".", b, ": f32[256,128]");
  }
  out->append(") -> f32[64,128] {\n");
}

void AppendLayer(Lcg& rng, int layer, std::string* out) {
  AppendLayerSignature(layer, out);
  StrAppend(out, "  %x.", layer,
            " = f32[64,128]{1,0} parameter(0), sharding=", kShardings[rng.Below(6)]);
  AppendMetadata(rng, layer, "input", out);
  out->push_back('\n');
  std::string value = StrCat("x.", layer);
  for (int b = 0; b < kBlocksPerLayer; ++b) value = AppendBlock(rng, layer, b, value, out);
  StrAppend(out, "  ROOT %result.", layer, " = f32[64,128]{1,0} copy(%", value, ")\n}\n\n");
}

std::string GenerateModule() {
  Lcg rng;
  std::string text =
      "HloModule synthetic_transformer, entry_computation_layout={(f32[64,128]{1,0}, "
      "f32[128,256]{1,0}, f32[256]{0}, f32[256,128]{0,1})->f32[64,128]{1,0}}, "
      "num_partitions=8\n\n";
  for (int r = 0; r < 8; ++r) {
    StrAppend(&text, "%region_add.", r, " (lhs.", r, ": f32[], rhs.", r, ": f32[]) -> f32[] {\n",
              "  %lhs.", r, " = f32[] parameter(0)\n", "  %rhs.", r, " = f32[] parameter(1)\n",
              "  ROOT %sum.", r, " = f32[] add(%lhs.", r, ", %rhs.", r, ")\n}\n\n");
  }
  int layers = 0;
  const size_t target = TargetBytes();
  while (text.size() < target) AppendLayer(rng, layers++, &text);
  // ENTRY: four shared parameters, every layer called in sequence on the running activation.
  text.append(
      "ENTRY %main (x: f32[64,128], w: f32[128,256], b: f32[256], d: f32[256,128]) -> "
      "f32[64,128] {\n"
      "  %x = f32[64,128]{1,0} parameter(0), sharding={devices=[4,1,2]0,1,2,3,4,5,6,7 "
      "last_tile_dim_replicate}\n"
      "  %w = f32[128,256]{1,0} parameter(1), sharding={devices=[1,8]<=[8]}\n"
      "  %b = f32[256]{0} parameter(2), sharding={replicated}\n"
      "  %d = f32[256,128]{0,1} parameter(3), sharding={devices=[8,1]<=[8]}\n");
  std::string value = "x";
  for (int l = 0; l < layers; ++l) {
    std::string next = StrCat("call.", l);
    StrAppend(&text, "  %", next, " = f32[64,128]{1,0} call(%", value);
    for (int b = 0; b < kBlocksPerLayer; ++b) text.append(", %w, %b");
    for (int b = 0; b < kBlocksPerLayer; ++b) text.append(", %d");
    StrAppend(&text, "), to_apply=%layer.", l);
    AppendMetadata(rng, l, "pjit", &text);
    text.push_back('\n');
    value = next;
  }
  StrAppend(&text, "  ROOT %output = f32[64,128]{1,0} copy(%", value, ")\n}\n");
  return text;
}

const std::string& ModuleText() {
  static const std::string* text = new std::string(GenerateModule());
  return *text;
}

// The parsed module, checked once: it must parse, and its print must parse and print the same.
const HloModule& ParsedModule() {
  static const HloModule* module = [] {
    absl::StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(ModuleText(), "bench");
    if (!parsed.ok()) {
      std::fprintf(stderr, "generated module does not parse: %s\n",
                   std::string(ToStd(parsed.status().message())).c_str());
      std::abort();
    }
    std::string printed;
    PrintModule(**parsed, &printed);
    absl::StatusOr<std::unique_ptr<HloModule>> again = ParseHloModule(printed, "printed");
    std::string reprinted;
    if (again.ok()) PrintModule(**again, &reprinted);
    if (!again.ok() || reprinted != printed) {
      std::fprintf(stderr, "generated module does not round-trip through the printer\n");
      std::abort();
    }
    return parsed->release();
  }();
  return *module;
}

void BM_Parse(benchmark::State& state) {
  const std::string& text = ModuleText();
  ParsedModule();  // Validates the input outside the timed loop.
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "bench");
    benchmark::DoNotOptimize(module);
    state.PauseTiming();  // Freeing the module is not parsing.
    module = nullptr;
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  state.counters["input_bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_Parse)->Unit(benchmark::kMillisecond);

void BM_Print(benchmark::State& state) {
  const HloModule& module = ParsedModule();
  size_t printed_bytes = 0;
  for (auto _ : state) {
    std::string out;
    PrintModule(module, &out);
    printed_bytes = out.size();
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(printed_bytes));
  state.counters["output_bytes"] = static_cast<double>(printed_bytes);
}
BENCHMARK(BM_Print)->Unit(benchmark::kMillisecond);

void BM_Memcpy(benchmark::State& state) {
  const std::string& text = ModuleText();
  std::vector<char> buffer(text.size());
  for (auto _ : state) {
    std::memcpy(buffer.data(), text.data(), text.size());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond);

void BM_ScanBytes(benchmark::State& state) {
  const std::string& text = ModuleText();
  for (auto _ : state) {
    int64_t lines = 0, braces = 0;
    for (char c : text) {
      if (c == '\n') {
        ++lines;
      } else if (c == '{') {
        ++braces;
      }
    }
    benchmark::DoNotOptimize(lines);
    benchmark::DoNotOptimize(braces);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ScanBytes)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hlo

BENCHMARK_MAIN();

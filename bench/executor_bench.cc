// Memory-bound throughput of the CPU executor, and its peak resident memory, each against a
// baseline measured in the same process.
//
// Bandwidth is "bytes touched per second": every byte an operation reads plus every byte it
// writes. A memcpy of N bytes touches 2N; a binary elementwise op over N-byte operands touches
// 3N (two reads, one write); a unary op 2N. The ratios below compare those rates, so a ratio of
// 1.0 means the executor streams memory as fast as memcpy does.
//
// Benchmarks:
//   BM_Memcpy            memcpy of 64 MiB between two preallocated, already-faulted buffers.
//   BM_ElementwiseChain  multiply -> add -> maximum -> negate over f32[16M] (64 MiB per value)
//                        on one device through RunOnDevices, the path spmd-run and verify take
//                        (an Evaluator plus the runner's process setup, host_malloc.h). Each
//                        op allocates its result, as the executor always does; copying the two
//                        arguments is not timed.
//   BM_ElementwiseRatio  the chain and the memcpy alternating in each iteration (machine
//                        noise hits both alike). `ratio_to_memcpy` = chain bandwidth / memcpy
//                        bandwidth, both in bytes touched per second (11 x 64 MiB for the
//                        chain: 3 + 3 + 3 + 2). Target: >= 0.25.
//   BM_AllGatherRatio    RunOnDevices with 8 devices on `all-gather(p), dimensions={0}` where
//                        each device's output is f32[16M] (64 MiB) gathered from 8 MiB shards,
//                        alternating with the memcpy. The all-gather touches 8 x 2 x 64 MiB
//                        (every device reads 64 MiB of shards and writes its 64 MiB output);
//                        `ratio_to_memcpy` compares that rate with memcpy's. Target: >= 0.30.
//                        `per_device_ratio` also reports the stricter figure that counts only
//                        one device's 64 MiB (it cannot exceed about cores / 8).
//
// Peak memory (`executor_bench --memory`, a mode of its own so that it runs in a fresh process
// where nothing else has raised the high-water mark): runs a chain of unary and self-binary ops
// over f32[32M] (128 MiB values) in which at most two values are alive at once, so the largest
// live set is X = 256 MiB (run through RunOnDevices, so with the runner's malloc settings); prints
// ru_maxrss from getrusage(RUSAGE_SELF) and the budget 2X + 100 MiB, and exits 1 when the peak is
// over budget.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hlo/ir/literal.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/strings.h"
#include "runtime/cpu/multi_device_runner.h"

namespace runtime {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kBytes = 64 * kMiB;      // One value of the chain; one all-gather output.
constexpr int64_t kElements = kBytes / 4;  // f32[16M].
constexpr int64_t kDevices = 8;
constexpr int64_t kChainTouched = 11 * kBytes;  // multiply 3 + add 3 + maximum 3 + negate 2.
constexpr int64_t kGatherTouched = kDevices * 2 * kBytes;

double Seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::unique_ptr<hlo::HloModule> ParseOrDie(const std::string& text) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  if (!module.ok()) {
    std::fprintf(stderr, "parse failed: %s\n", std::string(module.status().message()).c_str());
    std::abort();
  }
  return *std::move(module);
}

// f32[n] with element i = (i % 1000 - 500) / 64 + offset, all exactly representable.
hlo::Literal Ramp(int64_t n, float offset) {
  hlo::Literal l(hlo::Shape::Array(hlo::PrimitiveType::kF32, {n}));
  float* data = reinterpret_cast<float*>(l.mutable_data()->data());
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(i % 1000 - 500) / 64 + offset;
  return l;
}

const float* Floats(const hlo::Literal& l) {
  return reinterpret_cast<const float*>(l.data().data());
}

template <typename T>
T OrDie(absl::StatusOr<T> value, const char* what) {
  if (!value.ok()) {
    std::fprintf(stderr, "%s failed: %s\n", what, std::string(value.status().message()).c_str());
    std::abort();
  }
  return *std::move(value);
}

// ---- memcpy baseline -------------------------------------------------------------------------

struct CopyBuffers {
  std::vector<uint8_t> from = std::vector<uint8_t>(kBytes, 1);
  std::vector<uint8_t> to = std::vector<uint8_t>(kBytes, 2);  // Faulted in once, here.
};

CopyBuffers& Buffers() {
  static CopyBuffers* buffers = new CopyBuffers();
  return *buffers;
}

void CopyOnce() {
  CopyBuffers& b = Buffers();
  std::memcpy(b.to.data(), b.from.data(), kBytes);
  benchmark::ClobberMemory();
}

// Times one memcpy of kBytes.
double TimeMemcpy() {
  Clock::time_point t0 = Clock::now();
  CopyOnce();
  return Seconds(t0, Clock::now());
}

void BM_Memcpy(benchmark::State& state) {
  Buffers();
  for (auto _ : state) CopyOnce();
  state.SetBytesProcessed(state.iterations() * 2 * kBytes);  // Bytes touched.
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond);

// ---- elementwise chain -----------------------------------------------------------------------

std::string ChainModule() {
  const std::string s = hlo::StrCat("f32[", kElements, "]");
  return hlo::StrCat("HloModule elementwise_chain\nENTRY e {\n",  //
                     "  x = ", s, " parameter(0)\n",              //
                     "  y = ", s, " parameter(1)\n",              //
                     "  m = ", s, " multiply(x, y)\n",            //
                     "  a = ", s, " add(m, y)\n",                 //
                     "  mx = ", s, " maximum(a, x)\n",            //
                     "  ROOT n = ", s, " negate(mx)\n}\n");
}

struct ChainFixture {
  std::unique_ptr<hlo::HloModule> module;
  hlo::Literal x, y;
};

// Runs `module` on one device; `args` are consumed.
hlo::Literal RunOneDevice(const hlo::HloModule& module, std::vector<hlo::Literal> args) {
  std::vector<std::vector<hlo::Literal>> per_device;
  per_device.push_back(std::move(args));
  std::vector<hlo::Literal> out =
      OrDie(RunOnDevices(module, std::move(per_device), MultiDeviceOptions()), "one-device run");
  return std::move(out[0]);
}

// Parses the chain and checks the executor's result once, so a broken handler fails loudly.
ChainFixture& Chain() {
  static ChainFixture* fixture = [] {
    auto* f = new ChainFixture();
    f->module = ParseOrDie(ChainModule());
    f->x = Ramp(kElements, 0.25f);
    f->y = Ramp(kElements, -1.5f);
    hlo::Literal got = RunOneDevice(*f->module, {f->x, f->y});
    const float *x = Floats(f->x), *y = Floats(f->y), *n = Floats(got);
    for (int64_t i = 0; i < kElements; i += 4099) {
      const float a = x[i] * y[i] + y[i];
      const float want = -(a > x[i] ? a : x[i]);
      if (n[i] != want) {
        std::fprintf(stderr, "chain differs at %ld: %g vs %g\n", static_cast<long>(i), n[i], want);
        std::abort();
      }
    }
    return f;
  }();
  return *fixture;
}

void BM_ElementwiseChain(benchmark::State& state) {
  ChainFixture& f = Chain();
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<hlo::Literal> args = {f.x, f.y};
    state.ResumeTiming();
    benchmark::DoNotOptimize(RunOneDevice(*f.module, std::move(args)));
  }
  state.SetBytesProcessed(state.iterations() * kChainTouched);
}
BENCHMARK(BM_ElementwiseChain)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ElementwiseRatio(benchmark::State& state) {
  ChainFixture& f = Chain();
  Buffers();
  double chain_s = 0, memcpy_s = 0;
  for (auto _ : state) {
    std::vector<hlo::Literal> args = {f.x, f.y};
    Clock::time_point t0 = Clock::now();
    benchmark::DoNotOptimize(RunOneDevice(*f.module, std::move(args)));
    chain_s += Seconds(t0, Clock::now());
    memcpy_s += TimeMemcpy();
  }
  const double chain_rate = kChainTouched * static_cast<double>(state.iterations()) / chain_s;
  const double memcpy_rate = 2.0 * kBytes * state.iterations() / memcpy_s;
  state.counters["ratio_to_memcpy"] = chain_rate / memcpy_rate;
  state.counters["chain_GBps"] = chain_rate / 1e9;
  state.counters["memcpy_GBps"] = memcpy_rate / 1e9;
}
BENCHMARK(BM_ElementwiseRatio)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();

// ---- all-gather on 8 devices -----------------------------------------------------------------

std::string AllGatherModule() {
  return hlo::StrCat("HloModule all_gather\nENTRY e {\n  p = f32[", kElements / kDevices,
                     "] parameter(0)\n  ROOT g = f32[", kElements,
                     "] all-gather(p), dimensions={0}, replica_groups={{0,1,2,3,4,5,6,7}}, "
                     "channel_id=1, use_global_device_ids=true\n}\n");
}

struct GatherFixture {
  std::unique_ptr<hlo::HloModule> module;
  std::vector<hlo::Literal> shards;  // Device d's argument.
  MultiDeviceOptions options;
};

std::vector<std::vector<hlo::Literal>> GatherArguments(const GatherFixture& f) {
  std::vector<std::vector<hlo::Literal>> args(kDevices);
  for (int64_t d = 0; d < kDevices; ++d) args[d].push_back(f.shards[d]);
  return args;
}

GatherFixture& Gather() {
  static GatherFixture* fixture = [] {
    auto* f = new GatherFixture();
    f->module = ParseOrDie(AllGatherModule());
    f->options.num_partitions = kDevices;
    for (int64_t d = 0; d < kDevices; ++d) {
      f->shards.push_back(Ramp(kElements / kDevices, static_cast<float>(d) * 1000));
    }
    std::vector<hlo::Literal> outs =
        OrDie(RunOnDevices(*f->module, GatherArguments(*f), f->options), "all-gather");
    const int64_t shard = kElements / kDevices;
    for (const hlo::Literal& out : outs) {
      for (int64_t i = 0; i < kElements; i += 4099) {
        if (Floats(out)[i] != Floats(f->shards[i / shard])[i % shard]) {
          std::fprintf(stderr, "all-gather differs at %ld\n", static_cast<long>(i));
          std::abort();
        }
      }
    }
    return f;
  }();
  return *fixture;
}

void BM_AllGatherRatio(benchmark::State& state) {
  GatherFixture& f = Gather();
  Buffers();
  double gather_s = 0, memcpy_s = 0;
  for (auto _ : state) {
    std::vector<std::vector<hlo::Literal>> args = GatherArguments(f);
    Clock::time_point t0 = Clock::now();
    benchmark::DoNotOptimize(RunOnDevices(*f.module, std::move(args), f.options));
    gather_s += Seconds(t0, Clock::now());
    memcpy_s += TimeMemcpy();
  }
  const double n = static_cast<double>(state.iterations());
  const double gather_rate = kGatherTouched * n / gather_s;
  const double memcpy_rate = 2.0 * kBytes * n / memcpy_s;
  state.counters["ratio_to_memcpy"] = gather_rate / memcpy_rate;
  state.counters["per_device_ratio"] = gather_rate / kDevices / memcpy_rate;
  state.counters["gather_GBps"] = gather_rate / 1e9;
  state.counters["memcpy_GBps"] = memcpy_rate / 1e9;
}
BENCHMARK(BM_AllGatherRatio)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();

// ---- peak resident memory (--memory) ---------------------------------------------------------

constexpr int64_t kMemoryValueBytes = 128 * kMiB;            // f32[32M].
constexpr int64_t kMemoryLiveBytes = 2 * kMemoryValueBytes;  // X: an op's operand and result.

// Each value is used only by the next instruction, so the evaluator frees it right after that
// instruction runs: the live set never holds more than one operand and one result.
std::string MemoryChainModule() {
  const std::string s = hlo::StrCat("f32[", kMemoryValueBytes / 4, "]");
  std::string text =
      hlo::StrCat("HloModule memory_chain\nENTRY e {\n  v0 = ", s, " parameter(0)\n");
  const char* ops[] = {"negate(v%)",      "multiply(v%, v%)", "add(v%, v%)", "abs(v%)",
                       "maximum(v%, v%)", "negate(v%)",       "add(v%, v%)", "exponential(v%)"};
  int v = 0;
  for (int round = 0; round < 2; ++round) {
    for (const char* op : ops) {
      std::string call;
      for (const char* c = op; *c != '\0'; ++c) {
        if (*c == '%') {
          call += hlo::StrCat(v);
        } else {
          call += *c;
        }
      }
      const bool last = round == 1 && op == ops[7];
      text += hlo::StrCat(last ? "  ROOT v" : "  v", v + 1, " = ", s, " ", call, "\n");
      ++v;
    }
  }
  return text + "}\n";
}

int64_t MaxRssBytes() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB.
}

int RunMemoryCheck() {
  const int64_t before = MaxRssBytes();
  std::unique_ptr<hlo::HloModule> module = ParseOrDie(MemoryChainModule());
  std::vector<hlo::Literal> args;
  args.push_back(Ramp(kMemoryValueBytes / 4, 0.5f));
  hlo::Literal result = RunOneDevice(*module, std::move(args));
  benchmark::DoNotOptimize(result.data().data());
  const int64_t peak = MaxRssBytes();
  const int64_t budget = 2 * kMemoryLiveBytes + 100 * kMiB;
  std::printf(
      "peak_rss_mib=%.1f live_set_mib=%.1f budget_mib=%.1f rss_before_mib=%.1f "
      "peak_over_live=%.3f %s\n",
      peak / double(kMiB), kMemoryLiveBytes / double(kMiB), budget / double(kMiB),
      before / double(kMiB), peak / double(kMemoryLiveBytes), peak <= budget ? "PASS" : "FAIL");
  return peak <= budget ? 0 : 1;
}

}  // namespace
}  // namespace runtime

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--memory") == 0) return runtime::RunMemoryCheck();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

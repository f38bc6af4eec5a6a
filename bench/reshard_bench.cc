// The reshard planner's search on 128 devices: plans from a kernel tiled [2,8,4,2] in a random
// explicit device order (the fuzzer's slow convolution, failure-hang-2702-2977) to three iota
// tilings, one of them transposed, against the same plans from the iota-ordered kernel,
// interleaved in one run; random_ms and iota_ms per three plans, and their ratio. Measured at
// 28c2273: 370 ms and 376 ms, ratio 0.98 -- the cost is not the random order's but that of
// searches that must prove a collective-permute path the cheapest, which a transposed target
// asks of an iota source too; with the permute bound (docs/reshard.md) 201 ms and 158 ms. No
// cache: each plan is searched afresh.
//
//   bench/run.sh (or bazel run -c opt //bench:reshard_bench)
#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/reshard/reshard_planner.h"

namespace {

using hlo::HloSharding;

HloSharding S(const std::string& text) { return HloSharding::Parse(text).value(); }

std::string RandomOrderKernel() {
  std::vector<int64_t> order(128);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(2702));
  std::string devices;
  for (int64_t device : order) devices += (devices.empty() ? "" : ",") + std::to_string(device);
  return "{devices=[2,8,4,2]" + devices + "}";
}

// Plans every target from `from`; the total bytes, so nothing is optimized away.
int64_t PlanAll(const hlo::Shape& shape, const HloSharding& from) {
  static const char* const kTargets[] = {
      "{devices=[1,1,1,8,16]<=[16,8]T(1,0) last_tile_dim_replicate}", "{devices=[1,1,16,8]<=[128]}",
      "{devices=[16,1,1,8]<=[128]}"};
  int64_t bytes = 0;
  for (const char* to : kTargets) {
    absl::StatusOr<spmd::ReshardPlan> plan =
        spmd::PlanReshard(shape, from, S(to), 128, spmd::LinkModel());
    if (plan.ok()) bytes += plan->bytes_received_per_device;
  }
  return bytes;
}

void BM_ReshardRandomOrderRatio(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  const hlo::Shape shape = hlo::Shape::Array(hlo::PrimitiveType::kBF16, {3, 3, 1280, 1280});
  const HloSharding random = S(RandomOrderKernel());
  const HloSharding iota = S("{devices=[2,8,4,2]<=[128]}");
  double random_s = 0, iota_s = 0;
  for (auto _ : state) {
    const Clock::time_point t0 = Clock::now();
    benchmark::DoNotOptimize(PlanAll(shape, random));
    const Clock::time_point t1 = Clock::now();
    benchmark::DoNotOptimize(PlanAll(shape, iota));
    const Clock::time_point t2 = Clock::now();
    random_s += std::chrono::duration<double>(t1 - t0).count();
    iota_s += std::chrono::duration<double>(t2 - t1).count();
  }
  state.counters["random_over_iota_ratio"] = iota_s > 0 ? random_s / iota_s : 0;
  state.counters["random_ms"] = 1e3 * random_s / state.iterations();
  state.counters["iota_ms"] = 1e3 * iota_s / state.iterations();
}
BENCHMARK(BM_ReshardRandomOrderRatio)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();

#include "spmd/reshard/reshard_planner.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/sharding/shard_geometry.h"
#include "spmd/reshard/reshard_bound.h"
#include "spmd/reshard/reshard_state.h"
#include "spmd/reshard/reshard_testing.h"

namespace spmd {
namespace {

using hlo::HloSharding;
using hlo::Shape;
using testing::kTestDevices;

HloSharding S(const std::string& text) { return HloSharding::Parse(text).value(); }

const Shape kShape = Shape::Array(hlo::PrimitiveType::kF32, {16, 24});

ReshardPlan Plan(const std::string& from, const std::string& to, const Shape& shape = kShape,
                 LinkModel link = LinkModel()) {
  absl::StatusOr<ReshardPlan> plan = PlanReshard(shape, S(from), S(to), kTestDevices, link);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : ReshardPlan();
}

std::vector<std::string> Kinds(const ReshardPlan& plan) {
  std::vector<std::string> kinds;
  for (const ReshardStep& step : plan.steps) kinds.emplace_back(ReshardStepKindName(step.kind));
  return kinds;
}

using Kinds_ = std::vector<std::string>;

// The bytes some device must receive whatever the plan: the elements of its target region
// that its source region lacks, maximized over devices.
int64_t LowerBoundBytes(const Shape& shape, const HloSharding& from, const HloSharding& to) {
  int64_t worst = 0;
  for (int64_t device = 0; device < kTestDevices; ++device) {
    hlo::ShardRegion have = hlo::ShardRegionForDevice(from, shape, device).value();
    hlo::ShardRegion need = hlo::ShardRegionForDevice(to, shape, device).value();
    int64_t total = 1, overlap = 1;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      total *= std::max<int64_t>(need.limits[d] - need.offsets[d], 0);
      const int64_t lo = std::max(have.offsets[d], need.offsets[d]);
      const int64_t hi = std::min(have.limits[d], need.limits[d]);
      overlap *= std::max<int64_t>(hi - lo, 0);
    }
    worst = std::max(worst, (total - overlap) * 4);
  }
  return worst;
}

// [2,4]<=[8] -> [4,2]<=[2,4]T(1,0) swaps which device digits split rows and columns. A single
// all-to-all cannot do it: device 2 ends with rows 8..11 x cols 0..11 and starts with rows
// 0..7 x cols 12..17 (no common element), but an all-to-all keeps one chunk of a device's own
// buffer. The cheapest plan is one all-to-all (96 B) moving the column split's minor factor to
// the rows, giving [4,2]<=[2,2,2]T(0,2,1) (the right grid, devices in another order), then one
// collective-permute of the f32[4,12] shard (192 B). Permute first, then all-to-all, costs the
// same and loses the tie (the search settles the all-to-all side first). XLA does the same
// pair of collectives (ReshardWithAllToAll, then a collective-permute).
// The best path through the search (an all-to-all to [4,2]<=[2,2,2]T(0,2,1), then a permute
// of whole shards) moves 288 bytes; the direct exchange moves only the 4x6 cells each device
// lacks: at most two, 192 bytes, in two rounds.
TEST(ReshardPlannerTest, IotaToTransposedIotaIsADirectExchange) {
  ReshardPlan plan = Plan("{devices=[2,4]<=[8]}", "{devices=[4,2]<=[2,4]T(1,0)}");
  EXPECT_EQ(Kinds(plan), (Kinds_{"exchange"})) << plan.Explain();
  EXPECT_EQ(plan.bytes_received_per_device, 192);
  EXPECT_FALSE(plan.full_rematerialization);
}

// openxla/xla#4062's result reshard: [4,2] -> [2,4] of f32[8192,8192]. Some device holds none
// of its new 4096x2048 region, so 32 MiB is the least any plan can deliver to it; two
// all-to-alls would deliver 40 MiB.
TEST(ReshardPlannerTest, Issue4062ResultReshardReceivesOneTile) {
  absl::StatusOr<ReshardPlan> plan =
      PlanReshard(hlo::Shape::Array(hlo::PrimitiveType::kF32, {8192, 8192}),
                  S("{devices=[4,2]<=[8]}"), S("{devices=[2,4]<=[8]}"), 8, LinkModel());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Kinds(*plan), (Kinds_{"exchange"})) << plan->Explain();
  EXPECT_EQ(plan->bytes_received_per_device, 32LL << 20);
}

// XLA's MultipleSourceTargetDimsInOneAllToAll: both source split dims give way to both target
// split dims in one all-to-all among the 8 devices (7/8 of the 8 MiB shard received), where
// two stepwise all-to-alls receive 10 MiB.
TEST(ReshardPlannerTest, SeveralDimsMoveInOneDirectAllToAll) {
  absl::StatusOr<ReshardPlan> plan = PlanReshard(
      hlo::Shape::Array(hlo::PrimitiveType::kS32, {64, 64, 64, 64}), S("{devices=[1,4,2,1]<=[8]}"),
      S("{devices=[2,1,1,4]<=[4,2]T(1,0)}"), 8, LinkModel());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Kinds(*plan), (Kinds_{"direct-all-to-all"})) << plan->Explain();
  EXPECT_EQ(plan->bytes_received_per_device, 7 * (1 << 20));
}

// XLA's MultipleSourceTargetDimsInOneAllToAll3: dims 0 and 1 are split in both shardings (2 ->
// 4 and 4 -> 2), so devices sharing the coarser tiles form groups of 16 that exchange among
// themselves in one all-to-all: 15/16 of the 1 MiB shard (XLA's), where two stepwise
// all-to-alls receive 1.375 MiB.
TEST(ReshardPlannerTest, DimsSplitInBothMoveInOneGroupedAllToAll) {
  absl::StatusOr<ReshardPlan> plan = PlanReshard(
      hlo::Shape::Array(hlo::PrimitiveType::kF32, {64, 64, 64, 64}), S("{devices=[2,4,8,1]<=[64]}"),
      S("{devices=[4,2,1,8]<=[2,2,2,8]T(0,2,1,3)}"), 64, LinkModel());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Kinds(*plan), (Kinds_{"direct-all-to-all"})) << plan->Explain();
  EXPECT_EQ(plan->bytes_received_per_device, 15 * (1 << 16));
}

TEST(ReshardPlannerTest, ReplicatingTheColumnsIsOneAllGather) {
  ReshardPlan plan = Plan("{devices=[2,4]<=[8]}", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  ASSERT_EQ(Kinds(plan), (Kinds_{"all-gather"})) << plan.Explain();
  EXPECT_EQ(plan.steps[0].dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(plan.steps[0].replica_groups.iota.has_value(), true);
  EXPECT_EQ(plan.steps[0].group_size, 4);
  EXPECT_EQ(plan.bytes_received_per_device, 576);  // f32[8,24] out, 3/4 of it received.
}

TEST(ReshardPlannerTest, MovingTheWholeSplitToTheOtherDimIsOneAllToAll) {
  ReshardPlan rows_to_cols = Plan("{devices=[8,1]<=[8]}", "{devices=[1,8]<=[8]}");
  EXPECT_EQ(Kinds(rows_to_cols), (Kinds_{"all-to-all"})) << rows_to_cols.Explain();
  EXPECT_EQ(rows_to_cols.bytes_received_per_device, 168);  // f32[2,24] * 7/8
  ReshardPlan cols_to_rows = Plan("{devices=[2,4]<=[8]}", "{devices=[8,1]<=[8]}");
  EXPECT_EQ(Kinds(cols_to_rows), (Kinds_{"all-to-all"})) << cols_to_rows.Explain();
  EXPECT_EQ(cols_to_rows.bytes_received_per_device, 144);  // f32[8,6] * 3/4
}

// The bound: device 2 needs column tile 1 (all rows), held only by devices 1 and 5.
TEST(ReshardPlannerTest, PartialReplicationOnTheOtherDimMeetsTheLowerBound) {
  const std::string from = "{devices=[2,4]<=[8]}";
  const std::string to = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}";
  ReshardPlan plan = Plan(from, to);
  EXPECT_EQ(Kinds(plan), (Kinds_{"collective-permute", "all-gather"})) << plan.Explain();
  EXPECT_EQ(plan.bytes_received_per_device, 384);
  EXPECT_EQ(plan.bytes_received_per_device, LowerBoundBytes(kShape, S(from), S(to)));
}

TEST(ReshardPlannerTest, ReplicatedSourcesOnlySlice) {
  for (const std::string& to : testing::TestShardings()) {
    ReshardPlan plan = Plan("{replicated}", to);
    EXPECT_EQ(plan.bytes_received_per_device, 0) << plan.Explain();
    EXPECT_LE(plan.steps.size(), 1u) << plan.Explain();
    EXPECT_FALSE(plan.full_rematerialization);
  }
}

TEST(ReshardPlannerTest, DeviceOrderChangeIsOnePermute) {
  ReshardPlan plan = Plan("{devices=[2,4]3,1,0,2,7,5,4,6}", "{devices=[2,4]<=[8]}");
  ASSERT_EQ(Kinds(plan), (Kinds_{"collective-permute"})) << plan.Explain();
  EXPECT_EQ(plan.bytes_received_per_device, 192);
  // Device 1 keeps its tile (a self pair), so every device is a target.
  EXPECT_EQ(plan.steps[0].source_target_pairs.size(), 8u);
}

TEST(ReshardPlannerTest, PartialSourceSlicesLocallyThenPermutes) {
  const std::string from = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}";
  const std::string to = "{devices=[4,2]<=[2,4]T(1,0)}";
  ReshardPlan plan = Plan(from, to);
  EXPECT_EQ(Kinds(plan), (Kinds_{"dynamic-slice", "collective-permute"})) << plan.Explain();
  EXPECT_EQ(plan.bytes_received_per_device, LowerBoundBytes(kShape, S(from), S(to)));
}

TEST(ReshardPlannerTest, MaximalEndpoints) {
  ReshardPlan to_maximal = Plan("{devices=[2,4]<=[8]}", "{maximal device=3}");
  EXPECT_EQ(Kinds(to_maximal), (Kinds_{"all-gather", "all-gather", "relabel"}))
      << to_maximal.Explain();
  EXPECT_EQ(to_maximal.bytes_received_per_device, 1344);
  EXPECT_FALSE(to_maximal.full_rematerialization);
  ReshardPlan move = Plan("{maximal device=3}", "{maximal device=5}");
  EXPECT_EQ(Kinds(move), (Kinds_{"collective-permute"}));
  EXPECT_EQ(move.bytes_received_per_device, 1536);
  ReshardPlan from_maximal = Plan("{maximal device=3}", "{replicated}");
  EXPECT_EQ(Kinds(from_maximal), (Kinds_{"broadcast"}));
}

TEST(ReshardPlannerTest, UnevenShapesCostPaddedShards) {
  const Shape uneven = Shape::Array(hlo::PrimitiveType::kF32, {15, 23});
  ReshardPlan plan = Plan("{devices=[8,1]<=[8]}", "{devices=[1,8]<=[8]}", uneven);
  EXPECT_EQ(Kinds(plan), (Kinds_{"all-to-all"})) << plan.Explain();
  // f32[2,23] shard, dim 1 padded to 8*3: buffer f32[2,24] = 192 B, 7/8 received.
  EXPECT_EQ(plan.bytes_received_per_device, 168);
  // 10 rows in 2 and 4 tiles do not nest: no single-factor all-gather from 4 to 2 row tiles.
  const Shape misaligned = Shape::Array(hlo::PrimitiveType::kF32, {10, 7});
  ReshardPlan rows = Plan("{devices=[4,1,2]<=[8] last_tile_dim_replicate}",
                          "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", misaligned);
  for (const ReshardStep& step : rows.steps) {
    if (step.kind == ReshardStepKind::kAllGather) {
      EXPECT_NE(step.sharding, S("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"))
          << rows.Explain();
    }
  }
}

// Every ordered pair of test shardings, on every test shape: the plan never costs more than
// replicate-then-slice, never receives less than the lower bound, and is the fallback only
// when nothing cheaper exists. With a latency-free link, time is proportional to bytes, so
// "cheaper" means fewer bytes, and no pair needs the fallback. On the default link (5 us per
// collective) the ~1.5 KB shards of these arrays cost a few ns of transfer, so the number of
// collectives decides: e.g. [8,1]<=[2,4]T(1,0) -> [2,4]<=[8] takes one all-gather of everything
// (1 collective, 1344 B) over all-to-all + all-to-all (2 collectives, 264 B).
TEST(ReshardPlannerTest, EveryPairBeatsOrEqualsReplicateThenSlice) {
  for (const LinkModel& link : {LinkModel(), LinkModel{0.0, 100000.0}}) {
    int pairs = 0, strictly_fewer = 0, fallbacks = 0;
    for (const Shape& shape : testing::TestShapes()) {
      for (const std::string& from : testing::TestShardings()) {
        for (const std::string& to : testing::TestShardings()) {
          ReshardPlan plan = Plan(from, to, shape, link);
          ReshardPlan fallback =
              PlanReplicateThenSlice(shape, S(from), S(to), kTestDevices, link).value();
          SCOPED_TRACE(plan.Explain() + fallback.Explain());
          ++pairs;
          EXPECT_LE(plan.cost_us, fallback.cost_us + 1e-9);
          EXPECT_LE(plan.bytes_received_per_device, fallback.bytes_received_per_device);
          EXPECT_GE(plan.bytes_received_per_device, LowerBoundBytes(shape, S(from), S(to)));
          if (plan.bytes_received_per_device < fallback.bytes_received_per_device) {
            ++strictly_fewer;
          }
          if (plan.full_rematerialization) ++fallbacks;
          if (!plan.steps.empty()) {
            EXPECT_EQ(plan.steps.back().sharding, S(to));
          }
        }
      }
    }
    std::printf(
        "latency %.1f us: %d pairs, %d strictly fewer bytes than replicate-then-slice, "
        "%d full rematerializations\n",
        link.latency_us, pairs, strictly_fewer, fallbacks);
    EXPECT_EQ(pairs, 3 * 15 * 15);
    if (link.latency_us == 0) {
      EXPECT_EQ(fallbacks, 0);
      // The rest have equal bytes: identical or replicated ends, and maximal or replicated
      // targets (which every plan must gather whole). 526 since a maximal source is scattered
      // by collective-permutes from its owner (one pair more than with an all-to-all).
      EXPECT_EQ(strictly_fewer, 526);
    }
  }
}

// Issue 18's reshard bar: for every ordered pair of 12 shardings of f32[4096,6144] on 8 devices
// (single-device, tiled, transposed, partially replicated), the bytes a device receives are
// within 1.1x of what some device must receive (target bytes it does not hold) in at least
// 90% of the pairs, and never above 2x.
TEST(ReshardPlannerTest, LargeArrayPairsReceiveNearTheMinimum) {
  const Shape shape = Shape::Array(hlo::PrimitiveType::kF32, {4096, 6144});
  // The test shardings but replicated (a replicated source moves nothing) and two of the three
  // explicit device orders.
  std::vector<std::string> shardings;
  for (const std::string& s : testing::TestShardings()) {
    if (s != "{replicated}" && s != "{devices=[4,2]5,0,3,6,1,7,2,4}" &&
        s != "{devices=[8,1]6,2,7,3,5,1,4,0}") {
      shardings.push_back(s);
    }
  }
  ASSERT_EQ(shardings.size(), 12u);
  int pairs = 0, near = 0;
  double worst = 0;
  std::string worst_pair;
  for (const std::string& from : shardings) {
    for (const std::string& to : shardings) {
      if (from == to) continue;
      const ReshardPlan plan = Plan(from, to, shape);
      const int64_t must = LowerBoundBytes(shape, S(from), S(to));
      const double ratio = must == 0 ? (plan.bytes_received_per_device == 0 ? 1.0 : 1e9)
                                     : static_cast<double>(plan.bytes_received_per_device) / must;
      ++pairs;
      if (ratio <= 1.1) {
        ++near;
      } else {
        std::printf("%.2fx  %s -> %s: %lld B, must %lld B\n", ratio, from.c_str(), to.c_str(),
                    static_cast<long long>(plan.bytes_received_per_device),
                    static_cast<long long>(must));
      }
      if (ratio > worst) {
        worst = ratio;
        worst_pair = from + " -> " + to + "\n" + plan.Explain();
      }
    }
  }
  std::printf("%d of %d pairs within 1.1x of the minimum; worst %.2fx\n", near, pairs, worst);
  EXPECT_GE(near, 0.9 * pairs);
  EXPECT_LE(worst, 2.0) << worst_pair;
}

// Calls f(link, shape, from, to, x, y) for every link, test shape and pair of tiled or
// replicated test shardings, x and y their states.
template <typename F>
void ForEachTiledPair(F f) {
  for (const LinkModel& link : {LinkModel(), LinkModel{0.0, 100000.0}}) {
    for (const Shape& shape : testing::TestShapes()) {
      for (const std::string& from : testing::TestShardings()) {
        for (const std::string& to : testing::TestShardings()) {
          if (S(from).kind() == HloSharding::Kind::kMaximal ||
              S(to).kind() == HloSharding::Kind::kMaximal) {
            continue;
          }
          f(link, shape, from, to, TileState::FromSharding(S(from), 2, kTestDevices).value(),
            TileState::FromSharding(S(to), 2, kTestDevices).value());
        }
      }
    }
  }
}

// The search's A* bound (reshard_bound.h), measured from either end, is the largest count of
// target-region bytes a device lacks (LowerBoundBytes) plus one collective's latency, and
// never exceeds any plan in time, bytes or steps.
TEST(ReshardPlannerTest, RegionBoundNeverExceedsThePlan) {
  ForEachTiledPair([](const LinkModel& link, const Shape& shape, const std::string& from,
                      const std::string& to, const TileState& x, const TileState& y) {
    const CostBound forward = RegionBound(y, true, shape.dimensions(), 4, link).From(x);
    const CostBound backward = RegionBound(x, false, shape.dimensions(), 4, link).From(y);
    const ReshardPlan plan = Plan(from, to, shape, link);
    SCOPED_TRACE(plan.Explain());
    EXPECT_EQ(forward.bytes, LowerBoundBytes(shape, S(from), S(to)));
    EXPECT_EQ(forward.bytes, backward.bytes);
    EXPECT_EQ(forward.steps, forward.bytes > 0 ? 1 : 0);
    EXPECT_LE(forward.time_us, plan.cost_us + 1e-9);
    EXPECT_LE(forward.bytes, plan.bytes_received_per_device);
    EXPECT_LE(forward.steps, static_cast<int64_t>(plan.steps.size()));
  });
}

// The escalated search's bounds (reshard_bound.h: region, grid, and the smaller of the
// permute bound and the permute-free one) from either end never exceed a plan the search
// found: the search stays exact once it is escalated. (Exchanges and direct
// all-to-alls are planned beside the search, from regions: only the region bound covers them.)
TEST(ReshardPlannerTest, EscalatedBoundsNeverExceedThePlan) {
  int searched_pairs = 0;
  ForEachTiledPair([&](const LinkModel& link, const Shape& shape, const std::string& from,
                       const std::string& to, const TileState& x, const TileState& y) {
    const GridGraph graph(2, kTestDevices, shape.dimensions(), 4, link);
    const RegionBound::Bounds to_y = RegionBound(y, true, shape.dimensions(), 4, link).FromBoth(x);
    const RegionBound::Bounds from_x =
        RegionBound(x, false, shape.dimensions(), 4, link).FromBoth(y);
    const CostBound to_grid = GridBound(graph, y, true).From(x);
    const CostBound from_grid = GridBound(graph, x, false).From(y);
    // Every bound the escalated search orders by (reshard_search.cc's Bounds::From).
    const CostBound forward = Larger(
        Larger(to_y.any, to_grid),
        Smaller(PermuteBound(graph, x, y, true).From(x), Larger(to_y.permute_free, to_grid)));
    const CostBound backward = Larger(
        Larger(from_x.any, from_grid),
        Smaller(PermuteBound(graph, x, y, false).From(y), Larger(from_x.permute_free, from_grid)));
    const ReshardPlan plan = Plan(from, to, shape, link);
    SCOPED_TRACE(plan.Explain());
    const bool searched =
        std::none_of(plan.steps.begin(), plan.steps.end(), [](const ReshardStep& step) {
          return step.kind == ReshardStepKind::kExchange ||
                 step.kind == ReshardStepKind::kDirectAllToAll;
        });
    if (!searched) return;
    ++searched_pairs;
    const CostBound planned{plan.cost_us, plan.bytes_received_per_device,
                            static_cast<int64_t>(plan.steps.size())};
    EXPECT_FALSE(Cheaper(planned, forward)) << forward.time_us << " us";
    EXPECT_FALSE(Cheaper(planned, backward)) << backward.time_us << " us";
  });
  std::printf("%d searched pairs\n", searched_pairs);
  EXPECT_GT(searched_pairs, 500);
}

// Where the tile grids differ in several dims, the grid bound counts a collective for each
// (the region bound one for all): 128 devices, [2,8,4,2] -> [1,1,1,8] with 16-way
// replication must gather dims 0, 1 and 2, each with its own latency.
TEST(ReshardPlannerTest, GridBoundCountsEveryCollectiveAGridChangeNeeds) {
  const std::vector<int64_t> dims = {3, 3, 1280, 1280};
  const LinkModel link;
  const TileState source = TileState::FromSharding(S("{devices=[2,8,4,2]<=[128]}"), 4, 128).value();
  const TileState target =
      TileState::FromSharding(S("{devices=[1,1,1,8,16]<=[16,8]T(1,0) last_tile_dim_replicate}"), 4,
                              128)
          .value();
  const GridGraph graph(4, 128, dims, 2, link);
  const CostBound grid = GridBound(graph, target, true).From(source);
  const CostBound region = RegionBound(target, true, dims, 2, link).From(source);
  EXPECT_EQ(region.steps, 1);
  EXPECT_GE(grid.steps, 3);
  EXPECT_GE(grid.time_us, 3 * link.latency_us);
  EXPECT_TRUE(Cheaper(region, grid)) << region.time_us << " us vs " << grid.time_us << " us";
  // From the target itself nothing is left.
  EXPECT_EQ(GridBound(graph, target, true).From(target).time_us, 0);
}

// 64-device searches stop at the cheapest plan instead of exploring every state reachable by
// free dynamic-slices first (issue 20: WindowedEinsumKeepBatchDimensionsSorted took 1.6 s; the
// state budget cut the second search short at 198.5 us, 18350080 B, 3 steps).
TEST(ReshardPlannerTest, SixtyFourDeviceSearchesFinishAtTheBound) {
  const Shape shape = Shape::Array(hlo::PrimitiveType::kBF16, {32, 128, 16384});
  auto plan64 = [&](const std::string& from, const std::string& to) {
    absl::StatusOr<ReshardPlan> plan = PlanReshard(shape, S(from), S(to), 64, LinkModel());
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? *plan : ReshardPlan();
  };
  const ReshardPlan gather = plan64("{devices=[8,1,8]<=[64]}", "{replicated}");
  EXPECT_EQ(Kinds(gather), (Kinds_{"all-gather", "all-gather"})) << gather.Explain();
  EXPECT_EQ(gather.bytes_received_per_device, 134217728 - 134217728 / 64);
  // Every device but the 8 on the diagonal lacks its whole target region (16 MiB), which
  // this plan receives: a permute of the shard, then an all-gather.
  const ReshardPlan swap =
      plan64("{devices=[1,8,8]<=[64]}", "{devices=[1,8,1,8]<=[8,8]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(Kinds(swap), (Kinds_{"collective-permute", "all-gather"})) << swap.Explain();
  EXPECT_EQ(swap.bytes_received_per_device, 16777216);
}

TEST(ReshardPlannerTest, CacheReturnsTheSamePlanAcrossThreads) {
  ReshardPlanner planner;
  const HloSharding from = S("{devices=[2,4]<=[8]}");
  const HloSharding to = S("{devices=[4,2]<=[2,4]T(1,0)}");
  std::vector<const ReshardPlan*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) seen[t] = planner.Plan(kShape, from, to, kTestDevices)->get();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const ReshardPlan* plan : seen) EXPECT_EQ(plan, seen[0]);
  EXPECT_EQ(planner.cache_size(), 1);
  EXPECT_GE(planner.cache_hits(), 36);
  // Metadata does not split the cache; another dtype does.
  EXPECT_TRUE(planner.Plan(kShape, from.WithMetadata({"op_name=\"x\""}), to, kTestDevices).ok());
  EXPECT_EQ(planner.cache_size(), 1);
  EXPECT_TRUE(
      planner.Plan(Shape::Array(hlo::PrimitiveType::kBF16, {16, 24}), from, to, kTestDevices).ok());
  EXPECT_EQ(planner.cache_size(), 2);
}

TEST(ReshardPlannerTest, RejectsWhatItCannotReshard) {
  EXPECT_FALSE(PlanReshard(kShape, S("{manual}"), S("{replicated}"), 8, LinkModel()).ok());
  EXPECT_FALSE(PlanReshard(kShape, S("{devices=[2,4]<=[8]}"), S("{devices=[8]<=[8]}"), 8,
                           LinkModel())
                   .ok());  // Rank mismatch.
}

// A tiling over 4 of 8 devices goes through replicated (gather-subset: one all-reduce of the
// whole array), and back out to another subset by a local slice; both count as full
// rematerializations.
TEST(ReshardPlannerTest, SubsetTilingsGoThroughReplicated) {
  absl::StatusOr<ReshardPlan> in =
      PlanReshard(kShape, S("{devices=[2,2]<=[4]}"), S("{devices=[2,4]<=[8]}"), 8, LinkModel());
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(Kinds(*in), (Kinds_{"gather-subset", "dynamic-slice"})) << in->Explain();
  EXPECT_TRUE(in->full_rematerialization);
  absl::StatusOr<ReshardPlan> out =
      PlanReshard(kShape, S("{devices=[2,4]<=[8]}"), S("{devices=[1,2]5,7}"), 8, LinkModel());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Kinds(*out), (Kinds_{"all-gather", "all-gather", "slice-subset"})) << out->Explain();
}

TEST(ReshardStateTest, StatesRoundTripThroughShardings) {
  for (const std::string& text : testing::TestShardings()) {
    const HloSharding sharding = S(text);
    if (sharding.kind() == HloSharding::Kind::kMaximal) continue;
    TileState state = TileState::FromSharding(sharding, 2, kTestDevices).value();
    EXPECT_EQ(state.ToSharding().value(), sharding) << text;
  }
}

TEST(ReshardStateTest, AlignedTilesNest) {
  EXPECT_TRUE(Aligned(16, 2, 4));
  EXPECT_TRUE(Aligned(15, 2, 2));   // 8 = 2*4
  EXPECT_TRUE(Aligned(23, 4, 2));   // 6 = 2*3
  EXPECT_FALSE(Aligned(10, 2, 2));  // 5 vs 2*3
  EXPECT_TRUE(Aligned(10, 1, 4));   // The whole dim always nests.
}

}  // namespace
}  // namespace spmd

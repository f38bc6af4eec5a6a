#include "spmd/dot/dot_strategy.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace spmd {
namespace {

using hlo::HloSharding;
using hlo::PrimitiveType;
using hlo::Shape;

HloSharding S(const char* text) { return *HloSharding::Parse(text); }

hlo::DotDimensionNumbers MatMul() {
  hlo::DotDimensionNumbers dn;
  dn.lhs_contracting_dimensions = {1};
  dn.rhs_contracting_dimensions = {0};
  return dn;
}

DotProblem Problem(int64_t m, int64_t k, int64_t n, const char* lhs, const char* rhs,
                   const char* wanted, int64_t devices) {
  const Shape l = Shape::Array(PrimitiveType::kF32, {m, k});
  const Shape r = Shape::Array(PrimitiveType::kF32, {k, n});
  return DotProblem{*DotSpace::Make(l, r, MatMul()),
                    l,
                    r,
                    Shape::Array(PrimitiveType::kF32, {m, n}),
                    S(lhs),
                    S(rhs),
                    S(wanted),
                    devices};
}

// Operand and result shardings of a matmul on 8 devices whose combinations the grid tests try.
const char* const kGridShardings[] = {"{replicated}",
                                      "{devices=[8,1]<=[8]}",
                                      "{devices=[1,8]<=[8]}",
                                      "{devices=[2,4]<=[8]}",
                                      "{devices=[4,1,2]<=[8] last_tile_dim_replicate}",
                                      "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"};

const DotCandidate* Find(const DotDecision& d, const std::string& name) {
  for (const DotCandidate& c : d.candidates) {
    if (c.Name() == name) return &c;
  }
  return nullptr;
}

TEST(DotSpaceTest, LiftAndProjectRoundTrip) {
  DotProblem p = Problem(64, 128, 32, "{devices=[2,2]<=[4]}", "{replicated}", "{replicated}", 4);
  absl::StatusOr<HloSharding> lifted = p.space.Lift(p.lhs_current, p.space.lhs_to_space());
  ASSERT_TRUE(lifted.ok()) << lifted.status();
  EXPECT_EQ(p.space.Describe(*lifted), "m0:2 k0:2");
  EXPECT_EQ(*p.space.Project(*lifted, p.space.lhs_to_space()), p.lhs_current);
  EXPECT_EQ(*p.space.Project(*lifted, p.space.rhs_to_space()),
            S("{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"));
  absl::StatusOr<std::vector<std::vector<int64_t>>> groups = p.space.PendingSumGroups(*lifted);
  ASSERT_TRUE(groups.ok());
  EXPECT_EQ(*groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
}

// openxla/xla#4062 at full size: computing in the operands' [4,2] tiling and resharding the
// result beats both gathering the operands for [2,4] and XLA's all-gather-both.
TEST(DotStrategyTest, Issue4062ReshardsTheResult) {
  DotProblem p =
      Problem(8192, 8192, 8192, "{devices=[4,1,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}",
              "{devices=[1,2,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}",
              "{devices=[2,4]0,1,2,3,4,5,6,7}", 8);
  ReshardPlanner planner;
  absl::StatusOr<DotDecision> d =
      ChooseDotStrategy(p, DefaultDeviceModel(), planner, DotStrategyOptions());
  ASSERT_TRUE(d.ok()) << d.status();
  const DotCandidate& winner = d->candidates[d->winner];
  EXPECT_EQ(winner.family, "operands") << d->Explain("4062");
  EXPECT_NE(winner.letters.find("(d)"), std::string::npos);
  EXPECT_DOUBLE_EQ(winner.flops, 2.0 * 8192.0 * 8192.0 * 8192.0 / 8);
  EXPECT_LE(winner.comm_bytes, 32LL << 20) << d->Explain("4062");
  EXPECT_FALSE(winner.full_rematerialization);
  const DotCandidate* result = Find(*d, "result");
  const DotCandidate* replicated = Find(*d, "replicated");
  ASSERT_NE(result, nullptr);
  ASSERT_NE(replicated, nullptr);
  EXPECT_GT(result->total_us, winner.total_us);
  EXPECT_GT(replicated->comm_bytes, 8 * winner.comm_bytes);
  const std::string explain = d->Explain("4062");
  EXPECT_NE(explain.find("(e)"), std::string::npos) << explain;
  EXPECT_NE(explain.find("all-gather both"), std::string::npos) << explain;
  EXPECT_NE(explain.find("chose operands"), std::string::npos) << explain;
}

// Without the --explain table, tilings whose compute time alone exceeds the best total so far
// are not costed: the winner must be the one costing every candidate picks, over every
// combination of operand and result shardings here, while fewer reshards are planned.
TEST(DotStrategyTest, PruningKeepsTheWinnerAndPlansLess) {
  int64_t pruned = 0, planned_all = 0, planned_pruned = 0;
  for (const char* lhs : kGridShardings) {
    for (const char* rhs : kGridShardings) {
      for (const char* wanted : kGridShardings) {
        DotProblem p = Problem(4096, 2048, 1024, lhs, rhs, wanted, 8);
        ReshardPlanner all_planner, pruned_planner;
        DotStrategyOptions every, prune;
        prune.cost_every_candidate = false;
        absl::StatusOr<DotDecision> full = ChooseDotStrategy(p, DefaultDeviceModel(), all_planner,
                                                             every);
        absl::StatusOr<DotDecision> fast = ChooseDotStrategy(p, DefaultDeviceModel(),
                                                             pruned_planner, prune);
        ASSERT_EQ(full.ok(), fast.ok()) << lhs << " " << rhs << " " << wanted;
        if (!full.ok()) continue;
        const DotCandidate& a = full->candidates[full->winner];
        const DotCandidate& b = fast->candidates[fast->winner];
        EXPECT_EQ(a.Name(), b.Name()) << lhs << " x " << rhs << " -> " << wanted << "\n"
                                      << full->Explain("all") << fast->Explain("pruned");
        EXPECT_EQ(a.space, b.space);
        EXPECT_EQ(a.total_us, b.total_us);
        EXPECT_EQ(a.comm_bytes, b.comm_bytes);
        EXPECT_EQ(full->pruned, 0);
        pruned += fast->pruned;
        planned_all += all_planner.cache_size();
        planned_pruned += pruned_planner.cache_size();
      }
    }
  }
  EXPECT_GT(pruned, 0);
  EXPECT_LT(planned_pruned, planned_all);
}

// Estimates within kEstimateTolerance of the least count as equal: the winner is never more
// than that above the fastest eligible candidate, and no eligible candidate that close moves
// fewer bytes. Somewhere in this grid the fastest candidate moves more than one a little slower
// (XLA's WindowedEinsumPreferMemoryFootprint: a reduce-scatter loop 3% faster in estimate
// moved 6x the bytes of computing in the wanted tiling).
TEST(DotStrategyTest, FewestBytesAmongCandidatesWithinTheTolerance) {
  int64_t traded = 0;
  for (const char* lhs : kGridShardings) {
    for (const char* rhs : kGridShardings) {
      for (const char* wanted : kGridShardings) {
        DotProblem p = Problem(8192, 4096, 2048, lhs, rhs, wanted, 8);
        ReshardPlanner planner;
        absl::StatusOr<DotDecision> d =
            ChooseDotStrategy(p, DefaultDeviceModel(), planner, DotStrategyOptions());
        ASSERT_TRUE(d.ok()) << d.status();
        const DotCandidate& winner = d->candidates[d->winner];
        double fastest = winner.total_us;
        for (const DotCandidate& c : d->candidates) {
          if (c.eligible) fastest = std::min(fastest, c.total_us);
        }
        EXPECT_LE(winner.total_us, fastest * (1 + kEstimateTolerance)) << d->Explain("grid");
        for (const DotCandidate& c : d->candidates) {
          if (!c.eligible || c.total_us > fastest * (1 + kEstimateTolerance)) continue;
          EXPECT_GE(c.comm_bytes, winner.comm_bytes) << c.Name() << "\n" << d->Explain("grid");
        }
        if (winner.total_us > fastest) ++traded;
      }
    }
  }
  EXPECT_GT(traded, 0);
}

// An operand already gathered for an earlier user (a weight gathered for the forward dot, used
// again by the backward one) costs nothing in that sharding: the candidate using the gathered
// weight moves no operand bytes and wins.
TEST(DotStrategyTest, OperandAlreadyReshardedCostsNothing) {
  DotProblem p = Problem(256, 512, 512, "{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}",
                         "{devices=[4,1]<=[4]}", 4);
  ReshardPlanner planner;
  absl::StatusOr<DotDecision> before =
      ChooseDotStrategy(p, DefaultDeviceModel(), planner, DotStrategyOptions());
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GT(before->candidates[before->winner].comm_bytes, 0) << before->Explain("before");
  p.rhs_available = {S("{replicated}")};
  absl::StatusOr<DotDecision> after =
      ChooseDotStrategy(p, DefaultDeviceModel(), planner, DotStrategyOptions());
  ASSERT_TRUE(after.ok()) << after.status();
  const DotCandidate& winner = after->candidates[after->winner];
  EXPECT_EQ(winner.comm_bytes, 0) << after->Explain("after");
  EXPECT_EQ(winner.rhs, S("{replicated}")) << after->Explain("after");
}

// A windowed loop with nothing to overlap (a small FSDP weight over 2 devices) pays the
// device model's cost per loop step, and loses to the one all-gather it would replace (whose
// gathered weight later users, such as the backward dot, reuse).
TEST(DotStrategyTest, IdleWindowedLoopPaysItsSteps) {
  DotProblem p =
      Problem(16, 64, 192, "{devices=[2,1]0,1}", "{devices=[2,1]0,1}", "{devices=[2,1]0,1}", 2);
  ReshardPlanner planner;
  DeviceModel free_loops = DefaultDeviceModel();
  free_loops.loop_step_us = 0;
  absl::StatusOr<DotDecision> free = ChooseDotStrategy(p, free_loops, planner, {});
  absl::StatusOr<DotDecision> costed = ChooseDotStrategy(p, DefaultDeviceModel(), planner, {});
  ASSERT_TRUE(free.ok() && costed.ok());
  const DotCandidate* w_free = Find(*free, "windowed-ag(rhs d0)");
  const DotCandidate* w_costed = Find(*costed, "windowed-ag(rhs d0)");
  ASSERT_TRUE(w_free != nullptr && w_costed != nullptr) << costed->Explain("fsdp");
  EXPECT_NEAR(w_costed->total_us - w_free->total_us, 2 * DefaultDeviceModel().loop_step_us, 1e-9)
      << costed->Explain("fsdp");
  EXPECT_NE(costed->candidates[costed->winner].family.rfind("windowed", 0), 0u)
      << costed->Explain("fsdp");
}

// Megatron's second matmul: Y split by columns, B by rows; a replicated result is one
// all-reduce of the partial sums; nothing is gathered.
TEST(DotStrategyTest, ContractingSplitFinishesWithAllReduce) {
  DotProblem p = Problem(16, 64, 32, "{devices=[1,2]0,1}", "{devices=[2,1]0,1}", "{replicated}", 2);
  ReshardPlanner planner;
  absl::StatusOr<DotDecision> d =
      ChooseDotStrategy(p, DefaultDeviceModel(), planner, DotStrategyOptions());
  ASSERT_TRUE(d.ok()) << d.status();
  const DotCandidate& winner = d->candidates[d->winner];
  EXPECT_EQ(winner.Name(), "operands+all-reduce") << d->Explain("megatron");
  EXPECT_EQ(winner.operands_us, 0);
  EXPECT_EQ(winner.result_us, 0);
}

TEST(DotStrategyTest, ContractingSplitIntoShardedResultUsesReduceScatter) {
  DotProblem p = Problem(64, 64, 32, "{devices=[1,4]<=[4]}", "{devices=[4,1]<=[4]}",
                         "{devices=[4,1]<=[4]}", 4);
  ReshardPlanner planner;
  DotStrategyOptions options;
  options.enable_windowed_einsum = false;
  absl::StatusOr<DotDecision> d = ChooseDotStrategy(p, DefaultDeviceModel(), planner, options);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->candidates[d->winner].Name(), "operands+reduce-scatter(d0)") << d->Explain("rs");
}

// Under a model where compute and transfer take similar time, the cost model picks a windowed
// loop for a large dot (overlap pays) and not for a small one (per-step latency dominates).
TEST(DotStrategyTest, WindowedLoopChosenForLargeNotSmall) {
  absl::StatusOr<DeviceModel> model = DeviceModelByName("cpu-test");
  ASSERT_TRUE(model.ok());
  for (int64_t size : {4096, 64}) {
    DotProblem p = Problem(size, size, size, "{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}",
                           "{devices=[1,4]<=[4]}", 4);
    ReshardPlanner planner(model->levels.front().link);
    absl::StatusOr<DotDecision> d = ChooseDotStrategy(p, *model, planner, DotStrategyOptions());
    ASSERT_TRUE(d.ok()) << d.status();
    const DotCandidate& winner = d->candidates[d->winner];
    if (size == 4096) {
      EXPECT_EQ(winner.family.rfind("windowed-ag", 0), 0u) << d->Explain("large");
    } else {
      EXPECT_NE(winner.family.rfind("windowed", 0), 0u) << d->Explain("small");
    }
  }
}

// Contracting dim split on both operands, each replicated 4 ways, the result wanted split
// along N on the contracting dim's devices (XLA's DotPartialContracting3 at K = 65536): two of
// the replicas split N, so each device multiplies half of what the operands' own tiling asks
// (one all-reduce or reduce-scatter and a reshard of the result more); at this size that
// halves the estimated time. At the corpus's size (K = 100) the one reduce-scatter wins.
TEST(DotStrategyTest, ReplicasSplitTheResultWhenComputeDominates) {
  for (int64_t k : {65536, 128}) {
    DotProblem p = Problem(2048, k, 2048, "{devices=[1,2,4]<=[8] last_tile_dim_replicate}",
                           "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
                           "{devices=[1,2,4]<=[8] last_tile_dim_replicate}", 8);
    ReshardPlanner planner;
    absl::StatusOr<DotDecision> d =
        ChooseDotStrategy(p, DefaultDeviceModel(), planner, DotStrategyOptions());
    ASSERT_TRUE(d.ok()) << d.status();
    const DotCandidate& winner = d->candidates[d->winner];
    const DotCandidate* replicas = Find(*d, "operands+replicas+all-reduce");
    ASSERT_NE(replicas, nullptr) << d->Explain("replicas");
    EXPECT_EQ(replicas->tiling, "n0:2 k0:2 repl:2");
    EXPECT_DOUBLE_EQ(replicas->flops, 2.0 * 2048 * k * 2048 / 4);
    if (k == 65536) {
      EXPECT_DOUBLE_EQ(winner.flops, 2.0 * 2048 * k * 2048 / 4) << d->Explain("large");
    } else {
      EXPECT_DOUBLE_EQ(winner.flops, 2.0 * 2048 * k * 2048 / 2) << d->Explain("small");
    }
  }
}

// A windowed loop replaces what its base counted for the circulated operand: with other dots
// reading the operand alike, that is the dot's share of the gather, never more (the loop
// serves this dot alone). No candidate's operand time or bytes may go negative.
TEST(DotStrategyTest, WindowedLoopReplacesTheOperandsCountedShare) {
  absl::StatusOr<DeviceModel> model = DeviceModelByName("cpu-test");
  ASSERT_TRUE(model.ok());
  DotProblem p = Problem(4096, 4096, 4096, "{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}",
                         "{devices=[1,4]<=[4]}", 4);
  p.lhs_sharers = 4;
  p.rhs_sharers = 4;
  ReshardPlanner planner(model->levels.front().link);
  absl::StatusOr<DotDecision> d = ChooseDotStrategy(p, *model, planner, DotStrategyOptions());
  ASSERT_TRUE(d.ok()) << d.status();
  int64_t loops = 0;
  for (const DotCandidate& c : d->candidates) {
    EXPECT_GE(c.operands_us, 0) << c.Name() << "\n" << d->Explain("shared");
    EXPECT_GE(c.comm_bytes, 0) << c.Name();
    if (c.windowed.kind == WindowedKind::kAllGatherLoop) {
      ++loops;
      EXPECT_DOUBLE_EQ(c.operands_us, c.operand_us[1 - c.windowed.operand]) << c.Name();
    }
  }
  EXPECT_GT(loops, 0) << d->Explain("shared");
}

TEST(DotStrategyTest, ForcedAndDisabledOptions) {
  DotProblem p = Problem(256, 256, 256, "{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}",
                         "{devices=[1,4]<=[4]}", 4);
  ReshardPlanner planner;
  DotStrategyOptions forced;
  forced.forced_family = "replicated";
  absl::StatusOr<DotDecision> d = ChooseDotStrategy(p, DefaultDeviceModel(), planner, forced);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->candidates[d->winner].family, "replicated");
  EXPECT_NE(d->reason.find("forced"), std::string::npos);
  forced.forced_family = "no-such-strategy";
  EXPECT_FALSE(ChooseDotStrategy(p, DefaultDeviceModel(), planner, forced).ok());
  DotStrategyOptions off;
  off.enable_windowed_einsum = false;
  d = ChooseDotStrategy(p, DefaultDeviceModel(), planner, off);
  ASSERT_TRUE(d.ok());
  for (const DotCandidate& c : d->candidates) EXPECT_EQ(c.windowed.kind, WindowedKind::kNone);
  DotStrategyOptions threshold;
  threshold.windowed_threshold_bytes = 1LL << 40;
  d = ChooseDotStrategy(p, DefaultDeviceModel(), planner, threshold);
  ASSERT_TRUE(d.ok());
  for (const DotCandidate& c : d->candidates) EXPECT_EQ(c.windowed.kind, WindowedKind::kNone);
}

TEST(DotStrategyTest, MemoryCapMakesCandidatesIneligible) {
  DotProblem p = Problem(8192, 8192, 8192, "{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}",
                         "{devices=[4,1]<=[4]}", 4);
  DeviceModel small = DefaultDeviceModel();
  small.memory_bytes = 700.0 * (1 << 20);  // 700 MiB: the replicated operands do not fit.
  ReshardPlanner planner;
  absl::StatusOr<DotDecision> d = ChooseDotStrategy(p, small, planner, DotStrategyOptions());
  ASSERT_TRUE(d.ok()) << d.status();
  const DotCandidate* replicated = Find(*d, "replicated");
  ASSERT_NE(replicated, nullptr);
  EXPECT_FALSE(replicated->eligible);
  EXPECT_LE(d->candidates[d->winner].memory_bytes, small.memory_bytes);
}

// When no candidate fits the device's memory, the fastest of those needing least memory (within
// 10%) is chosen and said so, not a failure the partitioner would answer by computing the dot
// replicated, which needs the most (EinsumRHSWindowedInContractingOutNonContractingPartitioned:
// 309 GB gathered per device).
TEST(DotStrategyTest, NothingFitsChoosesTheLeastMemory) {
  DotProblem p = Problem(8192, 8192, 8192, "{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}",
                         "{devices=[4,1]<=[4]}", 4);
  DeviceModel tiny = DefaultDeviceModel();
  tiny.memory_bytes = 1 << 20;  // 1 MiB: not even the operands' shards fit.
  ReshardPlanner planner;
  absl::StatusOr<DotDecision> d = ChooseDotStrategy(p, tiny, planner, DotStrategyOptions());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->over_memory);
  const DotCandidate& winner = d->candidates[d->winner];
  int64_t least = winner.memory_bytes;
  for (const DotCandidate& c : d->candidates) {
    EXPECT_FALSE(c.eligible) << c.Name();
    least = std::min(least, c.memory_bytes);
  }
  EXPECT_LE(winner.memory_bytes, 1.1 * least) << d->Explain("tiny");
  for (const DotCandidate& c : d->candidates) {
    if (c.memory_bytes <= 1.1 * least) EXPECT_GE(c.total_us, winner.total_us) << c.Name();
  }
  EXPECT_NE(winner.family, "replicated");
  EXPECT_NE(d->reason.find("least memory"), std::string::npos) << d->reason;
  // A forced family still fails when it does not fit.
  DotStrategyOptions forced;
  forced.forced_family = "replicated";
  EXPECT_FALSE(ChooseDotStrategy(p, tiny, planner, forced).ok());
}

}  // namespace
}  // namespace spmd

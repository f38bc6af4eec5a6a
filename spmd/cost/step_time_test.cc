#include "spmd/cost/step_time.h"

#include "gtest/gtest.h"

namespace spmd {
namespace {

TEST(StepTimeTest, AddsComputeAndCollectives) {
  DeviceModel model = *DeviceModelByName("cpu-test");  // 1e5 FLOP/us, 5 us + 1e4 B/us.
  hlo::ModuleStats stats;
  stats.flops = 2'000'000;             // 20 us.
  stats.collectives[0] = {2, 30'000};  // 2 x 5 us + 3 us.
  stats.collectives[3] = {1, 0};       // 5 us.
  EXPECT_DOUBLE_EQ(EstimateStepTimeUs(stats, model), 20 + 13 + 5);
  EXPECT_DOUBLE_EQ(EstimateStepTimeUs(hlo::ModuleStats(), model), 0);
}

// A windowed loop's 4 iterations each compute 10 us and pass 8 us of blocks on: each costs the
// larger, 10 us, not 18.
TEST(StepTimeTest, LoopCarriedCollectivesOverlapTheIterationsCompute) {
  DeviceModel model = *DeviceModelByName("cpu-test");  // 1e5 FLOP/us, 5 us + 1e4 B/us.
  hlo::ModuleStats stats;
  stats.flops = 4 * 1'000'000;          // 4 x 10 us.
  stats.collectives[4] = {4, 120'000};  // 4 x (5 us + 3 us).
  const double serial = 40 + 32;
  EXPECT_DOUBLE_EQ(EstimateStepTimeUs(stats, model), serial);
  stats.loop_overlaps.push_back({/*iterations=*/4, /*flops=*/1'000'000,
                                 /*carried_collectives=*/1, /*carried_bytes=*/30'000});
  EXPECT_DOUBLE_EQ(EstimateStepTimeUs(stats, model), serial - 4 * 8);
  // Communication longer than compute hides the compute instead.
  stats.loop_overlaps[0].flops = 200'000;  // 2 us.
  EXPECT_DOUBLE_EQ(EstimateStepTimeUs(stats, model), serial - 4 * 2);
}

}  // namespace
}  // namespace spmd

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

}  // namespace
}  // namespace spmd

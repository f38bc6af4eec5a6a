// Every emitted reshard, run by the CPU executor (runtime/cpu) on simulated devices: each
// device's result must hold exactly its shard of the target sharding, cut from the same random
// array (the unpartitioned value; a reshard changes only where it lives). A test-only
// dependency on the runtime layer (the executor is the project's oracle); the planner and
// emitter do not depend on it.
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/literal.h"
#include "runtime/cpu/multi_device_runner.h"
#include "spmd/reshard/reshard_testing.h"

namespace spmd {
namespace {

using hlo::HloSharding;
using hlo::Shape;
using testing::kTestDevices;

hlo::Literal ToLiteral(const testing::DenseArray& array) {
  hlo::Literal literal(Shape::Array(hlo::PrimitiveType::kF32, array.dims));
  for (size_t i = 0; i < array.data.size(); ++i) literal.SetDouble(i, array.data[i]);
  return literal;
}

testing::DenseArray FromLiteral(const hlo::Literal& literal) {
  testing::DenseArray array{literal.shape().dimensions(), {}};
  for (int64_t i = 0; i < literal.element_count(); ++i) array.data.push_back(literal.GetDouble(i));
  return array;
}

HloSharding S(const std::string& text) { return HloSharding::Parse(text).value(); }

// Runs `built` on its plan's devices with the shards of a random array of `shape`; "" when every
// device's result holds its target shard, else the first mismatch or the run's error.
std::string RunAndCheck(const testing::ReshardModule& built, const Shape& shape, uint32_t seed) {
  const int64_t num_devices = built.plan->num_devices;
  const std::vector<double> full = testing::RandomArray(shape, seed);
  std::vector<std::vector<hlo::Literal>> args(num_devices);
  for (int64_t device = 0; device < num_devices; ++device) {
    args[device].push_back(ToLiteral(testing::ShardOf(full, shape, built.plan->source, device)));
  }
  runtime::MultiDeviceOptions options;
  options.num_partitions = num_devices;
  options.collective_timeout_seconds = 20;
  absl::StatusOr<std::vector<hlo::Literal>> results =
      runtime::RunOnDevices(*built.module, std::move(args), options);
  if (!results.ok()) return std::string(results.status().message());
  for (int64_t device = 0; device < num_devices; ++device) {
    std::string error = testing::CheckShard(FromLiteral((*results)[device]), full, shape,
                                            built.plan->target, device);
    if (!error.empty()) return error;
  }
  return "";
}

TEST(ReshardExecutorTest, EveryPairRunsOnEightDevices) {
  ReshardPlanner planner;
  int checked = 0;
  for (const Shape& shape : testing::TestShapes()) {
    for (const std::string& from : testing::TestShardings()) {
      for (const std::string& to : testing::TestShardings()) {
        absl::StatusOr<testing::ReshardModule> built =
            testing::BuildReshardModule(shape, S(from), S(to), planner);
        ASSERT_TRUE(built.ok()) << built.status();
        SCOPED_TRACE(built->plan->Explain() + built->module->ToString());
        EXPECT_EQ(RunAndCheck(*built, shape, 11), "");
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 3 * 15 * 15);
}

// Larger meshes (16 and 64 devices) and rank 3, uneven, as planned on a latency-free link.
TEST(ReshardExecutorTest, LargerMeshesAndRankThree) {
  ReshardPlanner planner(LinkModel{0.0, 100000.0});
  for (const testing::ReshardCase& c : testing::LargerMeshCases()) {
    absl::StatusOr<testing::ReshardModule> built =
        testing::BuildReshardModule(c.shape, S(c.from), S(c.to), planner, c.devices);
    ASSERT_TRUE(built.ok()) << built.status();
    SCOPED_TRACE(built->plan->Explain());
    EXPECT_EQ(RunAndCheck(*built, c.shape, 7), "");
  }
}

// The direct all-to-all (reshard_direct.h) cuts, sends and places pieces in one collective:
// every pair here plans to it, and each device ends with its exact target shard.
TEST(ReshardExecutorTest, DirectAllToAllPlacesEveryPiece) {
  ReshardPlanner planner;
  const Shape rank4 = Shape::Array(hlo::PrimitiveType::kF32, {8, 8, 8, 8});
  const Shape rank3 = Shape::Array(hlo::PrimitiveType::kF32, {4, 8, 16});
  const std::vector<std::tuple<Shape, std::string, std::string>> cases = {
      {rank4, "{devices=[1,4,2,1]<=[8]}", "{devices=[2,1,1,4]<=[4,2]T(1,0)}"},
      {rank4, "{devices=[2,1,1,4]<=[4,2]T(1,0)}", "{devices=[1,4,2,1]<=[8]}"},
      {rank4, "{devices=[2,2,1,2]<=[8]}", "{devices=[1,1,8,1]<=[2,2,2]T(2,0,1)}"},
      {rank3, "{devices=[2,4,1]<=[8]}", "{devices=[1,1,8]<=[2,4]T(1,0)}"},
      // Dims split in both, one count a multiple of the other: one all-to-all within each
      // group of devices that share the coarser tile along them.
      {rank3, "{devices=[4,2,1]<=[8]}", "{devices=[2,1,4]<=[8]}"},
      {rank3, "{devices=[2,1,4]<=[8]}", "{devices=[4,2,1]<=[8]}"},
      {rank4, "{devices=[2,2,2,1]<=[8]}", "{devices=[1,4,1,2]<=[2,2,2]T(1,0,2)}"},
  };
  for (const auto& [shape, from, to] : cases) {
    absl::StatusOr<testing::ReshardModule> built =
        testing::BuildReshardModule(shape, S(from), S(to), planner);
    ASSERT_TRUE(built.ok()) << built.status();
    SCOPED_TRACE(built->plan->Explain() + built->module->ToString());
    ASSERT_EQ(built->plan->steps.size(), 1u);
    EXPECT_EQ(built->plan->steps[0].kind, ReshardStepKind::kDirectAllToAll);
    EXPECT_EQ(RunAndCheck(*built, shape, 5), "");
  }
}

// XLA's MultipleSourceTargetDimsInOneAllToAll3 on 64 devices: dims 0 and 1 split in both
// shardings (2 -> 4 and 4 -> 2), dims 2 and 3 trade 8 tiles; one all-to-all within each group
// of 16 devices places every piece.
TEST(ReshardExecutorTest, GroupedDirectAllToAllOn64Devices) {
  ReshardPlanner planner;
  const Shape shape = Shape::Array(hlo::PrimitiveType::kF32, {8, 8, 8, 8});
  absl::StatusOr<testing::ReshardModule> built = testing::BuildReshardModule(
      shape, S("{devices=[2,4,8,1]<=[64]}"), S("{devices=[4,2,1,8]<=[2,2,2,8]T(0,2,1,3)}"),
      planner, 64);
  ASSERT_TRUE(built.ok()) << built.status();
  SCOPED_TRACE(built->plan->Explain() + built->module->ToString());
  ASSERT_EQ(built->plan->steps.size(), 1u);
  EXPECT_EQ(built->plan->steps[0].kind, ReshardStepKind::kDirectAllToAll);
  EXPECT_EQ(built->plan->steps[0].group_size, 16);
  EXPECT_EQ(RunAndCheck(*built, shape, 5), "");
}

// A random device order on 128 devices (the fuzzer's 18-second convolution): the searches
// from it to iota shardings run out of their first budget and start again with the grid bound
// (reshard_search.cc). Each plan must run and place every shard, and cost no more than
// gathering everything and slicing.
TEST(ReshardExecutorTest, RandomDeviceOrderOn128Devices) {
  std::vector<int64_t> order(128);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(2702));
  std::string devices;
  for (int64_t device : order) devices += (devices.empty() ? "" : ",") + std::to_string(device);
  const std::string from = "{devices=[2,8,4,2]" + devices + "}";
  const Shape shape = Shape::Array(hlo::PrimitiveType::kF32, {4, 8, 16, 16});
  ReshardPlanner planner;
  for (const std::string to : {"{devices=[1,1,1,8,16]<=[16,8]T(1,0) last_tile_dim_replicate}",
                               "{devices=[1,1,16,8]<=[128]}", "{devices=[16,1,1,8]<=[128]}"}) {
    absl::StatusOr<testing::ReshardModule> built =
        testing::BuildReshardModule(shape, S(from), S(to), planner, 128);
    ASSERT_TRUE(built.ok()) << built.status();
    SCOPED_TRACE(built->plan->Explain());
    const ReshardPlan gather_and_slice =
        PlanReshard(shape, S(from), S("{replicated}"), 128, LinkModel()).value();
    EXPECT_LE(built->plan->cost_us, gather_and_slice.cost_us + 1e-9);
    EXPECT_EQ(RunAndCheck(*built, shape, 3), "");
  }
}

// The check has teeth: a module with two permute targets swapped is caught.
TEST(ReshardExecutorTest, TheCheckCatchesAWrongPermutation) {
  ReshardPlanner planner;
  const Shape shape = Shape::Array(hlo::PrimitiveType::kF32, {16, 24});
  testing::ReshardModule built =
      testing::BuildReshardModule(shape, S("{devices=[2,4]<=[8]}"),
                                  S("{devices=[4,2]<=[2,4]T(1,0)}"), planner)
          .value();
  ASSERT_EQ(RunAndCheck(built, shape, 7), "");
  int swapped = 0;
  for (const auto& instr : built.module->entry_computation()->instructions()) {
    if (instr->opcode() != hlo::HloOpcode::kCollectivePermute) continue;
    auto& pairs = instr->mutable_attrs()->source_target_pairs;
    std::swap(pairs[2].second, pairs[3].second);
    ++swapped;
  }
  ASSERT_GT(swapped, 0);
  EXPECT_NE(RunAndCheck(built, shape, 7), "");
}

}  // namespace
}  // namespace spmd

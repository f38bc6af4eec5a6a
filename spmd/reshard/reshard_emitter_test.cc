#include "spmd/reshard/reshard_emitter.h"

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_printer.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/verifier/hlo_verifier.h"
#include "spmd/reshard/reshard_testing.h"
#include "spmd/reshard/spmd_simulator.h"

namespace spmd {
namespace {

using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;
using testing::kTestDevices;

HloSharding S(const std::string& text) { return HloSharding::Parse(text).value(); }

const Shape kShape = Shape::Array(hlo::PrimitiveType::kF32, {16, 24});

std::string Print(const hlo::HloModule& module) {
  std::string text;
  hlo::PrintModule(module, &text);
  return text;
}

int Count(const hlo::HloModule& module, HloOpcode opcode) {
  int count = 0;
  for (const auto& instr : module.entry_computation()->instructions()) {
    count += instr->opcode() == opcode;
  }
  return count;
}

testing::ReshardModule Build(const std::string& from, const std::string& to,
                             const Shape& shape = kShape, int64_t num_devices = kTestDevices) {
  static ReshardPlanner* planner = new ReshardPlanner();
  absl::StatusOr<testing::ReshardModule> built =
      testing::BuildReshardModule(shape, S(from), S(to), *planner, num_devices);
  EXPECT_TRUE(built.ok()) << built.status();
  return std::move(built).value();
}

// Runs the module on the lockstep simulator with shards of a random array; "" when every
// device's result holds its target shard.
std::string RunAndCheck(const testing::ReshardModule& built, const Shape& shape) {
  const int64_t num_devices = built.plan->num_devices;
  const std::vector<double> full = testing::RandomArray(shape, 7);
  std::vector<std::vector<testing::SimArray>> args(num_devices);
  for (int64_t device = 0; device < num_devices; ++device) {
    args[device].push_back(testing::ShardOf(full, shape, built.plan->source, device));
  }
  absl::StatusOr<std::vector<testing::SimArray>> results =
      testing::RunLockstep(*built.module->entry_computation(), num_devices, args);
  if (!results.ok()) return std::string(results.status().message());
  for (int64_t device = 0; device < num_devices; ++device) {
    std::string error =
        testing::CheckShard((*results)[device], full, shape, built.plan->target, device);
    if (!error.empty()) return error;
  }
  return "";
}

// Every ordered pair of test shardings on every test shape: the emitted module verifies,
// prints and parses back to the same text, and computes every device's target shard.
TEST(ReshardEmitterTest, EveryPairComputesTheTargetShards) {
  int checked = 0;
  for (const Shape& shape : testing::TestShapes()) {
    for (const std::string& from : testing::TestShardings()) {
      for (const std::string& to : testing::TestShardings()) {
        testing::ReshardModule built = Build(from, to, shape);
        ASSERT_NE(built.module, nullptr);
        const std::string text = Print(*built.module);
        SCOPED_TRACE(built.plan->Explain() + text);
        std::vector<hlo::VerifierError> errors;
        EXPECT_TRUE(hlo::VerifyModule(*built.module, &errors).ok())
            << (errors.empty() ? "" : errors[0].message);
        absl::StatusOr<std::unique_ptr<hlo::HloModule>> reparsed = hlo::ParseHloModule(text);
        ASSERT_TRUE(reparsed.ok()) << reparsed.status();
        EXPECT_EQ(Print(**reparsed), text);
        EXPECT_EQ(RunAndCheck(built, shape), "");
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 3 * 15 * 15);
}

TEST(ReshardEmitterTest, AllToAllPathUsesXlaCollectives) {
  testing::ReshardModule built = Build("{devices=[2,4]<=[8]}", "{devices=[8,1]<=[8]}");
  const std::string text = Print(*built.module);
  EXPECT_EQ(Count(*built.module, HloOpcode::kAllToAll), 1) << text;
  EXPECT_EQ(Count(*built.module, HloOpcode::kCollectivePermute), 0) << text;
  EXPECT_EQ(Count(*built.module, HloOpcode::kAllGather), 0) << text;
  EXPECT_NE(text.find("all-to-all("), std::string::npos) << text;
  EXPECT_NE(text.find("replica_groups=[2,4]<=[8]"), std::string::npos) << text;
}

// [2,4] -> [4,2]T(1,0): each device lacks at most two 4x6 cells of its new 4x12 region; the
// exchange moves exactly those in two collective-permutes (an all-to-all and a permute of the
// whole shard would move 288 bytes instead of 192).
TEST(ReshardEmitterTest, ExchangeMovesOnlyMissingCells) {
  testing::ReshardModule built = Build("{devices=[2,4]<=[8]}", "{devices=[4,2]<=[2,4]T(1,0)}");
  const std::string text = Print(*built.module);
  EXPECT_EQ(Count(*built.module, HloOpcode::kAllToAll), 0) << text;
  EXPECT_EQ(Count(*built.module, HloOpcode::kCollectivePermute), 2) << text;
  EXPECT_EQ(Count(*built.module, HloOpcode::kAllGather), 0) << text;
  EXPECT_NE(text.find("f32[4,6] collective-permute("), std::string::npos) << text;
  EXPECT_EQ(built.plan->bytes_received_per_device, 192);
  // Channel ids are distinct.
  std::set<int64_t> ids;
  for (const auto& instr : built.module->entry_computation()->instructions()) {
    if (instr->attrs().channel_id) {
      EXPECT_TRUE(ids.insert(*instr->attrs().channel_id).second);
    }
  }
  EXPECT_EQ(ids.size(), 2u);
}

TEST(ReshardEmitterTest, AllGatherUsesGlobalDeviceIdsAndIotaGroups) {
  testing::ReshardModule built =
      Build("{devices=[2,4]<=[8]}", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  const std::string text = Print(*built.module);
  EXPECT_NE(text.find("f32[8,24] all-gather(%shard), dimensions={1}, channel_id=1, "
                      "replica_groups=[2,4]<=[8], use_global_device_ids=true"),
            std::string::npos)
      << text;
}

TEST(ReshardEmitterTest, OffsetsComeFromATableIndexedByPartitionId) {
  testing::ReshardModule built = Build("{replicated}", "{devices=[4,2]<=[2,4]T(1,0)}");
  const std::string text = Print(*built.module);
  EXPECT_EQ(Count(*built.module, HloOpcode::kPartitionId), 1) << text;
  EXPECT_NE(text.find("s32[8] constant({0, 4, 8, 12, 0, 4, 8, 12})"), std::string::npos) << text;
  EXPECT_NE(text.find("s32[8] constant({0, 0, 0, 0, 12, 12, 12, 12})"), std::string::npos) << text;
  EXPECT_NE(text.find("dynamic_slice_sizes={1}"), std::string::npos) << text;
  EXPECT_NE(text.find("f32[4,12] dynamic-slice(%shard, %reshape.rs5, %reshape.rs8)"),
            std::string::npos)
      << text;
}

TEST(ReshardEmitterTest, UnevenGatherSlicesOffThePadding) {
  const Shape uneven = Shape::Array(hlo::PrimitiveType::kF32, {15, 23});
  testing::ReshardModule built = Build("{devices=[1,8]<=[8]}", "{replicated}", uneven);
  const std::string text = Print(*built.module);
  // f32[15,3] x 8 = f32[15,24]: one padded column, sliced off.
  EXPECT_NE(text.find("f32[15,24] all-gather("), std::string::npos) << text;
  EXPECT_NE(text.find("f32[15,23] slice("), std::string::npos) << text;
  EXPECT_EQ(RunAndCheck(built, uneven), "");
}

TEST(ReshardEmitterTest, MaximalSourceScattersWithOneAllToAll) {
  testing::ReshardModule built = Build("{maximal device=3}", "{devices=[2,4]<=[8]}");
  const std::string text = Print(*built.module);
  EXPECT_EQ(built.plan->steps.size(), 1u) << built.plan->Explain();
  EXPECT_EQ(Count(*built.module, HloOpcode::kAllToAll), 1) << text;
  EXPECT_FALSE(built.plan->full_rematerialization);
  EXPECT_EQ(RunAndCheck(built, kShape), "");
}

// Larger meshes and rank 3, uneven: the search stays fast and the emitted modules are right.
// Costed on a latency-free link, so that these small arrays still prefer less traffic.
TEST(ReshardEmitterTest, LargerMeshesAndRankThree) {
  const Shape square = Shape::Array(hlo::PrimitiveType::kF32, {36, 20});
  const Shape cube = Shape::Array(hlo::PrimitiveType::kF32, {6, 10, 9});
  const struct {
    const char* from;
    const char* to;
    const Shape& shape;
    int64_t devices;
  } cases[] = {
      {"{devices=[8,8]<=[64]}", "{devices=[8,8]<=[8,8]T(1,0)}", square, 64},
      {"{devices=[64,1]<=[64]}", "{devices=[4,4,4]<=[64] last_tile_dim_replicate}", square, 64},
      {"{devices=[2,4,8]<=[64] last_tile_dim_replicate}", "{devices=[16,4]<=[4,16]T(1,0)}", square,
       64},
      {"{devices=[2,2,4]<=[16]}", "{devices=[4,2,2]<=[2,2,4]T(2,1,0)}", cube, 16},
      {"{devices=[1,4,4]<=[16]}", "{devices=[2,1,2,4]<=[16] last_tile_dim_replicate}", cube, 16},
      {"{maximal device=9}", "{devices=[4,1,4]<=[4,4]T(1,0)}", cube, 16},
  };
  const LinkModel bandwidth_only{0.0, 100000.0};
  ReshardPlanner planner(bandwidth_only);
  for (const auto& c : cases) {
    testing::ReshardModule built =
        testing::BuildReshardModule(c.shape, S(c.from), S(c.to), planner, c.devices).value();
    SCOPED_TRACE(built.plan->Explain());
    EXPECT_TRUE(hlo::VerifyModule(*built.module).ok());
    EXPECT_EQ(RunAndCheck(built, c.shape), "");
    ReshardPlan fallback =
        PlanReplicateThenSlice(c.shape, S(c.from), S(c.to), c.devices, bandwidth_only).value();
    EXPECT_LT(built.plan->bytes_received_per_device, fallback.bytes_received_per_device);
  }
}

// The check has teeth: a module with two permute targets swapped is caught.
TEST(ReshardEmitterTest, TheSimulationCatchesAWrongPermutation) {
  testing::ReshardModule built = Build("{devices=[2,4]<=[8]}", "{devices=[4,2]<=[2,4]T(1,0)}");
  for (const auto& instr : built.module->entry_computation()->instructions()) {
    if (instr->opcode() != HloOpcode::kCollectivePermute) continue;
    auto& pairs = instr->mutable_attrs()->source_target_pairs;
    std::swap(pairs[2].second, pairs[3].second);
  }
  EXPECT_NE(RunAndCheck(built, kShape), "");
}

TEST(ReshardEmitterTest, EmptyPlanReturnsTheValue) {
  testing::ReshardModule built = Build("{devices=[2,4]<=[8]}", "{devices=[2,4]<=[8]}");
  EXPECT_EQ(built.module->entry_computation()->instruction_count(), 1);
}

TEST(ReshardEmitterTest, RejectsAValueOfTheWrongShape) {
  hlo::HloModule module("m");
  hlo::HloComputation* entry = module.AddComputation(std::make_unique<hlo::HloComputation>("e"));
  hlo::HloInstruction* param = entry->AddInstruction(hlo::HloInstruction::Create(
      HloOpcode::kParameter, Shape::Array(hlo::PrimitiveType::kF32, {8, 8}), {}));
  param->set_name("p");
  ReshardPlanner planner;
  ChannelIdAllocator ids;
  absl::StatusOr<hlo::HloInstruction*> result =
      EmitReshard(entry, param, kShape, S("{devices=[2,4]<=[8]}"), S("{replicated}"), kTestDevices,
                  planner, ids);
  EXPECT_FALSE(result.ok());
}

TEST(ChannelIdAllocatorTest, StartsAboveTheModulesIds) {
  testing::ReshardModule built = Build("{devices=[2,4]<=[8]}", "{devices=[4,2]<=[2,4]T(1,0)}");
  EXPECT_EQ(ChannelIdAllocator::ForModule(*built.module).Next(), 3);
}

}  // namespace
}  // namespace spmd

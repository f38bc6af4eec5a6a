// The emitter's programs, checked by structure (opcodes, shapes, operands, attributes). Their
// numbers are checked on the CPU executor by tests/reshard_executor_test.cc.
#include "spmd/reshard/reshard_emitter.h"

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_printer.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/testing/hlo_matchers.h"
#include "hlo/verifier/hlo_verifier.h"
#include "spmd/reshard/reshard_testing.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;
using hlo::testing::HasDimensions;
using hlo::testing::HasIntValues;
using hlo::testing::HasReplicaGroups;
using hlo::testing::HasShape;
using hlo::testing::Instructions;
using ::testing::AllOf;
using ::testing::Contains;
using testing::kTestDevices;
using ::testing::Not;
namespace op = hlo::testing::op;

HloSharding S(const std::string& text) { return HloSharding::Parse(text).value(); }

const Shape kShape = Shape::Array(hlo::PrimitiveType::kF32, {16, 24});

std::string Print(const hlo::HloModule& module) {
  std::string text;
  hlo::PrintModule(module, &text);
  return text;
}

testing::ReshardModule Build(const std::string& from, const std::string& to,
                             const Shape& shape = kShape, int64_t num_devices = kTestDevices) {
  static ReshardPlanner* planner = new ReshardPlanner();
  absl::StatusOr<testing::ReshardModule> built =
      testing::BuildReshardModule(shape, S(from), S(to), *planner, num_devices);
  EXPECT_TRUE(built.ok()) << built.status();
  return std::move(built).value();
}

const HloInstruction* Root(const testing::ReshardModule& built) {
  return built.module->entry_computation()->root_instruction();
}

std::vector<const HloInstruction*> Entry(const testing::ReshardModule& built) {
  return Instructions(*built.module->entry_computation());
}

// Every ordered pair of test shardings on every test shape: the emitted module verifies and
// prints and parses back to the same text.
TEST(ReshardEmitterTest, EveryPairVerifiesAndPrintsBack) {
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
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 3 * 15 * 15);
}

TEST(ReshardEmitterTest, AllToAllPathUsesXlaCollectives) {
  testing::ReshardModule built = Build("{devices=[2,4]<=[8]}", "{devices=[8,1]<=[8]}");
  EXPECT_THAT(Entry(built), Contains(AllOf(op::AllToAll(op::Reshape(op::Parameter())),
                                           HasReplicaGroups({{0, 1, 2, 3}, {4, 5, 6, 7}})))
                                .Times(1));
  EXPECT_THAT(Entry(built), Not(Contains(op::CollectivePermute())));
  EXPECT_THAT(Entry(built), Not(Contains(op::AllGather())));
  EXPECT_THAT(Root(built), op::Reshape(op::Transpose(op::AllToAll())));
}

// [2,4] -> [4,2]T(1,0): each device lacks at most two 4x6 cells of its new 4x12 region; the
// exchange moves exactly those in two collective-permutes (an all-to-all and a permute of the
// whole shard would move 288 bytes instead of 192).
TEST(ReshardEmitterTest, ExchangeMovesOnlyMissingCells) {
  testing::ReshardModule built = Build("{devices=[2,4]<=[8]}", "{devices=[4,2]<=[2,4]T(1,0)}");
  EXPECT_THAT(Entry(built), Not(Contains(op::AllToAll())));
  EXPECT_THAT(Entry(built), Not(Contains(op::AllGather())));
  EXPECT_THAT(
      Entry(built),
      Contains(AllOf(op::CollectivePermute(op::DynamicSlice()), HasShape("f32[4,6]"))).Times(2));
  EXPECT_THAT(Root(built), AllOf(op::DynamicUpdateSlice(), HasShape("f32[4,12]")));
  EXPECT_EQ(built.plan->bytes_received_per_device, 192);
  // Channel ids are distinct.
  std::set<int64_t> ids;
  for (const HloInstruction* instr : Entry(built)) {
    if (instr->attrs().channel_id) {
      EXPECT_TRUE(ids.insert(*instr->attrs().channel_id).second);
    }
  }
  EXPECT_EQ(ids.size(), 2u);
}

TEST(ReshardEmitterTest, AllGatherUsesGlobalDeviceIdsAndIotaGroups) {
  testing::ReshardModule built =
      Build("{devices=[2,4]<=[8]}", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  const HloInstruction* root = Root(built);
  EXPECT_THAT(root, AllOf(op::AllGather(op::Parameter()), HasShape("f32[8,24]"), HasDimensions({1}),
                          HasReplicaGroups({{0, 1, 2, 3}, {4, 5, 6, 7}})));
  EXPECT_EQ(root->attrs().channel_id, 1);
  EXPECT_TRUE(root->attrs().use_global_device_ids);
  EXPECT_TRUE(root->attrs().replica_groups->iota.has_value());  // Printed [2,4]<=[8].
}

TEST(ReshardEmitterTest, OffsetsComeFromATableIndexedByPartitionId) {
  testing::ReshardModule built = Build("{replicated}", "{devices=[4,2]<=[2,4]T(1,0)}");
  auto offset = [](std::vector<int64_t> table) {
    return op::Reshape(
        op::DynamicSlice(AllOf(op::Constant(), HasIntValues(table)), op::PartitionId()));
  };
  EXPECT_THAT(Root(built),
              AllOf(op::DynamicSlice(op::Parameter(), offset({0, 4, 8, 12, 0, 4, 8, 12}),
                                     offset({0, 0, 0, 0, 12, 12, 12, 12})),
                    HasShape("f32[4,12]")));
  EXPECT_THAT(Entry(built), Contains(op::PartitionId()).Times(1));
}

TEST(ReshardEmitterTest, UnevenGatherSlicesOffThePadding) {
  const Shape uneven = Shape::Array(hlo::PrimitiveType::kF32, {15, 23});
  testing::ReshardModule built = Build("{devices=[1,8]<=[8]}", "{replicated}", uneven);
  // f32[15,3] x 8 = f32[15,24]: one padded column, sliced off.
  EXPECT_THAT(Root(built),
              AllOf(op::Slice(AllOf(op::AllGather(op::Parameter()), HasShape("f32[15,24]"))),
                    HasShape("f32[15,23]")));
}

// The owner sends each other device its shard (one collective-permute per target tile), so a
// device receives one shard: an all-to-all over every device would deliver 7 (issue 18).
TEST(ReshardEmitterTest, MaximalSourceScattersByPermutesFromTheOwner) {
  testing::ReshardModule built = Build("{maximal device=3}", "{devices=[2,4]<=[8]}");
  EXPECT_EQ(built.plan->steps.size(), 1u) << built.plan->Explain();
  EXPECT_THAT(Entry(built), Contains(op::AllToAll()).Times(0));
  EXPECT_THAT(Entry(built), Contains(op::CollectivePermute()).Times(7));
  EXPECT_THAT(Root(built), AllOf(op::Select(), HasShape("f32[8,6]")));
  EXPECT_EQ(built.plan->bytes_received_per_device, 8 * 6 * 4);
  EXPECT_FALSE(built.plan->full_rematerialization);
}

// Larger meshes and rank 3, uneven: the search stays fast, the emitted modules verify and
// receive less than replicate-then-slice. Costed on a latency-free link, so that these small
// arrays still prefer less traffic. (tests/reshard_executor_test.cc runs them.)
TEST(ReshardEmitterTest, LargerMeshesAndRankThree) {
  const LinkModel bandwidth_only{0.0, 100000.0};
  ReshardPlanner planner(bandwidth_only);
  for (const testing::ReshardCase& c : testing::LargerMeshCases()) {
    testing::ReshardModule built =
        testing::BuildReshardModule(c.shape, S(c.from), S(c.to), planner, c.devices).value();
    SCOPED_TRACE(built.plan->Explain());
    EXPECT_TRUE(hlo::VerifyModule(*built.module).ok());
    ReshardPlan fallback =
        PlanReplicateThenSlice(c.shape, S(c.from), S(c.to), c.devices, bandwidth_only).value();
    EXPECT_LT(built.plan->bytes_received_per_device, fallback.bytes_received_per_device);
  }
}

TEST(ReshardEmitterTest, EmptyPlanReturnsTheValue) {
  testing::ReshardModule built = Build("{devices=[2,4]<=[8]}", "{devices=[2,4]<=[8]}");
  EXPECT_EQ(built.module->entry_computation()->instruction_count(), 1);
  EXPECT_THAT(Root(built), op::Parameter());
}

// Moving a split from one size-1 dim to another leaves every device its buffer (the device
// holding the element keeps it, the others keep padding): no dynamic-slice, no partition-id.
// XLA's ConvAsDotOnTrivialDimsForward sliced its 4 MB kernel so, to the same shape.
TEST(ReshardEmitterTest, SplitMovedBetweenSizeOneDimsEmitsNothing) {
  const Shape trivial = Shape::Array(hlo::PrimitiveType::kF32, {1, 1, 16, 24});
  testing::ReshardModule built =
      Build("{devices=[1,2,1,1]<=[2]}", "{devices=[2,1,1,1]<=[2]}", trivial, 2);
  EXPECT_THAT(Root(built), op::Parameter()) << Print(*built.module);
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

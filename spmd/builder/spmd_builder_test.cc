// The builder's idioms, checked by structure: names, order of emission, table lookups.
#include "spmd/builder/spmd_builder.h"

#include "gtest/gtest.h"
#include "hlo/testing/hlo_matchers.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;
using hlo::testing::HasIntValues;
using hlo::testing::HasReplicaGroups;
using hlo::testing::HasShape;
using hlo::testing::Instructions;
using ::testing::AllOf;
using ::testing::ElementsAre;
namespace op = hlo::testing::op;

class SpmdBuilderTest : public ::testing::Test {
 protected:
  SpmdBuilderTest() {
    entry_ = module_.AddComputation(std::make_unique<hlo::HloComputation>("main"));
    module_.set_entry_computation(entry_);
    param_ = entry_->AddInstruction(HloInstruction::Create(
        HloOpcode::kParameter, Shape::Array(PrimitiveType::kF32, {5, 7}), {}));
    param_->set_name("p");
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& instr : entry_->instructions()) names.push_back(instr->name());
    return names;
  }

  hlo::HloModule module_{"m"};
  hlo::HloComputation* entry_;
  HloInstruction* param_;
  ChannelIdAllocator channel_ids_;
};

TEST_F(SpmdBuilderTest, TableLookupIsConstantThenPartitionIdThenSliceAndReshape) {
  SpmdBuilder b(entry_, &channel_ids_, {".rs", /*by_unique_id=*/true});
  HloInstruction* offset = b.PerDeviceScalar({0, 4, 8, 12});
  EXPECT_THAT(offset, AllOf(op::Reshape(op::DynamicSlice(op::Constant(), op::PartitionId())),
                            HasShape("s32[]")));
  EXPECT_THAT(offset->operand(0)->operand(0), HasIntValues({0, 4, 8, 12}));
  // One partition-id however many tables; names carry the unique id.
  b.PerDeviceScalar({1, 0, 0, 0});
  EXPECT_THAT(Instructions(*entry_), ::testing::Contains(op::PartitionId()).Times(1));
  const int64_t id = param_->unique_id();
  auto name = [&](const char* base, int64_t after) { return base + std::to_string(id + after); };
  EXPECT_THAT(Names(), ElementsAre("p", name("constant.rs", 1), name("partition-id.rs", 2),
                                   name("dynamic-slice.rs", 3), name("reshape.rs", 4),
                                   name("constant.rs", 5), name("dynamic-slice.rs", 6),
                                   name("reshape.rs", 7)));
}

TEST_F(SpmdBuilderTest, UniformTableIsAConstant) {
  SpmdBuilder b(entry_, &channel_ids_, {".spmd", /*by_unique_id=*/false});
  EXPECT_THAT(b.PerDeviceScalar({3, 3, 3}),
              AllOf(op::Constant(), HasShape("s32[]"), HasIntValues({3})));
  EXPECT_THAT(b.PerDeviceFlag({1, 0, 1}),
              AllOf(op::Compare(op::Reshape(), op::Constant()), HasShape("pred[]")));
  // Sequence numbering continues where it was handed over.
  b.set_next_number(10);
  EXPECT_EQ(b.Add(HloOpcode::kAdd, param_->shape(), {param_, param_})->name(), "add.spmd10");
  EXPECT_EQ(b.next_number(), 11);
}

TEST_F(SpmdBuilderTest, PadAndSliceOnlyWhenTheSizeDiffers) {
  SpmdBuilder b(entry_, &channel_ids_, {".rs", true});
  EXPECT_EQ(b.PadHigh(param_, {5, 7}), param_);
  EXPECT_EQ(b.SliceTo(param_, {5, 7}), param_);
  HloInstruction* padded = b.PadHigh(param_, {6, 8});
  EXPECT_THAT(padded, AllOf(op::Pad(op::Parameter(), op::Constant()), HasShape("f32[6,8]")));
  EXPECT_THAT(b.SliceTo(padded, {5, 7}), AllOf(op::Slice(op::Pad()), HasShape("f32[5,7]")));
}

TEST_F(SpmdBuilderTest, AllReduceSumAddsTheReducerOnceAndFreshChannels) {
  SpmdBuilder a(entry_, &channel_ids_, {".rs", true});
  SpmdBuilder b(entry_, &channel_ids_, {".spmd", false});
  hlo::ReplicaGroups groups;
  groups.groups = {{0, 1}, {2, 3}};
  HloInstruction* first = a.AllReduceSum(param_, groups).value();
  HloInstruction* second = b.AllReduceSum(first, groups).value();
  EXPECT_THAT(second, AllOf(op::AllReduce(op::AllReduce(op::Parameter())),
                            HasReplicaGroups({{0, 1}, {2, 3}})));
  EXPECT_EQ(first->to_apply(), second->to_apply());
  EXPECT_EQ(module_.computations().size(), 2u);
  EXPECT_EQ(*first->attrs().channel_id, 1);
  EXPECT_EQ(*second->attrs().channel_id, 2);
  EXPECT_TRUE(second->attrs().use_global_device_ids);
}

TEST_F(SpmdBuilderTest, ReducingCollectiveTakesItsShapeAndReducer) {
  SpmdBuilder b(entry_, &channel_ids_, {".spmd", /*by_unique_id=*/false});
  hlo::HloComputation* add = b.AddReducer(PrimitiveType::kF32).value();
  hlo::ReplicaGroups groups;
  groups.groups = {{0, 1}};
  HloInstruction* scattered = b.ReducingCollective(
      HloOpcode::kReduceScatter, Shape::Array(PrimitiveType::kF32, {5, 3}), param_, groups, add);
  EXPECT_THAT(scattered, AllOf(op::ReduceScatter(op::Parameter()), HasShape("f32[5,3]"),
                               HasReplicaGroups({{0, 1}})));
  EXPECT_EQ(scattered->to_apply(), add);
  EXPECT_EQ(*scattered->attrs().channel_id, 1);
  EXPECT_TRUE(scattered->attrs().use_global_device_ids);
}

TEST_F(SpmdBuilderTest, VirtualPartitionIdAndRecordedInstructions) {
  SpmdBuilder b(entry_, &channel_ids_, {".vd", true});
  HloInstruction* id = b.TableLookup({1, 0, 1, 0}, PrimitiveType::kU32);
  EXPECT_THAT(id, AllOf(op::Reshape(op::DynamicSlice()), HasShape("u32[]")));
  SpmdBuilder inner(entry_, &channel_ids_, {".rs", true});
  std::vector<HloInstruction*> added;
  inner.UsePartitionId(id);
  inner.RecordAddedTo(&added);
  HloInstruction* offset = inner.PerDeviceScalar({0, 2});
  EXPECT_EQ(offset->operand(0)->operand(1), id);
  EXPECT_EQ(added.size(), 3u);
}

TEST_F(SpmdBuilderTest, FixedBaseNamesShareOneSequence) {
  int64_t counter = 0;
  SpmdBuilder outer(entry_, &channel_ids_, {".", /*by_unique_id=*/false, "loop"});
  outer.NumberFrom(&counter);
  SpmdBuilder inner(entry_, &channel_ids_, {".", /*by_unique_id=*/false, "loop.body"});
  inner.NumberFrom(&counter);
  HloInstruction* zeros = outer.Zeros(param_->shape());
  EXPECT_THAT(zeros, AllOf(op::Broadcast(op::Constant()), HasShape("f32[5,7]")));
  HloInstruction* start = inner.S32(2);
  EXPECT_THAT(start, AllOf(op::Constant(), HasShape("s32[]"), HasIntValues({2})));
  HloInstruction* slice = outer.SliceDim(param_, 1, start, 3);
  EXPECT_THAT(slice, AllOf(op::DynamicSlice(op::Parameter(), op::Constant(), op::Constant()),
                           HasShape("f32[5,3]")));
  EXPECT_EQ(slice->operand(2), start);
  EXPECT_THAT(inner.UpdateDim(param_, slice, 1, start),
              AllOf(op::DynamicUpdateSlice(op::Parameter(), op::DynamicSlice(), op::Constant(),
                                           op::Constant()),
                    HasShape("f32[5,7]")));
  EXPECT_THAT(Names(), ElementsAre("p", "loop.0", "loop.1", "loop.body.2", "loop.3", "loop.4",
                                   "loop.body.5", "loop.body.6"));
  EXPECT_EQ(counter, 7);
}

TEST_F(SpmdBuilderTest, TupleElementsAndPermutesOnFreshChannels) {
  SpmdBuilder b(entry_, &channel_ids_, {".spmd", /*by_unique_id=*/false});
  HloInstruction* tuple = b.Add(
      HloOpcode::kTuple, Shape::Tuple({param_->shape(), Shape::Array(PrimitiveType::kS32, {})}),
      {param_, b.S32(0)});
  HloInstruction* element = b.GetTupleElement(tuple, 1);
  EXPECT_THAT(element, AllOf(op::GetTupleElement(op::Tuple()), HasShape("s32[]")));
  EXPECT_EQ(element->attrs().tuple_index, 1);
  HloInstruction* first = b.CollectivePermute(param_, {{0, 1}, {1, 0}});
  HloInstruction* second = b.CollectivePermute(first, {{1, 0}, {0, 1}});
  EXPECT_THAT(second, AllOf(op::CollectivePermute(op::CollectivePermute()), HasShape("f32[5,7]")));
  EXPECT_EQ(*first->attrs().channel_id, 1);
  EXPECT_EQ(*second->attrs().channel_id, 2);
  EXPECT_EQ(second->attrs().source_target_pairs,
            (std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {0, 1}}));
}

}  // namespace
}  // namespace spmd

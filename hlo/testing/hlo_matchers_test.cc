// The matchers accept what they describe and reject (with a reason) what they do not.
#include "hlo/testing/hlo_matchers.h"

#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"

namespace hlo::testing {
namespace {

using ::testing::AllOf;
using ::testing::Not;

constexpr char kModule[] = R"(
HloModule m, num_partitions=8

ENTRY e {
  p = f32[8,6] parameter(0), sharding={devices=[2,4]<=[8]}
  ag = f32[8,24] all-gather(p), dimensions={1}, channel_id=1, replica_groups=[2,4]<=[8], use_global_device_ids=true
  t = s32[4] constant({0, 4, 8, 12})
  ROOT s = f32[8,12] slice(ag), slice={[0:8], [0:12]}
}
)";

std::string Explain(const InstructionMatcher& m, const HloInstruction* instr) {
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(m.MatchAndExplain(instr, &listener));
  return listener.str();
}

TEST(HloMatchersTest, OpcodeOperandsShapeShardingAttributes) {
  std::unique_ptr<HloModule> module = ParseHloModule(kModule).value();
  const HloInstruction* root = module->entry_computation()->root_instruction();
  EXPECT_THAT(root, op::Slice(op::AllGather(op::Parameter())));
  EXPECT_THAT(root, op::Slice());
  EXPECT_THAT(root, AllOf(HasOpcode(HloOpcode::kSlice), HasShape("f32[8,12]")));
  EXPECT_THAT(root, Operand(0, AllOf(op::AllGather(), HasDimensions({1}),
                                     HasReplicaGroups({{0, 1, 2, 3}, {4, 5, 6, 7}}))));
  EXPECT_THAT(root->operand(0)->operand(0), HasSharding("{devices=[2,4]<=[8]}"));
  EXPECT_THAT(root, HasNoSharding());
  const HloInstruction* table = FindInstruction(*module->entry_computation(), "t");
  ASSERT_NE(table, nullptr);
  EXPECT_THAT(table, HasIntValues({0, 4, 8, 12}));
  EXPECT_THAT(Instructions(*module->entry_computation()),
              ::testing::Contains(op::AllGather()).Times(1));
}

TEST(HloMatchersTest, MismatchesSayWhere) {
  std::unique_ptr<HloModule> module = ParseHloModule(kModule).value();
  const HloInstruction* root = module->entry_computation()->root_instruction();
  EXPECT_THAT(root, Not(op::Slice(op::AllToAll(op::Parameter()))));
  EXPECT_EQ(Explain(op::Slice(op::AllToAll()), root), "operand 0 of %s: %ag is a all-gather");
  EXPECT_EQ(Explain(op::Slice(op::AllGather(), op::Parameter()), root), "%s has 1 operands");
  EXPECT_EQ(Explain(HasShape("f32[8,24]"), root), "%s has shape f32[8,12]");
  EXPECT_EQ(Explain(HasSharding("{replicated}"), root->operand(0)->operand(0)),
            "%p has sharding {devices=[2,4]<=[8]}");
  EXPECT_EQ(Explain(Operand(1, op::Parameter()), root), "%s has 1 operands");
  EXPECT_EQ(Explain(op::Slice(), nullptr), "is null");
}

}  // namespace
}  // namespace hlo::testing

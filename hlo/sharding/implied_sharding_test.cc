// The implied shardings propagation and the partitioner share: which ops a manual region flows
// through, and the leaves a tuple or get-tuple-element passes through.
#include "hlo/sharding/implied_sharding.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"

namespace hlo {
namespace {

HloSharding P(const std::string& text) { return HloSharding::Parse(text).value(); }

constexpr char kModule[] = R"(
HloModule m, num_partitions=2
b0 {
  p = f32[4] parameter(0)
  ROOT k = f32[4] constant({1, 2, 3, 4})
}
ENTRY e {
  x = f32[8] parameter(0)
  y = f32[2] parameter(1)
  m = f32[4] custom-call(x), custom_call_target="SPMDFullToShardShape"
  i = s32[] parameter(2)
  c = f32[4] conditional(i, m), branch_computations={b0}
  f = f32[8] custom-call(c), custom_call_target="SPMDShardToFullShape"
  t = (f32[4], (f32[8], f32[2])) tuple(c, (f32[8], f32[2]) tuple(f, y))
  ROOT g = (f32[8], f32[2]) get-tuple-element(t), index=1
})";

class ImpliedShardingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kModule);
    ASSERT_TRUE(m.ok()) << m.status();
    module_ = *std::move(m);
  }
  const HloInstruction& Get(const std::string& name) {
    for (const auto& instr : module_->entry_computation()->instructions()) {
      if (instr->name() == name) return *instr;
    }
    ADD_FAILURE() << name;
    return *module_->entry_computation()->root_instruction();
  }
  std::unique_ptr<HloModule> module_;
};

TEST_F(ImpliedShardingTest, ManualFlowsToEveryUserButShardToFull) {
  EXPECT_TRUE(ManualFlowsToResults(Get("c")));  // Branch arguments count, not only the index.
  EXPECT_TRUE(ManualFlowsToResults(Get("m")));
  EXPECT_FALSE(ManualFlowsToResults(Get("f")));
  EXPECT_EQ(ManualOver(Get("t").shape()).ToString(), "{{manual}, {manual}, {manual}}");
  EXPECT_EQ(ManualOver(Get("c").shape()).ToString(), "{manual}");
}

TEST_F(ImpliedShardingTest, TupleAndGetTupleElementPassLeavesThrough) {
  EXPECT_EQ(ElementLeafOffset(Get("t").shape(), 1), 1);
  const HloSharding split = P("{devices=[2]<=[2]}");
  const std::optional<HloSharding> t =
      PassThroughSharding(Get("t"), {HloSharding::Manual(), split, HloSharding::Replicate()});
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->ToString(), "{{manual}, {devices=[2]<=[2]}, {replicated}}");
  const std::optional<HloSharding> g =
      PassThroughSharding(Get("g"), {HloSharding::Manual(), split, HloSharding::Replicate()});
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->ToString(), "{{devices=[2]<=[2]}, {replicated}}");
  // Leaves that do not fit the operands' shapes imply nothing.
  EXPECT_FALSE(PassThroughSharding(Get("g"), {split}).has_value());
  EXPECT_FALSE(FromLeaves(Get("c").shape(), {split, split}).ok());
}

}  // namespace
}  // namespace hlo

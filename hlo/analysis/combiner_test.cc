// MatchCombiner on the combiner shapes the partitioner and the executors meet.
#include "hlo/analysis/combiner.h"

#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"

namespace hlo {
namespace {

constexpr char kCombiners[] = R"(HloModule combiners

max_swapped {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(b, a)
}

or_pred {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT o = pred[] or(a, b)
}

subtract {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b)
}

doubled {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, a)
}

assign {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}

three {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  ROOT s = f32[] add(a, b)
}

argmax {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = f32[] select(gt, a, b)
  k = s32[] select(gt, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}

mixed_orientation {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = f32[] select(gt, a, b)
  k = s32[] select(gt, j, i)
  ROOT t = (f32[], s32[]) tuple(v, k)
}

two_predicates {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  lt = pred[] compare(i, j), direction=LT
  v = f32[] select(gt, a, b)
  k = s32[] select(lt, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}

sum_pair {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  s = f32[] add(a, b)
  gt = pred[] compare(a, b), direction=GT
  k = s32[] select(gt, i, j)
  ROOT t = (f32[], s32[]) tuple(s, k)
}

ENTRY e {
  ROOT x = f32[] parameter(0)
}
)";

TEST(MatchCombinerTest, RecognisesReducersOverBothParameters) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kCombiners);
  ASSERT_TRUE(module.ok()) << module.status();
  auto match = [&](std::string_view name) {
    return MatchCombiner(*(*module)->GetComputation(name));
  };
  EXPECT_EQ(match("max_swapped"), HloOpcode::kMaximum);
  EXPECT_EQ(match("or_pred"), HloOpcode::kOr);
  EXPECT_EQ(match("subtract"), std::nullopt);  // Not a reducer.
  EXPECT_EQ(match("doubled"), std::nullopt);   // One parameter twice.
  EXPECT_EQ(match("assign"), std::nullopt);    // No combining op.
  EXPECT_EQ(match("three"), std::nullopt);     // Not a two-parameter combiner.
}

// Selecting combiners return one input whole, so an init applied twice changes nothing;
// anything that combines the inputs (a sum) or mixes them (orientations or predicates that
// differ per element) is not one.
TEST(MatchCombinerTest, SelectingCombinersReturnOneInputWhole) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kCombiners);
  ASSERT_TRUE(module.ok()) << module.status();
  auto selecting = [&](std::string_view name) {
    return IsSelectingCombiner(*(*module)->GetComputation(name));
  };
  EXPECT_TRUE(selecting("max_swapped"));
  EXPECT_TRUE(selecting("or_pred"));
  EXPECT_TRUE(selecting("argmax"));
  EXPECT_FALSE(selecting("mixed_orientation"));
  EXPECT_FALSE(selecting("two_predicates"));
  EXPECT_FALSE(selecting("sum_pair"));
  EXPECT_FALSE(selecting("subtract"));
  EXPECT_FALSE(selecting("three"));
}

}  // namespace
}  // namespace hlo

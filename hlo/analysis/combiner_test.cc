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

}  // namespace
}  // namespace hlo

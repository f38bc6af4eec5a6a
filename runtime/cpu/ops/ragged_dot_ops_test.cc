// Tests of ragged-dot (ragged_dot_ops.cc): one hand-checked example per mode, group sizes that
// overrun the ragged dimension, and group sizes with a batch dimension.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/literal.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {
namespace {

using hlo::Literal;
using D = std::vector<double>;

D RunRagged(const std::string& body) {
  auto module = hlo::ParseHloModule("HloModule m\nENTRY e {\n" + body + "\n}\n");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  absl::StatusOr<Literal> r = Evaluator(**module, {}).RunEntry({});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  D out;
  for (int64_t i = 0; i < r->element_count(); ++i) out.push_back(r->GetDouble(i));
  return out;
}

TEST(RaggedDotTest, NonContractingAssignsRowsToConsecutiveGroups) {
  const std::string operands = R"(
    lhs = f32[3,1] constant({{1}, {2}, {3}})
    rhs = f32[2,1,1] constant({{{10}}, {{100}}})
  )";
  // Row 2 lies past both groups: zero.
  EXPECT_EQ(RunRagged(operands + R"(gs = s32[2] constant({1, 1})
    ROOT d = f32[3,1] ragged-dot(lhs, rhs, gs), lhs_contracting_dims={1},
      rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0})"),
            (D{10, 200, 0}));
  // Sizes summing past the dimension: the last group is cut at its end.
  EXPECT_EQ(RunRagged(operands + R"(gs = s32[2] constant({2, 5})
    ROOT d = f32[3,1] ragged-dot(lhs, rhs, gs), lhs_contracting_dims={1},
      rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0})"),
            (D{10, 20, 300}));
}

TEST(RaggedDotTest, NonContractingWithBatchedGroupSizes) {
  // Batch 0: rows 0-1 in group 0. Batch 1: group 0 empty, row 0 in group 1, row 1 in none.
  EXPECT_EQ(RunRagged(R"(
    lhs = f32[2,2,1] constant({{{1}, {2}}, {{3}, {4}}})
    rhs = f32[2,2,1,1] constant({{{{10}}, {{20}}}, {{{30}}, {{40}}}})
    gs = u32[2,2] constant({{2, 0}, {0, 1}})
    ROOT d = f32[2,2,1] ragged-dot(lhs, rhs, gs), lhs_batch_dims={0}, rhs_batch_dims={1},
      lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1},
      rhs_group_dims={0})"),
            (D{10, 20, 120, 0}));
}

TEST(RaggedDotTest, ContractingGivesEachGroupItsOwnRange) {
  // Group 0 sums element 0, group 1 elements 1-2; element 3 lies past both.
  EXPECT_EQ(RunRagged(R"(
    lhs = f32[1,4] constant({{1, 2, 3, 4}})
    rhs = f32[4,1] constant({{1}, {1}, {1}, {1}})
    gs = s64[2] constant({1, 2})
    ROOT d = f32[2,1,1] ragged-dot(lhs, rhs, gs), lhs_contracting_dims={1},
      rhs_contracting_dims={0}, lhs_ragged_dims={1})"),
            (D{1, 5}));
}

TEST(RaggedDotTest, BatchIsAnOrdinaryBatchedDot) {
  EXPECT_EQ(RunRagged(R"(
    lhs = f32[2,1,1] constant({{{2}}, {{3}}})
    rhs = f32[2,1,1] constant({{{5}}, {{7}}})
    gs = u32[1] constant({1})
    ROOT d = f32[2,1,1] ragged-dot(lhs, rhs, gs), lhs_batch_dims={0}, rhs_batch_dims={0},
      lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0})"),
            (D{10, 21}));
}

}  // namespace
}  // namespace runtime

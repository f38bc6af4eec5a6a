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

// JAX's argmax: NaN first, ties on the value broken by the lower index (the index's predicate
// adds "equal values" to the value's).
jax_argmax {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  nan = pred[] compare(a, a), direction=NE
  pv = pred[] or(gt, nan)
  v = f32[] select(pv, a, b)
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lt)
  pi = pred[] or(pv, tie)
  k = s32[] select(pi, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}

// The same with the tie test on the indices instead of the values: it mixes the two inputs.
tie_on_indices {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = f32[] select(gt, a, b)
  eq = pred[] compare(i, j), direction=EQ
  lt = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lt)
  pi = pred[] or(gt, tie)
  k = s32[] select(pi, i, j)
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
  EXPECT_TRUE(selecting("jax_argmax"));
  EXPECT_FALSE(selecting("tie_on_indices"));
  EXPECT_FALSE(selecting("sum_pair"));
  EXPECT_FALSE(selecting("subtract"));
  EXPECT_FALSE(selecting("three"));
}

constexpr char kComparators[] = R"(HloModule comparators

greater {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT gt = pred[] compare(a, b), direction=GT
}

// XLA's TopK rewrite: floats as total-order integers, larger first, ties by lower index.
total_order_then_index {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ca = f32[] convert(a)
  ia = s32[] bitcast-convert(ca)
  zero = s32[] constant(0)
  na = pred[] compare(ia, zero), direction=LT
  max = u32[] constant(2147483647)
  ua = u32[] bitcast-convert(ca)
  sa = u32[] subtract(max, ua)
  fa = s32[] bitcast-convert(sa)
  ka = s32[] select(na, fa, ia)
  cb = f32[] convert(b)
  ib = s32[] bitcast-convert(cb)
  nb = pred[] compare(ib, zero), direction=LT
  ub = u32[] bitcast-convert(cb)
  sb = u32[] subtract(max, ub)
  fb = s32[] bitcast-convert(sb)
  kb = s32[] select(nb, fb, ib)
  gt = pred[] compare(ka, kb), direction=GT
  lt = pred[] compare(kb, ka), direction=GT
  tie = pred[] compare(gt, lt), direction=EQ
  first = pred[] compare(i, j), direction=LT
  ROOT r = pred[] select(tie, first, gt)
}

// The same with the tie test mutated (EQ -> LE: "not greater"): smaller values then order by
// index, which orders no set consistently.
not_an_order {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  lt = pred[] compare(b, a), direction=GT
  tie = pred[] compare(gt, lt), direction=LE
  first = pred[] compare(i, j), direction=LT
  ROOT r = pred[] select(tie, first, gt)
}

or_and_tie_break {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(b, a), direction=EQ
  later = pred[] compare(i, j), direction=GT
  tie = pred[] and(later, eq)
  ROOT r = pred[] or(tie, gt)
}

not_strict {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT ge = pred[] compare(a, b), direction=GE
}

// x - y < y - x: a key of both elements (not an order once the subtraction wraps).
both_elements {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  d = s32[] subtract(a, b)
  e = s32[] subtract(b, a)
  ROOT lt = pred[] compare(d, e), direction=LT
}

// Ties broken by a different key than the one compared.
wrong_tie {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(i, j), direction=EQ
  first = pred[] compare(i, j), direction=LT
  ROOT r = pred[] select(eq, first, gt)
}
)";

// Which sort comparators are recognisably strict weak orders (a blockwise sort and a merge
// then equal one sort of the whole).
TEST(StrictWeakOrderTest, RecognisesKeyOrdersAndTheirTieBreaks) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kComparators);
  ASSERT_TRUE(module.ok()) << module.status();
  auto order = [&](std::string_view name) {
    return IsStrictWeakOrder(*(*module)->GetComputation(name));
  };
  EXPECT_TRUE(order("greater"));
  EXPECT_TRUE(order("total_order_then_index"));
  EXPECT_TRUE(order("or_and_tie_break"));
  EXPECT_FALSE(order("not_an_order"));
  EXPECT_FALSE(order("not_strict"));
  EXPECT_FALSE(order("both_elements"));
  EXPECT_FALSE(order("wrong_tie"));
}

}  // namespace
}  // namespace hlo

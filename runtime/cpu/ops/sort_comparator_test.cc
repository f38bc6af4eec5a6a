// Tests of SortComparator: on random data with ties, NaNs, signed zeros and infinities, the
// program agrees with calling the comparator through the evaluator for every pair of elements,
// and a sort through the evaluator (which uses the program, or for lexicographic comparators
// the key sort) equals a reference stable sort that calls the comparator per comparison. Comparators outside the supported form are not matched.
#include "runtime/cpu/ops/sort_comparator.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/evaluator.h"
#include "runtime/cpu/ops/radix_sort.h"

namespace runtime {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

// Comparators over (bf16 or f32 values, s32 indices).
const char kComparators[] = R"(
topk_gt {
  a = bf16[] parameter(0)  b = bf16[] parameter(1)
  i = s32[] parameter(2)  j = s32[] parameter(3)
  fa = f32[] convert(a)  sa = s32[] bitcast-convert(fa)  zero = s32[] constant(0)
  na = pred[] compare(sa, zero), direction=LT
  big = u32[] constant(2147483647)  ua = u32[] bitcast-convert(fa)
  da = u32[] subtract(big, ua)  ka0 = s32[] bitcast-convert(da)
  ka = s32[] select(na, ka0, sa)
  fb = f32[] convert(b)  sb = s32[] bitcast-convert(fb)
  nb = pred[] compare(sb, zero), direction=LT
  ub = u32[] bitcast-convert(fb)  db = u32[] subtract(big, ub)  kb0 = s32[] bitcast-convert(db)
  kb = s32[] select(nb, kb0, sb)
  ROOT r = pred[] compare(ka, kb), direction=GT
}
topk_tiebreak {
  a = bf16[] parameter(0)  b = bf16[] parameter(1)
  i = s32[] parameter(2)  j = s32[] parameter(3)
  fa = f32[] convert(a)  sa = s32[] bitcast-convert(fa)  zero = s32[] constant(0)
  na = pred[] compare(sa, zero), direction=LT
  big = u32[] constant(2147483647)  ua = u32[] bitcast-convert(fa)
  da = u32[] subtract(big, ua)  ka0 = s32[] bitcast-convert(da)
  ka = s32[] select(na, ka0, sa)
  fb = f32[] convert(b)  sb = s32[] bitcast-convert(fb)
  nb = pred[] compare(sb, zero), direction=LT
  ub = u32[] bitcast-convert(fb)  db = u32[] subtract(big, ub)  kb0 = s32[] bitcast-convert(db)
  kb = s32[] select(nb, kb0, sb)
  gt = pred[] compare(ka, kb), direction=GT
  lt = pred[] compare(kb, ka), direction=GT
  tie = pred[] compare(gt, lt), direction=EQ
  idx = pred[] compare(i, j), direction=LT
  ROOT r = pred[] select(tie, idx, gt)
}
lex_f32 {
  a = f32[] parameter(0)  b = f32[] parameter(1)
  i = s32[] parameter(2)  j = s32[] parameter(3)
  lt = pred[] compare(a, b), direction=LT
  eq = pred[] compare(a, b), direction=EQ
  gt = pred[] compare(i, j), direction=GT
  both = pred[] and(eq, gt)
  ROOT r = pred[] or(lt, both)
}
total_neg_f32 {
  a = f32[] parameter(0)  b = f32[] parameter(1)
  i = s32[] parameter(2)  j = s32[] parameter(3)
  na = f32[] negate(a)  nb = f32[] negate(b)
  ROOT r = pred[] compare(na, nb), direction=LT, type=TOTALORDER
}
unsigned_s32 {
  a = f32[] parameter(0)  b = f32[] parameter(1)
  i = s32[] parameter(2)  j = s32[] parameter(3)
  c = s32[] constant(-2)  ia = s32[] add(i, c)  jb = s32[] add(j, c)
  lt = pred[] compare(ia, jb), direction=LT, type=UNSIGNED
  ROOT r = pred[] not(lt)
}
mixed_value {
  a = f32[] parameter(0)  b = f32[] parameter(1)
  i = s32[] parameter(2)  j = s32[] parameter(3)
  m = f32[] maximum(a, b)
  ROOT r = pred[] compare(m, a), direction=GT
}
)";

// Operands are [6, 80]: rows along dimension 1 are long enough for the radix sort of
// SortRowByKeys (kRadixMinLength), rows along dimension 0 take the comparison sort.
constexpr int64_t kRows = 6;
constexpr int64_t kCols = 80;
static_assert(kCols >= static_cast<int64_t>(kRadixMinLength) &&
              kRows < static_cast<int64_t>(kRadixMinLength));

std::string SortModule(const std::string& value_type, const std::string& comparator,
                       int64_t dim) {
  const std::string v = value_type + "[6,80]";
  return std::string("HloModule m\n") + kComparators + "\nENTRY e {\n  x = " + v +
         " parameter(0)\n  y = s32[6,80] parameter(1)\n  ROOT s = (" + v +
         ", s32[6,80]) sort(x, y), dimensions={" + std::to_string(dim) +
         "}, is_stable=true, to_apply=" + comparator + "\n}\n";
}

// Values from a small pool (many ties) with NaNs of both signs, signed zeros and infinities.
Literal RandomValues(PrimitiveType type, std::mt19937& rng) {
  Literal l(Shape::Array(type, {kRows, kCols}));
  const bool bf16 = type == PrimitiveType::kBF16;
  const std::vector<uint32_t> pool =
      bf16 ? std::vector<uint32_t>{0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0,
                                   0xFFC0, 0x7F81, 0x4040, 0xC040, 0x3F00, 0x0001, 0x8001}
           : std::vector<uint32_t>{0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000,
                                   0xFF800000, 0x7FC00000, 0xFFC00000, 0x40400000, 0xC0400000};
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
  const size_t width = bf16 ? 2 : 4;
  for (int64_t i = 0; i < l.element_count(); ++i) {
    const uint32_t bits = pool[pick(rng)];
    std::memcpy(l.mutable_data()->data() + i * width, &bits, width);
  }
  return l;
}

Literal RandomIndices(std::mt19937& rng) {
  Literal l(Shape::Array(PrimitiveType::kS32, {kRows, kCols}));
  std::uniform_int_distribution<int> pick(-3, 3);
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetInt(i, pick(rng));
  return l;
}

// The comparator called through the evaluator on elements a (left) and b (right).
bool CallComparator(Evaluator& evaluator, const hlo::HloComputation& comparator,
                    const std::vector<Literal>& scalars_x, const std::vector<Literal>& scalars_y,
                    int64_t a, int64_t b) {
  std::vector<const Literal*> args = {&scalars_x[a], &scalars_x[b], &scalars_y[a],
                                      &scalars_y[b]};
  absl::StatusOr<Literal> r = evaluator.Call(comparator, args);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() && r->GetInt(0) != 0;
}

std::vector<Literal> Scalars(const Literal& array) {
  std::vector<Literal> out;
  const int64_t width = hlo::ByteWidth(array.shape().element_type());
  for (int64_t i = 0; i < array.element_count(); ++i) {
    Literal s(Shape::Array(array.shape().element_type(), {}));
    std::memcpy(s.mutable_data()->data(), array.data().data() + i * width, width);
    out.push_back(std::move(s));
  }
  return out;
}

// Reference: each row of dimension `dim` stable-sorted by calling the comparator.
std::vector<Literal> ReferenceSort(Evaluator& evaluator, const hlo::HloComputation& comparator,
                                   const Literal& x, const Literal& y, int64_t dim) {
  const std::vector<Literal> sx = Scalars(x);
  const std::vector<Literal> sy = Scalars(y);
  Literal ox = x;
  Literal oy = y;
  const int64_t rows = dim == 1 ? kRows : kCols;
  const int64_t length = dim == 1 ? kCols : kRows;
  const int64_t stride = dim == 1 ? 1 : kCols;
  const int64_t row_step = dim == 1 ? kCols : 1;
  const int64_t wx = hlo::ByteWidth(x.shape().element_type());
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * row_step;
    std::vector<int64_t> perm(length);
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
      return CallComparator(evaluator, comparator, sx, sy, base + a * stride, base + b * stride);
    });
    for (int64_t j = 0; j < length; ++j) {
      const int64_t from = base + perm[j] * stride;
      const int64_t to = base + j * stride;
      std::memcpy(ox.mutable_data()->data() + to * wx, x.data().data() + from * wx, wx);
      oy.SetInt(to, y.GetInt(from));
    }
  }
  std::vector<Literal> out;
  out.push_back(std::move(ox));
  out.push_back(std::move(oy));
  return out;
}

struct Case {
  const char* comparator;
  const char* value_type;
  bool recognised;
  bool lexicographic;
};

class SortComparatorTest : public ::testing::TestWithParam<Case> {};

TEST_P(SortComparatorTest, AgreesWithComparatorCalls) {
  const Case& c = GetParam();
  const PrimitiveType type =
      std::string(c.value_type) == "bf16" ? PrimitiveType::kBF16 : PrimitiveType::kF32;
  std::mt19937 rng(1234);
  for (int64_t dim : {0, 1}) {
    auto module = hlo::ParseHloModule(SortModule(c.value_type, c.comparator, dim));
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    const hlo::HloComputation& comparator =
        *(*module)->entry_computation()->root_instruction()->to_apply();
    Evaluator evaluator(**module, {});
    for (int trial = 0; trial < 3; ++trial) {
      Literal x = RandomValues(type, rng);
      Literal y = RandomIndices(rng);
      std::vector<const Literal*> operands = {&x, &y};
      absl::StatusOr<std::unique_ptr<SortComparator>> program =
          SortComparator::Create(comparator, operands, evaluator);
      ASSERT_TRUE(program.ok()) << program.status().ToString();
      ASSERT_EQ(*program != nullptr, c.recognised);
      if (*program != nullptr) {
        EXPECT_EQ((*program)->is_lexicographic(), c.lexicographic);
        const std::vector<Literal> sx = Scalars(x);
        const std::vector<Literal> sy = Scalars(y);
        for (int64_t a = 0; a < x.element_count(); a += 7) {
          for (int64_t b = 0; b < x.element_count(); ++b) {
            ASSERT_EQ((*program)->Compare(a, b),
                      CallComparator(evaluator, comparator, sx, sy, a, b))
                << "a=" << a << " b=" << b;
          }
        }
      }
      std::vector<Literal> expected = ReferenceSort(evaluator, comparator, x, y, dim);
      std::vector<Literal> args;
      args.push_back(x);
      args.push_back(y);
      absl::StatusOr<Literal> sorted = evaluator.RunEntry(std::move(args));
      ASSERT_TRUE(sorted.ok()) << sorted.status().ToString();
      EXPECT_EQ(sorted->tuple_elements()[0].data(), expected[0].data()) << "dim " << dim;
      EXPECT_EQ(sorted->tuple_elements()[1].data(), expected[1].data()) << "dim " << dim;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Comparators, SortComparatorTest,
                         ::testing::Values(Case{"topk_gt", "bf16", true, true},
                                           Case{"topk_tiebreak", "bf16", true, true},
                                           Case{"lex_f32", "f32", true, true},
                                           Case{"total_neg_f32", "f32", true, true},
                                           Case{"unsigned_s32", "f32", true, false},
                                           Case{"mixed_value", "f32", false, false}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.comparator);
                         });

}  // namespace
}  // namespace runtime

// Tests of the reduction family (reduce, reduce-window, select-and-scatter, sort, map) against
// hand-computed values and naive reference loops, through the text parser and the evaluator.
// Most cases run both the typed fast path (a one-instruction body) and the per-element call
// path (the same body behind a `copy`, which the fast-path matcher does not recognise).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;
using V = std::vector<int64_t>;
using D = std::vector<double>;

absl::StatusOr<Literal> RunModule(const std::string& text, std::vector<Literal> args = {}) {
  auto module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  return Evaluator(**module, {}).RunEntry(std::move(args));
}

Literal RunOk(const std::string& text, std::vector<Literal> args = {}) {
  absl::StatusOr<Literal> result = RunModule(text, std::move(args));
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *std::move(result) : Literal();
}

V Ints(const Literal& l) {
  V v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetInt(i));
  return v;
}

D Doubles(const Literal& l) {
  D v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetDouble(i));
  return v;
}

Literal Array(PrimitiveType type, V dims, const D& values) {
  Literal l(Shape::Array(type, dims));
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetDouble(i, values[i]);
  return l;
}

// Scalar bodies. `*_slow` compute the same as their fast twins behind a copy.
const char kBodies[] = R"(
add_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = f32[] add(a, b) }
add_f32_slow {
  a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] add(a, b)  ROOT r = f32[] copy(s)
}
add_s32 { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT r = s32[] add(b, a) }
add_s32_slow {
  a = s32[] parameter(0)  b = s32[] parameter(1)  s = s32[] add(a, b)  ROOT r = s32[] copy(s)
}
max_s32 { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT r = s32[] maximum(a, b) }
max_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = f32[] maximum(a, b) }
add_pred { a = pred[] parameter(0)  b = pred[] parameter(1)  ROOT r = pred[] add(a, b) }
and_pred { a = pred[] parameter(0)  b = pred[] parameter(1)  ROOT r = pred[] and(a, b) }
add_bf16 { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT r = bf16[] add(a, b) }
sub_s32 { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT r = s32[] subtract(a, b) }
last_s32 { a = s32[] parameter(0)  ROOT b = s32[] parameter(1) }
)";

std::string Module(const std::string& entry) {
  return std::string("HloModule m\n") + kBodies + "\nENTRY e {\n" + entry + "\n}\n";
}

const char kMatrix[] = "x = f32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })\n";

TEST(ReduceTest, SumsAlongEachDimension) {
  const std::string init = "z = f32[] constant(0)\n";
  EXPECT_EQ(
      Doubles(RunOk(Module(std::string(kMatrix) + init +
                           "ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add_f32"))),
      (D{6, 15}));
  EXPECT_EQ(
      Doubles(RunOk(Module(std::string(kMatrix) + init +
                           "ROOT r = f32[3] reduce(x, z), dimensions={0}, to_apply=add_f32"))),
      (D{5, 7, 9}));
  EXPECT_EQ(
      Doubles(RunOk(Module(std::string(kMatrix) + "z = f32[] constant(10)\n" +
                           "ROOT r = f32[] reduce(x, z), dimensions={0,1}, to_apply=add_f32"))),
      (D{31}));
  EXPECT_EQ(
      Doubles(RunOk(Module(std::string(kMatrix) + init +
                           "ROOT r = f32[2,3] reduce(x, z), dimensions={}, to_apply=add_f32"))),
      (D{1, 2, 3, 4, 5, 6}));
}

TEST(ReduceTest, MaxAndPredicates) {
  EXPECT_EQ(Ints(RunOk(Module("x = s32[2,3] constant({ {-5, -2, -9}, {-1, -7, -3} })\n"
                              "z = s32[] constant(-100)\n"
                              "ROOT r = s32[2] reduce(x, z), dimensions={1}, to_apply=max_s32"))),
            (V{-2, -1}));
  // pred add is logical or: the result byte must be 1, not a count.
  Literal any =
      RunOk(Module("x = pred[3] constant({true, true, false})\nz = pred[] constant(false)\n"
                   "ROOT r = pred[] reduce(x, z), dimensions={0}, to_apply=add_pred"));
  EXPECT_EQ(any.data(), (std::vector<uint8_t>{1}));
  EXPECT_EQ(Ints(RunOk(Module("x = pred[2,2] constant({ {true, true}, {true, false} })\n"
                              "z = pred[] constant(true)\n"
                              "ROOT r = pred[2] reduce(x, z), dimensions={1}, to_apply=and_pred"))),
            (V{1, 0}));
}

TEST(ReduceTest, NarrowFloatsAccumulateInF32) {
  // Step-by-step bf16 rounding would give 256 (256+1 rounds back to 256); the f32 accumulator
  // gives 258, which bf16 represents exactly.
  Literal r =
      RunOk(Module("x = bf16[3] constant({256, 1, 1})\nz = bf16[] constant(0)\n"
                   "ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=add_bf16"));
  EXPECT_EQ(Doubles(r), (D{258}));
}

TEST(ReduceTest, CallsBodyWithAccumulatorFirst) {
  // subtract is not a recognised combiner: ((0 - 1) - 2) - 3 per row.
  EXPECT_EQ(Ints(RunOk(Module("x = s32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })\n"
                              "z = s32[] constant(0)\n"
                              "ROOT r = s32[2] reduce(x, z), dimensions={1}, to_apply=sub_s32"))),
            (V{-6, -15}));
  EXPECT_EQ(Ints(RunOk(Module("x = s32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })\n"
                              "z = s32[] constant(0)\n"
                              "ROOT r = s32[3] reduce(x, z), dimensions={0}, to_apply=last_s32"))),
            (V{4, 5, 6}));
}

// Reduces s32[3,4,5] over `dims` on both paths and against a naive loop.
TEST(ReduceTest, FastAndCallPathsMatchNaiveLoop) {
  std::mt19937 rng(7);
  std::vector<double> values(60);
  for (double& v : values) v = static_cast<int>(rng() % 200) - 100;
  const V cases[] = {{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (const V& dims : cases) {
    std::vector<int64_t> out_dims;
    std::vector<bool> reduced(3, false);
    for (int64_t d : dims) reduced[d] = true;
    const V full = {3, 4, 5};
    for (int d = 0; d < 3; ++d) {
      if (!reduced[d]) out_dims.push_back(full[d]);
    }
    int64_t out_count = 1;
    for (int64_t d : out_dims) out_count *= d;
    V expected(out_count, 5);  // The init value.
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        for (int64_t k = 0; k < 5; ++k) {
          const int64_t idx[3] = {i, j, k};
          int64_t o = 0;
          for (int d = 0; d < 3; ++d) {
            if (!reduced[d]) o = o * full[d] + idx[d];
          }
          expected[o] += static_cast<int64_t>(values[(i * 4 + j) * 5 + k]);
        }
      }
    }
    std::string out_shape = "s32[";
    for (size_t d = 0; d < out_dims.size(); ++d) {
      out_shape += (d ? "," : "") + std::to_string(out_dims[d]);
    }
    std::string dim_list;
    for (size_t d = 0; d < dims.size(); ++d) dim_list += (d ? "," : "") + std::to_string(dims[d]);
    for (const char* body : {"add_s32", "add_s32_slow"}) {
      std::string entry =
          "x = s32[3,4,5] parameter(0)\nz = s32[] constant(5)\nROOT r = " + out_shape +
          "] reduce(x, z), dimensions={" + dim_list + "}, to_apply=" + body;
      EXPECT_EQ(Ints(RunOk(Module(entry), {Array(PrimitiveType::kS32, {3, 4, 5}, values)})),
                expected)
          << body << " dims " << dim_list;
    }
  }
}

TEST(ReduceTest, VariadicArgmax) {
  const std::string text = R"(HloModule m
argmax {
  v0 = f32[] parameter(0)  i0 = s32[] parameter(1)  v1 = f32[] parameter(2)  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GE
  v = f32[] select(gt, v0, v1)
  i = s32[] select(gt, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[2,4] constant({ {3, 9, 4, 1}, {5, 2, 6, 6} })
  n = s32[2,4] iota(), iota_dimension=1
  lo = f32[] constant(-inf)
  z = s32[] constant(-1)
  ROOT r = (f32[2], s32[2]) reduce(x, n, lo, z), dimensions={1}, to_apply=argmax
})";
  Literal r = RunOk(text);
  ASSERT_EQ(r.tuple_elements().size(), 2u);
  EXPECT_EQ(Doubles(r.tuple_elements()[0]), (D{9, 6}));
  EXPECT_EQ(Ints(r.tuple_elements()[1]), (V{1, 2}));
}

TEST(ReduceTest, BadDimensionIsAnError) {
  EXPECT_FALSE(RunModule(Module(std::string(kMatrix) + "z = f32[] constant(0)\n" +
                                "ROOT r = f32[2] reduce(x, z), dimensions={2}, to_apply=add_f32"))
                   .ok());
}

TEST(ReduceWindowTest, StrideAndMaxPool) {
  EXPECT_EQ(Doubles(RunOk(Module("x = f32[4] constant({1, 2, 3, 4})\nz = f32[] constant(0)\n"
                                 "ROOT r = f32[3] reduce-window(x, z), window={size=2}, "
                                 "to_apply=add_f32"))),
            (D{3, 5, 7}));
  EXPECT_EQ(
      Doubles(RunOk(Module(
          "x = f32[4,4] constant({ {1, 2, 3, 4}, {8, 7, 6, 5}, {0, 1, 0, 1}, {2, 0, 9, 0} })\n"
          "z = f32[] constant(-inf)\n"
          "ROOT r = f32[2,2] reduce-window(x, z), window={size=2x2 stride=2x2}, "
          "to_apply=max_f32"))),
      (D{8, 6, 2, 9}));
}

TEST(ReduceWindowTest, PaddingAndDilationsSkipHoles) {
  for (const char* body : {"add_f32", "add_f32_slow"}) {
    const std::string x = "x = f32[3] constant({1, 2, 3})\nz = f32[] constant(0)\n";
    EXPECT_EQ(Doubles(RunOk(Module(x +
                                   "ROOT r = f32[3] reduce-window(x, z), window={size=3 "
                                   "pad=1_1}, to_apply=" +
                                   body))),
              (D{3, 6, 5}));
    EXPECT_EQ(Doubles(RunOk(Module(x +
                                   "ROOT r = f32[4] reduce-window(x, z), window={size=2 "
                                   "lhs_dilate=2}, to_apply=" +
                                   body))),
              (D{1, 2, 2, 3}));
    EXPECT_EQ(Doubles(RunOk(Module(x +
                                   "ROOT r = f32[1] reduce-window(x, z), window={size=2 "
                                   "rhs_dilate=2}, to_apply=" +
                                   body))),
              (D{4}));
    // Padding is skipped, not filled with the init: the init is folded in once per window.
    EXPECT_EQ(Doubles(RunOk(Module("x = f32[3] constant({1, 2, 3})\nz = f32[] constant(10)\n"
                                   "ROOT r = f32[3] reduce-window(x, z), window={size=2 pad=1_0},"
                                   " to_apply=" +
                                   std::string(body)))),
              (D{11, 13, 15}));
    // Negative padding crops: [2, 3] remain, window 1 stride 1.
    EXPECT_EQ(Doubles(RunOk(Module(x +
                                   "ROOT r = f32[2] reduce-window(x, z), window={size=1 "
                                   "pad=-1_0}, to_apply=" +
                                   body))),
              (D{2, 3}));
  }
}

TEST(ReduceWindowTest, ScalarWithoutWindow) {
  EXPECT_EQ(Doubles(RunOk(Module("x = f32[] constant(42)\nz = f32[] constant(1)\n"
                                 "ROOT r = f32[] reduce-window(x, z), to_apply=add_f32"))),
            (D{43}));
}

TEST(ReduceWindowTest, VariadicSumAndMax) {
  const std::string text = R"(HloModule m
summax {
  a0 = f32[] parameter(0)  a1 = s32[] parameter(1)  b0 = f32[] parameter(2)  b1 = s32[] parameter(3)
  s = f32[] add(a0, b0)
  m = s32[] maximum(a1, b1)
  ROOT t = (f32[], s32[]) tuple(s, m)
}
ENTRY e {
  x = f32[5] constant({1, 2, 3, 4, 5})
  y = s32[5] constant({7, -1, 3, 8, 0})
  z = f32[] constant(0)
  lo = s32[] constant(-100)
  ROOT r = (f32[2], s32[2]) reduce-window(x, y, z, lo), window={size=3 stride=2}, to_apply=summax
})";
  Literal r = RunOk(text);
  ASSERT_EQ(r.tuple_elements().size(), 2u);
  EXPECT_EQ(Doubles(r.tuple_elements()[0]), (D{6, 12}));
  EXPECT_EQ(Ints(r.tuple_elements()[1]), (V{7, 8}));
}

TEST(ReduceWindowTest, WrongOutputSizeIsAnError) {
  EXPECT_FALSE(RunModule(Module("x = f32[4] constant({1, 2, 3, 4})\nz = f32[] constant(0)\n"
                                "ROOT r = f32[4] reduce-window(x, z), window={size=2}, "
                                "to_apply=add_f32"))
                   .ok());
}

// XLA's R4F32OverlapSmall select-and-scatter test, on both paths.
TEST(SelectAndScatterTest, OverlappingWindows) {
  for (const char* suffix : {"", "_slow"}) {
    const std::string text = std::string(R"(HloModule m
ge { a = f32[] parameter(0)  b = f32[] parameter(1)
     ROOT r = pred[] compare(a, b), direction=GE, type=TOTALORDER }
ge_slow { a = f32[] parameter(0)  b = f32[] parameter(1)
     c = pred[] compare(a, b), direction=GE  ROOT r = pred[] copy(c) }
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = f32[] add(a, b) }
add_slow { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] add(a, b)
           ROOT r = f32[] copy(s) }
ENTRY e {
  x = f32[4,5] constant({ {7, 2, 5, 3, 8}, {3, 8, 9, 3, 4}, {1, 5, 7, 5, 6}, {0, 6, 2, 10, 2} })
  s = f32[2,2] constant({ {2, 6}, {3, 1} })
  z = f32[] constant(0)
  ROOT r = f32[4,5] select-and-scatter(x, s, z), window={size=2x3 stride=2x2}, select=ge)") +
                             suffix + ", scatter=add" + suffix + "\n}\n";
    EXPECT_EQ(Doubles(RunOk(text)), (D{0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 1, 0}))
        << "suffix " << suffix;
  }
}

TEST(SortTest, AscendingDescendingAndAlongDimensions) {
  const std::string cmp = R"(HloModule m
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = pred[] compare(a, b), direction=LT }
gt { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT r = pred[] compare(a, b), direction=GT }
)";
  EXPECT_EQ(Doubles(RunOk(cmp + "ENTRY e {\n x = f32[5] constant({3, 1, 2, -4, 0})\n"
                                "ROOT r = f32[5] sort(x), dimensions={0}, to_apply=lt\n}")),
            (D{-4, 0, 1, 2, 3}));
  EXPECT_EQ(Ints(RunOk(cmp + "ENTRY e {\n x = s32[2,3] constant({ {3, 1, 2}, {0, 5, 4} })\n"
                             "ROOT r = s32[2,3] sort(x), dimensions={1}, to_apply=gt\n}")),
            (V{3, 2, 1, 5, 4, 0}));
  EXPECT_EQ(Ints(RunOk(cmp + "ENTRY e {\n x = s32[2,3] constant({ {3, 1, 2}, {0, 5, 4} })\n"
                             "ROOT r = s32[2,3] sort(x), dimensions={0}, to_apply=gt\n}")),
            (V{3, 5, 4, 0, 1, 2}));
}

TEST(SortTest, ComparatorWithSwappedParametersSortsDescending) {
  // compare(b, a) LT is "a > b": still the typed path, mirrored.
  EXPECT_EQ(Doubles(RunOk(R"(HloModule m
rev { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = pred[] compare(b, a), direction=LT }
ENTRY e {
  x = f32[4] constant({2, 4, 1, 3})
  ROOT r = f32[4] sort(x), dimensions={0}, to_apply=rev
})")),
            (D{4, 3, 2, 1}));
}

TEST(SortTest, KeyValueIsStable) {
  const std::string text = R"(HloModule m
lt { a = s32[] parameter(0)  b = s32[] parameter(1)  c = f32[] parameter(2)  d = f32[] parameter(3)
     ROOT r = pred[] compare(a, b), direction=LT }
ENTRY e {
  k = s32[6] constant({2, 1, 2, 0, 1, 2})
  v = f32[6] constant({10, 11, 12, 13, 14, 15})
  ROOT r = (s32[6], f32[6]) sort(k, v), dimensions={0}, is_stable=true, to_apply=lt
})";
  Literal r = RunOk(text);
  EXPECT_EQ(Ints(r.tuple_elements()[0]), (V{0, 1, 1, 2, 2, 2}));
  EXPECT_EQ(Doubles(r.tuple_elements()[1]), (D{13, 11, 14, 10, 12, 15}));
}

// Long rows take the radix path: the result must be the stable comparison sort's, with ties,
// -0 == +0 and both directions. The expected order comes from std::stable_sort here.
TEST(SortTest, LongFloatRowsMatchAStableComparisonSort) {
  const std::vector<float> pool = {-2.5f, -0.0f, 0.0f, 1.0f, 3.0f, -1e30f, 7.25f, 1e-30f};
  std::vector<float> keys(300);
  uint64_t state = 12345;
  for (float& k : keys) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    k = pool[(state >> 33) % pool.size()];
  }
  for (const char* direction : {"LT", "GT"}) {
    SCOPED_TRACE(direction);
    std::string list;
    for (size_t i = 0; i < keys.size(); ++i) {
      char text[32];
      std::snprintf(text, sizeof(text), "%.9g", keys[i]);  // Exact for f32; keeps "-0".
      list += (i ? ", " : "") + std::string(text);
    }
    const std::string text = std::string(R"(HloModule m
cmp { a = f32[] parameter(0)  b = f32[] parameter(1)  c = s32[] parameter(2)  d = s32[] parameter(3)
      ROOT r = pred[] compare(a, b), direction=)") + direction + R"( }
ENTRY e {
  k = f32[300] constant({)" + list + R"(})
  i = s32[300] iota(), iota_dimension=0
  ROOT r = (f32[300], s32[300]) sort(k, i), dimensions={0}, is_stable=true, to_apply=cmp
})";
    std::vector<int64_t> order(keys.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    const bool lt = std::string(direction) == "LT";
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return lt ? keys[a] < keys[b] : keys[a] > keys[b];
    });
    Literal r = RunOk(text);
    EXPECT_EQ(Ints(r.tuple_elements()[1]), (V(order.begin(), order.end())));
  }
}

TEST(SortTest, TotalOrderPlacesNegativeZeroAndNan) {
  const std::string text = R"(HloModule m
lt { a = f32[] parameter(0)  b = f32[] parameter(1)
     ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER }
ENTRY e {
  x = f32[5] constant({nan, 1, 0, -0, -inf})
  ROOT r = f32[5] sort(x), dimensions={0}, to_apply=lt
})";
  Literal r = RunOk(text);
  D v = Doubles(r);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0], -INFINITY);
  EXPECT_TRUE(v[1] == 0 && std::signbit(v[1]));
  EXPECT_TRUE(v[2] == 0 && !std::signbit(v[2]));
  EXPECT_EQ(v[3], 1);
  EXPECT_TRUE(std::isnan(v[4]));
}

TEST(SortTest, ComparatorOnSecondOperandAndLexicographic) {
  // Sorts by operand 1 descending, ties by operand 0 ascending: needs the call path.
  const std::string text = R"(HloModule m
cmp {
  a0 = s32[] parameter(0)  b0 = s32[] parameter(1)  a1 = s32[] parameter(2)  b1 = s32[] parameter(3)
  gt = pred[] compare(a1, b1), direction=GT
  eq = pred[] compare(a1, b1), direction=EQ
  lt0 = pred[] compare(a0, b0), direction=LT
  tie = pred[] and(eq, lt0)
  ROOT r = pred[] or(gt, tie)
}
ENTRY e {
  x = s32[5] constant({4, 3, 2, 1, 0})
  y = s32[5] constant({1, 2, 1, 2, 3})
  ROOT r = (s32[5], s32[5]) sort(x, y), dimensions={0}, to_apply=cmp
})";
  Literal r = RunOk(text);
  EXPECT_EQ(Ints(r.tuple_elements()[0]), (V{0, 1, 3, 2, 4}));
  EXPECT_EQ(Ints(r.tuple_elements()[1]), (V{3, 2, 2, 1, 1}));
}

TEST(SortTest, BadDimensionIsAnError) {
  EXPECT_FALSE(RunModule(R"(HloModule m
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = pred[] compare(a, b), direction=LT }
ENTRY e {
  x = f32[3] constant({3, 1, 2})
  ROOT r = f32[3] sort(x), dimensions={1}, to_apply=lt
})")
                   .ok());
}

TEST(MapTest, CombinerAndGeneralBodies) {
  EXPECT_EQ(
      Doubles(RunOk(Module(std::string(kMatrix) +
                           "y = f32[2,3] constant({ {1, 1, 1}, {2, 2, 2} })\n"
                           "ROOT r = f32[2,3] map(x, y), dimensions={0,1}, to_apply=add_f32"))),
      (D{2, 3, 4, 6, 7, 8}));
  const std::string text = R"(HloModule m
square_gt { a = f32[] parameter(0)  s = f32[] multiply(a, a)  four = f32[] constant(4)
            ROOT r = pred[] compare(s, four), direction=GT }
ENTRY e {
  x = f32[4] constant({1, -3, 2, 0.5})
  ROOT r = pred[4] map(x), dimensions={0}, to_apply=square_gt
})";
  EXPECT_EQ(Ints(RunOk(text)), (V{0, 1, 0, 0}));
}

}  // namespace
}  // namespace runtime

namespace runtime {
namespace {

// A running sum walked backwards: out[i] = carry + x[i] where carry accumulates x[i..3];
// the body's output is the new carry negated, so outputs and carries are told apart.
TEST(ScanTest, ReverseRunningSumWithPostProcessedOutput) {
  constexpr char kText[] = R"(
HloModule m
body {
  x = f32[2] parameter(0)
  c = f32[2] parameter(1)
  s = f32[2] add(x, c)
  n = f32[2] negate(s)
  ROOT t = (f32[2], f32[2]) tuple(n, s)
}
ENTRY e {
  xs = f32[2,4] parameter(0)
  init = f32[2] parameter(1)
  ROOT r = (f32[2,4], f32[2]) scan(xs, init), dimensions={1}, num_carries=1, is_reverse=true, to_apply=body
})";
  auto module = hlo::ParseHloModule(kText);
  ASSERT_TRUE(module.ok()) << module.status();
  hlo::Literal xs(hlo::Shape::Array(hlo::PrimitiveType::kF32, {2, 4}));
  for (int i = 0; i < 8; ++i) xs.SetDouble(i, i + 1);  // rows {1,2,3,4}, {5,6,7,8}
  hlo::Literal init(hlo::Shape::Array(hlo::PrimitiveType::kF32, {2}));
  init.SetDouble(0, 100);
  init.SetDouble(1, 0);
  std::vector<hlo::Literal> args;
  args.push_back(std::move(xs));
  args.push_back(std::move(init));
  absl::StatusOr<hlo::Literal> out = Evaluator(**module, {}).RunEntry(std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  const hlo::Literal& outputs = out->tuple_elements()[0];
  const hlo::Literal& carry = out->tuple_elements()[1];
  // Row 0 from the back: 104, 107, 109, 110 (negated in the outputs).
  const double row0[] = {-110, -109, -107, -104};
  const double row1[] = {-26, -21, -15, -8};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(outputs.GetDouble(i), row0[i]);
    EXPECT_EQ(outputs.GetDouble(4 + i), row1[i]);
  }
  EXPECT_EQ(carry.GetDouble(0), 110);
  EXPECT_EQ(carry.GetDouble(1), 26);
}

}  // namespace
}  // namespace runtime

// Tests of the data-movement handlers (broadcast, reshape, bitcast, transpose, reverse,
// concatenate, iota, get-dimension-size, slice, dynamic-slice, dynamic-update-slice, pad)
// against hand-computed values, through the text parser and the evaluator.
#include <cstdint>
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

absl::StatusOr<Literal> RunBody(const std::string& body, std::vector<Literal> args = {}) {
  auto module = hlo::ParseHloModule("HloModule m\nENTRY e {\n" + body + "\n}\n");
  if (!module.ok()) return module.status();
  return Evaluator(**module, {}).RunEntry(std::move(args));
}

Literal RunOk(const std::string& body, std::vector<Literal> args = {}) {
  absl::StatusOr<Literal> result = RunBody(body, std::move(args));
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *std::move(result) : Literal();
}

std::vector<int64_t> Ints(const Literal& l) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetInt(i));
  return v;
}

std::vector<double> Doubles(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetDouble(i));
  return v;
}

using V = std::vector<int64_t>;

TEST(BroadcastTest, ScalarAndMappedDimensions) {
  Literal s = RunOk("x = s32[] constant(7)\nROOT r = s32[2,2] broadcast(x), dimensions={}");
  EXPECT_EQ(Ints(s), (V{7, 7, 7, 7}));
  EXPECT_EQ(s.shape().dimensions(), (V{2, 2}));
  const std::string x = "x = s32[3] constant({1, 2, 3})\n";
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[2,3] broadcast(x), dimensions={1}")),
            (V{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[3,2] broadcast(x), dimensions={0}")),
            (V{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(Ints(RunOk("x = s8[2,1] constant({ {1}, {2} })\n"
                       "ROOT r = s8[2,2,1] broadcast(x), dimensions={1,2}")),
            (V{1, 2, 1, 2}));
}

TEST(BroadcastTest, BadDimensionsAreAnError) {
  EXPECT_FALSE(RunBody("x = s32[3] constant({1, 2, 3})\n"
                       "ROOT r = s32[2,3] broadcast(x), dimensions={0}")
                   .ok());
  // A size-1 operand dimension mapped to a longer result dimension is not a broadcast in XLA
  // (its verifier and our shape inference refuse it); the executor checks with shape inference.
  EXPECT_FALSE(RunBody("x = s8[2,1] constant({ {1}, {2} })\n"
                       "ROOT r = s8[2,2,3] broadcast(x), dimensions={1,2}")
                   .ok());
}

TEST(ReshapeTest, KeepsRowMajorOrder) {
  Literal r = RunOk(
      "x = f32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })\n"
      "ROOT r = f32[3,2] reshape(x)");
  EXPECT_EQ(Doubles(r), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(r.shape().dimensions(), (V{3, 2}));
  EXPECT_EQ(Ints(RunOk("x = u16[4] constant({1, 2, 3, 4})\nROOT r = u16[2,1,2] bitcast(x)")),
            (V{1, 2, 3, 4}));
  EXPECT_FALSE(RunBody("x = u16[4] constant({1, 2, 3, 4})\nROOT r = u16[3] reshape(x)").ok());
}

TEST(BitcastTest, FollowsPhysicalLayouts) {
  // Column-major f32[2,3] holds 1,4,2,5,3,6 in memory; read back row-major as f32[3,2].
  EXPECT_EQ(Doubles(RunOk("x = f32[2,3]{0,1} constant({ {1, 2, 3}, {4, 5, 6} })\n"
                          "ROOT r = f32[3,2]{1,0} bitcast(x)")),
            (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(Doubles(RunOk("x = f32[2,3]{1,0} constant({ {1, 2, 3}, {4, 5, 6} })\n"
                          "ROOT r = f32[3,2]{0,1} bitcast(x)")),
            (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(Doubles(RunOk("x = f32[2,3]{0,1} constant({ {1, 2, 3}, {4, 5, 6} })\n"
                          "ROOT r = f32[6]{0} bitcast(x)")),
            (std::vector<double>{1, 4, 2, 5, 3, 6}));
  absl::StatusOr<Literal> tiled = RunBody(
      "x = f32[8,128]{1,0:T(8,128)} constant(0)\n"
      "ROOT r = f32[1024]{0} bitcast(x)");
  ASSERT_FALSE(tiled.ok());
  EXPECT_EQ(tiled.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(TransposeTest, SmallPermutations) {
  EXPECT_EQ(Ints(RunOk("x = s32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })\n"
                       "ROOT r = s32[3,2] transpose(x), dimensions={1,0}")),
            (V{1, 4, 2, 5, 3, 6}));
  // x[i][j][k] = 100i + 10j + k; result dim d is operand dim perm[d] = {2,0,1}.
  Literal r = RunOk(
      "x = s32[2,2,3] constant({ { {0, 1, 2}, {10, 11, 12} }, { {100, 101, 102}, {110, 111, 112} } "
      "})\nROOT r = s32[3,2,2] transpose(x), dimensions={2,0,1}");
  EXPECT_EQ(Ints(r), (V{0, 10, 100, 110, 1, 11, 101, 111, 2, 12, 102, 112}));
}

// A transpose large enough to take the tiled path, for 1-, 4-, 8- and 16-byte elements.
TEST(TransposeTest, LargeTiledMatchesDefinition) {
  const int64_t rows = 67, cols = 45;
  for (PrimitiveType type :
       {PrimitiveType::kS8, PrimitiveType::kF32, PrimitiveType::kS64, PrimitiveType::kC128}) {
    Literal x(Shape::Array(type, {rows, cols}));
    for (int64_t i = 0; i < rows * cols; ++i) x.SetDouble(i, static_cast<double>(i % 101));
    const std::string t(hlo::PrimitiveTypeName(type));
    Literal r = RunOk("x = " + t + "[67,45] parameter(0)\nROOT r = " + t +
                          "[45,67] transpose(x), dimensions={1,0}",
                      {x});
    ASSERT_EQ(r.element_count(), rows * cols) << t;
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t i = 0; i < rows; ++i) {
        ASSERT_EQ(r.GetDouble(j * rows + i), x.GetDouble(i * cols + j))
            << t << " " << i << "," << j;
      }
    }
  }
}

TEST(ReverseTest, ReversesChosenDimensions) {
  const std::string x = "x = s32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })\n";
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[2,3] reverse(x), dimensions={1}")), (V{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[2,3] reverse(x), dimensions={0,1}")),
            (V{6, 5, 4, 3, 2, 1}));
}

TEST(ConcatenateTest, AlongEachDimension) {
  const std::string ab =
      "a = s32[2,1] constant({ {1}, {2} })\n"
      "b = s32[2,2] constant({ {3, 4}, {5, 6} })\n";
  EXPECT_EQ(Ints(RunOk(ab + "ROOT r = s32[2,3] concatenate(a, b), dimensions={1}")),
            (V{1, 3, 4, 2, 5, 6}));
  EXPECT_EQ(
      Ints(RunOk("a = s32[1,2] constant({ {1, 2} })\nb = s32[2,2] constant({ {3, 4}, {5, 6} })\n"
                 "ROOT r = s32[3,2] concatenate(a, b), dimensions={0}")),
      (V{1, 2, 3, 4, 5, 6}));
  EXPECT_FALSE(RunBody("a = s32[1,2] constant({ {1, 2} })\nb = s32[2,1] constant({ {3}, {4} })\n"
                       "ROOT r = s32[3,2] concatenate(a, b), dimensions={0}")
                   .ok());
}

TEST(IotaTest, CountsAlongTheDimension) {
  EXPECT_EQ(Ints(RunOk("ROOT r = s32[2,3] iota(), iota_dimension=1")), (V{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(Doubles(RunOk("ROOT r = bf16[3,2] iota(), iota_dimension=0")),
            (std::vector<double>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(Ints(RunOk("ROOT r = u8[300] iota(), iota_dimension=0")).back(), 299 % 256);
}

TEST(GetDimensionSizeTest, ReturnsStaticSize) {
  Literal r =
      RunOk("x = f32[4,7] constant(0)\nROOT r = s32[] get-dimension-size(x), dimensions={1}");
  EXPECT_EQ(r.GetInt(0), 7);
  EXPECT_EQ(r.shape().element_type(), PrimitiveType::kS32);
}

TEST(SliceTest, StartLimitStride) {
  EXPECT_EQ(Ints(RunOk("x = s32[2,5] constant({ {0, 1, 2, 3, 4}, {5, 6, 7, 8, 9} })\n"
                       "ROOT r = s32[2,2] slice(x), slice={[0:2], [1:5:2]}")),
            (V{1, 3, 6, 8}));
}

TEST(SliceTest, StridedCountRoundsUp) {
  EXPECT_EQ(Ints(RunOk("x = s32[7] constant({0, 1, 2, 3, 4, 5, 6})\n"
                       "ROOT r = s32[2] slice(x), slice={[1:7:3]}")),
            (V{1, 4}));
  EXPECT_EQ(Ints(RunOk("x = s32[7] constant({0, 1, 2, 3, 4, 5, 6})\n"
                       "ROOT r = s32[3] slice(x), slice={[0:7:3]}")),
            (V{0, 3, 6}));
  EXPECT_FALSE(
      RunBody("x = s32[4] constant({0, 1, 2, 3})\nROOT r = s32[2] slice(x), slice={[3:5]}").ok());
}

TEST(DynamicSliceTest, StartsAreClampedToFit) {
  const std::string x = "x = s32[2,4] constant({ {0, 1, 2, 3}, {4, 5, 6, 7} })\n";
  EXPECT_EQ(Ints(RunOk(x + "i = s32[] constant(1)\nj = s32[] constant(1)\n"
                           "ROOT r = s32[1,2] dynamic-slice(x, i, j), dynamic_slice_sizes={1,2}")),
            (V{5, 6}));
  // Row 5 clamps to 1 and column 3 to 2 (= 4 - 2); negative starts clamp to 0.
  EXPECT_EQ(Ints(RunOk(x + "i = s32[] constant(5)\nj = u32[] constant(3)\n"
                           "ROOT r = s32[1,2] dynamic-slice(x, i, j), dynamic_slice_sizes={1,2}")),
            (V{6, 7}));
  EXPECT_EQ(Ints(RunOk(x + "i = s64[] constant(-3)\nj = s64[] constant(-1)\n"
                           "ROOT r = s32[2,3] dynamic-slice(x, i, j), dynamic_slice_sizes={2,3}")),
            (V{0, 1, 2, 4, 5, 6}));
}

TEST(DynamicUpdateSliceTest, StartsAreClampedToFit) {
  const std::string x =
      "x = s32[2,4] constant({ {0, 1, 2, 3}, {4, 5, 6, 7} })\n"
      "u = s32[1,2] constant({ {-1, -2} })\n";
  EXPECT_EQ(Ints(RunOk(x + "i = s32[] constant(0)\nj = s32[] constant(1)\n"
                           "ROOT r = s32[2,4] dynamic-update-slice(x, u, i, j)")),
            (V{0, -1, -2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(Ints(RunOk(x + "i = s32[] constant(9)\nj = s32[] constant(9)\n"
                           "ROOT r = s32[2,4] dynamic-update-slice(x, u, i, j)")),
            (V{0, 1, 2, 3, 4, 5, -1, -2}));
}

TEST(PadTest, EdgeInteriorAndNegative) {
  const std::string x = "x = s32[3] constant({1, 2, 3})\nz = s32[] constant(0)\n";
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[6] pad(x, z), padding=2_1")), (V{0, 0, 1, 2, 3, 0}));
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[7] pad(x, z), padding=1_1_1")), (V{0, 1, 0, 2, 0, 3, 0}));
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[5] pad(x, z), padding=-1_1_1")), (V{0, 2, 0, 3, 0}));
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[1] pad(x, z), padding=-1_-1")), (V{2}));
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[2] pad(x, z), padding=-4_3")), (V{0, 0}));
}

TEST(PadTest, TwoDimensionsWithNonzeroValue) {
  Literal r = RunOk(
      "x = f32[2,2] constant({ {1, 2}, {3, 4} })\nv = f32[] constant(-1)\n"
      "ROOT r = f32[3,4] pad(x, v), padding=0_1x1_0_1");
  EXPECT_EQ(Doubles(r), (std::vector<double>{-1, 1, -1, 2, -1, 3, -1, 4, -1, -1, -1, -1}));
}

}  // namespace
}  // namespace runtime

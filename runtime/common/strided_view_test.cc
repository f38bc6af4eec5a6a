#include "runtime/common/strided_view.h"

#include <vector>

#include "gtest/gtest.h"

namespace runtime {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;

// The operand element each result element reads, in result row-major order.
std::vector<int64_t> Walk(const StridedView& view) {
  std::vector<int64_t> out;
  std::vector<int64_t> index(view.sizes.size(), 0);
  int64_t count = 1;
  for (int64_t s : view.sizes) count *= s;
  for (int64_t n = 0; n < count; ++n) {
    out.push_back(view.At(index.data()));
    for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
      if (++index[d] < view.sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

TEST(StridedViewTest, SliceStartsAndSteps) {
  const Shape in = Shape::Array(PrimitiveType::kF32, {10});
  const Shape out = Shape::Array(PrimitiveType::kF32, {2});
  EXPECT_EQ(Walk(SliceView(in, out, {{2, 8, 3}})), (std::vector<int64_t>{2, 5}));
}

TEST(StridedViewTest, TransposeBroadcastReverse) {
  EXPECT_EQ(Walk(TransposeView({2, 3}, {1, 0})), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  const Shape row = Shape::Array(PrimitiveType::kF32, {3});
  EXPECT_EQ(Walk(BroadcastView(row, Shape::Array(PrimitiveType::kF32, {2, 3}), {1})),
            (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  const Shape grid = Shape::Array(PrimitiveType::kF32, {2, 2});
  EXPECT_EQ(Walk(ReverseView(grid, {0})), (std::vector<int64_t>{2, 3, 0, 1}));
}

TEST(StridedViewTest, ClampStartsKeepsTheWindowInside) {
  EXPECT_EQ(ClampStarts({-4, 7, 1}, {5, 5, 5}, {2, 2, 2}), (std::vector<int64_t>{0, 3, 1}));
}

// pad(f32[3], padding=-1_1_1) -> f32[5]: operand elements 1 and 2 land at 1 and 3.
TEST(StridedViewTest, PadPlacementCropsNegativeEdges) {
  const Shape in = Shape::Array(PrimitiveType::kF32, {3});
  const Shape out = Shape::Array(PrimitiveType::kF32, {5});
  hlo::PaddingConfig config;
  config.dimensions.push_back({-1, 1, 1});
  const Placement p = PadPlacement(in, out, config);
  EXPECT_EQ(Walk(p.OperandView(in)), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Walk(p.ResultView(out)), (std::vector<int64_t>{1, 3}));
  int64_t from = -1;
  const int64_t at3 = 3, at2 = 2;
  EXPECT_TRUE(p.Find(&at3, &from));
  EXPECT_EQ(from, 2);
  EXPECT_FALSE(p.Find(&at2, &from));
}

TEST(StridedViewTest, ConcatenatePlacementsFollowEachOther) {
  const Shape a = Shape::Array(PrimitiveType::kF32, {2, 1});
  const Shape b = Shape::Array(PrimitiveType::kF32, {2, 2});
  const Shape out = Shape::Array(PrimitiveType::kF32, {2, 3});
  const std::vector<Placement> p = ConcatenatePlacements({&a, &b}, 1);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(Walk(p[0].ResultView(out)), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(Walk(p[1].ResultView(out)), (std::vector<int64_t>{1, 2, 4, 5}));
  const int64_t index[] = {1, 2};
  int64_t from[2];
  EXPECT_FALSE(p[0].Find(index, from));
  ASSERT_TRUE(p[1].Find(index, from));
  EXPECT_EQ(from[0], 1);
  EXPECT_EQ(from[1], 1);
}

}  // namespace
}  // namespace runtime

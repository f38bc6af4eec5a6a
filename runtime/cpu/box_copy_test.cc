// CopyBox: inner boxes, whole-row runs merged into one copy, scalars, empty boxes, and the
// bounds and type checks.
#include "runtime/cpu/box_copy.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace runtime {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Literal Counting(std::vector<int64_t> dims) {
  Literal literal(Shape::Array(PrimitiveType::kS16, dims));
  for (int64_t i = 0; i < literal.element_count(); ++i) literal.SetInt(i, i);
  return literal;
}

std::vector<int64_t> Ints(const Literal& literal) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetInt(i));
  return out;
}

TEST(BoxCopyTest, InnerBox) {
  const Literal src = Counting({3, 4});
  Literal dst(Shape::Array(PrimitiveType::kS16, {2, 3}));
  ASSERT_TRUE(CopyBox(src, {1, 1}, dst, {0, 1}, {2, 2}).ok());
  EXPECT_THAT(Ints(dst), ElementsAre(0, 5, 6, 0, 9, 10));
}

TEST(BoxCopyTest, WholeRowsAndScalars) {
  const Literal src = Counting({2, 2, 3});
  Literal dst(Shape::Array(PrimitiveType::kS16, {4, 2, 3}));
  ASSERT_TRUE(CopyBox(src, {0, 0, 0}, dst, {2, 0, 0}, {2, 2, 3}).ok());
  EXPECT_EQ(Ints(dst)[12], 0);
  EXPECT_EQ(Ints(dst)[23], 11);
  Literal scalar_src = Counting({});
  scalar_src.SetInt(0, 7);
  Literal scalar_dst(Shape::Array(PrimitiveType::kS16, {}));
  ASSERT_TRUE(CopyBox(scalar_src, {}, scalar_dst, {}, {}).ok());
  EXPECT_EQ(scalar_dst.GetInt(0), 7);
  EXPECT_TRUE(CopyBox(src, {0, 0, 0}, dst, {0, 0, 0}, {0, 2, 3}).ok());
}

TEST(BoxCopyTest, Errors) {
  const Literal src = Counting({2, 2});
  Literal dst(Shape::Array(PrimitiveType::kS16, {2, 2}));
  EXPECT_THAT(std::string(CopyBox(src, {1, 0}, dst, {0, 0}, {2, 2}).message()),
              HasSubstr("outside the source s16[2,2]"));
  Literal other(Shape::Array(PrimitiveType::kF32, {2, 2}));
  EXPECT_FALSE(CopyBox(src, {0, 0}, other, {0, 0}, {1, 1}).ok());
  EXPECT_FALSE(CopyBox(src, {0}, dst, {0, 0}, {1, 1}).ok());
}

}  // namespace
}  // namespace runtime

// IotaPieces on hand-built index arrays: whole iotas, broadcast 1-D iotas, concatenate pieces,
// and what is not an iota (a float iota, an iota along the concatenated dim, a parameter).
#include "hlo/analysis/iota_pieces.h"

#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/testing/hlo_matchers.h"

namespace hlo {
namespace {

constexpr char kModule[] = R"(HloModule iota_pieces

ENTRY e {
  p = s32[8,6,1] parameter(0)
  r = s32[8] iota(), iota_dimension=0
  rb = s32[8,6,1] broadcast(r), dimensions={0}
  i = s32[8,6,1] iota(), iota_dimension=1
  f = f32[8,6,1] iota(), iota_dimension=1
  k = s32[8,6,1] iota(), iota_dimension=2
  c = s32[8,6,4] concatenate(rb, p, i, k), dimensions={2}
  ROOT t = (s32[8,6,4], f32[8,6,1]) tuple(c, f)
}
)";

TEST(IotaPiecesTest, FindsIotasAloneAndAsConcatenatedPieces) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation& entry = *(*module)->entry_computation();
  auto pieces = [&](std::string_view name) {
    return IotaPieces(*testing::FindInstruction(entry, name));
  };
  ASSERT_EQ(pieces("rb").size(), 1u);
  EXPECT_EQ(pieces("rb")[0].concat_dim, -1);
  EXPECT_EQ(pieces("rb")[0].dim, 0);
  EXPECT_EQ(pieces("i")[0].dim, 1);
  EXPECT_TRUE(pieces("p").empty());
  EXPECT_TRUE(pieces("f").empty());  // Not an integer array.
  // rb holds dim 0's coordinate in column 0, i dim 1's in column 2; p and k (an iota along
  // the concatenated dim) are not pieces.
  const std::vector<IotaPiece> c = pieces("c");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].concat_dim, 2);
  EXPECT_EQ(c[0].begin, 0);
  EXPECT_EQ(c[0].end, 1);
  EXPECT_EQ(c[0].dim, 0);
  EXPECT_EQ(c[1].begin, 2);
  EXPECT_EQ(c[1].dim, 1);
  EXPECT_EQ(IotaValueAt(c, {5, 3, 0}), 5);
  EXPECT_EQ(IotaValueAt(c, {5, 3, 2}), 3);
  EXPECT_EQ(IotaValueAt(c, {5, 3, 1}), std::nullopt);
  EXPECT_EQ(IotaValueAt(c, {5, 3, 3}), std::nullopt);
}

// XLA's GetDimensionForIota also reads constants: a literal holding its coordinate along a
// dim (of size > 1) is an iota along it, and so is such a 1-D literal broadcast.
TEST(IotaPiecesTest, ConstantsHoldingTheirCoordinateAreIotas) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  a = s32[4,1] constant({{0},{1},{2},{3}})
  b = s32[3] constant({0,1,2})
  bb = s32[2,3] broadcast(b), dimensions={1}
  n = s32[4,1] constant({{0},{1},{3},{3}})
  z = s32[1,1] constant({{0}})
  ROOT t = (s32[4,1], s32[2,3], s32[4,1], s32[1,1]) tuple(a, bb, n, z)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation& entry = *(*module)->entry_computation();
  auto find = [&](std::string_view name) { return testing::FindInstruction(entry, name); };
  EXPECT_TRUE(IsIotaAlong(*find("a"), 0));
  EXPECT_FALSE(IsIotaAlong(*find("a"), 1));
  EXPECT_TRUE(IsIotaAlong(*find("bb"), 1));
  EXPECT_FALSE(IsIotaAlong(*find("n"), 0));
  EXPECT_TRUE(IotaPieces(*find("z")).empty());
}

}  // namespace
}  // namespace hlo

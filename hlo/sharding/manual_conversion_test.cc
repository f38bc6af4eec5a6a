#include "hlo/sharding/manual_conversion.h"

#include <string>

#include "gtest/gtest.h"

namespace hlo {
namespace {

HloSharding S(const std::string& text) {
  absl::StatusOr<HloSharding> s = HloSharding::Parse(text);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : HloSharding::Unknown();
}

const Shape kGlobal = Shape::Array(PrimitiveType::kF32, {16, 64});
// JAX's partly manual shard_map over mesh (data=2, model=4), manual along `model` on dim 1.
const char kStructure[] = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}";
const char kWholeInGroups[] =
    "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}";

TEST(ManualConversionTest, TheFreeAxisSplitsTheManualValueInsideEachGroup) {
  absl::StatusOr<HloSharding> local =
      LocalFromGlobal(S("{devices=[2,4]<=[8]}"), S(kStructure), S(kWholeInGroups), kGlobal);
  ASSERT_TRUE(local.ok()) << local.status().message();
  EXPECT_EQ(local->ToString(), "{devices=[2,1,4]<=[8] last_tile_dims={manual}}");
  absl::StatusOr<HloSharding> global = GlobalFromLocal(*local, S(kStructure), kGlobal);
  ASSERT_TRUE(global.ok()) << global.status().message();
  EXPECT_EQ(global->ToString(), "{devices=[2,4]<=[8]}");
}

TEST(ManualConversionTest, TheStructureAloneIsWholeInEachGroup) {
  absl::StatusOr<HloSharding> local =
      LocalFromGlobal(S(kStructure), S(kStructure), S(kWholeInGroups), kGlobal);
  ASSERT_TRUE(local.ok()) << local.status().message();
  EXPECT_EQ(*local, S(kWholeInGroups));
  absl::StatusOr<HloSharding> global = GlobalFromLocal(*local, S(kStructure), kGlobal);
  ASSERT_TRUE(global.ok()) << global.status().message();
  EXPECT_EQ(*global, S(kStructure));
}

TEST(ManualConversionTest, AGlobalTilingThatCutsAcrossTheManualTilesIsRefused) {
  // Dim 1 split 4 ways over other devices than the manual axis: device 1 would hold a tile
  // of another manual value than its group's.
  EXPECT_FALSE(
      LocalFromGlobal(S("{devices=[2,4]<=[4,2]T(1,0)}"), S(kStructure), S(kWholeInGroups), kGlobal)
          .ok());
  // Dim 0 split 8 ways cannot keep dim 1's manual split.
  EXPECT_FALSE(
      LocalFromGlobal(S("{devices=[8,1]<=[8]}"), S(kStructure), S(kWholeInGroups), kGlobal).ok());
}

TEST(ManualConversionTest, OnlySplitsWhoseTilesNestAreRelated) {
  // Dim 0 whole in the structure: 15 rows split 2 ways are pieces of 8 and 7 on both sides.
  const Shape odd = Shape::Array(PrimitiveType::kF32, {15, 64});
  EXPECT_TRUE(
      LocalFromGlobal(S("{devices=[2,4]<=[8]}"), S(kStructure), S(kWholeInGroups), odd).ok());
  // Groups {0,1} and {2,3} hold halves of s32[N]; each splits its half between its devices.
  const HloSharding structure = S("{devices=[2,2]<=[4] last_tile_dim_replicate}");
  const HloSharding local = S("{devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual}}");
  absl::StatusOr<HloSharding> global =
      GlobalFromLocal(local, structure, Shape::Array(PrimitiveType::kS32, {32}));
  ASSERT_TRUE(global.ok()) << global.status().message();
  EXPECT_EQ(*global, S("{devices=[4]<=[4]}"));
  // 7 elements: halves of 4 (one padded) in pieces of 2, as 4 tiles of 2 lay them out.
  EXPECT_TRUE(GlobalFromLocal(local, structure, Shape::Array(PrimitiveType::kS32, {7})).ok());
  // 30 elements: halves of 15 in pieces of 8, but the second half starts at 15, not 16.
  EXPECT_FALSE(GlobalFromLocal(local, structure, Shape::Array(PrimitiveType::kS32, {30})).ok());
  EXPECT_FALSE(
      StructureFromGlobal(S("{devices=[4]<=[4]}"), local, Shape::Array(PrimitiveType::kS32, {30}))
          .ok());
}

TEST(ManualConversionTest, GroupsThatStraddleStructureTilesAreRefused) {
  // Manual groups by d / 4 while the structure splits dim 1 by d % 4.
  EXPECT_FALSE(GlobalFromLocal(S("{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dims={manual}}"),
                               S(kStructure), kGlobal)
                   .ok());
}

TEST(ManualConversionTest, TheStructureIsRecoveredFromAGlobalTilingThatSplitsIt) {
  absl::StatusOr<HloSharding> structure = StructureFromGlobal(
      S("{devices=[2,4]<=[8]}"), S("{devices=[2,1,4]<=[8] last_tile_dims={manual}}"), kGlobal);
  ASSERT_TRUE(structure.ok()) << structure.status().message();
  EXPECT_EQ(*structure, S(kStructure));
  // Device 1's tile of the global value is not its tile of its group's (found by the fuzzer:
  // s32[4] over [4,2], read into groups of two devices that split s32[2] values).
  const Shape four = Shape::Array(PrimitiveType::kS32, {4});
  EXPECT_FALSE(StructureFromGlobal(S("{devices=[4,2]<=[8] last_tile_dim_replicate}"),
                                   S("{devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}"), four)
                   .ok());
}

}  // namespace
}  // namespace hlo

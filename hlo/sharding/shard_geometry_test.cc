// Shard geometry on even and uneven shapes, and a property test over random shardings.
#include "hlo/sharding/shard_geometry.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/sharding/sharding_test_util.h"

namespace hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

HloSharding P(const std::string& text) { return HloSharding::Parse(text).value(); }
Shape F32(std::vector<int64_t> dims) { return Shape::Array(PrimitiveType::kF32, dims); }

TEST(ShardGeometryTest, UnevenRowsAreShortThenEmpty) {
  // f32[10,7] over 4 devices on dim 0: rows 3, 3, 3, 1.
  HloSharding s = P("{devices=[4,1]<=[4]}");
  std::vector<int64_t> rows;
  for (int64_t d = 0; d < 4; ++d) {
    rows.push_back(ShardShapeForDevice(s, F32({10, 7}), d)->dimensions(0));
  }
  EXPECT_THAT(rows, ElementsAre(3, 3, 3, 1));
  EXPECT_EQ(PaddedShardShape(s, F32({10, 7}))->ToString(), "f32[3,7]");
  ShardRegion last = ShardRegionForDevice(s, F32({10, 7}), 3).value();
  EXPECT_THAT(last.offsets, ElementsAre(9, 0));
  EXPECT_THAT(last.limits, ElementsAre(10, 7));
  // f32[5] over 4 devices: chunks of 2 give 2, 2, 1, 0.
  HloSharding t = P("{devices=[4]<=[4]}");
  ShardRegion empty = ShardRegionForDevice(t, F32({5}), 3).value();
  EXPECT_THAT(empty.offsets, ElementsAre(5));
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(ShardShapeForDevice(t, F32({5}), 2)->ToString(), "f32[1]");
}

TEST(ShardGeometryTest, TileIndexFollowsTheAssignment) {
  HloSharding s = P("{devices=[2,2,2]<=[2,2,2]T(2,1,0) last_tile_dim_replicate}");
  // Devices in row-major order: 0,4,2,6,1,5,3,7.
  EXPECT_THAT(TileIndexForDevice(s, 6).value(), ElementsAre(0, 1));
  EXPECT_THAT(TileIndexForDevice(s, 5).value(), ElementsAre(1, 0));
  EXPECT_THAT(DevicesForTile(s, {1, 1}).value(), ElementsAre(3, 7));
  EXPECT_THAT(std::string(TileIndexForDevice(s, 8).status().message()),
              HasSubstr("device 8 is not used by sharding"));
  EXPECT_THAT(std::string(TileIndexForDevice(P("{replicated}"), 0).status().message()),
              HasSubstr("is not tiled"));
  EXPECT_THAT(std::string(DevicesForTile(s, {2, 0}).status().message()),
              HasSubstr("[2,0] is not a data tile index"));
}

TEST(ShardGeometryTest, NonTiledRegions) {
  const Shape shape = F32({4, 4});
  EXPECT_EQ(ShardShapeForDevice(P("{replicated}"), shape, 5)->ToString(), "f32[4,4]");
  EXPECT_EQ(ShardShapeForDevice(P("{manual}"), shape, 5)->ToString(), "f32[4,4]");
  EXPECT_EQ(ShardShapeForDevice(P("{maximal device=1}"), shape, 1)->ToString(), "f32[4,4]");
  EXPECT_EQ(ShardShapeForDevice(P("{maximal device=1}"), shape, 0)->ToString(), "f32[0,0]");
  EXPECT_FALSE(ShardRegionForDevice(P("{unknown}"), shape, 0).ok());
  EXPECT_THAT(std::string(ShardRegionForDevice(P("{devices=[2]0,1}"), shape, 0).status().message()),
              HasSubstr("tiles 1 dimensions but shape f32[4,4] has rank 2"));
}

TEST(ShardGeometryTest, PaddedShardShapeOfTuples) {
  const Shape shape = Shape::Tuple({F32({5, 3}), Shape::Tuple({F32({7})})});
  EXPECT_EQ(PaddedShardShape(P("{{devices=[2,1]0,1}, {devices=[2]<=[2]}}"), shape)->ToString(),
            "(f32[3,3], (f32[4]))");
  EXPECT_EQ(PaddedShardShape(P("{replicated}"), shape)->ToString(), "(f32[5,3], (f32[7]))");
  EXPECT_FALSE(PaddedShardShape(P("{{replicated}}"), shape).ok());
}

TEST(ShardGeometryTest, ReplicationGroups) {
  EXPECT_EQ(ReplicationGroups(P("{devices=[2,2]<=[4] last_tile_dim_replicate}"), 4).value(),
            (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(ReplicationGroups(P("{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"), 4).value(),
            (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(ReplicationGroups(P("{devices=[2]1,0}"), 2).value(),
            (std::vector<std::vector<int64_t>>{{1}, {0}}));
  EXPECT_EQ(ReplicationGroups(P("{replicated}"), 3).value(),
            (std::vector<std::vector<int64_t>>{{0, 1, 2}}));
  EXPECT_EQ(
      ReplicationGroups(P("{devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}"), 4).value(),
      (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(ReplicationGroups(P("{maximal device=2}"), 4).value(),
            (std::vector<std::vector<int64_t>>{{2}}));
}

// ---- Property test ---------------------------------------------------------------------------

bool Holds(const ShardRegion& region, absl::Span<const int64_t> index) {
  for (size_t i = 0; i < index.size(); ++i) {
    if (index[i] < region.offsets[i] || index[i] >= region.limits[i]) return false;
  }
  return true;
}

TEST(ShardGeometryTest, RandomShardingsCoverEveryElementExactly) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 400; ++trial) {
    sharding_test::ShardingCase c = sharding_test::RandomShardingCase(rng, /*allow_partial=*/true);
    SCOPED_TRACE(c.sharding.ToString() + " on " + c.shape.ToString());
    const int64_t num_devices = c.num_devices;
    std::vector<ShardRegion> regions;
    for (int64_t d = 0; d < num_devices; ++d) {
      regions.push_back(ShardRegionForDevice(c.sharding, c.shape, d).value());
    }
    const std::vector<std::vector<int64_t>> groups =
        ReplicationGroups(c.sharding, num_devices).value();
    std::set<std::set<int64_t>> group_sets;
    for (const auto& g : groups) group_sets.insert(std::set<int64_t>(g.begin(), g.end()));
    ASSERT_EQ(group_sets.size(), groups.size());
    const Shape padded = PaddedShardShape(c.sharding, c.shape).value();
    for (const ShardRegion& r : regions) {
      for (size_t i = 0; i < r.offsets.size(); ++i) ASSERT_LE(r.sizes()[i], padded.dimensions(i));
    }
    sharding_test::ForEachElement(c.shape.dimensions(),
                                  [&](int64_t, absl::Span<const int64_t> index) {
                                    // Held by exactly the devices of one replication group...
                                    std::set<int64_t> holders;
                                    for (int64_t d = 0; d < num_devices; ++d) {
                                      if (Holds(regions[d], index)) holders.insert(d);
                                    }
                                    ASSERT_EQ(group_sets.count(holders), 1u);
                                    // ...and, for each replica position, by exactly one group
                                    // member's shard.
                                    for (size_t r = 0; r < groups[0].size(); ++r) {
                                      int64_t count = 0;
                                      for (const auto& g : groups)
                                        count += Holds(regions[g[r]], index) ? 1 : 0;
                                      ASSERT_EQ(count, 1);
                                    }
                                  });
  }
}

}  // namespace
}  // namespace hlo

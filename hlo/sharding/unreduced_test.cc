#include "hlo/sharding/unreduced.h"

#include "gtest/gtest.h"

namespace hlo {
namespace {

HloSharding S(const char* text) { return *HloSharding::Parse(text); }

TEST(UnreducedTest, FullyUnreduced) {
  EXPECT_TRUE(HasUnreduced(S("{unreduced}")));
  EXPECT_EQ(*UnreducedAsReplicated(S("{unreduced}")), HloSharding::Replicate());
  EXPECT_EQ(*UnreducedGroups(S("{unreduced}"), 3),
            (std::vector<std::vector<int64_t>>{{0, 1, 2}}));
}

TEST(UnreducedTest, SubgroupsBecomeReplication) {
  const HloSharding s = S("{devices=[2,2]<=[4] last_tile_dims={unreduced}}");
  EXPECT_TRUE(HasUnreduced(s));
  EXPECT_EQ(*UnreducedAsReplicated(s), S("{devices=[2,2]<=[4] last_tile_dim_replicate}"));
  EXPECT_EQ(*UnreducedGroups(s, 4), (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  // With a replicated subgroup too: the two merge.
  const HloSharding both =
      S("{devices=[2,1,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={unreduced, replicated}}");
  EXPECT_EQ(*UnreducedAsReplicated(both),
            S("{devices=[2,1,4]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}"));
  // Device (a, u, r) is a*4 + r*2 + u: each unreduced pair differs in the lowest bit.
  EXPECT_EQ(*UnreducedGroups(both, 8),
            (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
}

TEST(UnreducedTest, DevicesOutsideTheShardingAreGroupsOfTheirOwn) {
  const HloSharding s = S("{devices=[1,2,2]<=[4] last_tile_dims={unreduced}}");
  EXPECT_EQ(*UnreducedGroups(s, 6), (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}, {4}, {5}}));
}

TEST(UnreducedTest, OthersUnchanged) {
  for (const char* text : {"{replicated}", "{devices=[2,2]<=[4]}", "{maximal device=1}"}) {
    EXPECT_FALSE(HasUnreduced(S(text)));
    EXPECT_EQ(*UnreducedAsReplicated(S(text)), S(text));
    EXPECT_TRUE(UnreducedGroups(S(text), 4)->empty());
  }
}

}  // namespace
}  // namespace hlo

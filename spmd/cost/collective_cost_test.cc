#include "spmd/cost/collective_cost.h"

#include "gtest/gtest.h"

namespace spmd {
namespace {

TEST(CollectiveCostTest, BytesFollowTheCliContract) {
  EXPECT_EQ(CollectiveBytesReceived(CollectiveKind::kAllGather, 8192, 4), 6144);
  EXPECT_EQ(CollectiveBytesReceived(CollectiveKind::kReduceScatter, 8192, 4), 6144);
  EXPECT_EQ(CollectiveBytesReceived(CollectiveKind::kAllReduce, 8192, 4), 12288);
  EXPECT_EQ(CollectiveBytesReceived(CollectiveKind::kAllToAll, 192, 2), 96);
  EXPECT_EQ(CollectiveBytesReceived(CollectiveKind::kCollectivePermute, 192, 2), 192);
}

TEST(CollectiveCostTest, TrivialGroupsAndEmptyBuffersAreFree) {
  const LinkModel link;
  EXPECT_EQ(EstimateCollective(CollectiveKind::kAllGather, 4096, 1, link).time_us, 0);
  EXPECT_EQ(EstimateCollective(CollectiveKind::kCollectivePermute, 4096, 1, link).bytes_received,
            0);
  EXPECT_EQ(EstimateCollective(CollectiveKind::kAllReduce, 0, 8, link).time_us, 0);
}

TEST(CollectiveCostTest, TimeIsLatencyPlusBytesOverBandwidth) {
  LinkModel link{2.0, 1000.0};
  CollectiveCost cost = EstimateCollective(CollectiveKind::kAllGather, 8000, 2, link);
  EXPECT_EQ(cost.bytes_received, 4000);
  EXPECT_DOUBLE_EQ(cost.time_us, 2.0 + 4.0);
  EXPECT_EQ(CollectiveKindName(CollectiveKind::kAllToAll), "all-to-all");
}

}  // namespace
}  // namespace spmd

// Communicator grouping: every device's replica group collected into one partition of the
// devices, in each of XLA's group modes.
#include "runtime/cuda/collective_grouping.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/testing/differential_test_util.h"

namespace runtime {
namespace cuda {
namespace {

using ::testing::ElementsAre;

Grouping GroupingFor(const std::string& collective, int64_t partitions, int64_t replicas,
                     int64_t device) {
  const std::string text = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] )" + collective + "\n}";
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(text);
  EXPECT_TRUE(module.ok()) << module.status();
  DeviceContext ctx;
  ctx.num_partitions = partitions;
  ctx.num_replicas = replicas;
  ctx.partition_id = device % partitions;
  ctx.replica_id = device / partitions;
  absl::StatusOr<Grouping> g =
      GroupingOf(*(*module)->entry_computation()->root_instruction(), ctx);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

TEST(CollectiveGroupingTest, FlattenedIds) {
  Grouping g = GroupingFor(
      "all-reduce(x), channel_id=1, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, "
      "to_apply=add",
      4, 1, 3);
  EXPECT_THAT(g.groups, ElementsAre(ElementsAre(0, 2), ElementsAre(1, 3)));
  EXPECT_EQ(g.group, 1);
  EXPECT_EQ(g.rank, 1);
}

TEST(CollectiveGroupingTest, IotaGroupsWithTranspose) {
  Grouping g = GroupingFor(
      "all-reduce(x), channel_id=1, replica_groups=[2,4]<=[4,2]T(1,0), "
      "use_global_device_ids=true, to_apply=add",
      8, 1, 5);
  EXPECT_THAT(g.groups, ElementsAre(ElementsAre(0, 2, 4, 6), ElementsAre(1, 3, 5, 7)));
  EXPECT_EQ(g.group, 1);
  EXPECT_EQ(g.rank, 2);
}

TEST(CollectiveGroupingTest, CrossReplicaGroupsRepeatPerPartition) {
  // No channel_id: groups of replicas, one instance per partition (2 partitions x 2 replicas;
  // global id = replica * 2 + partition).
  Grouping g = GroupingFor("all-reduce(x), replica_groups={{0,1}}, to_apply=add", 2, 2, 3);
  EXPECT_THAT(g.groups, ElementsAre(ElementsAre(0, 2), ElementsAre(1, 3)));
  EXPECT_EQ(g.group, 1);
  EXPECT_EQ(g.rank, 1);
}

TEST(CollectiveGroupingTest, EmptyGroupsMeanEveryone) {
  Grouping g = GroupingFor(
      "all-reduce(x), channel_id=1, replica_groups={}, use_global_device_ids=true, to_apply=add",
      4, 1, 2);
  EXPECT_THAT(g.groups, ElementsAre(ElementsAre(0, 1, 2, 3)));
  EXPECT_EQ(g.rank, 2);
}

}  // namespace
}  // namespace cuda
}  // namespace runtime

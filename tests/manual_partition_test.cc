// Manual sharding end to end: regions entered through SPMDFullToShardShape and left through
// SPMDShardToFullShape are run as written on each device, and the verifier's per-device
// reference (verify.h) checks them. A hand-written wrong SPMD program must fail verification.
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/strings.h"
#include "hlo/transforms/dead_code_elimination.h"
#include "runtime/cpu/verify.h"
#include "spmd/partitioner/spmd_partitioner.h"
#include "spmd/propagation/sharding_propagation.h"
#include "tests/manual_partition_util.h"
#include "tests/tool_runner.h"

namespace {

using manual_test::ExpectPartitionsAndVerifies;
using manual_test::Parse;
using manual_test::Partition;
using manual_test::PartitionAndVerify;
using manual_test::PropagatePartitionAndVerify;
using manual_test::Verify;

// `wrong` (a hand-written SPMD program with `original`'s interface) fails verification and
// the partitioned `original` passes, on `devices` devices.
void ExpectCatchesWrongProgram(const std::string& original, const std::string& wrong,
                               int64_t devices) {
  std::unique_ptr<hlo::HloModule> wrong_module = Parse(wrong);
  absl::StatusOr<runtime::VerifyResult> result = Verify(original, *wrong_module, devices);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->ok()) << result->ToString();
  ExpectPartitionsAndVerifies(original, devices);
}

// Enter, compute with the device's id, all-reduce inside the region, leave, and compute on.
constexpr char kRegion[] = R"(
HloModule region, num_partitions=4
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  own = f32[4,6] parameter(1), sharding={manual}
  s = f32[4,6] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  id = u32[] partition-id(), sharding={manual}
  idf = f32[] convert(id), sharding={manual}
  b = f32[4,6] broadcast(idf), dimensions={}, sharding={manual}
  m = f32[4,6] multiply(s, b), sharding={manual}
  a = f32[4,6] add(m, own), sharding={manual}
  r = f32[4,6] all-reduce(a), replica_groups={{0,1},{2,3}}, to_apply=sum, channel_id=1, use_global_device_ids=true, sharding={manual}
  f = f32[8,6] custom-call(r), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  n = f32[8,6] negate(f), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
  ROOT t = (f32[8,6], f32[4,6]) tuple(n, a), sharding={{replicated}, {manual}}
})";

TEST(ManualPartitionTest, RegionRunsAsWrittenAndVerifies) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = Partition(kRegion);
  ASSERT_TRUE(spmd.ok()) << spmd.status();
  const std::string text = (*spmd)->ToString();
  EXPECT_EQ(text.find("SPMDFullToShardShape"), std::string::npos) << text;
  EXPECT_NE(text.find("f32[4,6] multiply("), std::string::npos) << text;
  absl::StatusOr<runtime::VerifyResult> result = Verify(kRegion, **spmd, 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString() << text;
}

TEST(ManualPartitionTest, WrongManualProgramFailsVerification) {
  // Same interface, but device d's manual output ignores its own id: devices 1..3 differ.
  constexpr char kWrong[] = R"(
HloModule wrong, num_partitions=4
ENTRY main {
  x = f32[4,6] parameter(0)
  own = f32[4,6] parameter(1)
  ROOT a = f32[4,6] add(x, own)
})";
  constexpr char kOriginal[] = R"(
HloModule original, num_partitions=4
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  own = f32[4,6] parameter(1), sharding={manual}
  s = f32[4,6] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  id = u32[] partition-id(), sharding={manual}
  idf = f32[] convert(id), sharding={manual}
  b = f32[4,6] broadcast(idf), dimensions={}, sharding={manual}
  m = f32[4,6] multiply(s, b), sharding={manual}
  ROOT a = f32[4,6] add(m, own), sharding={manual}
})";
  ExpectCatchesWrongProgram(kOriginal, kWrong, 4);
}

// Partitioning `text` fails with a message containing `needle`.
void ExpectPartitionError(const std::string& text, const std::string& needle) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = Partition(text);
  ASSERT_FALSE(spmd.ok());
  EXPECT_NE(std::string(spmd.status().message()).find(needle), std::string::npos)
      << spmd.status();
}

// Manual subgroups: devices {0,1} and {2,3} are two groups holding independent values; inside
// each, dim 0 is split in two. Reducing over it gathers inside the groups only.
constexpr char kSubgroupReduce[] = R"(
HloModule subgroup, num_partitions=4
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  z = f32[] constant(0), sharding={devices=[2,2]<=[4] last_tile_dims={manual, replicated}}
  p = f32[4,6] parameter(0), sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={manual}}
  n = f32[4,6] negate(p), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual}}
  ROOT r = f32[6] reduce(n, z), dimensions={0}, to_apply=sum,
    sharding={devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}
})";

TEST(ManualPartitionTest, SubgroupReshardsStayInsideTheirGroups) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = Partition(kSubgroupReduce);
  ASSERT_TRUE(spmd.ok()) << spmd.status();
  const std::string text = (*spmd)->ToString();
  // Every collective's groups are {0,1} / {2,3} (the manual groups), never {0,2} / {1,3}.
  EXPECT_EQ(text.find("{0,2}"), std::string::npos) << text;
  EXPECT_EQ(text.find("[2,2]<=[2,2]T(1,0)"), std::string::npos) << text;
  absl::StatusOr<runtime::VerifyResult> result = Verify(kSubgroupReduce, **spmd, 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString() << text;
}

TEST(ManualPartitionTest, GatheringAcrossManualGroupsFailsVerification) {
  // Gathers dim 0 across the groups ({0,2},{1,3}) instead of inside them.
  constexpr char kWrong[] = R"(
HloModule wrong, num_partitions=4
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  z = f32[] constant(0)
  p = f32[2,6] parameter(0)
  g = f32[4,6] all-gather(p), dimensions={0}, channel_id=1, replica_groups={{0,2},{1,3}}, use_global_device_ids=true
  n = f32[4,6] negate(g)
  ROOT r = f32[6] reduce(n, z), dimensions={0}, to_apply=sum
})";
  ExpectCatchesWrongProgram(kSubgroupReduce, kWrong, 4);
}

// Reducing a split dim inside manual subgroups: each device reduces its own block and the
// partial results are combined inside its manual group, never gathered first.
constexpr char kSubgroupSplitReduce[] = R"(
HloModule subgroup_split, num_partitions=4
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  z = f32[] constant(1), sharding={devices=[2,2]<=[4] last_tile_dims={replicated, manual}}
  p = f32[5,6] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dims={manual}}
  ROOT r = f32[6] reduce(p, z), dimensions={0}, to_apply=sum,
    sharding={devices=[1,2,2]<=[4] last_tile_dims={replicated, manual}}
})";

TEST(ManualPartitionTest, SplitReducedDimInsideSubgroupsSumsPartials) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = Partition(kSubgroupSplitReduce);
  ASSERT_TRUE(spmd.ok()) << spmd.status();
  const std::string text = (*spmd)->ToString();
  EXPECT_EQ(text.find("all-gather"), std::string::npos) << text;
  EXPECT_NE(text.find("all-reduce"), std::string::npos) << text;
  EXPECT_EQ(text.find("f32[5,6]"), std::string::npos) << text;
  absl::StatusOr<runtime::VerifyResult> result = Verify(kSubgroupSplitReduce, **spmd, 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString() << text;
}

// A variadic (argmax) reduce inside manual subgroups: local argmax on each block, then the
// partial pairs gathered inside each group and reduced again.
constexpr char kSubgroupArgmax[] = R"(
HloModule subgroup_argmax, num_partitions=4
argmax {
  lv = f32[] parameter(0)
  li = s32[] parameter(1)
  rv = f32[] parameter(2)
  ri = s32[] parameter(3)
  gt = pred[] compare(lv, rv), direction=GT
  v = f32[] select(gt, lv, rv)
  i = s32[] select(gt, li, ri)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY main {
  x = f32[28,12] parameter(0), sharding={devices=[1,2,2]<=[4] last_tile_dims={manual}}
  y = s32[28,12] parameter(1), sharding={devices=[1,2,2]<=[4] last_tile_dims={manual}}
  a = f32[] parameter(2), sharding={devices=[2,2]<=[4] last_tile_dims={replicated, manual}}
  b = s32[] parameter(3), sharding={devices=[2,2]<=[4] last_tile_dims={replicated, manual}}
  ROOT r = (f32[28], s32[28]) reduce(x, y, a, b), dimensions={1}, to_apply=argmax,
    sharding={{devices=[1,2,2]<=[4] last_tile_dims={replicated, manual}},
              {devices=[1,2,2]<=[4] last_tile_dims={replicated, manual}}}
})";

TEST(ManualPartitionTest, VariadicReduceInsideSubgroupsReducesLocally) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = Partition(kSubgroupArgmax);
  ASSERT_TRUE(spmd.ok()) << spmd.status();
  const std::string text = (*spmd)->ToString();
  EXPECT_EQ(text.find("f32[28,12]"), std::string::npos) << text;
  EXPECT_NE(text.find("f32[2,28]"), std::string::npos) << text;
  EXPECT_EQ(text.find("{0,2}"), std::string::npos) << text;
  absl::StatusOr<runtime::VerifyResult> result = Verify(kSubgroupArgmax, **spmd, 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString() << text;
}

// Found by the partition fuzzer (seed 2424, mutant 19384): the argmax with its values on one
// device. The reduce asked to run as written went back to its own handler without end (a stack
// overflow). The values on one device enter the groups (their broadcast alike in all of them)
// and each group reduces its own indices.
TEST(ManualPartitionTest, AReduceMixingOneDeviceAndManualGroupsPartitionsNotACrash) {
  std::string text = kSubgroupArgmax;
  const std::string x = "sharding={devices=[1,2,2]<=[4] last_tile_dims={manual}}";
  text.replace(text.find(x), x.size(), "sharding={maximal device=3}");
  PartitionAndVerify(text, 4);
}

// shard_map over one mesh axis: enter manual subgroups of 4 groups x 2 devices, tile the
// group's value inside each group, and leave to a plain tiling. f = x * x.
TEST(ManualPartitionTest, PartialManualRegionEntersTilesAndLeaves) {
  constexpr char kPartial[] = R"(
HloModule partial, num_partitions=8
ENTRY main {
  x = s32[8] parameter(0), sharding={devices=[4,2]<=[8] last_tile_dim_replicate}
  s = s32[2] custom-call(x), custom_call_target="SPMDFullToShardShape",
    sharding={devices=[1,4,2]<=[8] last_tile_dims={manual, replicated}}
  c = s32[2] copy(s), sharding={devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}
  m = s32[2] multiply(c, c), sharding={devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}
  ROOT f = s32[8] custom-call(m), custom_call_target="SPMDShardToFullShape",
    sharding={devices=[8]<=[8]}
})";
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = Partition(kPartial);
  ASSERT_TRUE(spmd.ok()) << spmd.status();
  const std::string text = (*spmd)->ToString();
  EXPECT_EQ(text.find("all-gather"), std::string::npos) << text;
  EXPECT_NE(text.find("s32[1] multiply"), std::string::npos) << text;
  absl::StatusOr<runtime::VerifyResult> result = Verify(kPartial, **spmd, 8);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString() << text;
}

// Nested manual regions: fully manual, then leaving manual mode one mesh axis at a time
// (SPMDShardToFullShape into manual subgroups), computing at each level. Each device's value is
// its tile at every step; the reference assembles each group's value from its devices' tiles.
TEST(ManualPartitionTest, NestedManualRegionsLeaveOneAxisAtATime) {
  constexpr char kNested[] = R"(
HloModule nested, num_partitions=8
ENTRY main {
  p = s32[16,16,16] parameter(0), sharding={devices=[2,2,2]<=[8]}
  m0 = s32[8,8,8] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={manual}
  id = u32[] partition-id(), sharding={manual}
  ids = s32[] convert(id), sharding={manual}
  b = s32[8,8,8] broadcast(ids), dimensions={}, sharding={manual}
  a0 = s32[8,8,8] add(m0, b), sharding={manual}
  m1 = s32[16,8,8] custom-call(a0), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1,1,4]<=[8] last_tile_dims={manual}}
  r1 = s32[16,8,8] reverse(m1), dimensions={0}, sharding={devices=[2,1,1,4]<=[8] last_tile_dims={manual}}
  m2 = s32[16,16,8] custom-call(r1), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,2,1,2]<=[8] last_tile_dims={manual}}
  ROOT out = s32[16,16,16] custom-call(m2), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,2,2]<=[8]}
})";
  ExpectPartitionsAndVerifies(kNested, 8);
}

// XLA shards an outfeed as (data leaves..., token): a manual outfeed runs as written.
TEST(ManualPartitionTest, ManualOutfeedWithDataAndTokenShardingRunsAsWritten) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = Partition(R"(
HloModule feed, num_partitions=4
ENTRY main {
  p = f32[8] parameter(0), sharding={manual}
  t = (f32[8]) tuple(p), sharding={{manual}}
  a = token[] after-all()
  ROOT o = token[] outfeed(t, a), outfeed_shape=(f32[8]{0}), sharding={{manual}, {manual}}
})");
  ASSERT_TRUE(spmd.ok()) << spmd.status();
  const std::string text = (*spmd)->ToString();
  EXPECT_NE(text.find("token[] outfeed("), std::string::npos) << text;
  EXPECT_NE(text.find("(f32[8]) tuple(%p)"), std::string::npos) << text;
}

TEST(ManualPartitionTest, CollectiveAcrossTilesInsideSubgroupsIsRefused) {
  ExpectPartitionError(R"(
HloModule bad, num_partitions=4
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[2,2] parameter(0), sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={manual}}
  ROOT r = f32[2,2] all-reduce(p), to_apply=sum, replica_groups={{1,0},{2,3}},
    use_global_device_ids=true, channel_id=1,
    sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={manual}}
})", "different tiles");
}

TEST(ManualPartitionTest, TiledValueCannotEnterWithoutConversion) {
  ExpectPartitionError(R"(
HloModule bad, num_partitions=2
ENTRY main {
  x = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  ROOT n = f32[8] negate(x), sharding={manual}
})", "SPMDFullToShardShape");
}

// The operand's tiling names devices 0 and 1 of 6, so devices 2-5 would enter the manual region
// with values nothing defines (the fuzzer's mutant 3834 of MixWithManualPartitioning).
TEST(ManualPartitionTest, OperandTiledOverSomeDevicesIsAnError) {
  ExpectPartitionError(R"(
HloModule bad, num_partitions=6
ENTRY main {
  x = f32[8,2] parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT s = f32[4,2] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
})",
                       "does not use devices 2-5");
}

TEST(ManualPartitionTest, ShapeMismatchIsAnError) {
  ExpectPartitionError(R"(
HloModule bad, num_partitions=2
ENTRY main {
  x = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  ROOT s = f32[3] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
})", "f32[4]");
}

// A value inside manual subgroups annotated {replicated} stays inside them: replicated within
// each group (XLA's reading; the groups {0,2} and {1,3} hold independent values). Dim 0 is
// gathered inside the groups; gathering it across them fails verification.
TEST(ManualPartitionTest, ReplicatedInsideManualSubgroupsIsWholeInEachGroup) {
  constexpr char kReplicatedInGroups[] = R"(
HloModule sub, num_partitions=4
ENTRY main {
  x = f32[8,2] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dims={manual}}
  ROOT n = f32[8,2] negate(x), sharding={replicated}
})";
  constexpr char kAcrossGroups[] = R"(
HloModule wrong, num_partitions=4
ENTRY main {
  x = f32[4,2] parameter(0)
  g = f32[8,2] all-gather(x), dimensions={0}, channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true
  ROOT n = f32[8,2] negate(g)
})";
  ExpectCatchesWrongProgram(kReplicatedInGroups, kAcrossGroups, 4);
}

// The same for an unannotated root (partitioned without propagation, so replicated by XLA's
// rule): whole inside each manual group, leaf by leaf; the replicated leaf stays global.
TEST(ManualPartitionTest, UnannotatedRootInsideManualSubgroupsIsWholeInEachGroup) {
  constexpr char kTupleRoot[] = R"(
HloModule sub, num_partitions=4
ENTRY main {
  x = f32[8,2] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dims={manual}}
  y = f32[3] parameter(1), sharding={replicated}
  t = (f32[8,2], f32[3]) tuple(x, y)
  ROOT c = (f32[8,2], f32[3]) copy(t)
})";
  constexpr char kAcrossGroups[] = R"(
HloModule wrong, num_partitions=4
ENTRY main {
  x = f32[4,2] parameter(0)
  y = f32[3] parameter(1)
  g = f32[8,2] all-gather(x), dimensions={0}, channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true
  ROOT t = (f32[8,2], f32[3]) tuple(g, y)
})";
  ExpectCatchesWrongProgram(kTupleRoot, kAcrossGroups, 4);
}

// SPMDShardToFullShape annotated {replicated} still leaves the manual subgroups (the reading
// of "replicated" within the groups is for the ops inside them): its value is global, so it
// may be split like any other. (Read as still inside the groups, the split had to recompute
// the region from its input, which the all-reduce across the groups {0,1} and {2,3} prevents.)
TEST(ManualPartitionTest, ShardToFullShapeToReplicatedLeavesTheSubgroups) {
  constexpr char kLeaveThenSplit[] = R"(
HloModule leave_then_split, num_partitions=4
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[4,6] parameter(0), sharding={replicated}
  m = f32[4,6] custom-call(x), custom_call_target="SPMDFullToShardShape",
    sharding={devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}
  n = f32[4,6] all-reduce(m), channel_id=1, replica_groups={{0,2},{1,3}}, use_global_device_ids=true,
    to_apply=sum, sharding={devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}
  f = f32[4,6] custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={replicated}
  ROOT t = f32[4,6] copy(f), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
})";
  ExpectPartitionsAndVerifies(kLeaveThenSplit, 4);
}

// A tiled sharding has no reading inside the groups: leaving them that way is refused.
TEST(ManualPartitionTest, LeavingManualSubgroupsForATilingIsRefused) {
  ExpectPartitionError(R"(
HloModule sub, num_partitions=4
ENTRY main {
  x = f32[8,2] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dims={manual}}
  ROOT n = f32[8,2] negate(x), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
})",
                       "SPMDShardToFullShape");
}

// Found by the partition fuzzer (seed 48, mutant 234): s32[7] enters a manual region in four
// groups of s32[2], the last holding one element and one of padding, and a collective-permute
// moves that padding into a real element of the result. Inside the region the padding is
// zeros (as the per-device reference's SPMDFullToShardShape makes it); the partitioned
// program used to pass on whatever the reshard left there.
TEST(ManualPartitionTest, PaddingEntersManualRegionsAsZeros) {
  ExpectCatchesWrongProgram(R"(
HloModule padded, num_partitions=8
ENTRY main {
  x = s32[7] parameter(0), sharding={devices=[8]<=[8]}
  c = s32[7] copy(x), sharding={devices=[4,2]<=[8] last_tile_dim_replicate}
  m = s32[2] custom-call(c), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,4,2]<=[8] last_tile_dims={manual, replicated}}
  s = s32[2] copy(m), sharding={devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}
  k = s32[2] constant({5, 5}), sharding={devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}
  a = s32[2] add(s, k), sharding={devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}
  p = s32[2] collective-permute(a), channel_id=1, source_target_pairs={{0,6},{2,0},{4,2},{6,4},{1,7},{3,1},{5,3},{7,5}}, sharding={devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}
  ROOT f = s32[7] custom-call(p), custom_call_target="SPMDShardToFullShape", sharding={devices=[8]<=[8]}
})",
                            R"(
HloModule padded, num_partitions=8
ENTRY main {
  x = s32[1] parameter(0)
  k = s32[1] constant({5})
  a = s32[1] add(x, k)
  ROOT p = s32[1] collective-permute(a), channel_id=1, source_target_pairs={{6,4},{7,5},{0,6},{1,7},{2,0},{3,1},{4,2},{5,3}}
})",
                            8);
}

// Found by the partition fuzzer (seed 47, mutant 147): a branch index whose manual groups
// ({2,1} and {0,3}) differ from its operands' ({0,2} and {1,3}). Device 0 would take group
// {0,3}'s branch over group {0,2}'s value; no group holds both, so the program has no
// per-group meaning and is refused (it used to partition and compute wrong values).
TEST(ManualPartitionTest, ConditionalIndexInOtherManualGroupsIsRefused) {
  ExpectPartitionError(R"(
HloModule bad, num_partitions=4
neg {
  x = f32[4] parameter(0), sharding={devices=[2,2]<=[4] last_tile_dims={manual}}
  ROOT n = f32[4] negate(x), sharding={devices=[2,2]<=[4] last_tile_dims={manual}}
}
ident {
  y = f32[4] parameter(0), sharding={devices=[2,2]<=[4] last_tile_dims={manual}}
  ROOT c = f32[4] copy(y), sharding={devices=[2,2]<=[4] last_tile_dims={manual}}
}
ENTRY e {
  p = pred[] parameter(0), sharding={devices=[2,2]2,0,1,3 last_tile_dims={replicated, manual}}
  a = f32[4] parameter(1), sharding={devices=[2,2]<=[4] last_tile_dims={manual}}
  b = f32[4] parameter(2), sharding={devices=[2,2]<=[4] last_tile_dims={manual}}
  ROOT c = f32[4] conditional(p, a, b), true_computation=neg, false_computation=ident,
    sharding={devices=[2,2]<=[4] last_tile_dims={manual}}
})",
                       "other manual groups");
}

// The same in a loop: the condition reads the first leaf (groups {0,1} and {2,3}), so each of
// those groups runs its own trip count, but the second leaf's groups are {0,2} and {1,3}.
TEST(ManualPartitionTest, LoopStateInOtherManualGroupsIsRefused) {
  ExpectPartitionError(R"(
HloModule bad, num_partitions=4
cond {
  s = (s32[], f32[4]) parameter(0), sharding={{devices=[2,2]<=[4] last_tile_dims={replicated, manual}}, {devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual}}}
  i = s32[] get-tuple-element(s), index=0, sharding={devices=[2,2]<=[4] last_tile_dims={replicated, manual}}
  k = s32[] constant(3), sharding={devices=[2,2]<=[4] last_tile_dims={replicated, manual}}
  ROOT lt = pred[] compare(i, k), direction=LT, sharding={devices=[2,2]<=[4] last_tile_dims={replicated, manual}}
}
body {
  s = (s32[], f32[4]) parameter(0), sharding={{devices=[2,2]<=[4] last_tile_dims={replicated, manual}}, {devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual}}}
  i = s32[] get-tuple-element(s), index=0, sharding={devices=[2,2]<=[4] last_tile_dims={replicated, manual}}
  one = s32[] constant(1), sharding={devices=[2,2]<=[4] last_tile_dims={replicated, manual}}
  j = s32[] add(i, one), sharding={devices=[2,2]<=[4] last_tile_dims={replicated, manual}}
  v = f32[4] get-tuple-element(s), index=1, sharding={devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual}}
  n = f32[4] negate(v), sharding={devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual}}
  ROOT t = (s32[], f32[4]) tuple(j, n), sharding={{devices=[2,2]<=[4] last_tile_dims={replicated, manual}}, {devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual}}}
}
ENTRY e {
  i = s32[] parameter(0), sharding={devices=[2,2]<=[4] last_tile_dims={replicated, manual}}
  v = f32[4] parameter(1), sharding={devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual}}
  t = (s32[], f32[4]) tuple(i, v), sharding={{devices=[2,2]<=[4] last_tile_dims={replicated, manual}}, {devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual}}}
  ROOT w = (s32[], f32[4]) while(t), condition=cond, body=body, sharding={{devices=[2,2]<=[4] last_tile_dims={replicated, manual}}, {devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual}}}
})",
                       "other manual groups");
}

// An unannotated conditional whose branch arguments are manual (its index is not) is in the
// manual region in both passes (hlo/sharding/implied_sharding.h, XLA's rule: {manual} flows to
// every user but SPMDShardToFullShape). Propagation used to look at the index only and, with
// branches that return constants, left it open; the partitioner then made it manual and refused
// the unannotated root it reaches ("cannot reshard {manual} to {replicated}").
TEST(ManualPartitionTest, ConditionalWithManualBranchArgumentsIsManualInBothPasses) {
  constexpr char kText[] = R"(
HloModule cond, num_partitions=2
b0 {
  p = f32[4] parameter(0)
  ROOT k = f32[4] constant({1, 2, 3, 4})
}
b1 {
  p = f32[4] parameter(0)
  ROOT k = f32[4] constant({5, 6, 7, 8})
}
ENTRY e {
  x = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  m = f32[4] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  i = s32[] parameter(1), sharding={replicated}
  c = f32[4] conditional(i, m, m), branch_computations={b0, b1}
  ROOT t = (f32[4]) tuple(c)
})";
  std::unique_ptr<hlo::HloModule> m = Parse(kText);
  ASSERT_NE(m, nullptr);
  spmd::ShardingPropagation propagation;
  ASSERT_TRUE(propagation.Run(m.get()).ok());
  const hlo::HloInstruction* c = m->entry_computation()->root_instruction()->operand(0);
  ASSERT_TRUE(c->has_sharding()) << m->ToString();
  EXPECT_TRUE(c->sharding().IsManual()) << m->ToString();
  // The region claims the unannotated root (which says so after propagation).
  const std::string propagated = m->ToString();
  ExpectPartitionsAndVerifies(propagated, 2);
}

// A partial-auto shard_map as JAX exports it in GSPMD mode: the conversions leave dim 1 open
// (`unspecified_dims`), and propagation splits it on their global sides (from the parameter
// and from the root). Each device's manual value is still its tile with dim 1 whole: the
// partitioner takes the operand whole along dim 1 (gathering propagation's split), and the
// result's users reshard from tiles whole along it; the reference reads the conversions alike.
TEST(ManualPartitionTest, ConversionsTakeOpenDimsWholeWhereTheManualValueIsWhole) {
  constexpr char kText[] = R"(
HloModule open_dims, num_partitions=4
ENTRY e {
  p = f32[4,6] parameter(0), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  a = f32[4,6] custom-call(p), custom_call_target="Sharding", backend_config="unspecified_dims=[1]",
    sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  m = f32[2,6] custom-call(a), custom_call_target="SPMDFullToShardShape",
    backend_config="unspecified_dims=[1]",
    sharding={devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}
  n = f32[2,6] negate(m), sharding={devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}
  f = f32[4,6] custom-call(n), custom_call_target="SPMDShardToFullShape",
    backend_config="unspecified_dims=[1]", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  ROOT c = f32[4,6] copy(f), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
})";
  std::unique_ptr<hlo::HloModule> m = Parse(kText);
  ASSERT_NE(m, nullptr);
  spmd::ShardingPropagation propagation;
  ASSERT_TRUE(propagation.Run(m.get()).ok());
  // Propagation did split dim 1 on both global sides (what the partitioner must undo).
  int64_t split = 0;
  for (const auto& instr : m->entry_computation()->instructions()) {
    if (instr->name() != "a" && instr->name() != "f") continue;
    ASSERT_TRUE(instr->has_sharding()) << m->ToString();
    EXPECT_EQ(instr->sharding().tile_assignment().dim(1), 2) << m->ToString();
    ++split;
  }
  EXPECT_EQ(split, 2);
  const std::string propagated = m->ToString();
  ExpectPartitionsAndVerifies(propagated, 4);
}

// shard_map over some mesh axes (tests/testdata/partition/shard_map_over_some_axes.hlo): the
// manual value is tiled inside its group. The reference takes each group's block whole (the
// union of its devices' shards); a program that leaves the tiles where the region produced
// them, not where the result's sharding wants them, fails.
TEST(ManualPartitionTest, ShardMapOverSomeAxesTiledInsideGroupsVerifies) {
  ExpectCatchesWrongProgram(
      testing_tools::ReadFile("tests/testdata/partition/shard_map_over_some_axes.hlo"), R"(
HloModule auto_axes_spmd, num_partitions=4
ENTRY e {
  x = f32[4,8] parameter(0)
  n = f32[4,8] negate(x)
  ROOT t = f32[8,4] transpose(n), dimensions={1,0}
}
)",
      4);
}

// JAX's partly manual shard_map (axis_names={'model'} on a (data=2, model=4) mesh), as its
// GSPMD export writes it: every dim open. The data split of x enters the region, the dot and
// the psum run on each device's rows, and the result leaves split; nothing is gathered.
constexpr char kPartlyManual[] = R"(
HloModule partly_manual, num_partitions=8
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[16,64] parameter(0), sharding={devices=[2,4]<=[8]}
  w = f32[64,32] parameter(1), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  gx = f32[16,64] custom-call(x), custom_call_target="Sharding",
    sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}, backend_config="unspecified_dims=[0,1]"
  lx = f32[16,16] custom-call(gx), custom_call_target="SPMDFullToShardShape",
    sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  gw = f32[64,32] custom-call(w), custom_call_target="Sharding",
    sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}, backend_config="unspecified_dims=[0,1]"
  lw = f32[16,32] custom-call(gw), custom_call_target="SPMDFullToShardShape",
    sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  d = f32[16,32] dot(lx, lw), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dc = f32[16,32] custom-call(d), custom_call_target="Sharding",
    sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  ar = f32[16,32] all-reduce(dc), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}},
    use_global_device_ids=true, to_apply=add
  lo = f32[16,32] custom-call(ar), custom_call_target="Sharding",
    sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  go = f32[16,32] custom-call(lo), custom_call_target="SPMDShardToFullShape", sharding={replicated},
    backend_config="unspecified_dims=[0,1]"
  ROOT t = f32[16,32] tanh(go), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
})";

TEST(ManualPartitionTest, FreeAxesSplitTheOpenDimsOfAPartlyManualRegion) {
  const std::string spmd = PropagatePartitionAndVerify(kPartlyManual, 8);
  EXPECT_EQ(spmd.find("all-gather"), std::string::npos) << spmd;
  EXPECT_NE(spmd.find("f32[8,32] all-reduce"), std::string::npos) << spmd;
}

// Propagation splits the region's values along the free axis (from the root's layout) while
// the conversion out is held {replicated}: each group's whole value is what leaves.
TEST(ManualPartitionTest, ATiledManualValueLeavesWholeForAHeldReplicatedResult) {
  PropagatePartitionAndVerify(R"(
HloModule leave_whole, num_partitions=8
ENTRY main {
  p0 = f32[16,16] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}
  p1 = f32[16,32] parameter(1), sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}
  d = f32[16,32] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[16,32] custom-call(d), custom_call_target="Sharding",
    sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  ROOT t = f32[16,32] custom-call(c), custom_call_target="SPMDShardToFullShape", sharding={replicated}
})",
                              8);
}

// Found by the partition fuzzer (seed 2323, mutant 25618): s32[4] split over four groups of two
// devices enters values of s32[2] that each group splits between its devices. Reading each
// device's tile as its manual value would give device 1 the element its group's value holds at
// 0, not at 1 (the reference's reading); the conversion refuses instead of computing wrong
// values.
TEST(ManualPartitionTest, AGlobalTileThatIsNotTheDevicesPieceOfItsGroupsValueIsRefused) {
  ExpectPartitionError(R"(
HloModule misfit, num_partitions=8
ENTRY main {
  x = s32[4] parameter(0), sharding={devices=[4,2]<=[8] last_tile_dim_replicate}
  m = s32[2] custom-call(x), custom_call_target="SPMDFullToShardShape",
    sharding={devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}, backend_config="unspecified_dims=[0]"
  ROOT c = s32[2] copy(m), sharding={devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}
})",
                       "SPMDFullToShardShape");
}

// Found by the JAX probe (a ppermute ring in a scan inside a shard_map over 'model', the carry
// split by 'data'): the loop counts from a constant, so every device decides alike and the
// ring may cross manual groups. It used to be refused as a per-group loop.
TEST(ManualPartitionTest, ALoopCountedAlikeEverywhereMayCrossManualGroups) {
  PropagatePartitionAndVerify(R"(
HloModule ring, num_partitions=8
body {
  t = (s32[], f32[8,32]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  is = s32[] custom-call(i), custom_call_target="Sharding", sharding={devices=[4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}
  one = s32[] constant(1)
  i1 = s32[] add(is, one)
  h = f32[8,32] get-tuple-element(t), index=1
  p = f32[8,32] collective-permute(h), channel_id=1, source_target_pairs={{0,1},{1,2},{2,3},{3,0},{4,5},{5,6},{6,7},{7,4}}
  ROOT r = (s32[], f32[8,32]) tuple(i1, p)
}
cond {
  t = (s32[], f32[8,32]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[8,32] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  m = f32[8,32] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}
  z = s32[] constant(0)
  w0 = (s32[], f32[8,32]) tuple(z, m)
  w = (s32[], f32[8,32]) while(w0), condition=cond, body=body
  o = f32[8,32] get-tuple-element(w), index=1
  os = f32[8,32] custom-call(o), custom_call_target="Sharding", sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}
  ROOT f = f32[8,128] custom-call(os), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,4]<=[8]}
})",
                              8);
}

// Nested shard_maps as JAX's GSPMD export writes them (the JAX probe's pa_nested): an outer
// region manual over data, an inner one (in a call) manual over model too. The outer body's
// values stay split along model inside the data groups, the inner conversions only relabel
// each device's tile, and no conversion or sharding custom-call is left in the program (JAX
// writes one into the psum's reducer, which runs as written). The
// outer call used to run as written: x gathered in the groups and the body left unpartitioned.
constexpr char kNestedShardMap[] = R"(
HloModule nested_shard_map, num_partitions=8
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add_held {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT h = f32[] custom-call(s), custom_call_target="Sharding", sharding={devices=[2,4]<=[8] last_tile_dims={manual, replicated}}
}
inner {
  a = f32[4,16] parameter(0)
  w = f32[16,32] parameter(1)
  d = f32[4,32] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT p = f32[4,32] all-reduce(d), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, to_apply=add
}
outer {
  x = f32[4,64] parameter(0)
  s = f32[4,64] sine(x)
  sc = f32[4,64] custom-call(s), custom_call_target="Sharding", sharding={devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  g = f32[4,64] custom-call(sc), custom_call_target="Sharding", sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}, backend_config="unspecified_dims=[0,1]"
  l = f32[4,16] custom-call(g), custom_call_target="SPMDFullToShardShape", sharding={manual}, backend_config="unspecified_dims=[0,1]"
  w = f32[64,32] parameter(1)
  gw = f32[64,32] custom-call(w), custom_call_target="Sharding", sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dims={manual}}, backend_config="unspecified_dims=[0,1]"
  lw = f32[16,32] custom-call(gw), custom_call_target="SPMDFullToShardShape", sharding={manual}, backend_config="unspecified_dims=[0,1]"
  c = f32[4,32] call(l, lw), to_apply=inner
  cs = f32[4,32] custom-call(c), custom_call_target="Sharding", sharding={manual}, backend_config="unspecified_dims=[0,1]"
  o = f32[4,32] custom-call(cs), custom_call_target="SPMDShardToFullShape", sharding={devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  z = f32[] constant(0)
  r = f32[32] reduce(o, z), dimensions={0}, to_apply=add
  rs = f32[32] custom-call(r), custom_call_target="Sharding", sharding={devices=[1,2,4]<=[8] last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0]"
  ps = f32[32] all-reduce(rs), channel_id=2, replica_groups={{0,4},{1,5},{2,6},{3,7}}, use_global_device_ids=true, to_apply=add_held
  ROOT t = (f32[32], f32[4,32]) tuple(ps, o)
}
ENTRY main {
  x = f32[8,64] parameter(0), sharding={devices=[2,4]<=[8]}
  gx = f32[8,64] custom-call(x), custom_call_target="Sharding", sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}, backend_config="unspecified_dims=[0,1]"
  lx = f32[4,64] custom-call(gx), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  w = f32[64,32] parameter(1), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  gw = f32[64,32] custom-call(w), custom_call_target="Sharding", sharding={replicated}, backend_config="unspecified_dims=[0,1]"
  lw = f32[64,32] custom-call(gw), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  c = (f32[32], f32[4,32]) call(lx, lw), to_apply=outer
  c0 = f32[32] get-tuple-element(c), index=0
  s0 = f32[32] custom-call(c0), custom_call_target="Sharding", sharding={devices=[1,2,4]<=[8] last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0]"
  f0 = f32[32] custom-call(s0), custom_call_target="SPMDShardToFullShape", sharding={replicated}, backend_config="unspecified_dims=[0]"
  c1 = f32[4,32] get-tuple-element(c), index=1
  s1 = f32[4,32] custom-call(c1), custom_call_target="Sharding", sharding={devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  f1 = f32[8,32] custom-call(s1), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}, backend_config="unspecified_dims=[0,1]"
  ROOT t = (f32[32], f32[8,32]) tuple(f0, f1), sharding={{replicated}, {devices=[2,1,4]<=[8] last_tile_dim_replicate}}
})";

TEST(ManualPartitionTest, NestedShardMapsPartitionTheOuterBody) {
  const std::string spmd = PropagatePartitionAndVerify(kNestedShardMap, 8);
  EXPECT_EQ(spmd.find("custom-call"), std::string::npos) << spmd;
  EXPECT_EQ(spmd.find("all-gather"), std::string::npos) << spmd;
  std::unique_ptr<hlo::HloModule> m = Parse(spmd);
  ASSERT_NE(m, nullptr);
  // The two psums alone (XLA's program receives as much): f32[4,32] over 4 devices and f32[32]
  // over 2.
  EXPECT_LE(hlo::ComputeModuleStats(*m).comm_bytes, 896) << spmd;
}

// The inner region's result leaves whole in each data group (replicated over model) and the
// outer body then splits it along model (JAX's nest_auto_then_manual probe): propagation
// splits the open conversion's result there, and each device's manual value is still its
// group's whole value. It was refused (the value's shape is not the split tile's).
TEST(ManualPartitionTest, ANestedRegionsWholeResultSplitAfterItLeaves) {
  std::string text = kNestedShardMap;
  const std::string root = "ROOT t = (f32[32], f32[4,32]) tuple(ps, o)";
  text.replace(text.find(root), root.size(),
               "oc = f32[4,32] custom-call(o), custom_call_target=\"Sharding\", "
               "sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dims={manual}}\n"
               "  ROOT t = (f32[32], f32[4,32]) tuple(ps, oc)");
  PropagatePartitionAndVerify(text, 8);
}

}  // namespace

// Sort, broadcast, reshape and convolution partitioning end to end: the collectives chosen (a sort
// split along its sort dimension moves the split elsewhere by all-to-all rather than
// gathering; a broadcast of a scalar is rebuilt in any tiling instead of being moved; a
// convolution runs on batch and output-feature tiles) and the numerics on the CPU executor
// against the unpartitioned module.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/testing/hlo_matchers.h"
#include "tests/partition_test_util.h"

namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::testing::HasCustomCallTarget;
using hlo::testing::HasShape;
using hlo::testing::Instructions;
using ::testing::_;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Not;
namespace op = hlo::testing::op;
using testing_util::Counts;
using testing_util::ExpectVerifies;
using testing_util::Partition;
using testing_util::Partitioned;

// A sort comparator over (f32 value, s32 index) pairs: descending by value.
constexpr char kGreaterWithIndex[] = R"(
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT
}
)";

TEST(SortPartitionTest, SplitSortDimensionMovesToAnotherDimension) {
  Partitioned p =
      Partition(std::string("HloModule sort, num_partitions=4\n") + kGreaterWithIndex + R"(
ENTRY main {
  x = f32[2,16,8] parameter(0), sharding={devices=[1,1,4]<=[4]}
  i = s32[2,16,8] iota(), iota_dimension=2, sharding={devices=[1,1,4]<=[4]}
  ROOT s = (f32[2,16,8], s32[2,16,8]) sort(x, i), dimensions={2}, is_stable=true, to_apply=gt,
    sharding={{devices=[1,1,4]<=[4]}, {devices=[1,1,4]<=[4]}}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_GE(counts[HloOpcode::kAllToAll], 1) << p.spmd->ToString();
  // The sort runs on [2,4,8] blocks: the sort dim whole, the split moved to dim 1.
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::Sort(), HasShape("(f32[2,4,8], s32[2,4,8])"))));
  ExpectVerifies(p, 4);
}

// Top-k as a sort of (values, iota) and slices, the batch split and the result replicated
// (XLA's NoPartitionSortInTopKWhenNoPartitionInSortDim, with the shardings propagation gives
// it): the sort runs on each device's rows, the first k columns are sliced there, and only
// they are gathered.
TEST(SortPartitionTest, TopKBySortSlicesBeforeGathering) {
  Partitioned p =
      Partition(std::string("HloModule topk, num_partitions=2\n") + kGreaterWithIndex + R"(
ENTRY main {
  p = f32[4,256] parameter(0)
  x = f32[4,256] copy(p), sharding={devices=[2,1]<=[2]}
  i = s32[4,256] iota(), iota_dimension=1, sharding={devices=[2,1]<=[2]}
  s = (f32[4,256], s32[4,256]) sort(x, i), dimensions={1}, is_stable=true, to_apply=gt,
    sharding={{devices=[2,1]<=[2]}, {devices=[2,1]<=[2]}}
  v = f32[4,256] get-tuple-element(s), index=0, sharding={devices=[2,1]<=[2]}
  k = s32[4,256] get-tuple-element(s), index=1, sharding={devices=[2,1]<=[2]}
  vs = f32[4,8] slice(v), slice={[0:4], [0:8]}, sharding={replicated}
  ks = s32[4,8] slice(k), slice={[0:4], [0:8]}, sharding={replicated}
  ROOT t = (f32[4,8], s32[4,8]) tuple(vs, ks), sharding={{replicated}, {replicated}}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::Sort(), HasShape("(f32[2,256], s32[2,256])"))))
      << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllGather(), HasShape("f32[4,8]"))));
  EXPECT_THAT(Instructions(*p.spmd), Not(Contains(AllOf(op::AllGather(), HasShape("f32[4,256]")))));
  ExpectVerifies(p, 2);
}

// XLA's SortTopKNonSortDimension with more columns read: the sort moves its split from the
// sorted dim to dim 1, and the first 6 columns are wanted split along the sorted dim again:
// they are sliced in the sort's tiling and only they are resharded, instead of gathering the
// sorted rows first. (With 6 columns the 4 blocks' candidates, 6 x 3 from other devices, are
// not fewer than a block's 16: sort_slices.h leaves the sort whole.)
TEST(SortPartitionTest, TopKColumnsAreSlicedInTheSortsTiling) {
  Partitioned p =
      Partition(std::string("HloModule topk_split, num_partitions=8\n") + kGreaterWithIndex + R"(
ENTRY main {
  x = f32[2,8,64] parameter(0), sharding={devices=[2,1,4]<=[8]}
  iota = s32[2,8,64] iota(), iota_dimension=2, sharding={devices=[2,1,4]<=[8]}
  s = (f32[2,8,64], s32[2,8,64]) sort(x, iota), dimensions={2}, is_stable=true, to_apply=gt,
    sharding={{devices=[2,1,4]<=[8]}, {devices=[2,1,4]<=[8]}}
  v = f32[2,8,64] get-tuple-element(s), index=0, sharding={devices=[2,1,4]<=[8]}
  ROOT top = f32[2,8,6] slice(v), slice={[0:2], [0:8], [0:6]}, sharding={devices=[2,1,4]<=[8]}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_THAT(Instructions(*p.spmd), Not(Contains(AllOf(op::AllGather(), HasShape("f32[1,8,64]")))))
      << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::Slice(), HasShape("f32[1,2,6]"))));
  ExpectVerifies(p, 8);
}

TEST(SortPartitionTest, SortDimensionIsGatheredWhenNoOtherDimensionCanTakeIt) {
  Partitioned p = Partition(R"(
HloModule sort, num_partitions=4
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[3,16] parameter(0), sharding={devices=[1,4]<=[4]}
  ROOT s = f32[3,16] sort(x), dimensions={1}, to_apply=lt, sharding={devices=[1,4]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_GE(Counts(*p.spmd)[HloOpcode::kAllGather], 1) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

TEST(BroadcastPartitionTest, ScalarBroadcastIsRebuiltInTheWantedTiling) {
  Partitioned p = Partition(R"(
HloModule bcast, num_partitions=4
ENTRY main {
  z = f32[] constant(0)
  b = f32[8,32,16] broadcast(z), dimensions={}, sharding={devices=[2,2,1]<=[4]}
  u = f32[8,8,16] parameter(0), sharding={devices=[2,2,1]<=[4]}
  i = s32[] constant(8)
  o = s32[] constant(0)
  ROOT d = f32[8,32,16] dynamic-update-slice(b, u, o, i, o), sharding={devices=[2,2,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  // Only the update is gathered (along the sliced dimension); the broadcast never moves.
  EXPECT_THAT(Instructions(*p.spmd), Not(Contains(op::AllGather(op::Broadcast()))));
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 1) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// A value constant along some dims (a broadcast's new dims, and what elementwise ops,
// transposes and reshapes keep of them) is resharded without moving its copies along them: one
// element along those dims is resharded and broadcast again.
TEST(BroadcastPartitionTest, ReshardsAlongBroadcastDimsMoveNothing) {
  Partitioned p = Partition(R"(
HloModule bcast_dims, num_partitions=4
ENTRY main {
  p0 = f32[2,3] parameter(0), sharding={replicated}
  p1 = f32[2,3,8] parameter(1), sharding={replicated}
  b0 = f32[6,2,6,3] broadcast(p0), dimensions={1,3}, sharding={devices=[2,1,2,1]<=[4]}
  b1 = f32[6,2,6,3,8] broadcast(p1), dimensions={1,3,4}, sharding={devices=[2,1,1,1,2]<=[4]}
  b2 = f32[6,2,6,3,8] broadcast(p0), dimensions={1,3}, sharding={devices=[2,1,1,1,2]<=[4]}
  a = f32[6,2,6,3,8] add(b1, b2), sharding={devices=[2,1,1,1,2]<=[4]}
  r = f32[3,4,6,3] reshape(b0), sharding={devices=[2,1,2,1]<=[4]}
  t = f32[2,3,6,6] transpose(b0), dimensions={1,3,0,2}, sharding={devices=[1,1,2,2]<=[4]}
  c0 = f32[6,2,6,3] copy(b0), sharding={devices=[2,1,2,1]3,2,1,0}
  c1 = f32[6,2,6,3,8] copy(a), sharding={devices=[1,1,2,1,2]<=[4]}
  c2 = f32[3,4,6,3] copy(r), sharding={replicated}
  c3 = f32[2,3,6,6] copy(t), sharding={devices=[1,1,4,1]<=[4]}
  ROOT out = (f32[6,2,6,3], f32[6,2,6,3,8], f32[3,4,6,3], f32[2,3,6,6]) tuple(c0, c1, c2, c3),
    sharding={{devices=[2,1,2,1]3,2,1,0}, {devices=[1,1,2,1,2]<=[4]}, {replicated},
              {devices=[1,1,4,1]<=[4]}}
})");
  ASSERT_NE(p.spmd, nullptr);
  // c0, c2 and c3 only move dims along which their values are constant; c1 moves dim 0 (a
  // broadcast dim of both operands) only, while dim 4 keeps its tiles.
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll] +
                counts[HloOpcode::kCollectivePermute] + counts[HloOpcode::kAllReduce],
            0)
      << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// Uneven splits along the constant dims: every source tile holds data (7 split 2 ways), so one
// element of each device's tile stands for all; the target splits 7 four ways, padded. (p0 is
// split, so the chain cannot be computed again from it, rebuild.h.)
TEST(BroadcastPartitionTest, UnevenSplitsAlongBroadcastDimsAreRebuiltLocally) {
  Partitioned p = Partition(R"(
HloModule bcast_uneven, num_partitions=4
ENTRY main {
  p0 = f32[5] parameter(0), sharding={devices=[2,2]<=[4] last_tile_dim_replicate}
  b = f32[7,5] broadcast(p0), dimensions={1}, sharding={devices=[2,2]<=[4]}
  e = f32[7,5] exponential(b), sharding={devices=[2,2]<=[4]}
  ROOT c = f32[7,5] copy(e), sharding={devices=[4,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  // Dim 1's halves are gathered on a one-row slice; dim 0's copies never move.
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllGather(), HasShape("f32[1,6]"))))
      << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// A reshape whose result tiles straddle the operand's rows (6 rows of [24,2] per tile over
// rows of 4 = [6,4,2]'s minor dims): the operand's dim-0 tiles survive it, so only dim 1 is
// gathered, and each device slices its result tile from its half.
// A size-1 dim split 4 ways holds data in its first tile only (XLA's
// DynamicUpdateSliceAlongPartitionedDimension2): replicating it sums the first tile's data into
// every device of its group (masked all-reduce) instead of all-gathering three tiles of
// padding; the other dim keeps its split. Likewise for data in the first 3 of 8 tiles.
TEST(ReshardPartitionTest, SingleDataTileIsSummedNotGathered) {
  for (const char* type : {"f32", "s32"}) {
    SCOPED_TRACE(type);
    const std::string t(type);
    Partitioned p =
        Partition(R"(
HloModule single_tile, num_partitions=8
ENTRY main {
  x = )" + t + R"([1,6] parameter(0), sharding={devices=[4,2]<=[8]}
  ROOT c = )" + t +
                  R"([1,6] copy(x), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}
})");
    ASSERT_NE(p.spmd, nullptr);
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
    EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
    ExpectVerifies(p, 8);
  }
  // 3 rows split 8 ways: shards of 1, data in the first 3 tiles, each placed at its row.
  Partitioned rows = Partition(R"(
HloModule data_tiles, num_partitions=8
ENTRY main {
  x = f32[3,5] parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT c = f32[3,5] copy(x), sharding={replicated}
})");
  ASSERT_NE(rows.spmd, nullptr);
  auto counts = Counts(*rows.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << rows.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << rows.spmd->ToString();
  ExpectVerifies(rows, 8);
  // XLA's BroadcastAsReplicate: two size-1 dims split 2 ways each, one all-reduce for both
  // instead of an all-gather per dim.
  Partitioned both = Partition(R"(
HloModule two_dims, num_partitions=4
ENTRY main {
  x = f32[1,1] parameter(0), sharding={devices=[2,2]<=[4]}
  ROOT c = f32[1,1] copy(x), sharding={replicated}
})");
  ASSERT_NE(both.spmd, nullptr);
  counts = Counts(*both.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << both.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << both.spmd->ToString();
  ExpectVerifies(both, 4);
}

// XLA's ContractingAsNonContractingCrash: f32[1,1,256,64] split [4,2] on its two size-1 dims
// (only device 0 holds data) replicated: one masked all-reduce over all 8 devices sums both
// dims at once (a split of 2 joins the dim of 4 in the same collective), where an all-reduce
// over 4 and then an all-gather of the other dim moved 160 KiB.
TEST(ReshardPartitionTest, DataTileDimsAreSummedInOneAllReduce) {
  Partitioned p = Partition(R"(
HloModule two_dims, num_partitions=8
ENTRY main {
  x = f32[1,1,256,64] parameter(0), sharding={devices=[4,2,1,1]<=[8]}
  ROOT c = f32[1,1,256,64] copy(x), sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
  EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 2 * 65536 * 7 / 8) << p.spmd->ToString();
  ExpectVerifies(p, 8);
  // Two rows in the first two of 8 tiles with a size-1 dim split 2 ways, uneven columns.
  Partitioned rows = Partition(R"(
HloModule rows, num_partitions=16
ENTRY main {
  x = f32[2,1,5] parameter(0), sharding={devices=[8,2,1]<=[16]}
  ROOT c = f32[2,1,5] copy(x), sharding={replicated}
})");
  ASSERT_NE(rows.spmd, nullptr);
  counts = Counts(*rows.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << rows.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << rows.spmd->ToString();
  ExpectVerifies(rows, 16);
}

// XLA's TileToPartialReplicateHaloExchangeWithPadding: 2 rows split 8 ways (data in the first
// 2 tiles) wanted split 2 ways: the rows are summed whole by one masked all-reduce (1722 bytes)
// and each device keeps its row, where gathering all 8 tiles received 3444.
TEST(ReshardPartitionTest, DataTilesSummedThenSlicedForACoarserSplit) {
  Partitioned p = Partition(R"(
HloModule coarser, num_partitions=8
ENTRY main {
  x = f32[2,123] parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT c = f32[2,123] copy(x), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
  EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 2 * 2 * 123 * 4 * 7 / 8)
      << p.spmd->ToString();
  ExpectVerifies(p, 8);
}

TEST(ReshapePartitionTest, OperandTilesThatMapSurviveAndTheRestAreGathered) {
  Partitioned p = Partition(R"(
HloModule reshape_operand_tiles, num_partitions=4
ENTRY main {
  x = f32[6,4,2] parameter(0), sharding={devices=[2,2,1]<=[4]}
  ROOT r = f32[24,2] reshape(x), sharding={devices=[4,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllGather(), HasShape("f32[3,4,2]"))))
      << p.spmd->ToString();
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 1) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

TEST(ReshapePartitionTest, TilesThatMapSurviveAndTheRestAreSlicedLocally) {
  // The result's dim 1 split has no equivalent on the operand; its dim 2 split does, and the
  // operand already holds it: reshape locally, then slice dim 1. Nothing moves.
  Partitioned p = Partition(R"(
HloModule r, num_partitions=8
ENTRY main {
  x = s32[128,8] parameter(0), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  ROOT r = s32[2,64,8] reshape(x), sharding={devices=[1,2,4]<=[8]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll] +
                counts[HloOpcode::kCollectivePermute] + counts[HloOpcode::kAllReduce],
            0)
      << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::Reshape(op::Parameter()), HasShape("s32[2,64,2]"))));
  ExpectVerifies(p, 8);
}

// Found by the JAX probe (a softmax over dims of 6 and 10 split over 4 and 2 reshapes to
// [6,1,10]): the reshape keeps both split dims as they are, so each device reshapes its padded
// shard and the padding stays padding. It used to gather the operand and slice the result.
TEST(ReshapePartitionTest, UnevenSplitsOfDimsTheReshapeKeepsStayLocal) {
  Partitioned p = Partition(R"(
HloModule r, num_partitions=8
ENTRY main {
  x = f32[6,10] parameter(0), sharding={devices=[4,2]<=[2,4]T(1,0)}
  r = f32[6,1,10] reshape(x), sharding={devices=[4,1,2]<=[2,4]T(1,0)}
  ROOT n = f32[6,1,10] negate(r), sharding={devices=[4,1,2]<=[2,4]T(1,0)}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 0) << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::Reshape(op::Parameter()), HasShape("f32[2,1,5]"))));
  ExpectVerifies(p, 8);
}

// An uneven split of a dim the reshape merges still goes through a layout that divides it.
TEST(ReshapePartitionTest, UnevenSplitsOfMergedDimsAreNotReshapedLocally) {
  Partitioned p = Partition(R"(
HloModule r, num_partitions=4
ENTRY main {
  x = f32[6,10] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT r = f32[60] reshape(x), sharding={devices=[4]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  ExpectVerifies(p, 4);
}

TEST(ConvolutionPartitionTest, BatchAndOutputFeatureTilesRunLocally) {
  Partitioned p = Partition(R"(
HloModule conv, num_partitions=4
ENTRY main {
  x = f32[4,8,8,3] parameter(0), sharding={devices=[2,1,1,1,2]<=[4] last_tile_dim_replicate}
  k = f32[3,3,3,6] parameter(1), sharding={devices=[1,1,1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  ROOT c = f32[4,8,8,6] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,
    sharding={devices=[2,1,1,2]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll] +
                counts[HloOpcode::kAllReduce] + counts[HloOpcode::kCollectivePermute],
            0)
      << p.spmd->ToString();
  EXPECT_THAT(p.spmd->entry_computation()->root_instruction(),
              AllOf(op::Convolution(op::Parameter(), op::Parameter()), HasShape("f32[2,8,8,3]")));
  ExpectVerifies(p, 4);
}

TEST(ConvolutionPartitionTest, FeatureGroupsSplitAlongWholeGroups) {
  // Depthwise: 8 groups of one input and two output features, split 4 ways.
  Partitioned p = Partition(R"(
HloModule conv, num_partitions=4
ENTRY main {
  x = f32[2,9,8] parameter(0), sharding={devices=[1,1,4]<=[4]}
  k = f32[3,1,16] parameter(1), sharding={devices=[1,1,4]<=[4]}
  ROOT c = f32[2,9,16] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f,
    feature_group_count=8, sharding={devices=[1,1,4]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllReduce], 0)
      << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(
                  op::Convolution(),
                  ::testing::ResultOf(
                      "feature_group_count",
                      [](const HloInstruction* c) { return c->attrs().feature_group_count; }, 2))));
  ExpectVerifies(p, 4);
}

TEST(ConvolutionPartitionTest, SpatialTilesStayWholeWithTwoFeatureGroups) {
  Partitioned p = Partition(R"(
HloModule conv, num_partitions=4
ENTRY main {
  x = f32[2,8,8,4] parameter(0), sharding={devices=[1,2,2,1]<=[4]}
  k = f32[3,3,2,4] parameter(1), sharding={replicated}
  ROOT c = f32[2,8,8,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,
    feature_group_count=2, sharding={devices=[2,1,1,2]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  ExpectVerifies(p, 4);
}

// Dynamic-update-slice along a split dimension: the small update is taken whole and each
// device writes the part that falls into its shard; the big operand is never gathered. Start
// indices below 0, past the end, and straddling shard boundaries (clamped as the op does).
TEST(DynamicUpdateSlicePartitionTest, SplitDimensionWritesEachShardsPart) {
  for (const std::string& start : {"0", "5", "13", "-3", "100"}) {
    SCOPED_TRACE("start " + start);
    Partitioned p = Partition(R"(
HloModule dus, num_partitions=4
ENTRY main {
  x = f32[16,8] parameter(0), sharding={devices=[4,1]<=[4]}
  u = f32[3,5] parameter(1), sharding={replicated}
  i = s32[] constant()" + start + R"()
  j = s32[] constant(2)
  ROOT r = f32[16,8] dynamic-update-slice(x, u, i, j), sharding={devices=[4,1]<=[4]}
})");
    ASSERT_NE(p.spmd, nullptr);
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllReduce] +
                  counts[HloOpcode::kCollectivePermute] + counts[HloOpcode::kAllToAll],
              0)
        << p.spmd->ToString();
    EXPECT_THAT(
        Instructions(*p.spmd),
        Contains(AllOf(op::DynamicUpdateSlice(op::Parameter(), _, _, _), HasShape("f32[4,8]"))));
    ExpectVerifies(p, 4);
  }
}

// An fft keeps the tiles of the dims it does not transform and moves those of its transformed
// dims to another dim (an all-to-all), never computing whole: an RFFT over the last dim of
// f32[4,16,32] split [2,1,4] runs on c64[2,4,17] blocks; a 2-D FFT whose last dim is split
// moves that split too.
TEST(FftPartitionTest, TransformedDimsWholeOtherDimsKeepTheirTiles) {
  struct Case {
    std::string text;
    std::string local_shape;
  };
  const std::vector<Case> cases = {
      {R"(HloModule fft, num_partitions=8
ENTRY main {
  x = f32[4,16,32] parameter(0), sharding={devices=[2,1,4]<=[8]}
  ROOT f = c64[4,16,17] fft(x), fft_type=RFFT, fft_length={32}, sharding={devices=[2,1,4]<=[8]}
})",
       "c64[2,4,17]"},
      {R"(HloModule fft2, num_partitions=4
ENTRY main {
  x = f32[8,16,32] parameter(0)
  c = c64[8,16,32] convert(x), sharding={devices=[1,2,2]<=[4]}
  ROOT f = c64[8,16,32] fft(c), fft_type=FFT, fft_length={16,32}, sharding={devices=[1,2,2]<=[4]}
})",
       "c64[2,16,32]"},
  };
  for (const Case& c : cases) {
    Partitioned p = Partition(c.text);
    ASSERT_NE(p.spmd, nullptr);
    bool local = false;
    for (const HloInstruction* instr : Instructions(*p.spmd)) {
      if (instr->opcode() == HloOpcode::kFft) {
        EXPECT_EQ(instr->shape().ToString(), c.local_shape) << p.spmd->ToString();
        local = true;
      }
    }
    EXPECT_TRUE(local);
    EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 0) << p.spmd->ToString();
    ExpectVerifies(p, p.spmd->config().num_partitions);
  }
}

// A decode step's KV-cache write: an update much shorter than a shard along the split dim
// (one position of a sequence split 8 ways). Each device writes only an update-sized window of
// its shard (the overlap, clamped into the shard), so no temporary is as large as the shard:
// the cache is the largest buffer a decode step holds. Starts inside a shard, at its edges,
// straddling two shards, clamped below 0 and past the end, on even and uneven tilings.
TEST(DynamicUpdateSlicePartitionTest, ShortUpdateWritesAnUpdateSizedWindow) {
  struct Case {
    std::string operand, update;
  };
  for (const Case& c : {Case{"f32[2,64,4]", "f32[2,1,4]"}, Case{"f32[2,64,4]", "f32[2,3,4]"},
                        Case{"f32[2,60,4]", "f32[2,3,4]"}}) {
    for (const std::string& start : {"0", "5", "7", "8", "14", "59", "63", "-3", "100"}) {
      SCOPED_TRACE(c.operand + " " + c.update + " start " + start);
      Partitioned p = Partition(R"(
HloModule dus, num_partitions=8
ENTRY main {
  x = )" + c.operand + R"( parameter(0), sharding={devices=[1,8,1]<=[8]}
  u = )" + c.update + R"( parameter(1), sharding={replicated}
  z = s32[] constant(0)
  i = s32[] constant()" + start +
                                R"()
  ROOT r = )" + c.operand + R"( dynamic-update-slice(x, u, z, i, z), sharding={devices=[1,8,1]<=[8]}
})");
      ASSERT_NE(p.spmd, nullptr);
      for (const HloInstruction* instr : Instructions(*p.spmd)) {
        if (instr->opcode() == HloOpcode::kParameter ||
            instr->opcode() == HloOpcode::kDynamicUpdateSlice || !instr->shape().IsArray()) {
          continue;
        }
        EXPECT_LT(instr->shape().num_elements(), 2 * 8 * 4) << instr->ToString();
      }
      ExpectVerifies(p, 8);
    }
  }
}

TEST(DynamicUpdateSlicePartitionTest, RuntimeStartOnUnevenTwoDimensionalTiling) {
  Partitioned p = Partition(R"(
HloModule dus, num_partitions=8
ENTRY main {
  x = f32[15,9] parameter(0), sharding={devices=[4,2]<=[8]}
  u = f32[6,4] parameter(1), sharding={devices=[2,2,2]<=[8] last_tile_dim_replicate}
  i = s64[] parameter(2), sharding={replicated}
  j = s64[] constant(4)
  ROOT r = f32[15,9] dynamic-update-slice(x, u, i, j), sharding={devices=[4,2]<=[8]}
})");
  ASSERT_NE(p.spmd, nullptr);
  ExpectVerifies(p, 8);
}

// XLA's KeepPartitionedNonSlicedDimensionWithConstantIndices: the update spans two split dims
// of a wide array; which positions a device writes is decided along those two dims alone
// (pred[n1, n2]), then broadcast over the batch and channels, not combined element by element.
TEST(DynamicUpdateSlicePartitionTest, MaskOverTwoSplitDimsIsBuiltOnThoseDimsAlone) {
  Partitioned p = Partition(R"(
HloModule dus, num_partitions=8
ENTRY main {
  x = f32[4,16,16,64] parameter(0), sharding={devices=[2,2,2,1]<=[8]}
  u = f32[4,6,6,64] parameter(1), sharding={devices=[2,2,2,1]<=[8]}
  z = s32[] constant(0)
  c = s32[] constant(5)
  ROOT r = f32[4,16,16,64] dynamic-update-slice(x, u, z, c, c, z), sharding={devices=[2,2,2,1]<=[8]}
})");
  ASSERT_NE(p.spmd, nullptr);
  for (const HloInstruction* instr : Instructions(*p.spmd)) {
    if (instr->opcode() != HloOpcode::kAnd) continue;
    EXPECT_LE(instr->shape().num_elements(), 8 * 8) << instr->ToString() << p.spmd->ToString();
  }
  ExpectVerifies(p, 8);
}

// Dynamic-slice of a small window from an operand split along the sliced dims: each device
// slices its own shard, masks what lies outside it, and one all-reduce of the small result
// assembles it; the operand is never gathered. Starts below 0, past the end, inside one shard
// and straddling shard boundaries (clamped as the op does), on an uneven 1-D tiling, a 2-D
// tiling split along both sliced dims, a partially replicated one, and one whose unsliced dim
// stays split.
TEST(DynamicSlicePartitionTest, SmallWindowOfSplitOperandIsAssembledByAllReduce) {
  struct Case {
    std::string operand, sharding, sizes, result_sharding;
    int devices;
  };
  const std::vector<Case> cases = {
      {"f32[63,8]", "{devices=[4,1]<=[4]}", "3,8", "{replicated}", 4},
      {"f32[30,20]", "{devices=[2,4]<=[8]}", "4,3", "{replicated}", 8},
      {"f32[30,20]", "{devices=[4,1,2]<=[8] last_tile_dim_replicate}", "5,20", "{replicated}", 8},
      // The unsliced dim stays split as in the operand.
      {"f32[30,20]", "{devices=[4,2]<=[8]}", "5,20",
       "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}", 8},
  };
  for (const Case& c : cases) {
    for (const std::string start : {"0", "14", "15", "16", "-3", "29", "100"}) {
      SCOPED_TRACE(c.operand + " " + c.sharding + " start " + start);
      const std::string result = "f32[" + c.sizes + "]";
      Partitioned p = Partition("HloModule ds, num_partitions=" + std::to_string(c.devices) +
                                "\nENTRY main {\n  x = " + c.operand + " parameter(0), sharding=" +
                                c.sharding + "\n  i = s32[] constant(" + start +
                                ")\n  j = s64[] constant(" + start + ")\n  ROOT s = " + result +
                                " dynamic-slice(x, i, j), dynamic_slice_sizes={" + c.sizes +
                                "}, sharding=" + c.result_sharding + "\n}\n");
      ASSERT_NE(p.spmd, nullptr);
      auto counts = Counts(*p.spmd);
      EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll], 0)
          << p.spmd->ToString();
      EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
      EXPECT_NE(p.explain.find(": masked"), std::string::npos) << p.explain;
      ExpectVerifies(p, c.devices);
    }
  }
}

TEST(DynamicSlicePartitionTest, LargeWindowStillGathersTheOperand) {
  // Slicing 15 of 16 rows: the all-reduce would move more than gathering the operand.
  Partitioned p = Partition(R"(
HloModule ds, num_partitions=4
ENTRY main {
  x = f32[16,8] parameter(0), sharding={devices=[4,1]<=[4]}
  i = s32[] parameter(1), sharding={replicated}
  j = s32[] constant(0)
  ROOT s = f32[15,8] dynamic-slice(x, i, j), dynamic_slice_sizes={15,8}, sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
  EXPECT_NE(p.explain.find(": gather"), std::string::npos) << p.explain;
  ExpectVerifies(p, 4);
}

TEST(DynamicSlicePartitionTest, PackedStartIndicesTakeTheGatherPath) {
  // The old form with one s32[rank] start operand (it crashed the masked path once).
  Partitioned p = Partition(R"(
HloModule ds, num_partitions=4
ENTRY main {
  x = f32[64,8] parameter(0), sharding={devices=[4,1]<=[4]}
  i = s32[2] parameter(1), sharding={replicated}
  ROOT s = f32[2,8] dynamic-slice(x, i), dynamic_slice_sizes={2,8}, sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// Memory-placement custom-calls keep the value: they run on the shard and stay in the program.
TEST(PlacementPartitionTest, MoveToHostAndBackRunOnTheShard) {
  Partitioned p = Partition(R"(
HloModule offload, num_partitions=4
ENTRY main {
  x = f32[16,8] parameter(0), sharding={devices=[4,1]<=[4]}
  h = f32[16,8] custom-call(x), custom_call_target="MoveToHost", sharding={devices=[4,1]<=[4]}
  d = f32[16,8] custom-call(h), custom_call_target="MoveToDevice", sharding={devices=[4,1]<=[4]}
  ROOT n = f32[16,8] negate(d), sharding={devices=[4,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_THAT(p.spmd->entry_computation()->root_instruction(),
              op::Negate(AllOf(
                  op::CustomCall(AllOf(op::CustomCall(op::Parameter()),
                                       HasCustomCallTarget("MoveToHost"), HasShape("f32[4,8]"))),
                  HasCustomCallTarget("MoveToDevice"))));
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll], 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// An iota split along its iota dim adds each device's offset to one row, converts that row,
// and broadcasts it (XLA's way): the local work is the row, not the shard.
TEST(IotaPartitionTest, OffsetAndConversionApplyToOneRow) {
  Partitioned p = Partition(R"(
HloModule iota, num_partitions=4
ENTRY main {
  ROOT i = bf16[16,80,92] iota(), iota_dimension=2, sharding={devices=[1,2,2]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_THAT(p.spmd->entry_computation()->root_instruction(),
              AllOf(op::Broadcast(op::Convert(op::Add())), HasShape("bf16[16,40,46]")));
  // At most an add and a convert of the 46-element row (not of the 16x40x46 shard).
  EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).flops, 2 * 46) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// A sharding over some of the devices (0, 1, 4 and 5 of 6): the others hold nothing; the
// per-device tables (iota offsets, dynamic-slice bounds) give them zeros instead of failing,
// and no all-reduce is emitted that would leave them out of every group.
TEST(SubsetShardingPartitionTest, IotaAndDynamicSliceOnFourOfSixDevices) {
  Partitioned p = Partition(R"(
HloModule subset, num_partitions=6
ENTRY main {
  i = s32[1,8,4] iota(), iota_dimension=1, sharding={devices=[1,2,2]0,1,4,5}
  x = s32[1,8,4] parameter(0), sharding={devices=[1,2,2]0,1,4,5}
  a = s32[1,8,4] add(i, x), sharding={devices=[1,2,2]0,1,4,5}
  k = s32[] constant(3)
  z = s32[] constant(0)
  ROOT s = s32[1,2,4] dynamic-slice(a, z, k, z), dynamic_slice_sizes={1,2,4}, sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  ExpectVerifies(p, 6);
  // Split only along the sliced dim, over 4 of the 6 devices: the masked all-reduce would
  // leave devices 2 and 3 out, so the slice gathers.
  Partitioned q = Partition(R"(
HloModule subset, num_partitions=6
ENTRY main {
  x = s32[1,8,4] parameter(0), sharding={devices=[1,4,1]0,1,4,5}
  k = s32[] constant(3)
  z = s32[] constant(0)
  ROOT s = s32[1,2,4] dynamic-slice(x, z, k, z), dynamic_slice_sizes={1,2,4}, sharding={replicated}
})");
  ASSERT_NE(q.spmd, nullptr);
  ExpectVerifies(q, 6);
  // A reduce and a dot whose split dims are summed: the all-reduce of partial results would
  // leave devices 2 and 3 in no group; they gather (reduce) or pick a plan without partial
  // sums (dot) instead.
  for (const std::string& root :
       {std::string("r = f32[4] reduce(x, z), dimensions={0}, to_apply=add"),
        std::string("r = f32[8,4] dot(y, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}")}) {
    SCOPED_TRACE(root);
    Partitioned r = Partition(R"(
HloModule subset, num_partitions=6
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[4,1]0,1,4,5}
  y = f32[8,8] parameter(1), sharding={devices=[1,4]0,1,4,5}
  z = f32[] constant(0)
  ROOT )" + root + R"(, sharding={replicated}
})");
    ASSERT_NE(r.spmd, nullptr);
    ExpectVerifies(r, 6);
  }
}

// An op with no split strategy wanted on one device runs there, on operands held there
// (XLA's DeviceMaximalTupleSort): no collective makes it whole everywhere first.
TEST(SingleDevicePartitionTest, OpWithoutStrategyRunsOnItsDevice) {
  Partitioned p =
      Partition(std::string("HloModule sort, num_partitions=2\n") + kGreaterWithIndex + R"(
ENTRY main {
  x = f32[3] parameter(0), sharding={maximal device=0}
  i = s32[3] iota(), iota_dimension=0, sharding={maximal device=0}
  ROOT s = (f32[3], s32[3]) sort(x, i), dimensions={0}, to_apply=gt,
    sharding={{maximal device=0}, {maximal device=0}}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 0) << p.spmd->ToString();
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

// A cross-replica all-reduce (no channel, no global ids) acts element by element across
// partitions: it runs on each device's tile (XLA's TiledAllReduce).
TEST(SingleDevicePartitionTest, CrossReplicaAllReduceRunsOnTiles) {
  Partitioned p = Partition(R"(
HloModule ar, num_partitions=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}
ENTRY main {
  x = f32[4,3] parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT r = f32[4,3] all-reduce(x), to_apply=sum, replica_groups={}, sharding={devices=[2,1]<=[2]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllReduce(), HasShape("f32[2,3]"))));
  ExpectVerifies(p, 2);
}

}  // namespace

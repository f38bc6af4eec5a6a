// Windowed ops on split window dimensions (spmd/partitioner/halo_exchange.h): convolution and
// reduce-window compute one block of output positions per device from halos exchanged with
// neighbours (collective-permute) or windows sliced from a whole operand; checked for the
// collectives chosen and numerically against the unpartitioned module.
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/ir/hlo_opcode.h"
#include "hlo/testing/hlo_matchers.h"
#include "tests/partition_test_util.h"

namespace {

using hlo::HloOpcode;
using hlo::testing::HasShape;
using hlo::testing::Instructions;
using ::testing::_;
using ::testing::AllOf;
using ::testing::Contains;
namespace op = hlo::testing::op;
using testing_util::Counts;
using testing_util::ExpectVerifies;
using testing_util::Partition;
using testing_util::Partitioned;

// A 1-D convolution f32[4,N,3] x f32[K,3,4] with `window`, input and result split `t` ways
// along the spatial dimension (input replicated when `input_replicated`).
std::string Conv1D(int t, int n, int m, int k, const std::string& window,
                   bool input_replicated = false) {
  const std::string tiled = "{devices=[1," + std::to_string(t) + ",1]<=[" + std::to_string(t) + "]}";
  return "HloModule conv, num_partitions=" + std::to_string(t) + "\nENTRY main {\n" +
         "  x = f32[4," + std::to_string(n) + ",3] parameter(0), sharding=" +
         (input_replicated ? std::string("{replicated}") : tiled) + "\n" +
         "  k = f32[" + std::to_string(k) + ",3,4] parameter(1), sharding={replicated}\n" +
         "  ROOT c = f32[4," + std::to_string(m) + ",4] convolution(x, k), window={" + window +
         "}, dim_labels=b0f_0io->b0f, sharding=" + tiled + "\n}\n";
}

int Collectives(const hlo::HloModule& module) {
  auto counts = Counts(module);
  return counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll] +
         counts[HloOpcode::kAllReduce] + counts[HloOpcode::kCollectivePermute];
}

TEST(WindowPartitionTest, ConvolutionExchangesOneElementWithEachNeighbour) {
  Partitioned p = Partition(Conv1D(4, 16, 16, 3, "size=3 pad=1_1"));
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kCollectivePermute], 2) << p.spmd->ToString();
  EXPECT_EQ(Collectives(*p.spmd), 2) << p.spmd->ToString();
  // Each device's block with a one-element halo from each side, convolved.
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::CollectivePermute(), HasShape("f32[4,1,3]"))).Times(2));
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::Convolution(AllOf(op::Concatenate(), HasShape("f32[4,6,3]")), _),
                             HasShape("f32[4,4,4]"))));
  EXPECT_NE(p.explain.find("halo exchange (1 before + 1 after"), std::string::npos) << p.explain;
  ExpectVerifies(p, 4);
}

TEST(WindowPartitionTest, StridedDilatedAndUnevenConvolutionsVerify) {
  for (const auto& [n, m, k, window] :
       std::vector<std::tuple<int, int, int, std::string>>{
           {16, 8, 3, "size=3 stride=2 pad=1_1"},
           {16, 16, 3, "size=3 pad=2_2 rhs_dilate=2"},
           {15, 15, 3, "size=3 pad=1_1"},
           {15, 13, 3, "size=3"},
           {17, 5, 4, "size=4 stride=3 pad=-1_2"}}) {
    SCOPED_TRACE(window + " on " + std::to_string(n));
    Partitioned p = Partition(Conv1D(4, n, m, k, window));
    ASSERT_NE(p.spmd, nullptr);
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
    EXPECT_GT(counts[HloOpcode::kCollectivePermute], 0) << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
}

// Links without latency: bytes alone decide between halos and a gather (on these few bytes
// three permutes would otherwise lose to one gather; FarHalosLoseToOneGather).
spmd::PartitionerOptions BytesAloneOptions() {
  spmd::PartitionerOptions options;
  for (spmd::MeshLevel& level : options.device_model.levels) level.link.latency_us = 0;
  return options;
}

TEST(WindowPartitionTest, HaloLongerThanAShardTakesTwoHops) {
  // Window 11: 5 elements each side, shards of 4: one whole neighbour shard and one element
  // of the next, on either side. Four hops, but the pieces travel in three rounds: the two
  // one-element pieces of each device share one (BytesAloneOptions: with latency, one gather
  // wins, below).
  Partitioned p = Partition(Conv1D(4, 16, 16, 11, "size=11 pad=5_5"), BytesAloneOptions());
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kCollectivePermute], 3) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
  // With latency, the one gather wins.
  Partitioned latency = Partition(Conv1D(4, 16, 16, 11, "size=11 pad=5_5"));
  ASSERT_NE(latency.spmd, nullptr);
  EXPECT_EQ(Counts(*latency.spmd)[HloOpcode::kCollectivePermute], 0) << latency.explain;
  ExpectVerifies(latency, 4);
}

TEST(WindowPartitionTest, ReplicatedInputIsSlicedWithoutCommunication) {
  Partitioned p = Partition(Conv1D(4, 16, 16, 3, "size=3 pad=1_1", /*input_replicated=*/true));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Collectives(*p.spmd), 0) << p.spmd->ToString();
  // Each device convolves only its block: a quarter of the output positions.
  EXPECT_THAT(
      Instructions(*p.spmd),
      Contains(AllOf(op::Convolution(AllOf(op::DynamicSlice(op::Pad(op::Parameter(), _), _, _, _),
                                           HasShape("f32[4,6,3]")),
                                     _),
                     HasShape("f32[4,4,4]"))));
  ExpectVerifies(p, 4);
}

TEST(WindowPartitionTest, HalosAsLargeAsTheDimensionGatherInstead) {
  // Window 9 on shards of 2: each device reads 4 elements either side, two shards' worth from up
  // to three other devices: 6 elements, as many as gathering.
  Partitioned p = Partition(Conv1D(4, 8, 8, 9, "size=9 pad=4_4"));
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kCollectivePermute], 0) << p.spmd->ToString();
  EXPECT_NE(p.explain.find("are not fewer than the 6 a gather receives"), std::string::npos)
      << p.explain;
  ExpectVerifies(p, 4);
}

TEST(WindowPartitionTest, Convolution2DOverTwoSplitSpatialDims) {
  Partitioned p = Partition(R"(
HloModule conv, num_partitions=8
ENTRY main {
  x = f32[4,16,12,3] parameter(0), sharding={devices=[2,2,2,1]<=[8]}
  k = f32[3,3,3,6] parameter(1), sharding={replicated}
  ROOT c = f32[4,16,12,6] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,
    sharding={devices=[2,2,2,1]<=[8]}
})");
  ASSERT_NE(p.spmd, nullptr);
  // One round per split dim: the two blocks swap their edge rows in one collective-permute.
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kCollectivePermute], 2) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  ExpectVerifies(p, 8);
}

// One spatial dim by halo exchange, the other by local window slices (the input is split only
// along the first): halos must be exchanged before the other dim is cut to each device's
// window, since neighbours along one dim compute different blocks along the other. Found by
// random_partition_test (seed 65).
TEST(WindowPartitionTest, HaloAlongOneDimAndSliceAlongAnother) {
  Partitioned p = Partition(R"(
HloModule conv, num_partitions=8
ENTRY main {
  x = f32[10,2,6,7] parameter(0), sharding={devices=[1,1,2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}
  k = f32[8,2,3,3] parameter(1)
  ROOT c = f32[5,7,3,8] convolution(x, k), window={size=3x3 stride=3x1 pad=2_-1x0_1},
    dim_labels=0f1b_oi01->1b0f, sharding={devices=[2,2,2,1]7,0,3,4,1,6,2,5}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_NE(p.explain.find("window dimension 2 split 2 ways: halo exchange"), std::string::npos)
      << p.explain;
  EXPECT_NE(p.explain.find("window dimension 0 split 2 ways: each device slices"),
            std::string::npos)
      << p.explain;
  ExpectVerifies(p, 8);
}

// Padding positions must hold the reducer's identity (-inf for max), not the zeros a device at
// the edge receives from its missing neighbour.
TEST(WindowPartitionTest, ReduceWindowPadsWithTheIdentity) {
  Partitioned p = Partition(R"(
HloModule rw, num_partitions=4
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY main {
  x = f32[17] parameter(0), sharding={devices=[4]<=[4]}
  init = f32[] constant(-inf)
  ROOT r = f32[9] reduce-window(x, init), window={size=5 stride=2 pad=2_2}, to_apply=max,
    sharding={devices=[4]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_GT(counts[HloOpcode::kCollectivePermute], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kSelect], 1) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// The op's padding adds nothing to a window, so a random (non-identity) init value counts once
// per output: filling the padding with the init value would be wrong.
TEST(WindowPartitionTest, ReduceWindowWithNonIdentityInitCountsItOnce) {
  Partitioned p = Partition(R"(
HloModule rw, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[13,17] parameter(0), sharding={devices=[2,1]<=[2]}
  init = f32[] parameter(1), sharding={replicated}
  ROOT r = f32[7,17] reduce-window(x, init), window={size=3x2 stride=2x1 pad=1_1x0_1},
    to_apply=add, sharding={devices=[2,1]<=[2]}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

// XLA's InceptionV3_4_way_ReduceWindowDilated: a base-dilated reduce-window split 4 ways
// fetches the inputs each block's windows read (halo_exchange.h DilatedWindow) where it
// gathered the operand before; each device keeps its outputs from its own offset. A max with
// a stride verifies too.
TEST(WindowPartitionTest, BaseDilatedReduceWindowFetchesWhatEachBlockReads) {
  const std::string module = R"(
HloModule rw, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY main {
  x = f32[2,5,3] parameter(0), sharding={devices=[1,4,1]<=[4]}
  zero = f32[] constant(0)
  sum = f32[2,17,3] reduce-window(x, zero), window={size=1x5x1 pad=0_0x4_4x0_0 lhs_dilate=1x3x1},
    to_apply=add, sharding={devices=[1,4,1]<=[4]}
  y = f32[2,10,3] parameter(1), sharding={devices=[1,4,1]<=[4]}
  ninf = f32[] constant(-inf)
  m = f32[2,9,3] reduce-window(y, ninf), window={size=1x3x1 stride=1x2x1 pad=0_0x0_1x0_0
    lhs_dilate=1x2x1}, to_apply=max, sharding={devices=[1,4,1]<=[4]}
  ROOT t = (f32[2,17,3], f32[2,9,3]) tuple(sum, m),
    sharding={{devices=[1,4,1]<=[4]}, {devices=[1,4,1]<=[4]}}
})";
  Partitioned p = Partition(module);
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
  EXPECT_EQ(p.explain.find("computed whole"), std::string::npos) << p.explain;
  ExpectVerifies(p, 4);
}

TEST(WindowPartitionTest, ReduceWindowKeepsTrivialWindowDimsAndSplitsOthers) {
  Partitioned p = Partition(R"(
HloModule rw, num_partitions=8
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY main {
  x = f32[6,16,12] parameter(0), sharding={devices=[2,2,2]<=[8]}
  init = f32[] constant(-inf)
  ROOT r = f32[6,8,12] reduce-window(x, init), window={size=1x3x3 stride=1x2x1 pad=0_0x1_1x1_1},
    to_apply=max, sharding={devices=[2,2,2]<=[8]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllReduce], 0)
      << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::ReduceWindow(), HasShape("f32[3,4,6]"))));
  ExpectVerifies(p, 8);
}

// Slice and pad are windows of size 1: shard boundaries move by the slice's start or the
// pad's low edge, and each device fetches only the rows that cross them.
// XLA's StridedSlice: a strided slice of a split dim wanted whole. Sliced in the operand's
// tiling (each device's rows lie in its own shard) and the small result gathered: 80 bytes,
// where gathering the operand first receives 468.
TEST(WindowPartitionTest, SliceWantedWholeIsSlicedSplitAndGathered) {
  Partitioned p = Partition(R"(
HloModule slice, num_partitions=2
ENTRY main {
  x = f32[17,13] parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT s = f32[7,5] slice(x), slice={[1:15:2], [5:10:1]}, sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 80) << p.explain << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

// The edge columns a reflect pad mirrors (jnp.pad(mode="reflect")), wanted whole from an
// operand split along them: each device slices the window from its own shard, zeroes what it
// does not hold and one all-reduce of the window assembles it (masked_slice.h), instead of
// gathering 2 MiB of columns for 3 of them; strided and uneven windows too.
TEST(WindowPartitionTest, FewColumnsWantedWholeAreSlicedMaskedAndSummed) {
  Partitioned p = Partition(R"(
HloModule slice, num_partitions=8
ENTRY main {
  x = f32[1024,2048] parameter(0), sharding={devices=[2,4]<=[8]}
  s = f32[1024,3] slice(x), slice={[0:1024], [1:4]}, sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT r = f32[1024,3] reverse(s), dimensions={1}, sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.explain << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::AllReduce(), HasShape("f32[512,3]"))).Times(1));
  // A ring all-reduce of the 6 KiB window over 4 devices, not 1.5 MiB per device gathered.
  EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 2 * 6144 * 3 / 4) << p.explain;
  ExpectVerifies(p, 8);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[3:1990:97]", "21"}, {"[1020:1030:1]", "10"}, {"[0:1999:1000]", "2"}};
  for (const auto& [slice, width] : cases) {
    Partitioned q = Partition(
        "HloModule slice, num_partitions=4\nENTRY main {\n"
        "  x = f32[640,1999] parameter(0), sharding={devices=[1,4]<=[4]}\n"
        "  ROOT s = f32[640," +
        width + "] slice(x), slice={[0:640], " + slice + "}, sharding={replicated}\n}\n");
    ASSERT_NE(q.spmd, nullptr) << slice;
    EXPECT_EQ(Counts(*q.spmd)[HloOpcode::kAllGather], 0) << slice << q.explain;
    ExpectVerifies(q, 4);
  }
}

TEST(WindowPartitionTest, SliceOnASplitDimFetchesOnlyTheShiftedRows) {
  Partitioned p = Partition(R"(
HloModule slice, num_partitions=4
ENTRY main {
  x = f32[16,6] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT s = f32[10,6] slice(x), slice={[3:13], [0:6]}, sharding={devices=[4,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kCollectivePermute], 1) << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::CollectivePermute(), HasShape("f32[2,6]"))).Times(1));
  ExpectVerifies(p, 4);
}

// Slices whose windows lie wholly beyond the devices' own shards (XLA's
// Large{Left,Right}PadOnSliceHaloExchange): the shards between are skipped; only the span of
// positions the windows read, relative to each shard, travels. Rows of f32[*,3] (12 bytes).
TEST(WindowPartitionTest, FarWindowsSkipTheShardsBetween) {
  struct Case {
    std::string body;
    int64_t max_bytes;  // The halo from the shard's end would receive 46, 46 and 44 rows.
  };
  for (const Case& c : {Case{"x = f32[64,3] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                             "ROOT s = f32[1,3] slice(x), slice={[61:62], [0:3]}, "
                             "sharding={devices=[4,1]<=[4]}",
                             1 * 12},
                        Case{"x = f32[64,3] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                             "ROOT s = f32[2,3] slice(x), slice={[61:63], [0:3]}, "
                             "sharding={devices=[4,1]<=[4]}",
                             16 * 12},
                        Case{"x = f32[62,3] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                             "ROOT s = f32[3,3] slice(x), slice={[59:62], [0:3]}, "
                             "sharding={devices=[4,1]<=[4]}",
                             31 * 12}}) {
    SCOPED_TRACE(c.body);
    Partitioned p = Partition("HloModule m, num_partitions=4\nENTRY main {\n" + c.body + "\n}\n",
                              BytesAloneOptions());
    ASSERT_NE(p.spmd, nullptr);
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllReduce], 0)
        << p.spmd->ToString();
    EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, c.max_bytes) << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
}

// XLA's SliceTo2 and SliceToMiddle2: a slice much smaller than a shard. Each device fetches
// only the elements its window reads from the shard holding them (one element from device 0
// for the second output), not the span back to its own shard (127 elements). The pad cases
// put windows over positions outside the array (the pad value, masked in) and over uneven
// last shards.
TEST(WindowPartitionTest, SmallSlicesFetchOnlyTheirWindows) {
  struct Case {
    std::string body;
    int64_t max_bytes;
  };
  for (const Case& c : {Case{"x = f32[512] parameter(0), sharding={devices=[4]<=[4]}\n"
                             "ROOT s = f32[2] slice(x), slice={[0:2]}, sharding={devices=[4]<=[4]}",
                             4},
                        Case{"x = f32[512] parameter(0), sharding={devices=[4]<=[4]}\n"
                             "ROOT s = f32[2] slice(x), slice={[255:257]}, "
                             "sharding={devices=[4]<=[4]}",
                             8},
                        Case{"x = f32[61,3] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                             "c = f32[] constant(7)\n"
                             "ROOT p = f32[6,3] pad(x, c), padding=-57_2x0_0, "
                             "sharding={devices=[4,1]<=[4]}",
                             6 * 12},
                        Case{"x = f32[61,3] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                             "c = f32[] constant(0)\n"
                             "ROOT p = f32[7,3] pad(x, c), padding=-1_-53x0_0, "
                             "sharding={devices=[4,1]<=[4]}",
                             7 * 12}}) {
    SCOPED_TRACE(c.body);
    Partitioned p = Partition("HloModule m, num_partitions=4\nENTRY main {\n" + c.body + "\n}\n",
                              BytesAloneOptions());
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, c.max_bytes)
        << p.explain << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
}

// Fetched window pieces are written into a zero buffer around the window. The slack it needs
// is what real pieces reach past the window plus room for the pieces a device writes without
// receiving anything (one dynamic-update-slice serves every device): those go where later
// pieces overwrite them or zeros land on zeros, so the buffer is barely wider than the window
// (here 30 columns, where a slack of one round's width on each side took 45). A device whose
// own piece is narrower than its round's (the last shard's padding: 439 of 448 columns valid,
// where the others' own pieces are 447 wide) writes its whole window from its own shard before
// the real pieces land, and the others repeat their own piece in its round, so the buffer is
// not a whole round wider (XLA's DynamicUpdateSliceLargeDUSReplication: 900 columns for a
// 447-column window).
TEST(WindowPartitionTest, FetchedPiecesNeedLittleSlack) {
  for (const auto& [tiles, n, start, max_width] :
       {std::tuple<int, int, int, int>{4, 62, 2, 2 * 16}, {16, 7159, 7, 447 + 16}}) {
    const std::string t = std::to_string(tiles);
    Partitioned p = Partition(
        "HloModule s, num_partitions=" + t + "\nENTRY main {\n  x = f32[3," + std::to_string(n) +
        "] parameter(0), sharding={devices=[1," + t + "]<=[" + t + "]}\n  ROOT s = f32[3," +
        std::to_string(n - start) + "] slice(x), slice={[0:3], [" + std::to_string(start) + ":" +
        std::to_string(n) + "]}, sharding={devices=[1," + t + "]<=[" + t + "]}\n}\n");
    ASSERT_NE(p.spmd, nullptr);
    for (const auto& instr : p.spmd->entry_computation()->instructions()) {
      if (instr->shape().IsArray() && instr->shape().rank() == 2) {
        EXPECT_LE(instr->shape().dimensions(1), max_width) << instr->ToString();
      }
    }
    ExpectVerifies(p, tiles);
  }
}

// XLA's SliceToHalfSize and PadToDoubleSize: each device's window reads one or two elements
// from shards up to 8 hops away, but no device sends or receives more than twice, so the pieces
// travel in two collective-permutes (one per round), not one per hop.
TEST(WindowPartitionTest, WindowPiecesSharePermutesAcrossHops) {
  for (const std::string& body :
       {std::string("x = f32[32] parameter(0), sharding={devices=[16]<=[16]}\n"
                    "ROOT s = f32[16] slice(x), slice={[0:16]}, sharding={devices=[16]<=[16]}"),
        std::string("x = f32[16] parameter(0), sharding={devices=[16]<=[16]}\n"
                    "c = f32[] constant(-1)\n"
                    "ROOT p = f32[32] pad(x, c), padding=0_16, sharding={devices=[16]<=[16]}")}) {
    SCOPED_TRACE(body);
    Partitioned p = Partition("HloModule m, num_partitions=16\nENTRY main {\n" + body + "\n}\n");
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_LE(Counts(*p.spmd)[HloOpcode::kCollectivePermute], 2) << p.explain << p.spmd->ToString();
    EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 8) << p.spmd->ToString();
    ExpectVerifies(p, 16);
  }
}

// XLA's MergedPadThenSlice*: a slice of an edge pad, through copies, is one pad of the pad's
// operand (merge_windows.h): one collective-permute where the pad and the slice each took
// their own; a pad or copy with another user is left alone.
TEST(WindowPartitionTest, SliceOfAPadIsOnePad) {
  const std::string pad =
      "x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}\n"
      "v = f32[] constant(2)\n"
      "p = f32[10,4] pad(x, v), padding=2_0x0_0, sharding={devices=[4,1]<=[4]}\n"
      "c = f32[10,4] copy(p), sharding={devices=[4,1]<=[4]}\n";
  Partitioned merged = Partition(
      "HloModule m, num_partitions=4\nENTRY main {\n" + pad +
      "ROOT s = f32[8,4] slice(c), slice={[0:8], [0:4]}, sharding={devices=[4,1]<=[4]}\n}\n");
  ASSERT_NE(merged.spmd, nullptr);
  EXPECT_EQ(Counts(*merged.spmd)[HloOpcode::kCollectivePermute], 1)
      << merged.explain << merged.spmd->ToString();
  EXPECT_NE(merged.explain.find("%s: a slice of a pad, merged"), std::string::npos)
      << merged.explain;
  ExpectVerifies(merged, 4);
  Partitioned kept =
      Partition("HloModule m, num_partitions=4\nENTRY main {\n" + pad +
                "s = f32[8,4] slice(c), slice={[0:8], [0:4]}, sharding={devices=[4,1]<=[4]}\n"
                "ROOT t = (f32[8,4], f32[10,4]) tuple(s, p)\n}\n");
  ASSERT_NE(kept.spmd, nullptr);
  EXPECT_EQ(kept.explain.find("merged"), std::string::npos) << kept.explain;
  ExpectVerifies(kept, 4);
  // A slice of the padding alone: the merged pad cuts its whole operand away (padding 2_-8).
  Partitioned padding_only = Partition(
      "HloModule m, num_partitions=4\nENTRY main {\n" + pad +
      "ROOT s = f32[2,4] slice(c), slice={[0:2], [0:4]}, sharding={devices=[4,1]<=[4]}\n}\n");
  ASSERT_NE(padding_only.spmd, nullptr);
  ExpectVerifies(padding_only, 4);
  // A slice that orders another instruction stays (its successor points at it).
  Partitioned ordered = Partition(
      "HloModule m, num_partitions=4\nENTRY main {\n" + pad +
      "s = f32[8,4] slice(c), slice={[0:8], [0:4]}, sharding={devices=[4,1]<=[4]}\n"
      "ROOT n = f32[8,4] negate(x), control-predecessors={s}, sharding={devices=[4,1]<=[4]}\n}\n");
  ASSERT_NE(ordered.spmd, nullptr);
  EXPECT_EQ(ordered.explain.find("merged"), std::string::npos) << ordered.explain;
}

// Concatenates of windows of one value (composed_concat.h): a rotation (XLA's
// MergedSliceThenConcatRotateRight and its custom-call form), a circular pad whose wrapped
// edges are negated and converted, slices of a pad with a nonzero value, and a rotation with
// sharding annotations between its slices and the concatenate, each assembled from pieces of
// the source in one round of collective-permutes.
TEST(WindowPartitionTest, ConcatenatedWindowsOfOneValueShareOnePermute) {
  const std::string x12 = "x = f32[12,3] parameter(0), sharding={devices=[4,1]<=[4]}\n";
  const std::string x6 = "x = f32[6,3] parameter(0), sharding={devices=[2,1]<=[2]}\n";
  const std::pair<int, std::string> cases[] = {
      {4, x12 + "a = f32[2,3] slice(x), slice={[10:12], [0:3]}, sharding={devices=[4,1]<=[4]}\n"
                "b = f32[10,3] slice(x), slice={[0:10], [0:3]}, sharding={devices=[4,1]<=[4]}\n"
                "ROOT r = f32[12,3] concatenate(a, b), dimensions={0}, "
                "sharding={devices=[4,1]<=[4]}"},
      {4, x12 + "ROOT r = f32[12,3] custom-call(x), "
                "custom_call_target=\"_SPMDInternalOp_RotateRight\", "
                "backend_config=\"dimension=0,amount=2\", sharding={devices=[4,1]<=[4]}"},
      {2, x6 + "a = f32[1,3] slice(x), slice={[5:6], [0:3]}, sharding={devices=[2,1]<=[2]}\n"
               "na = bf16[1,3] convert(a), sharding={devices=[2,1]<=[2]}\n"
               "fa = f32[1,3] convert(na), sharding={devices=[2,1]<=[2]}\n"
               "b = f32[1,3] slice(x), slice={[0:1], [0:3]}, sharding={devices=[2,1]<=[2]}\n"
               "nb = f32[1,3] negate(b), sharding={devices=[2,1]<=[2]}\n"
               "ROOT r = f32[8,3] concatenate(fa, x, nb), dimensions={0}, "
               "sharding={devices=[2,1]<=[2]}"},
      {4, x12 + "v = f32[] constant(3)\n"
                "p = f32[14,3] pad(x, v), padding=1_1x0_0, sharding={devices=[4,1]<=[4]}\n"
                "a = f32[12,3] slice(p), slice={[2:14], [0:3]}, sharding={devices=[4,1]<=[4]}\n"
                "b = f32[2,3] slice(p), slice={[0:2], [0:3]}, sharding={devices=[4,1]<=[4]}\n"
                "ROOT r = f32[14,3] concatenate(a, b), dimensions={0}, "
                "sharding={devices=[4,1]<=[4]}"},
      // jnp.roll as JAX exports it: a sharding annotation between each slice and the
      // concatenate (it took two rounds of halos and two of concatenate windows).
      {4, x12 + "a = f32[2,3] slice(x), slice={[10:12], [0:3]}, sharding={devices=[4,1]<=[4]}\n"
                "ah = f32[2,3] custom-call(a), custom_call_target=\"Sharding\", "
                "sharding={devices=[4,1]<=[4]}, backend_config=\"unspecified_dims=[0,1]\"\n"
                "b = f32[10,3] slice(x), slice={[0:10], [0:3]}, sharding={devices=[4,1]<=[4]}\n"
                "bh = f32[10,3] custom-call(b), custom_call_target=\"Sharding\", "
                "sharding={devices=[4,1]<=[4]}, backend_config=\"unspecified_dims=[0,1]\"\n"
                "ROOT r = f32[12,3] concatenate(ah, bh), dimensions={0}, "
                "sharding={devices=[4,1]<=[4]}"}};
  for (const auto& [devices, body] : cases) {
    SCOPED_TRACE(body);
    Partitioned p = Partition("HloModule m, num_partitions=" + std::to_string(devices) +
                              "\nENTRY main {\n" + body + "\n}\n");
    ASSERT_NE(p.spmd, nullptr);
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kCollectivePermute], 1) << p.explain << p.spmd->ToString();
    EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
    ExpectVerifies(p, devices);
  }
}

// XLA's LargeEdgePadAlongCrossPartitionDimension: the first output block holds all 257 input
// columns, from the three other shards; three collective-permutes lose to one all-gather of the
// dimension, which receives about as much.
TEST(WindowPartitionTest, FarHalosLoseToOneGather) {
  Partitioned p = Partition(R"(
HloModule m, num_partitions=8
ENTRY main {
  x = f32[14,257] parameter(0), sharding={devices=[2,4]<=[8]}
  c = f32[] constant(0)
  ROOT p = f32[14,2257] pad(x, c), padding=0_0x0_2000, sharding={devices=[2,4]<=[8]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kCollectivePermute], 0) << p.explain << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllGather], 1) << p.spmd->ToString();
  EXPECT_NE(p.explain.find("take longer than one gather"), std::string::npos) << p.explain;
  ExpectVerifies(p, 8);
}

TEST(WindowPartitionTest, StridedSlicesAndEdgePadsVerify) {
  for (const std::string& body : {
           std::string("x = f32[17,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                       "ROOT s = f32[5,6] slice(x), slice={[2:17:3], [0:6]}, "
                       "sharding={devices=[4,1]<=[4]}"),
           std::string("x = f32[16,12] parameter(0), sharding={devices=[4,2]<=[8]}\n"
                       "ROOT s = f32[13,5] slice(x), slice={[1:14], [2:12:2]}, "
                       "sharding={devices=[4,2]<=[8]}"),
           std::string("x = f32[14,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                       "c = f32[] constant(7)\n"
                       "ROOT p = f32[17,6] pad(x, c), padding=2_1x0_0, "
                       "sharding={devices=[4,1]<=[4]}"),
           std::string("x = f32[16,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                       "c = f32[] constant(7)\n"
                       "ROOT p = f32[15,6] pad(x, c), padding=-3_2x0_0, "
                       "sharding={devices=[4,1]<=[4]}"),
           std::string("x = f32[13,6] parameter(0), sharding={devices=[4,2]<=[8]}\n"
                       "c = f32[] parameter(1), sharding={replicated}\n"
                       "ROOT p = f32[16,9] pad(x, c), padding=1_2x2_1, "
                       "sharding={devices=[4,2]<=[8]}")}) {
    SCOPED_TRACE(body);
    const int devices = body.find("<=[8]") != std::string::npos ? 8 : 4;
    Partitioned p = Partition("HloModule m, num_partitions=" + std::to_string(devices) +
                              "\nENTRY main {\n" + body + "\n}\n");
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_GT(Counts(*p.spmd)[HloOpcode::kCollectivePermute], 0) << p.spmd->ToString();
    ExpectVerifies(p, devices);
  }
}

// XLA's LargeEdgePadAlongCrossPartitionDimension: a zero pad of an uneven split dim whose
// windows never read the last shard's padding needs no mask (the fetched rows stop at the
// array's end; the rest is the pad's zeros). A window over that padding still masks it: the
// operand is x + 1, so padding is never zero.
TEST(WindowPartitionTest, ZeroEdgePadMasksOnlyWindowsOverShardPadding) {
  for (const auto& [high, masked] : {std::pair<int, bool>{2000, false}, {3, true}}) {
    SCOPED_TRACE(high);
    const std::string out = std::to_string(257 + high);
    Partitioned p = Partition(
        "HloModule m, num_partitions=8\nENTRY main {\n"
        "  x = f32[14,257] parameter(0), sharding={devices=[2,4]<=[8]}\n"
        "  one = f32[] constant(1)\n"
        "  ones = f32[14,257] broadcast(one), dimensions={}, sharding={devices=[2,4]<=[8]}\n"
        "  y = f32[14,257] add(x, ones), sharding={devices=[2,4]<=[8]}\n"
        "  zero = f32[] constant(0)\n"
        "  ROOT p = f32[14," + out + "] pad(y, zero), padding=0_0x0_" + std::to_string(high) +
        ", sharding={devices=[2,4]<=[8]}\n}\n");
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kSelect] > 0, masked) << p.spmd->ToString();
    ExpectVerifies(p, 8);
  }
}

// An interior pad on a split dim whose shards do not line up with the result's blocks (an
// average-pool gradient's pad(g, 1_1_1) before a size-2 window): each block fetches the inputs
// it holds (halo_exchange.h DilatedWindow), pads them and cuts its positions from its offset.
// It was gathered whole. Negative edges, uneven shards, a non-zero padding value and two split
// dims verify too.
TEST(WindowPartitionTest, InteriorPadFetchesTheInputsEachBlockHolds) {
  Partitioned p = Partition(R"(
HloModule pad, num_partitions=4
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}
  c = f32[] constant(7)
  ROOT p = f32[17,6] pad(x, c), padding=1_1_1x0_0, sharding={devices=[4,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll], 0) << p.spmd->ToString();
  EXPECT_EQ(p.explain.find("fallback"), std::string::npos) << p.explain;
  ExpectVerifies(p, 4);
  for (const auto& [x, padding, out, sharding] :
       std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
           {"f32[32,6]", "1_1_1x0_0", "f32[65,6]", "{devices=[4,1]<=[4]}"},
           {"f32[30,6]", "2_3_2x0_0", "f32[93,6]", "{devices=[4,1]<=[4]}"},
           {"f32[31,6]", "-2_-1_1x0_0", "f32[58,6]", "{devices=[4,1]<=[4]}"},
           {"f32[9,6]", "0_0_3x1_1_1", "f32[33,13]", "{devices=[2,2]<=[4]}"},
           {"f32[5,6]", "3_0_1x0_0", "f32[12,6]", "{devices=[4,1]<=[4]}"},
       }) {
    SCOPED_TRACE(x + " " + padding + " " + sharding);
    Partitioned q = Partition(
        "HloModule pad, num_partitions=4\nENTRY main {\n  x = " + x +
        " parameter(0), sharding=" + sharding + "\n  c = f32[] constant(7)\n  ROOT p = " + out +
        " pad(x, c), padding=" + padding + ", sharding=" + sharding + "\n}\n");
    ASSERT_NE(q.spmd, nullptr);
    EXPECT_EQ(Counts(*q.spmd)[HloOpcode::kAllGather], 0) << q.spmd->ToString();
    ExpectVerifies(q, 4);
  }
}

// An interior pad whose edges add up to its interior (lo + hi = interior, as the gradient of a
// strided slice x[s::k] writes it: lo = s, hi = k-1-s) maps each shard of N/t elements onto
// exactly one block of N*k/t: every device pads its own shard, nothing moves (XLA's too; it was
// gathered); the same base-dilated window as any interior pad, here each block's own shard.
TEST(WindowPartitionTest, InteriorPadOfAlignedShardsStaysLocal) {
  for (const char* padding : {"0_1_1", "1_0_1", "1_1_2", "0_2_2"}) {
    SCOPED_TRACE(padding);
    const std::string text = std::string(R"(
HloModule pad, num_partitions=4
ENTRY main {
  x = f32[6,8] parameter(0), sharding={devices=[1,4]<=[4]}
  c = f32[] constant(7)
  ROOT p = pad(x, c), padding=0_0x)") +
                             padding + ", sharding={devices=[1,4]<=[4]}\n}\n";
    // The result's width: 8 + (8 - 1) * interior + lo + hi = 8 * (interior + 1).
    const int interior = padding[4] - '0';
    std::string shaped = text;
    shaped.replace(shaped.find("pad(x"), 0, "f32[6," + std::to_string(8 * (interior + 1)) + "] ");
    Partitioned p = Partition(shaped);
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_EQ(Collectives(*p.spmd), 0) << p.spmd->ToString() << p.explain;
    EXPECT_EQ(p.explain.find("fallback"), std::string::npos) << p.explain;
    ExpectVerifies(p, 4);
  }
}

// Select-and-scatter (a max-pool's gradient) split only along dims whose window is trivial:
// each device scatters its own shard, nothing moves. Channels split unevenly (6 over 4).
std::string SelectAndScatter(const std::string& sharding) {
  return R"(
HloModule sas, num_partitions=8
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,16,16,6] parameter(0), sharding={devices=[2,1,1,4]<=[8]}
  s = f32[8,8,8,6] parameter(1), sharding={devices=[2,1,1,4]<=[8]}
  init = f32[] constant(0.5)
  ROOT r = f32[8,16,16,6] select-and-scatter(x, s, init), window={size=1x2x2x1 stride=1x2x2x1},
    select=ge, scatter=add, sharding=)" +
         sharding + "\n}\n";
}

TEST(WindowPartitionTest, SelectAndScatterRunsLocallyAlongTrivialWindowDims) {
  Partitioned p = Partition(SelectAndScatter("{devices=[2,1,1,4]<=[8]}"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 0) << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(hlo::testing::HasOpcode(HloOpcode::kSelectAndScatter),
                             HasShape("f32[4,16,16,2]"))));
  ExpectVerifies(p, 8);
}

// Windows of size 2, stride 2 over shards of 4: every window stays inside a shard, so each
// device selects and scatters on its own shard (tests/select_and_scatter_partition_test.cc has
// the cases that fall back).
TEST(WindowPartitionTest, SelectAndScatterSplitAlongStridedWindowsRunsLocally) {
  Partitioned p = Partition(SelectAndScatter("{devices=[2,4,1,1]<=[8]}"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(p.explain.find("fallback"), std::string::npos) << p.explain;
  ExpectVerifies(p, 8);
}

// A weight-gradient convolution (JAX's transpose of a conv): it contracts over the
// activations' batch dim, split 2 ways, while the result is split 4 ways along its output
// features and replicated over those 2. Each device convolves its own batch shard and an
// all-reduce over the 2 sums the partial results (XLA's choice) instead of gathering both
// operands. `batch` 7 splits unevenly, `out` 6 too.
std::string WeightGradient(int batch, int in, int out, const std::string& x_sharding,
                           const std::string& g_sharding = "{devices=[2,1,1,4]<=[8]}") {
  const std::string b = std::to_string(batch);
  return "HloModule wgrad, num_partitions=8\nENTRY main {\n  x = f32[" + b + ",8,8," +
         std::to_string(in) + "] parameter(0), sharding=" + x_sharding + "\n  g = f32[" + b +
         ",8,8," + std::to_string(out) + "] parameter(1), sharding=" + g_sharding +
         "\n  ROOT c = f32[3,3," + std::to_string(in) + "," + std::to_string(out) +
         "] convolution(x, g), window={size=8x8 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, "
         "sharding={devices=[1,1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}\n}\n";
}

TEST(WindowPartitionTest, WeightGradientConvolutionSumsPartialResults) {
  Partitioned p =
      Partition(WeightGradient(8, 4, 16, "{devices=[2,1,1,1,4]<=[8] last_tile_dim_replicate}"));
  ASSERT_NE(p.spmd, nullptr);
  // One all-reduce of the f32[3,3,4,4] block over pairs: 576 bytes (gathering: 28672).
  EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 576) << p.spmd->ToString();
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
  EXPECT_NE(p.explain.find(": contracting split"), std::string::npos) << p.explain;
  ExpectVerifies(p, 8);
}

TEST(WindowPartitionTest, UnevenWeightGradientConvolutionsVerify) {
  for (const std::string& x :
       {std::string("{devices=[2,1,1,1,4]<=[8] last_tile_dim_replicate}"),
        std::string("{devices=[2,1,1,4]<=[8]}"), std::string("{replicated}")}) {
    SCOPED_TRACE(x);
    Partitioned p = Partition(WeightGradient(7, 4, 6, x));
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
    ExpectVerifies(p, 8);
  }
}

TEST(WindowPartitionTest, ConvolutionKeepsOutputTilesWhenTheyMoveLess) {
  // The gradient already split along output features with its batch whole, the activations
  // whole: the output-tile strategy moves nothing, summing partial results would.
  Partitioned p = Partition(WeightGradient(
      8, 4, 16, "{replicated}", "{devices=[1,1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 0) << p.spmd->ToString();
  EXPECT_NE(p.explain.find(": output tiles"), std::string::npos) << p.explain;
  ExpectVerifies(p, 8);
}

// Zero-size dims are valid HLO: resharding, concatenating, reversing and padding empty arrays
// and a dot contracting an empty dim partition and verify (the reshard planner divided by the
// zero dim; found by random_partition_test).
TEST(WindowPartitionTest, ZeroSizeArrays) {
  Partitioned p = Partition(R"(
HloModule empty, num_partitions=4
ENTRY main {
  a = f32[0,2,2] parameter(0), sharding={devices=[2,2,1]<=[4]}
  b = f32[3,2,2] parameter(1), sharding={devices=[4,1,1]<=[4]}
  c = f32[3,2,2] concatenate(a, b), dimensions={0}, sharding={devices=[2,1,2]3,1,0,2}
  x = f32[4,0] parameter(2), sharding={devices=[2,2]<=[4]}
  y = f32[0,3] parameter(3), sharding={devices=[2,2]<=[4]}
  d = f32[4,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0},
    sharding={devices=[4,1]<=[4]}
  r = f32[0,2,2] reverse(a), dimensions={0}, sharding={devices=[4,1,1]<=[4]}
  one = f32[] constant(1)
  p = f32[5,2,2] pad(r, one), padding=2_3x0_0x0_0, sharding={devices=[4,1,1]<=[4]}
  e = f32[0,2,2] negate(a), sharding={replicated}
  ROOT t = (f32[3,2,2], f32[4,3], f32[5,2,2], f32[0,2,2]) tuple(c, d, p, e)
})");
  ASSERT_NE(p.spmd, nullptr);
  ExpectVerifies(p, 4);
}

// A cumulative max along a split dim, wanted whole along the other dim its operand splits
// (jax.lax.cummax with out_shardings P(None, 'model') on a ('data', 'model') operand): scanned
// with the data dim still split -- only the scanned dim gathered -- and the result gathered
// after, 2048 bytes a device, not the operand gathered along both dims first (3584).
TEST(ReduceWindowPartitionTest, ScanRunsInTheOperandsTilingWhenTheResultMovesLess) {
  Partitioned p = Partition(R"(HloModule cummax, num_partitions=8
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY main {
  x = f32[16,64] parameter(0), sharding={devices=[2,4]<=[8]}
  init = f32[] constant(-inf)
  ROOT r = f32[16,64] reduce-window(x, init), window={size=1x64 pad=0_0x63_0}, to_apply=max,
    sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 2048) << p.explain << p.spmd->ToString();
  EXPECT_NE(p.explain.find("%r: computed in its operand's tiling"), std::string::npos) << p.explain;
  ExpectVerifies(p, 8);
}

}  // namespace

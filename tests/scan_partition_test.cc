// Scan (spmd/partitioner/scan_handler.cc): a slice-parallel body runs on shards of its slices
// (nothing moves inside the loop), a split scan dim of an associative body runs as a prefix over
// the devices' blocks (only the block totals move), a scan dim whose body is not associative has
// its tiles moved to another dim, and a body that mixes a slice's positions computes whole (a
// counted fallback). Checked for the collectives chosen and numerically against the
// unpartitioned module on random inputs: forward and reverse, a 2-D mesh, several carries
// of a non-commutative recurrence (h = a * h + b, whose blocks compose only in order), uneven
// shards, outputs other than the carries, pass-through and scalar carries.
#include <string>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_opcode.h"
#include "hlo/testing/hlo_matchers.h"
#include "tests/partition_test_util.h"

namespace {

using hlo::HloOpcode;
using hlo::testing::HasShape;
using hlo::testing::Instructions;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
namespace op = hlo::testing::op;
using testing_util::Counts;
using testing_util::ExpectVerifies;
using testing_util::Partition;
using testing_util::Partitioned;

// A cumulative sum of f32[rows,len] along dim 1 from a f32[rows] init; the input and the
// result are split by `tiles` (e.g. "1,8"), the carry by `carry` (e.g. "{replicated}").
std::string CumSum(int devices, int rows, int len, const std::string& tiles,
                   const std::string& carry, bool reverse = false) {
  const std::string r = std::to_string(rows);
  const std::string x = "f32[" + r + "," + std::to_string(len) + "]";
  const std::string split = "{devices=[" + tiles + "]<=[" + std::to_string(devices) + "]}";
  return "HloModule cumsum, num_partitions=" + std::to_string(devices) + "\nadd {\n  p0 = f32[" +
         r + "] parameter(0)\n  p1 = f32[" + r + "] parameter(1)\n  s = f32[" + r +
         "] add(p0, p1)\n  ROOT t = (f32[" + r + "], f32[" + r +
         "]) tuple(s, s)\n}\nENTRY main {\n  x = " + x + " parameter(0), sharding=" + split +
         "\n  init = f32[" + r + "] parameter(1), sharding=" + carry + "\n  ROOT s = (" + x +
         ", f32[" + r + "]) scan(x, init), dimensions={1}, num_carries=1, is_associative=true" +
         (reverse ? ", is_reverse=true" : "") + ", to_apply=add, sharding={" + split + ", " +
         carry + "}\n}\n";
}

bool Chose(const Partitioned& p, const std::string& plan) {
  return p.explain.find("chose " + plan) != std::string::npos;
}

int Collectives(const Partitioned& p) {
  auto counts = Counts(*p.spmd);
  return counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllReduce] +
         counts[HloOpcode::kAllToAll] + counts[HloOpcode::kCollectivePermute] +
         counts[HloOpcode::kReduceScatter];
}

TEST(ScanPartitionTest, NonScanDimSplitRunsOnShards) {
  Partitioned p = Partition(CumSum(8, 128, 64, "8,1", "{devices=[8]<=[8]}"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Collectives(p), 0) << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::Scan(), HasShape("(f32[16,64], f32[16])"))));
  EXPECT_TRUE(Chose(p, "local")) << p.explain;
  ExpectVerifies(p, 8);
}

TEST(ScanPartitionTest, ReplicatedCarryIsSplitInsideAndGatheredOnce) {
  // The carry is wanted whole, but the body adds it to split slices: it runs split, and only
  // the final carry is gathered (f32[128], not the input).
  Partitioned p = Partition(CumSum(8, 128, 64, "8,1", "{replicated}"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 1) << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllGather(), HasShape("f32[128]"))));
  ExpectVerifies(p, 8);
}

TEST(ScanPartitionTest, UnevenShardsRunOnPaddedSlices) {
  Partitioned p = Partition(CumSum(8, 13, 16, "8,1", "{devices=[8]<=[8]}"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Collectives(p), 0) << p.spmd->ToString();
  ExpectVerifies(p, 8);
}

TEST(ScanPartitionTest, SplitScanDimRunsAPrefixOverBlocks) {
  for (bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "reverse" : "forward");
    Partitioned p = Partition(CumSum(8, 32, 256, "1,8", "{replicated}", reverse));
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_TRUE(Chose(p, "prefix")) << p.explain;
    // Only the 8 block totals move: one all-gather of f32[8,32].
    EXPECT_EQ(Collectives(p), 1) << p.spmd->ToString();
    EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllGather(), HasShape("f32[8,32]"))));
    ExpectVerifies(p, 8);
  }
}

TEST(ScanPartitionTest, TilingOfSomeDevicesRunsNoPrefix) {
  // The scan dim split over 8 of 16 devices: the totals' all-gather would leave devices 8-15 in
  // no group (an invalid collective; partition fuzzer, seed 2526).
  std::string text = CumSum(8, 32, 256, "1,8", "{replicated}");
  text.replace(text.find("num_partitions=8"), 16, "num_partitions=16");
  Partitioned p = Partition(text);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_FALSE(Chose(p, "prefix")) << p.explain;
  ExpectVerifies(p, 16);
}

TEST(ScanPartitionTest, PrefixOnA2DMeshGathersTotalsWithinRowGroups) {
  // Rows split 2 ways and positions 4 ways: the totals are gathered within each row group.
  Partitioned p =
      Partition(CumSum(8, 16, 256, "2,4", "{devices=[2,4]<=[8] last_tile_dim_replicate}"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_TRUE(Chose(p, "prefix")) << p.explain;
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllGather(), HasShape("f32[4,8]"))));
  ExpectVerifies(p, 8);
}

// h = a * h + b along dim 1, as two carries (the composed map's slope and offset): associative
// but not commutative, so blocks compose correctly only in order. `reverse` walks backwards.
std::string Recurrence(bool reverse, const std::string& tiles) {
  return std::string(
             "HloModule recurrence, num_partitions=4\n"
             "compose {\n"
             "  xa = f32[6] parameter(0)\n  xb = f32[6] parameter(1)\n"
             "  ca = f32[6] parameter(2)\n  cb = f32[6] parameter(3)\n"
             "  a = f32[6] multiply(xa, ca)\n  m = f32[6] multiply(xa, cb)\n"
             "  b = f32[6] add(m, xb)\n  n = f32[6] negate(b)\n"
             "  ROOT t = (f32[6], f32[6], f32[6]) tuple(n, a, b)\n}\n"
             "ENTRY main {\n"
             "  xa = f32[6,40] parameter(0), sharding={devices=[") +
         tiles + "]<=[4]}\n  xb = f32[6,40] parameter(1), sharding={devices=[" + tiles +
         "]<=[4]}\n  ia = f32[6] parameter(2), sharding={replicated}\n"
         "  ib = f32[6] parameter(3), sharding={replicated}\n"
         "  ROOT s = (f32[6,40], f32[6], f32[6]) scan(xa, xb, ia, ib), dimensions={1}, "
         "num_carries=2, is_associative=true" +
         (reverse ? ", is_reverse=true" : "") + ", to_apply=compose, sharding={{devices=[" + tiles +
         "]<=[4]}, {replicated}, {replicated}}\n}\n";
}

TEST(ScanPartitionTest, NonCommutativePrefixKeepsBlockOrder) {
  // The output (-b) is not a carry: the second pass over each block computes it.
  for (bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "reverse" : "forward");
    Partitioned p = Partition(Recurrence(reverse, "1,4"));
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_TRUE(Chose(p, "prefix")) << p.explain;
    EXPECT_THAT(Instructions(*p.spmd),
                Contains(AllOf(op::AllGather(), HasShape("(f32[4,6], f32[4,6])"))));
    ExpectVerifies(p, 4);
  }
}

TEST(ScanPartitionTest, NonAssociativeBodyMovesTheScanDimsTiles) {
  // h' = x - h is not declared associative: the scan dim's tiles move to the rows (an
  // all-to-all each way, 3/8 of the array), not a gather of the whole input (3/4 of it: 6 MiB
  // here, which outweighs the second collective's latency).
  const std::string text = R"(HloModule sub, num_partitions=4
sub {
  x = f32[16384] parameter(0)
  h = f32[16384] parameter(1)
  d = f32[16384] subtract(x, h)
  ROOT t = (f32[16384], f32[16384]) tuple(d, d)
}
ENTRY main {
  x = f32[16384,128] parameter(0), sharding={devices=[1,4]<=[4]}
  init = f32[16384] parameter(1), sharding={replicated}
  ROOT s = (f32[16384,128], f32[16384]) scan(x, init), dimensions={1}, num_carries=1, to_apply=sub, sharding={{devices=[1,4]<=[4]}, {replicated}}
}
)";
  Partitioned p = Partition(text);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_TRUE(Chose(p, "local (output 0 moved)")) << p.explain;
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::Scan(), HasShape("(f32[4096,128], f32[4096])"))));
  ExpectVerifies(p, 4);
}

TEST(ScanPartitionTest, ScalarOutputsKeepTheScanDimWhole) {
  // An output of scalars (a constant per step) is no slice a block could stack: no prefix.
  const std::string text = R"(HloModule scalars, num_partitions=4
body {
  x = f32[8] parameter(0)
  h = f32[8] parameter(1)
  s = f32[8] add(x, h)
  one = f32[] constant(1)
  ROOT t = (f32[8], f32[], f32[8]) tuple(s, one, s)
}
ENTRY main {
  x = f32[256,8] parameter(0), sharding={devices=[4,1]<=[4]}
  init = f32[8] parameter(1), sharding={replicated}
  ROOT s = (f32[256,8], f32[256], f32[8]) scan(x, init), dimensions={0}, num_carries=1, is_associative=true, to_apply=body, sharding={{devices=[4,1]<=[4]}, {devices=[4]<=[4]}, {replicated}}
}
)";
  Partitioned p = Partition(text);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_FALSE(Chose(p, "prefix")) << p.explain;
  EXPECT_EQ(p.explain.find("prefix"), std::string::npos) << p.explain;
  ExpectVerifies(p, 4);
}

TEST(ScanPartitionTest, ScalarAndPassThroughCarriesStayWhole) {
  // A scalar carry broadcast into the slices and a rank-2 carry handed on unchanged.
  const std::string text = R"(HloModule carries, num_partitions=4
body {
  x = f32[8] parameter(0)
  c = f32[] parameter(1)
  k = f32[8,3] parameter(2)
  b = f32[8] broadcast(c), dimensions={}
  y = f32[8] add(x, b)
  ROOT t = (f32[8], f32[], f32[8,3]) tuple(y, c, k)
}
ENTRY main {
  x = f32[8,32] parameter(0), sharding={devices=[4,1]<=[4]}
  c = f32[] parameter(1)
  k = f32[8,3] parameter(2), sharding={replicated}
  ROOT s = (f32[8,32], f32[], f32[8,3]) scan(x, c, k), dimensions={1}, num_carries=2, to_apply=body, sharding={{devices=[4,1]<=[4]}, {replicated}, {replicated}}
}
)";
  Partitioned p = Partition(text);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Collectives(p), 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

TEST(ScanPartitionTest, FusedElementwiseBodyIsCopiedToShards) {
  // The body fuses its elementwise ops: the fused computation is copied to the shards too.
  const std::string text = R"(HloModule fused, num_partitions=4
fused {
  a = f32[64] parameter(0)
  b = f32[64] parameter(1)
  two = f32[] constant(2)
  t = f32[64] broadcast(two), dimensions={}
  m = f32[64] multiply(a, t)
  ROOT s = f32[64] add(m, b)
}
body {
  x = f32[64] parameter(0)
  h = f32[64] parameter(1)
  f = f32[64] fusion(x, h), kind=kLoop, calls=fused
  ROOT t = (f32[64], f32[64]) tuple(f, f)
}
ENTRY main {
  x = f32[64,16] parameter(0), sharding={devices=[4,1]<=[4]}
  init = f32[64] parameter(1), sharding={replicated}
  ROOT s = (f32[64,16], f32[64]) scan(x, init), dimensions={1}, num_carries=1, to_apply=body, sharding={{devices=[4,1]<=[4]}, {replicated}}
}
)";
  Partitioned p = Partition(text);
  ASSERT_NE(p.spmd, nullptr);
  // Only the final carry is gathered.
  EXPECT_EQ(Collectives(p), 1) << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::Scan(), HasShape("(f32[16,16], f32[16])"))));
  ExpectVerifies(p, 4);
}

TEST(ScanPartitionTest, ArrayShapedScanWithoutCarries) {
  const std::string text = R"(HloModule neg, num_partitions=2
body {
  x = f32[8] parameter(0)
  n = f32[8] negate(x)
  ROOT t = (f32[8]) tuple(n)
}
ENTRY main {
  x = f32[16,8] parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT s = f32[16,8] scan(x), dimensions={0}, num_carries=0, to_apply=body, sharding={devices=[2,1]<=[2]}
}
)";
  Partitioned p = Partition(text);
  ASSERT_NE(p.spmd, nullptr);
  ExpectVerifies(p, 2);
}

TEST(ScanPartitionTest, BodyMixingPositionsComputesWholeAndSaysSo) {
  // reverse(x) + h mixes a slice's positions (and is not associative, whatever it declares).
  const std::string text = R"(HloModule rev, num_partitions=4
body {
  x = f32[16] parameter(0)
  h = f32[16] parameter(1)
  r = f32[16] reverse(x), dimensions={0}
  s = f32[16] add(r, h)
  ROOT t = (f32[16], f32[16]) tuple(s, s)
}
ENTRY main {
  x = f32[16,32] parameter(0), sharding={devices=[1,4]<=[4]}
  init = f32[16] parameter(1), sharding={replicated}
  ROOT s = (f32[16,32], f32[16]) scan(x, init), dimensions={1}, num_carries=1, is_associative=true, to_apply=body, sharding={{devices=[1,4]<=[4]}, {replicated}}
}
)";
  Partitioned p = Partition(text);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_THAT(p.explain, HasSubstr("not elementwise on slices")) << p.explain;
  ExpectVerifies(p, 4);
}

}  // namespace

// Select-and-scatter on split dims (spmd/partitioner/select_and_scatter_handler.cc): when the
// windows of every split dim stay inside shards (trivial windows, or unpadded windows no longer
// than their stride over even shards of whole strides) each device runs on its own shard and
// nothing moves; unpadded windows across shards exchange halos; padded ones move the crossing
// dim's tiles to a dim whose windows stay in shards (a max-pool gradient's spatial split onto
// its rows), and only when none takes them does it fall back. Checked numerically against the
// unpartitioned module.
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_opcode.h"
#include "tests/partition_test_util.h"

namespace {

using hlo::HloOpcode;
using testing_util::Counts;
using testing_util::ExpectVerifies;
using testing_util::Partition;
using testing_util::Partitioned;

// f32[rows,n] select-and-scatter with `window` (two dims), all split `t` ways along dim 1.
std::string SelectAndScatter(int t, int n, int m, const std::string& window, int rows = 4) {
  const std::string r = std::to_string(rows);
  const std::string tiled = "{devices=[1," + std::to_string(t) + "]<=[" + std::to_string(t) + "]}";
  return "HloModule sas, num_partitions=" + std::to_string(t) +
         "\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
         "sum {\n  c = f32[] parameter(0)\n  d = f32[] parameter(1)\n"
         "  ROOT s = f32[] add(c, d)\n}\n"
         "ENTRY main {\n  x = f32[" +
         r + "," + std::to_string(n) + "] parameter(0), sharding=" + tiled + "\n  src = f32[" + r +
         "," + std::to_string(m) + "] parameter(1), sharding=" + tiled +
         "\n  zero = f32[] constant(0), sharding={replicated}\n"
         "  ROOT r = f32[" +
         r + "," + std::to_string(n) + "] select-and-scatter(x, src, zero), window={" + window +
         "}, select=ge, scatter=sum, sharding=" + tiled + "\n}\n";
}

int Collectives(const hlo::HloModule& module) {
  auto counts = Counts(module);
  return counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll] +
         counts[HloOpcode::kAllReduce] + counts[HloOpcode::kCollectivePermute];
}

TEST(SelectAndScatterPartitionTest, WindowsInsideShardsMoveNothing) {
  // RetinaNet's case (size 1 stride 2) and windows as long as their stride.
  for (const auto& [n, m, window] :
       std::vector<std::tuple<int, int, std::string>>{{32, 16, "size=1x1 stride=1x2"},
                                                      {32, 16, "size=1x2 stride=1x2"},
                                                      {48, 16, "size=1x3 stride=1x3"},
                                                      {32, 32, "size=1x1"}}) {
    SCOPED_TRACE(window);
    Partitioned p = Partition(SelectAndScatter(4, n, m, window));
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_EQ(Collectives(*p.spmd), 0) << p.spmd->ToString();
    EXPECT_EQ(p.explain.find("fallback"), std::string::npos) << p.explain;
    ExpectVerifies(p, 4);
  }
}

// Windows across shard boundaries (a max-pool gradient on a split spatial dim): each device
// fetches the operand and source of every window touching its block by halo exchange and
// keeps its block; only collective-permutes move (all-to-alls moved the whole array to the
// rows before). Overlapping windows, windows with gaps between them (stride > size), shards
// that cut a stride, uneven shards, halos longer than a shard and two split dims.
TEST(SelectAndScatterPartitionTest, WindowsAcrossShardsExchangeHalos) {
  for (const auto& [n, m, window] :
       std::vector<std::tuple<int, int, std::string>>{{32, 15, "size=1x4 stride=1x2"},
                                                      {24, 6, "size=1x4 stride=1x4"},
                                                      {65, 32, "size=1x3 stride=1x2"},
                                                      {30, 10, "size=1x2 stride=1x3"},
                                                      {31, 29, "size=1x3"},
                                                      {40, 2, "size=1x13 stride=1x27"},
                                                      {64, 7, "size=1x12 stride=1x8"}}) {
    SCOPED_TRACE(window + " over " + std::to_string(n));
    Partitioned p = Partition(SelectAndScatter(4, n, m, window));
    ASSERT_NE(p.spmd, nullptr);
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll], 0)
        << p.spmd->ToString();
    EXPECT_NE(p.explain.find("halo exchange"), std::string::npos) << p.explain;
    ExpectVerifies(p, 4);
  }
  Partitioned p = Partition(R"(HloModule sas, num_partitions=8
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
sum {
  c = f32[] parameter(0)
  d = f32[] parameter(1)
  ROOT s = f32[] add(c, d)
}
ENTRY main {
  x = f32[4,17,18] parameter(0), sharding={devices=[1,2,4]<=[8]}
  src = f32[4,8,8] parameter(1), sharding={devices=[1,2,4]<=[8]}
  zero = f32[] constant(0)
  ROOT r = f32[4,17,18] select-and-scatter(x, src, zero), window={size=1x3x4 stride=1x2x2},
    select=ge, scatter=sum, sharding={devices=[1,2,4]<=[8]}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllToAll] + Counts(*p.spmd)[HloOpcode::kAllGather], 0)
      << p.spmd->ToString();
  ExpectVerifies(p, 8);
}

// Padded windows across shards: the crossing dim's tiles move to a dim whose windows stay in
// shards (the rows), not a gather of everything.
TEST(SelectAndScatterPartitionTest, PaddedWindowsAcrossShardsMoveTheirTiles) {
  Partitioned p = Partition(SelectAndScatter(4, 32, 16, "size=1x3 stride=1x2 pad=0_0x0_1"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_EQ(p.explain.find("fallback"), std::string::npos) << p.explain;
  EXPECT_NE(p.explain.find("select-and-scatter computed in {devices=[4,1]"), std::string::npos)
      << p.explain;
  ExpectVerifies(p, 4);
}

TEST(SelectAndScatterPartitionTest, WindowsAcrossShardsWithNoDimToTakeThemFallBack) {
  // Three rows cannot take 4 tiles: nothing stays split.
  Partitioned p =
      Partition(SelectAndScatter(4, 32, 16, "size=1x3 stride=1x2 pad=0_0x0_1", /*rows=*/3));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_NE(p.explain.find("select-and-scatter split along a dimension with a real window"),
            std::string::npos)
      << p.explain;
  ExpectVerifies(p, 4);
}

}  // namespace

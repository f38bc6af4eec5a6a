// Select-and-scatter on split dims (spmd/partitioner/window_handlers.cc): when the windows of
// every split dim stay inside shards (trivial windows, or unpadded windows no longer than their
// stride over even shards of whole strides) each device runs on its own shard and nothing
// moves; otherwise the crossing dim's tiles move to a dim whose windows stay in shards (a
// max-pool gradient's spatial split onto its rows), and only when none takes them does it fall
// back. Checked numerically against the unpartitioned module.
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

TEST(SelectAndScatterPartitionTest, WindowsAcrossShardsMoveTheirTilesAndVerify) {
  // Overlapping windows, and shards that cut a stride (24 / 4 = 6 per shard, stride 4): the
  // split moves to the rows (4 of them, windows of one), not a gather of everything.
  for (const auto& [n, m, window] : std::vector<std::tuple<int, int, std::string>>{
           {32, 15, "size=1x4 stride=1x2"}, {24, 6, "size=1x4 stride=1x4"}}) {
    SCOPED_TRACE(window);
    Partitioned p = Partition(SelectAndScatter(4, n, m, window));
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 0) << p.spmd->ToString();
    EXPECT_EQ(p.explain.find("fallback"), std::string::npos) << p.explain;
    EXPECT_NE(p.explain.find("select-and-scatter computed in {devices=[4,1]"), std::string::npos)
        << p.explain;
    ExpectVerifies(p, 4);
  }
}

TEST(SelectAndScatterPartitionTest, WindowsAcrossShardsWithNoDimToTakeThemFallBack) {
  // Three rows cannot take 4 tiles: nothing stays split.
  Partitioned p = Partition(SelectAndScatter(4, 32, 15, "size=1x4 stride=1x2", /*rows=*/3));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_NE(p.explain.find("select-and-scatter split along a dimension with a real window"),
            std::string::npos)
      << p.explain;
  ExpectVerifies(p, 4);
}

}  // namespace

// Concatenate and reverse along split dims (spmd/partitioner/window_handlers.cc): each
// operand, or the mirrored block, is a window fetched by collective-permutes, not gathered
// whole; checked for the collectives chosen and numerically against the unpartitioned module.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/ir/hlo_opcode.h"
#include "tests/partition_test_util.h"

namespace {

using hlo::HloOpcode;
using testing_util::Counts;
using testing_util::ExpectVerifies;
using testing_util::Partition;
using testing_util::Partitioned;

// Concatenate along a split dim: each operand is a window placed at its offset; no operand is
// gathered whole.
TEST(ConcatenateReversePartitionTest, ConcatenateOnASplitDimPlacesEachOperandsRows) {
  for (const std::string& body :
       {std::string("a = f32[5,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                    "b = f32[3,6] parameter(1), sharding={replicated}\n"
                    "c = f32[7,6] parameter(2), sharding={devices=[4,1]<=[4]}\n"
                    "ROOT r = f32[15,6] concatenate(a, b, c), dimensions={0}, "
                    "sharding={devices=[4,1]<=[4]}"),
        std::string("a = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                    "b = f32[8,6] parameter(1), sharding={devices=[4,1]<=[4]}\n"
                    "ROOT r = f32[16,6] concatenate(a, b), dimensions={0}, "
                    "sharding={devices=[4,1]<=[4]}"),
        std::string("a = f32[6,10] parameter(0), sharding={devices=[2,4]<=[8]}\n"
                    "b = f32[6,3] parameter(1), sharding={devices=[2,4]<=[8]}\n"
                    "ROOT r = f32[6,13] concatenate(a, b), dimensions={1}, "
                    "sharding={devices=[2,4]<=[8]}")}) {
    SCOPED_TRACE(body);
    const int devices = body.find("<=[8]") != std::string::npos ? 8 : 4;
    Partitioned p = Partition("HloModule m, num_partitions=" + std::to_string(devices) +
                              "\nENTRY main {\n" + body + "\n}\n");
    ASSERT_NE(p.spmd, nullptr);
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllReduce], 0)
        << p.spmd->ToString();
    EXPECT_GT(counts[HloOpcode::kCollectivePermute], 0) << p.spmd->ToString();
    ExpectVerifies(p, devices);
  }
}

// XLA's DoNotPartitionConcatenate: an operand concatenated with itself. Gathering it once (768
// bytes) and concatenating whole receives less than four halo exchanges (1 KiB), in fewer
// collectives; the dynamic-slice that reads the result then needs nothing more (it gathered
// the 2 KiB result before).
TEST(ConcatenateReversePartitionTest, ConcatenateOfOneOperandTwiceGathersItOnce) {
  Partitioned p = Partition(R"(
HloModule twice, num_partitions=4
ENTRY main {
  a = f32[256] parameter(0), sharding={devices=[4]<=[4]}
  c = f32[512] concatenate(a, a), dimensions={0}, sharding={devices=[4]<=[4]}
  i = s32[] parameter(1), sharding={replicated}
  ROOT d = f32[256] dynamic-slice(c, i), dynamic_slice_sizes={256}, sharding={devices=[4]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 1) << p.spmd->ToString() << p.explain;
  EXPECT_EQ(counts[HloOpcode::kCollectivePermute], 0) << p.spmd->ToString();
  EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 768) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// Reverse along a split dim: each device takes the mirrored block (one collective-permute,
// none when the operand is laid out in the mirrored device order, XLA's
// TiledReverseViaReversedSharding) and reverses it locally; uneven shards then need one more
// permute per dim to realign.
TEST(ConcatenateReversePartitionTest, ReverseSwapsMirroredShards) {
  struct Case {
    std::string body;
    int devices;
    int permutes;
  };
  for (const Case& c : std::vector<Case>{
           {"a = f32[16,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
            "ROOT r = f32[16,6] reverse(a), dimensions={0}, sharding={devices=[4,1]<=[4]}",
            4, 1},
           {"a = f32[13,6] parameter(0), sharding={devices=[4,1]<=[4]}\n"
            "ROOT r = f32[13,6] reverse(a), dimensions={0}, sharding={devices=[4,1]<=[4]}",
            4, 2},
           {"a = f32[10,6] parameter(0), sharding={devices=[4,1]3,1,0,2}\n"
            "ROOT r = f32[10,6] reverse(a), dimensions={0}, sharding={devices=[4,1]3,1,0,2}",
            4, 2},
           {"a = f32[9,7] parameter(0), sharding={devices=[2,4]<=[8]}\n"
            "ROOT r = f32[9,7] reverse(a), dimensions={0,1}, sharding={devices=[2,4]<=[8]}",
            8, 3},
           {"a = f32[4,6] parameter(0), sharding={devices=[2,1]<=[2]}\n"
            "ROOT r = f32[4,6] reverse(a), dimensions={0}, sharding={devices=[2,1]1,0}",
            2, 0},
           {"a = f32[3,6] parameter(0), sharding={devices=[2,1]<=[2]}\n"
            "ROOT r = f32[3,6] reverse(a), dimensions={0}, sharding={devices=[2,1]1,0}",
            2, 1},
           {"a = f32[8,6] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
            "ROOT r = f32[8,6] reverse(a), dimensions={0}, "
            "sharding={devices=[2,1,2]2,3,0,1 last_tile_dim_replicate}",
            4, 0}}) {
    SCOPED_TRACE(c.body);
    Partitioned p = Partition("HloModule m, num_partitions=" + std::to_string(c.devices) +
                              "\nENTRY main {\n" + c.body + "\n}\n");
    ASSERT_NE(p.spmd, nullptr);
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
    EXPECT_EQ(counts[HloOpcode::kCollectivePermute], c.permutes) << p.spmd->ToString();
    ExpectVerifies(p, c.devices);
  }
}

}  // namespace

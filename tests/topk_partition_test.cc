// Top-k (spmd/partitioner/topk_handler.cc): split batch dims run locally; a split top-k dim
// runs a local top-k per shard and merges the gathered candidates (stable sort, slice), so only
// k candidates per row and device move. Checked for the collectives chosen and numerically
// against the unpartitioned module: uneven shards, and values quantized to a few levels so
// that ties are everywhere (topk orders them by lower index; the merged indices must match
// exactly).
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
namespace op = hlo::testing::op;
using testing_util::Counts;
using testing_util::ExpectVerifies;
using testing_util::Partition;
using testing_util::Partitioned;

// f32[rows,n] split `t` ways by `operand_tiles` (e.g. "1,4"), the results wanted in `result`;
// `quantize`: x = floor(2 * p), values in a few levels (ties). `op_text` is the top-k call.
std::string TopK(int t, int rows, int n, int k, const std::string& operand_tiles,
                 const std::string& result, bool quantize, const std::string& op_text,
                 bool values_only = false) {
  const std::string ts = std::to_string(t);
  const std::string in = "f32[" + std::to_string(rows) + "," + std::to_string(n) + "]";
  const std::string out = "f32[" + std::to_string(rows) + "," + std::to_string(k) + "]";
  const std::string idx = "s32[" + std::to_string(rows) + "," + std::to_string(k) + "]";
  std::string text = "HloModule topk, num_partitions=" + ts + "\nENTRY main {\n" + "  p = " + in +
                     " parameter(0), sharding={devices=[" + operand_tiles + "]<=[" + ts + "]}\n";
  if (quantize) {
    text += "  two = f32[] constant(2)\n  b = " + in + " broadcast(two), dimensions={}\n" +
            "  m = " + in + " multiply(p, b), sharding={devices=[" + operand_tiles + "]<=[" + ts +
            "]}\n  x = " + in + " floor(m), sharding={devices=[" + operand_tiles + "]<=[" + ts +
            "]}\n";
  } else {
    text += "  x = " + in + " copy(p), sharding={devices=[" + operand_tiles + "]<=[" + ts + "]}\n";
  }
  text += "  t = (" + out + ", " + idx + ") " + op_text + ", sharding={" + result + ", " + result +
          "}\n";
  if (values_only) return text + "  ROOT v = " + out + " get-tuple-element(t), index=0\n}\n";
  return text + "  v = " + out + " get-tuple-element(t), index=0\n  i = " + idx +
         " get-tuple-element(t), index=1\n  ROOT r = (" + out + ", " + idx +
         ") tuple(v, i), sharding={{replicated}, {replicated}}\n}\n";
}

const char kCustomCall[] = "custom-call(x), custom_call_target=\"TopK\"";

// Whether --explain says the top-k chose a local top-k and a merge.
bool ChoseMerge(const std::string& explain) {
  return explain.find("-> operand's tiling, local top-k and merge") != std::string::npos;
}

TEST(TopKPartitionTest, SplitTopKDimMergesCandidatesInOneAllGather) {
  Partitioned p = Partition(TopK(4, 3, 64, 5, "1,4", "{replicated}", false, kCustomCall));
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  // One all-gather of (values, indices) candidates, 4 x 5 per row; the operand never moves.
  EXPECT_EQ(counts[HloOpcode::kAllGather], 1) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllToAll] + counts[HloOpcode::kAllReduce], 0);
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::AllGather(), HasShape("(f32[3,20], s32[3,20])"))));
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::Sort(), HasShape("(f32[3,20], s32[3,20])"))));
  EXPECT_TRUE(ChoseMerge(p.explain)) << p.explain;
  ExpectVerifies(p, 4);
}

TEST(TopKPartitionTest, UnevenShardsAndTiesMergeExactly) {
  // 15 or 13 elements on 4 devices (padding masked to the last value in order); k larger than
  // a shard; values in a few levels, so most of the top k are ties broken by index.
  for (int n : {63, 61, 64}) {
    for (int k : {3, 6}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k));
      Partitioned p = Partition(TopK(4, 5, n, k, "1,4", "{replicated}", true, kCustomCall));
      ASSERT_NE(p.spmd, nullptr);
      EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 1) << p.spmd->ToString() << p.explain;
      EXPECT_TRUE(ChoseMerge(p.explain)) << p.explain;
      ExpectVerifies(p, 4);
    }
  }
}

TEST(TopKPartitionTest, OpcodeSmallestFirstMergesWithTies) {
  for (int n : {64, 61}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    Partitioned p =
        Partition(TopK(2, 4, n, 4, "1,2", "{replicated}", true, "topk(x), k=4, largest=false"));
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 1) << p.spmd->ToString() << p.explain;
    EXPECT_TRUE(ChoseMerge(p.explain)) << p.explain;
    ExpectVerifies(p, 2);
  }
}

TEST(TopKPartitionTest, BatchSplitRunsLocally) {
  Partitioned p = Partition(TopK(4, 8, 64, 3, "4,1", "{devices=[4,1]<=[4]}", true, kCustomCall));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::CustomCall(), HasShape("(f32[2,3], s32[2,3])"))));
  // Only the root's gather of the results moves data.
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllGather(), HasShape("f32[8,3]"))));
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kSort], 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

TEST(TopKPartitionTest, UnreadIndicesAreNotGathered) {
  // Only the values are read: the merge gathers values alone (an array, not a tuple).
  Partitioned p = Partition(TopK(2, 4, 32, 4, "1,2", "{replicated}", true, kCustomCall,
                                 /*values_only=*/true));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 1) << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllGather(), HasShape("f32[4,8]"))));
  ExpectVerifies(p, 2);
}

TEST(TopKPartitionTest, BothDimsSplitMergeWithinRowGroups) {
  // Rows split 2 ways, each row's 40001 elements 4 ways (unevenly): merges in groups of 4.
  Partitioned p = Partition(TopK(
      8, 8, 40001, 4, "2,4", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", true, kCustomCall));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_TRUE(ChoseMerge(p.explain)) << p.explain;
  ExpectVerifies(p, 8);
}

}  // namespace

// Top-k (spmd/partitioner/topk_handler.cc): split batch dims run locally; a split top-k dim
// runs a local top-k per shard and merges the gathered candidates (stable sort, slice), so only
// k candidates per row and device move. Checked for the collectives chosen and numerically
// against the unpartitioned module: uneven shards, and values quantized to a few levels so
// that ties are everywhere (topk orders them by lower index; the merged indices must match
// exactly).
#include <string>
#include <utility>

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
using ::testing::Not;
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

// Top-k written as a sort and slices (spmd/partitioner/sort_slices.h): f32[rows,n] in few
// levels (ties), split by `tiles`, sorted with a global iota; the slices read
// `rows_read` x [0:k]. `comparator` orders values (and may read the indices).
std::string SortTopK(int t, int rows, int n, int k, const std::string& tiles,
                     const std::string& rows_read, const std::string& comparator,
                     bool stable = true, const std::string& extra_reader = "") {
  const std::string ts = std::to_string(t), ns = std::to_string(n), ks = std::to_string(k);
  const std::string in = "[" + std::to_string(rows) + "," + ns + "]";
  const std::string sharding = "sharding={devices=[" + tiles + "]<=[" + ts + "]}";
  const std::string lo = rows_read.substr(0, rows_read.find(':'));
  const std::string hi = rows_read.substr(rows_read.find(':') + 1);
  const std::string out = "[" + std::to_string(std::stoi(hi) - std::stoi(lo)) + "," + ks + "]";
  std::string text = "HloModule sort_topk, num_partitions=" + ts + "\n\ncmp {\n" +
                     "  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n" +
                     "  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n" + comparator + "}\n\n";
  text += "ENTRY main {\n  p = f32" + in + " parameter(0), " + sharding + "\n" +
          "  two = f32[] constant(2)\n  b = f32" + in + " broadcast(two), dimensions={}\n" +
          "  m = f32" + in + " multiply(p, b), " + sharding + "\n  x = f32" + in + " floor(m), " +
          sharding + "\n  io = s32[" + ns + "] iota(), iota_dimension=0\n  ib = s32" + in +
          " broadcast(io), dimensions={1}, " + sharding + "\n  s = (f32" + in + ", s32" + in +
          ") sort(x, ib), dimensions={1}, " + (stable ? "is_stable=true, " : "") +
          "to_apply=cmp, sharding={{replicated}, {replicated}}\n" + "  v = f32" + in +
          " get-tuple-element(s), index=0, sharding={replicated}\n" + "  i = s32" + in +
          " get-tuple-element(s), index=1, sharding={replicated}\n" + "  vs = f32" + out +
          " slice(v), slice={[" + rows_read + "], [0:" + ks +
          "]}, sharding={replicated}\n  is = s32" + out + " slice(i), slice={[" + rows_read +
          "], [0:" + ks + "]}, sharding={replicated}\n";
  if (!extra_reader.empty()) return text + extra_reader + "}\n";
  return text + "  ROOT r = (f32" + out + ", s32" + out +
         ") tuple(vs, is), sharding={{replicated}, {replicated}}\n}\n";
}

const char kGreater[] = "  ROOT gt = pred[] compare(a, b), direction=GT\n";
// Larger values first, equal ones by larger index (reads the global iota).
const char kGreaterThenLaterIndex[] =
    "  gt = pred[] compare(a, b), direction=GT\n  eq = pred[] compare(a, b), direction=EQ\n"
    "  later = pred[] compare(i, j), direction=GT\n  tie = pred[] and(eq, later)\n"
    "  ROOT r = pred[] or(gt, tie)\n";

// Larger values first, equal ones even indices first: reads the indices other than by comparing
// them with each other, so each block sorts the global iota itself.
const char kGreaterThenEvenIndex[] =
    "  gt = pred[] compare(a, b), direction=GT\n  eq = pred[] compare(a, b), direction=EQ\n"
    "  two = s32[] constant(2)\n  pi = s32[] remainder(i, two)\n  pj = s32[] remainder(j, two)\n"
    "  even = pred[] compare(pi, pj), direction=LT\n  tie = pred[] and(eq, even)\n"
    "  ROOT r = pred[] or(gt, tie)\n";

TEST(SortTopKPartitionTest, SortThenSliceSortsBlocksAndMergesCandidates) {
  for (const char* comparator : {kGreater, kGreaterThenLaterIndex, kGreaterThenEvenIndex}) {
    for (bool stable : {true, false}) {
      SCOPED_TRACE(std::string(comparator) + (stable ? " stable" : " unstable"));
      Partitioned p = Partition(SortTopK(4, 3, 64, 5, "1,4", "0:3", comparator, stable));
      ASSERT_NE(p.spmd, nullptr);
      // Only the 4 x 5 candidates of each row move, never the 64 values.
      EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllGather(), HasShape("f32[3,20]"))))
          << p.spmd->ToString();
      EXPECT_THAT(Instructions(*p.spmd), Not(Contains(HasShape("f32[3,64]"))));
      // Indices only compared with each other: an iota per block, offset after the slice (no
      // add over a whole block).
      if (comparator != kGreaterThenEvenIndex) {
        EXPECT_THAT(Instructions(*p.spmd), Not(Contains(AllOf(op::Add(), HasShape("s32[3,16]")))))
            << p.spmd->ToString();
      }
      EXPECT_NE(p.explain.find("sorted in 4 blocks of 16, the first 5 of each merged"),
                std::string::npos)
          << p.explain;
      ExpectVerifies(p, 4);
    }
  }
}

TEST(SortTopKPartitionTest, SlicesOfOtherRowsNarrowTheSortFirst) {
  // Only row 1 is read, whole: the sort runs on that row alone (k = n: no blocks).
  Partitioned p = Partition(SortTopK(2, 4, 32, 32, "1,2", "1:2", kGreater));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::Sort(), HasShape("(f32[1,32], s32[1,32])"))))
      << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Not(Contains(HasShape("f32[4,32]"))));
  ExpectVerifies(p, 2);
}

TEST(SortTopKPartitionTest, BlocksNeedEvenTilesAndFewCandidates) {
  // Uneven tiles (61 on 4), or k*(t-1) not below a block (6*3 >= 16): sorted whole.
  for (auto [n, k] : {std::pair<int, int>{61, 3}, {64, 6}}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k));
    Partitioned p = Partition(SortTopK(4, 3, n, k, "1,4", "0:3", kGreater));
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_EQ(p.explain.find("blocks of"), std::string::npos) << p.explain;
    ExpectVerifies(p, 4);
  }
}

TEST(SortTopKPartitionTest, AComparatorNotRecognisedAsAnOrderSortsWhole) {
  // "Greater, else by index" (a partition fuzzer mutant of XLA's comparator): no order, so the
  // blocks' first k need not hold the whole's; the sort runs whole and matches.
  const char kNotAnOrder[] =
      "  gt = pred[] compare(a, b), direction=GT\n  lt = pred[] compare(b, a), direction=GT\n"
      "  tie = pred[] compare(gt, lt), direction=LE\n  first = pred[] compare(i, j), direction=LT\n"
      "  ROOT r = pred[] select(tie, first, gt)\n";
  Partitioned p = Partition(SortTopK(4, 3, 64, 5, "1,4", "0:3", kNotAnOrder));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(p.explain.find("blocks of"), std::string::npos) << p.explain;
  ExpectVerifies(p, 4);
}

TEST(SortTopKPartitionTest, ASliceThatIsTheRootIsRecreatedAsTheRoot) {
  // The values' top k is the result itself (the indices unread).
  std::string text = SortTopK(4, 3, 64, 5, "1,4", "0:3", kGreater);
  text = text.substr(0, text.find("  is = s32"));  // Drop the indices' slice and the tuple.
  text.replace(text.find("  vs = "), 7, "  ROOT vs = ");
  Partitioned root = Partition(text + "}\n");
  ASSERT_NE(root.spmd, nullptr);
  EXPECT_NE(root.explain.find("sorted in 4 blocks of 16"), std::string::npos) << root.explain;
  ExpectVerifies(root, 4);
}

TEST(SortTopKPartitionTest, ASortReadWholeStaysWhole) {
  // A reader other than a slice (the sorted values reduced) keeps the sort as written.
  const std::string reader =
      "  zero = f32[] constant(0)\n  sum = f32[3] reduce(v, zero), dimensions={1}, "
      "to_apply=add, sharding={replicated}\n  ROOT r = (f32[3,5], s32[3,5], f32[3]) tuple(vs, is, "
      "sum), sharding={{replicated}, {replicated}, {replicated}}\n";
  std::string text = SortTopK(4, 3, 64, 5, "1,4", "0:3", kGreater, true, reader);
  text.insert(text.find("ENTRY"),
              "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
              "  ROOT s = f32[] add(x, y)\n}\n\n");
  Partitioned p = Partition(text);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(p.explain.find("read only through slices"), std::string::npos) << p.explain;
  ExpectVerifies(p, 4);
}

}  // namespace

// Gather and scatter partitioning end to end: operands split along dimensions the op passes
// through (or indexes in parallel) stay split -- no all-gather of the big operand -- and the
// SPMD program matches the unpartitioned module on the CPU executor. Ops that cannot run
// locally fall back to the replicated form and still verify.
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/ir/hlo_module.h"
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

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(GatherPartitionTest, OperandPassthroughKeepsTheOperandSplit) {
  // Rows of a [16,10] table (columns split 4 ways, unevenly) picked by replicated indices.
  Partitioned p = Partition(R"(
HloModule gather, num_partitions=4
ENTRY main {
  x = f32[16,10] parameter(0), sharding={devices=[1,4]<=[4]}
  i = s32[6,1] parameter(1), sharding={replicated}
  ROOT g = f32[6,10] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,10}, sharding={devices=[1,4]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_NE(p.spmd->ToString().find("f32[6,3]"), std::string::npos) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

TEST(GatherPartitionTest, IndexParallelKeepsTheIndicesSplit) {
  // Indices split along their batch dim; the small table is replicated.
  Partitioned p = Partition(R"(
HloModule gather, num_partitions=2
ENTRY main {
  x = f32[8,4] parameter(0), sharding={replicated}
  i = s32[64,1] parameter(1), sharding={devices=[2,1]<=[2]}
  ROOT g = f32[64,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, sharding={devices=[2,1]<=[2]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_NE(p.spmd->ToString().find("f32[32,4]"), std::string::npos) << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

TEST(GatherPartitionTest, ExplicitBatchDimsSplitOperandAndIndicesAlike) {
  Partitioned p = Partition(R"(
HloModule gather, num_partitions=4
ENTRY main {
  x = f32[4,12,6] parameter(0), sharding={devices=[4,1,1]<=[4]}
  i = s32[4,5,1] parameter(1), sharding={devices=[4,1,1]<=[4]}
  ROOT g = f32[4,5,6] gather(x, i), offset_dims={2}, collapsed_slice_dims={1},
    start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0},
    index_vector_dim=2, slice_sizes={1,1,6}, sharding={devices=[4,1,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// The SPMD module's collectives of `opcode` as "shape opcode" lines (one per instruction).
std::string Collectives(const hlo::HloModule& spmd, std::string_view opcode) {
  std::string out;
  const std::string text = spmd.ToString();
  size_t line_start = 0;
  while (line_start < text.size()) {
    size_t end = text.find('\n', line_start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(line_start, end - line_start);
    if (line.find(std::string(" ") + std::string(opcode) + "(") != std::string::npos) {
      out += line + "\n";
    }
    line_start = end + 1;
  }
  return out;
}

// Checks a masked gather: no all-gather, an all-reduce of the local result `shape` (the
// partials of the row shards), and the numbers of the unpartitioned module.
void ExpectMaskedGather(const Partitioned& p, std::string_view shape, int64_t devices) {
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_NE(Collectives(*p.spmd, "all-reduce").find(shape), std::string::npos)
      << p.spmd->ToString();
  ExpectVerifies(p, devices);
}

TEST(GatherPartitionTest, OperandSplitAlongIndexedDimGathersLocallyAndSums) {
  // The operand is split along the dimension the indices pick from: each device gathers from
  // its own rows (indices shifted by its offset), zeroes the rows it does not hold, and one
  // all-reduce of the small result sums them -- the table is never gathered.
  Partitioned p = Partition(R"(
HloModule gather, num_partitions=2
ENTRY main {
  x = f32[16,4] parameter(0), sharding={devices=[2,1]<=[2]}
  i = s32[3,1] parameter(1), sharding={replicated}
  ROOT g = f32[3,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, sharding={replicated}
})");
  EXPECT_NE(p.explain.find("masked"), std::string::npos) << p.explain;
  // Whether a row is in the shard is one unsigned comparison of its shifted index with the
  // shard's width (a negative one wraps past it), not two comparisons and an and.
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAnd], 0) << p.spmd->ToString();
  ExpectMaskedGather(p, "f32[3,4]", 2);
}

TEST(GatherPartitionTest, MaskedPartialsReduceScatterIntoASplitResult) {
  // Rows split 4 ways and picked by replicated indices, the result wanted split by columns:
  // the partials are reduce-scattered straight into the result's column shards (a quarter of
  // the all-reduce's bytes, and no slice after it).
  Partitioned p = Partition(R"(
HloModule gather, num_partitions=4
ENTRY main {
  x = f32[1024,32] parameter(0), sharding={devices=[4,1]<=[4]}
  i = s32[16,1] parameter(1), sharding={replicated}
  ROOT g = f32[16,32] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,32}, sharding={devices=[1,4]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::ReduceScatter(), HasShape("f32[16,8]"))))
      << p.spmd->ToString();
  EXPECT_NE(p.explain.find("reduce-scattered along dim 1"), std::string::npos) << p.explain;
  ExpectVerifies(p, 4);
}

TEST(GatherPartitionTest, MaskedGatherOnUnevenShards) {
  // 7 rows over 4 devices (2,2,2,1 rows, padded to 2): padding rows are never picked, and
  // out-of-range indices (the random ones span -8..7) clamp as in the whole gather. Columns
  // stay split alike.
  Partitioned p = Partition(R"(
HloModule gather, num_partitions=8
ENTRY main {
  x = f32[7,6] parameter(0), sharding={devices=[4,2]<=[8]}
  i = s32[3,1] parameter(1), sharding={replicated}
  ROOT g = f32[3,6] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,6},
    sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}
})");
  ExpectMaskedGather(p, "f32[3,3]", 8);
}

TEST(GatherPartitionTest, EmbeddingRowsSplitIndicesBatchSplit) {
  // An embedding lookup: table rows split 4 ways unevenly (replicated over the other mesh
  // axis), ids split 2 ways along the batch. Each device gathers its ids from its rows; the
  // all-reduce over the 4 row shards receives 2*(3/4)*f32[2,8] = 96 bytes instead of the
  // 3*f32[3,8] = 288 an all-gather of the table receives.
  Partitioned p = Partition(R"(
HloModule gather, num_partitions=8
ENTRY main {
  x = f32[10,8] parameter(0), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  i = s32[4,1] parameter(1), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT g = f32[4,8] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,8},
    sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
})");
  ExpectMaskedGather(p, "f32[2,8]", 8);
}

TEST(GatherPartitionTest, TakeAlongSplitVocabWithBatchingDims) {
  // take_along_axis over a vocab dim split unevenly (9 over 2); batch dims split too.
  Partitioned p = Partition(R"(
HloModule gather, num_partitions=4
ENTRY main {
  x = f32[4,6,9] parameter(0), sharding={devices=[2,1,2]<=[4]}
  i = s32[4,6,1,1] parameter(1), sharding={devices=[2,1,1,1,2]<=[4] last_tile_dim_replicate}
  ROOT g = f32[4,6,1] gather(x, i), offset_dims={}, collapsed_slice_dims={2},
    start_index_map={2}, operand_batching_dims={0,1}, start_indices_batching_dims={0,1},
    index_vector_dim=3, slice_sizes={1,1,1},
    sharding={devices=[2,1,1,2]<=[4] last_tile_dim_replicate}
})");
  ExpectMaskedGather(p, "f32[2,6,1]", 4);
}

TEST(GatherPartitionTest, MaskedGatherOfIntegers) {
  // Masked zeros sum exactly for integers too.
  Partitioned p = Partition(R"(
HloModule gather, num_partitions=4
ENTRY main {
  x = s32[13,3] parameter(0), sharding={devices=[4,1]<=[4]}
  i = s32[5,1] parameter(1), sharding={replicated}
  ROOT g = s32[5,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}, sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

TEST(GatherPartitionTest, MaskedGatherOfPredicates) {
  // Pred partials are false outside the shard and combine by or (add on pred).
  Partitioned p = Partition(R"(
HloModule gather, num_partitions=2
ENTRY main {
  x = pred[16,4] parameter(0), sharding={devices=[2,1]<=[2]}
  i = s32[2,1] parameter(1), sharding={replicated}
  ROOT g = pred[2,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, sharding={replicated}
})");
  ExpectMaskedGather(p, "pred[2,4]", 2);
}

TEST(ScatterPartitionTest, OperandPassthroughKeepsTheOperandSplit) {
  Partitioned p = Partition(std::string("HloModule scatter, num_partitions=4\n") + kAdd + R"(
ENTRY main {
  x = f32[16,10] parameter(0), sharding={devices=[1,4]<=[4]}
  i = s32[6,1] parameter(1), sharding={replicated}
  u = f32[6,10] parameter(2), sharding={devices=[1,4]<=[4]}
  ROOT s = f32[16,10] scatter(x, i, u), to_apply=add, update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    sharding={devices=[1,4]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// A window as wide as its operand dim is in bounds only at start 0, even when that dim is
// indexed (XLA's CombiningScatterPartitioning: starts (i, 0, 0, ...)): split alike, every shard
// applies or skips the update just as the whole would. Starts of 0 or 1 (1: skipped) along the
// split dim 6 (uneven over 4 devices), random rows along dim 0 (some out of bounds).
TEST(ScatterPartitionTest, FullWidthIndexedWindowDimStaysSplit) {
  Partitioned p = Partition(std::string("HloModule scatter, num_partitions=4\n") + kAdd + R"(
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[1,4]<=[4]}
  r = s32[64,1] parameter(1), sharding={replicated}
  c = s32[64,1] parameter(2), sharding={replicated}
  one = s32[] constant(1)
  ones = s32[64,1] broadcast(one), dimensions={}, sharding={replicated}
  c01 = s32[64,1] and(c, ones), sharding={replicated}
  i = s32[64,2] concatenate(r, c01), dimensions={1}, sharding={replicated}
  u = f32[64,6] parameter(3), sharding={devices=[1,4]<=[4]}
  ROOT s = f32[8,6] scatter(x, i, u), to_apply=add, update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1,
    sharding={devices=[1,4]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllReduce] +
                counts[HloOpcode::kAllToAll] + counts[HloOpcode::kCollectivePermute],
            0)
      << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// A bf16 scatter-add with its updates split along the scatter dim (XLA's
// ScatterPreferUpdateIndexIfSmaller): each device scatters its updates into f32 zeros and
// rounds its partial sum to bf16 once; the bf16 partials are all-reduced in bf16 (XLA's bytes),
// or, with --wide-partial-sums, in f32 and rounded once. Either way the reordered sum stays as
// close to the exact one as the sequential bf16 sum (the verifier judges against the f64
// result); 256 updates into 8 rows.
constexpr char kBf16Scatter[] = R"(HloModule scatter_bf16, num_partitions=4
add_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY main {
  x = bf16[8,6] parameter(0), sharding={replicated}
  r = s32[256,1] parameter(1), sharding={devices=[4,1]<=[4]}
  seven = s32[] constant(7)
  sevens = s32[256,1] broadcast(seven), dimensions={}, sharding={devices=[4,1]<=[4]}
  i = s32[256,1] and(r, sevens), sharding={devices=[4,1]<=[4]}
  u = bf16[256,6] parameter(2), sharding={devices=[4,1]<=[4]}
  ROOT s = bf16[8,6] scatter(x, i, u), to_apply=add_bf16, update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    sharding={replicated}
})";

TEST(ScatterPartitionTest, NarrowFloatSumsAccumulateInF32AndCombineInTheirType) {
  Partitioned p = Partition(kBf16Scatter);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::Scatter(), HasShape("f32[8,6]"))))
      << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllReduce(), HasShape("bf16[8,6]"))))
      << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Not(Contains(AllOf(op::AllReduce(), HasShape("f32[8,6]")))))
      << p.spmd->ToString();
  EXPECT_NE(p.explain.find("(partials all-reduced in bf16)"), std::string::npos) << p.explain;
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

TEST(ScatterPartitionTest, WidePartialSumsCombineInF32) {
  spmd::PartitionerOptions options;
  options.wide_partial_sums = true;
  Partitioned p = Partition(kBf16Scatter, options);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllReduce(), HasShape("f32[8,6]"))))
      << p.spmd->ToString();
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// With --wide-partial-sums, where bytes outweigh one more latency (here: links without
// latency), the f32 partials are reduce-scattered, each block rounded to bf16 once, and the bf16
// blocks all-gathered: three quarters of the f32 all-reduce's bytes, the same rounding.
TEST(ScatterPartitionTest, NarrowFloatSumsReduceScatterWideAndGatherNarrow) {
  spmd::PartitionerOptions options;
  options.wide_partial_sums = true;
  for (spmd::MeshLevel& level : options.device_model.levels) level.link.latency_us = 0;
  Partitioned p = Partition(kBf16Scatter, options);
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kReduceScatter], 1) << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::AllGather(), HasShape("bf16[8,6]"))))
      << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

TEST(ScatterPartitionTest, IndexParallelAddCombinesPartialsByAllReduce) {
  // Updates split along their scatter dim: the first device scatters its half into the
  // operand, the other into zeros, and the all-reduce sums them, so the operand counts once and
  // nothing is added after it (XLA's idiom; no FLOPs). Duplicate indices across devices are
  // what the all-reduce is for.
  Partitioned p = Partition(std::string("HloModule scatter, num_partitions=2\n") + kAdd + R"(
ENTRY main {
  x = f32[8,4] parameter(0), sharding={replicated}
  i = s32[30,1] parameter(1), sharding={devices=[2,1]<=[2]}
  u = f32[30,4] parameter(2), sharding={devices=[2,1]<=[2]}
  ROOT s = f32[8,4] scatter(x, i, u), to_apply=add, update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
  EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).flops, 0) << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

TEST(ScatterPartitionTest, IndexParallelPartialsReduceScatterIntoASplitResult) {
  // Updates split along their scatter dim, the result wanted split by rows: the partial sums
  // are reduce-scattered into the row shards instead of all-reduced and sliced.
  Partitioned p = Partition(std::string("HloModule scatter, num_partitions=4\n") + kAdd + R"(
ENTRY main {
  x = f32[64,32] parameter(0), sharding={replicated}
  i = s32[256,1] parameter(1), sharding={devices=[4,1]<=[4]}
  u = f32[256,32] parameter(2), sharding={devices=[4,1]<=[4]}
  ROOT s = f32[64,32] scatter(x, i, u), to_apply=add, update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    sharding={devices=[4,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::ReduceScatter(), HasShape("f32[16,32]"))))
      << p.spmd->ToString();
  EXPECT_NE(p.explain.find("reduce-scattered along dim 0"), std::string::npos) << p.explain;
  ExpectVerifies(p, 4);
}

TEST(ScatterPartitionTest, ExplicitBatchDimsSplitOperandIndicesAndUpdatesAlike) {
  Partitioned p = Partition(std::string("HloModule scatter, num_partitions=4\n") + R"(
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY main {
  x = f32[6,10,3] parameter(0), sharding={devices=[4,1,1]<=[4]}
  i = s32[6,7,1] parameter(1), sharding={devices=[4,1,1]<=[4]}
  u = f32[6,7,3] parameter(2), sharding={devices=[4,1,1]<=[4]}
  ROOT s = f32[6,10,3] scatter(x, i, u), to_apply=mx, update_window_dims={2},
    inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0},
    scatter_indices_batching_dims={0}, index_vector_dim=2, sharding={devices=[4,1,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// XLA's ScatterExplicitBatchDimsFromOperandToResult: the operand split along both batching
// dims, its scattered dim and its window dim, the result wanted whole. Keeping the batching and
// scattered splits (indices shifted into shards) and gathering the window dim ties in estimated
// time with gathering the batching dims too; the smaller local scatter wins the tie.
TEST(ScatterPartitionTest, EqualPlansPreferTheSmallerLocalScatter) {
  Partitioned p = Partition(std::string("HloModule scatter, num_partitions=16\n") + R"(
mn {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] minimum(a, b)
}
ENTRY main {
  x = f32[10,6,14,4] parameter(0), sharding={devices=[2,2,2,2]<=[16]}
  i = s32[14,10,6,2] parameter(1), sharding={replicated}
  u = f32[14,10,6,2] parameter(2), sharding={replicated}
  ROOT s = f32[10,6,14,4] scatter(x, i, u), update_window_dims={3}, inserted_window_dims={1},
    scatter_dims_to_operand_dims={1,3}, input_batching_dims={0,2},
    scatter_indices_batching_dims={1,0}, index_vector_dim=3, to_apply=mn, sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_NE(p.spmd->ToString().find("f32[5,3,7,4] scatter("), std::string::npos)
      << p.explain << p.spmd->ToString();
  ExpectVerifies(p, 16);
}

// Indices built from iotas address each operand row at its own position (XLA's index-parallel
// dims): the operand splits like the indices, and every device gathers from its own rows. Two
// iota pieces of a concatenate, and one implicit iota over 7 rows on 4 devices (uneven).
TEST(GatherPartitionTest, IotaIndicesSplitTheOperandLikeABatch) {
  Partitioned p = Partition(R"(
HloModule gather, num_partitions=4
ENTRY main {
  x = f32[8,6,3] parameter(0), sharding={devices=[2,2,1]<=[4]}
  r = s32[8] iota(), iota_dimension=0
  c = s32[6] iota(), iota_dimension=0
  rb = s32[8,6,1] broadcast(r), dimensions={0}
  cb = s32[8,6,1] broadcast(c), dimensions={1}
  i = s32[8,6,2] concatenate(rb, cb), dimensions={2}, sharding={devices=[2,2,1]<=[4]}
  ROOT g = f32[8,6,3] gather(x, i), offset_dims={2}, collapsed_slice_dims={0,1},
    start_index_map={0,1}, index_vector_dim=2, slice_sizes={1,1,3},
    sharding={devices=[2,2,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 0) << p.explain << p.spmd->ToString();
  ExpectVerifies(p, 4);
  Partitioned uneven = Partition(R"(
HloModule gather, num_partitions=4
ENTRY main {
  x = f32[7,5] parameter(0), sharding={devices=[4,1]<=[4]}
  i = s32[7] iota(), iota_dimension=0, sharding={devices=[4]<=[4]}
  ROOT g = f32[7,5] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}, sharding={devices=[4,1]<=[4]}
})");
  ASSERT_NE(uneven.spmd, nullptr);
  EXPECT_EQ(hlo::ComputeModuleStats(*uneven.spmd).comm_bytes, 0) << uneven.spmd->ToString();
  ExpectVerifies(uneven, 4);
}

// The scatter form, 7 rows on 4 devices: each device adds its updates into its own rows; the
// padding rows of the last shard land in the operand's padding, never in a real row.
TEST(ScatterPartitionTest, IotaIndicesSplitTheOperandLikeABatch) {
  Partitioned p = Partition(R"(
HloModule scatter, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[7,5] parameter(0), sharding={devices=[4,1]<=[4]}
  i = s32[7,1] iota(), iota_dimension=0, sharding={devices=[4,1]<=[4]}
  u = f32[7,5] parameter(1), sharding={devices=[4,1]<=[4]}
  ROOT s = f32[7,5] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add,
    sharding={devices=[4,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 0) << p.explain << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

TEST(ScatterPartitionTest, IndexSplitWithNonCommutativeCombinerFallsBack) {
  // "Replace" (the combiner returns the update) cannot combine partials: the updates are
  // gathered and the scatter runs whole.
  Partitioned p = Partition(R"(
HloModule scatter, num_partitions=2
replace {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY main {
  x = f32[8,4] parameter(0), sharding={replicated}
  i = s32[6,1] parameter(1), sharding={devices=[2,1]<=[2]}
  u = f32[6,4] parameter(2), sharding={devices=[2,1]<=[2]}
  ROOT s = f32[8,4] scatter(x, i, u), to_apply=replace, update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
  EXPECT_GE(counts[HloOpcode::kAllGather], 1) << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

TEST(ScatterPartitionTest, OperandSplitAlongScatteredDimScattersLocally) {
  // Rows of the operand split 4 ways unevenly (7 rows): each device scatters into its own
  // rows with indices shifted by its offset; updates for other rows fall out of bounds and are
  // dropped. No all-reduce, and the operand is never gathered -- for add and for "replace"
  // (the combiner returns the update), which could not combine partials: each update lands on
  // exactly one row shard.
  for (const char* combiner : {"ROOT s = f32[] add(a, b)", "ROOT r = f32[] copy(b)"}) {
    Partitioned p = Partition(std::string("HloModule scatter, num_partitions=4\n") +
                              "combine {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  " +
                              combiner + "\n}\n" + R"(
ENTRY main {
  x = f32[7,4] parameter(0), sharding={devices=[4,1]<=[4]}
  i = s32[6,1] parameter(1), sharding={replicated}
  u = f32[6,4] parameter(2), sharding={replicated}
  ROOT s = f32[7,4] scatter(x, i, u), to_apply=combine, update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    sharding={devices=[4,1]<=[4]}
})");
    ASSERT_NE(p.spmd, nullptr) << combiner;
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
    EXPECT_EQ(counts[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
}

TEST(ScatterPartitionTest, EvenRowShardsDropOtherRowsByTheShiftAlone) {
  // 8 rows over 4 devices: every shard is as long as the local operand, so an index shifted
  // by the shard's offset is out of bounds exactly when its row is another device's. No
  // compare or select per index; the clamp keeps extreme indices (which the whole scatter
  // drops) from wrapping into range. Signed and unsigned indices.
  const std::pair<const char*, const char*> kIndices[] = {
      {"s32", "{-2147483648}, {-1}, {2147483647}, {-7}"},
      {"s64", "{-9223372036854775807}, {-1}, {4294967296}, {-7}"},
      {"u32", "{4294967295}, {2147483648}, {2147483647}, {4294967288}"}};
  for (const auto& [type, extremes] : kIndices) {
    Partitioned p = Partition(std::string("HloModule scatter, num_partitions=4\n") + kAdd +
                              "ENTRY main {\n  i = " + type + "[12,1] constant({" + extremes +
                              ", {0}, {1}, {2}, {7}, {8}, {3}, {5}, {6}}), sharding={replicated}" +
                              R"(
  x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}
  u = f32[12,4] parameter(1), sharding={replicated}
  ROOT s = f32[8,4] scatter(x, i, u), to_apply=add, update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    sharding={devices=[4,1]<=[4]}
})");
    ASSERT_NE(p.spmd, nullptr) << type;
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kSelect], 0) << p.spmd->ToString();
    EXPECT_EQ(counts[HloOpcode::kCompare], 0) << p.spmd->ToString();
    EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
}

TEST(ScatterPartitionTest, NarrowIndicesDoNotWrapIntoTheShard) {
  // u8 indices into 512 rows over 2 devices: device 1's offset (256) is past what u8 counts,
  // so a shifted index computed in u8 wraps back into its rows (0 - 256 = 0) and writes updates
  // meant for device 0 there too. The shift is done in s32.
  Partitioned p = Partition(std::string("HloModule scatter, num_partitions=2\n") + kAdd + R"(
ENTRY main {
  i = u8[6,1] constant({{0}, {255}, {7}, {100}, {255}, {3}}), sharding={replicated}
  x = f32[512,2] parameter(0), sharding={devices=[2,1]<=[2]}
  u = f32[6,2] parameter(1), sharding={replicated}
  ROOT s = f32[512,2] scatter(x, i, u), to_apply=add, update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    sharding={devices=[2,1]<=[2]}
})");
  ASSERT_NE(p.spmd, nullptr);
  ExpectVerifies(p, 2);
}

TEST(ScatterPartitionTest, EmbeddingGradScatterAddIntoRowSplitTable) {
  // The embedding gradient: updates split along the batch over 2 devices, the table's rows
  // over 4 (10 rows: 3,3,3,1). Each device scatters its batch half into its rows; the halves
  // are summed over the 2 batch devices (f32[3,8] row shards), never the whole table.
  Partitioned p = Partition(std::string("HloModule scatter, num_partitions=8\n") + kAdd + R"(
ENTRY main {
  x = f32[10,8] parameter(0), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  i = s32[16,1] parameter(1), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  u = f32[16,8] parameter(2), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT s = f32[10,8] scatter(x, i, u), to_apply=add, update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Collectives(*p.spmd, "all-reduce").find("f32[10,8]"), std::string::npos)
      << p.spmd->ToString();
  EXPECT_EQ(Collectives(*p.spmd, "all-gather").find("f32[10,8]"), std::string::npos)
      << p.spmd->ToString();
  EXPECT_NE(p.explain.find("masked"), std::string::npos) << p.explain;
  ExpectVerifies(p, 8);
}

TEST(ScatterPartitionTest, EmbeddingGradIntoFullyTiledTableSumsRowShardsOnly) {
  // JAX's embedding gradient under FSDP x TP: zeros scattered into a table whose rows are
  // split by one mesh axis and columns by the other, updates split along the batch by the
  // second axis. Keeping only the row split for the scatter (indices shifted into each row
  // shard) lets the updates keep their batch split: the batch halves are summed over row
  // shards (f32[16,16]), never the whole table (f32[64,16]), which the plan that ignores the
  // table's split all-reduced; the sum reduce-scatters them into the column halves wanted.
  Partitioned p = Partition(std::string("HloModule scatter, num_partitions=8\n") + kAdd + R"(
ENTRY main {
  z = f32[] constant(0)
  x = f32[64,16] broadcast(z), dimensions={}, sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}
  i = s32[32,1] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  u = f32[32,16] parameter(1), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT s = f32[64,16] scatter(x, i, u), to_apply=add, update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    sharding={devices=[4,2]<=[2,4]T(1,0)}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Collectives(*p.spmd, "all-reduce").find("f32[64,16]"), std::string::npos)
      << p.spmd->ToString();
  EXPECT_EQ(Collectives(*p.spmd, "all-gather").find("f32[64,16]"), std::string::npos)
      << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Contains(AllOf(op::ReduceScatter(), HasShape("f32[16,8]"))))
      << p.spmd->ToString();
  ExpectVerifies(p, 8);
}

}  // namespace

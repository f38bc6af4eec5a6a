// Gather and scatter partitioning end to end: operands split along dimensions the op passes
// through (or indexes in parallel) stay split -- no all-gather of the big operand -- and the
// SPMD program matches the unpartitioned module on the CPU executor. Ops that cannot run
// locally fall back to the replicated form and still verify.
#include <string>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_module.h"
#include "tests/partition_test_util.h"

namespace {

using hlo::HloOpcode;
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

TEST(GatherPartitionTest, OperandSplitAlongIndexedDimFallsBackToReplicated) {
  // The operand is split along the dimension the indices pick from: no local form, so the
  // operand is gathered (and the result is still right).
  Partitioned p = Partition(R"(
HloModule gather, num_partitions=2
ENTRY main {
  x = f32[16,4] parameter(0), sharding={devices=[2,1]<=[2]}
  i = s32[3,1] parameter(1), sharding={replicated}
  ROOT g = f32[3,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_GE(Counts(*p.spmd)[HloOpcode::kAllGather], 1) << p.spmd->ToString();
  ExpectVerifies(p, 2);
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

TEST(ScatterPartitionTest, IndexParallelAddCombinesPartialsByAllReduce) {
  // Updates split along their scatter dim: each device scatters its half into zeros, the halves
  // are summed, and the replicated operand is added once. Duplicate indices across devices
  // are what the all-reduce is for.
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
  ExpectVerifies(p, 2);
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

}  // namespace

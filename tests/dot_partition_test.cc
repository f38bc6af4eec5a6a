// End-to-end checks of the dot partitioner (issue 6): each module is partitioned with a chosen
// or forced strategy, its collectives are counted, and the SPMD program is run on the CPU
// executor against the unpartitioned module on random inputs.
#include <map>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/testing/hlo_matchers.h"
#include "runtime/cpu/verify.h"
#include "spmd/partitioner/spmd_partitioner.h"
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

spmd::PartitionerOptions Forced(const std::string& family, const char* model = "h100-nvlink") {
  spmd::PartitionerOptions options;
  options.device_model = *spmd::DeviceModelByName(model);
  options.dot.forced_family = family;
  return options;
}

constexpr char kIssue4062Small[] = R"(
HloModule small4062, num_partitions=8
ENTRY main {
  lhs = f32[64,128] parameter(0), sharding={devices=[4,1,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}
  rhs = f32[128,64] parameter(1), sharding={devices=[1,2,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}
  dot = f32[64,64] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,4]0,1,2,3,4,5,6,7}
  ROOT out = f32[64,64] custom-call(dot), custom_call_target="Sharding", sharding={devices=[2,4]0,1,2,3,4,5,6,7}
})";

TEST(DotPartitionTest, Issue4062ComputesInOperandTilingAndExchangesTheResult) {
  Partitioned p = Partition(kIssue4062Small);
  std::map<HloOpcode, int> counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.explain;
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 0) << p.explain;
  EXPECT_NE(p.explain.find("chose operands"), std::string::npos) << p.explain;
  ExpectVerifies(p, 8);
}

TEST(DotPartitionTest, EveryForcedStrategyOfIssue4062Verifies) {
  for (const char* family : {"operands", "result", "lhs", "rhs", "replicated"}) {
    SCOPED_TRACE(family);
    ExpectVerifies(Partition(kIssue4062Small, Forced(family)), 8);
  }
}

// XLA's DotPartialContracting3: both operands split along the contracting dim and replicated
// 4 ways, the result wanted split along N on the contracting dim's devices. The replicas split
// a result dim among themselves (operands+replicas: each computes half the partial products,
// the rhs sliced where it is replicated), sum over the contracting pairs and move the blocks
// to their owners. Forced, it must verify for each result dim split and with a batch dim.
TEST(DotPartitionTest, ReplicasSplittingTheResultVerify) {
  const char* const modules[] = {R"(
HloModule dpc3, num_partitions=8
ENTRY main {
  lhs = f32[24,100] parameter(0), sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}
  rhs = f32[32,100] parameter(1), sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}
  ROOT dot = f32[24,32] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={1},
    sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}
})",
                                 R"(
HloModule dpc3m, num_partitions=8
ENTRY main {
  lhs = f32[24,100] parameter(0), sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}
  rhs = f32[32,100] parameter(1), sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}
  ROOT dot = f32[24,32] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={1},
    sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
})",
                                 R"(
HloModule batched, num_partitions=8
ENTRY main {
  lhs = f32[2,12,64] parameter(0), sharding={devices=[1,1,2,4]<=[8] last_tile_dim_replicate}
  rhs = f32[2,64,20] parameter(1), sharding={devices=[1,2,1,4]<=[8] last_tile_dim_replicate}
  ROOT dot = f32[2,12,20] dot(lhs, rhs), lhs_batch_dims={0}, rhs_batch_dims={0},
    lhs_contracting_dims={2}, rhs_contracting_dims={1},
    sharding={devices=[2,1,2,2]<=[8] last_tile_dim_replicate}
})"};
  for (const char* text : modules) {
    Partitioned p = Partition(text, Forced("operands+replicas"));
    ASSERT_NE(p.spmd, nullptr) << p.explain;
    EXPECT_NE(p.explain.find("chose operands+replicas"), std::string::npos) << p.explain;
    ExpectVerifies(p, 8);
  }
}

// XLA's TiledDotOutputTiled: each operand is a copy of a replicated parameter, annotated
// split. The rhs can be computed again, moving nothing, in the columns the result wants
// (rebuild.h), so the candidate that wants it there pays its local copy, not a reshard: one
// all-gather of the lhs (16 KiB) where the costing that ignored the rebuild chose a
// reduce-scatter of the partial products (64 KiB).
TEST(DotPartitionTest, OperandRebuiltWhereACandidateWantsIt) {
  Partitioned p = Partition(R"(
HloModule tiled_dot_output_tiled, num_partitions=2
ENTRY main {
  lhs = f32[128,64] parameter(0)
  lhs.copy = f32[128,64] copy(lhs), sharding={devices=[1,2]<=[2]}
  rhs = f32[64,256] parameter(1)
  rhs.copy = f32[64,256] copy(rhs), sharding={devices=[2,1]<=[2]}
  ROOT dot = f32[128,256] dot(lhs.copy, rhs.copy), lhs_contracting_dims={1},
    rhs_contracting_dims={0}, sharding={devices=[1,2]<=[2]}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_NE(p.explain.find("chose result"), std::string::npos) << p.explain;
  EXPECT_NE(p.explain.find("reshard %rhs.copy {devices=[2,1]<=[2]} -> {devices=[1,2]<=[2]}: "
                           "rebuilt from available operands"),
            std::string::npos)
      << p.explain;
  EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 128 * 32 * 4) << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

// Megatron MLP: Y = GeLU(X·A) with A split by columns, Z = Y·B with B split by rows.
constexpr char kMegatron2[] = R"(
HloModule megatron2, num_partitions=2
ENTRY main {
  x = f32[16,32] parameter(0), sharding={replicated}
  a = f32[32,64] parameter(1), sharding={devices=[1,2]0,1}
  b = f32[64,32] parameter(2), sharding={devices=[2,1]0,1}
  y = f32[16,64] dot(x, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[1,2]0,1}
  t = f32[16,64] tanh(y), sharding={devices=[1,2]0,1}
  g = f32[16,64] multiply(y, t), sharding={devices=[1,2]0,1}
  ROOT z = f32[16,32] dot(g, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})";

// The same with data parallelism x tensor parallelism 2x2 on 4 devices.
constexpr char kMegatron4[] = R"(
HloModule megatron4, num_partitions=4
ENTRY main {
  x = f32[16,32] parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  a = f32[32,64] parameter(1), sharding={devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}
  b = f32[64,32] parameter(2), sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}
  y = f32[16,64] dot(x, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,2]0,1,2,3}
  t = f32[16,64] tanh(y), sharding={devices=[2,2]0,1,2,3}
  g = f32[16,64] multiply(y, t), sharding={devices=[2,2]0,1,2,3}
  ROOT z = f32[16,32] dot(g, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
})";

TEST(DotPartitionTest, MegatronMlpIsOneAllReduceAndNoAllGather) {
  for (auto [text, devices] : {std::pair{kMegatron2, 2}, std::pair{kMegatron4, 4}}) {
    Partitioned p = Partition(text);
    std::map<HloOpcode, int> counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << p.spmd->ToString() << p.explain;
    EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
    EXPECT_EQ(counts[HloOpcode::kAllToAll] + counts[HloOpcode::kCollectivePermute] +
                  counts[HloOpcode::kReduceScatter],
              0)
        << p.spmd->ToString();
    ExpectVerifies(p, devices);
  }
}

// X rows split, W columns split, result wanted column-split: the all-gather of X becomes a
// ring loop (free dim), on 4 and 8 devices.
std::string AllGatherCase(int devices, bool contracting) {
  const std::string n = std::to_string(devices);
  const std::string lhs = contracting ? "{devices=[1," + n + "]<=[" + n + "]}"
                                      : "{devices=[" + n + ",1]<=[" + n + "]}";
  return "HloModule ag, num_partitions=" + n + "\nENTRY main {\n" +
         "  x = f32[48,48] parameter(0), sharding=" + lhs + "\n" +
         "  w = f32[48,96] parameter(1), sharding={devices=[1," + n + "]<=[" + n + "]}\n" +
         "  ROOT d = f32[48,96] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
         "sharding={devices=[1," + n + "]<=[" + n + "]}\n}\n";
}

// Both operands split along the contracting dim, result wanted row-split: the reduce-scatter
// becomes a ring loop.
std::string ReduceScatterCase(int devices) {
  const std::string n = std::to_string(devices);
  return "HloModule rs, num_partitions=" + n + "\nENTRY main {\n" +
         "  x = f32[32,48] parameter(0), sharding={devices=[1," + n + "]<=[" + n + "]}\n" +
         "  w = f32[48,24] parameter(1), sharding={devices=[" + n + ",1]<=[" + n + "]}\n" +
         "  ROOT d = f32[32,24] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
         "sharding={devices=[" + n + ",1]<=[" + n + "]}\n}\n";
}

TEST(DotPartitionTest, WindowedAllGatherLoopsVerify) {
  for (int devices : {4, 8}) {
    for (bool contracting : {false, true}) {
      SCOPED_TRACE(devices);
      SCOPED_TRACE(contracting);
      Partitioned p = Partition(AllGatherCase(devices, contracting), Forced("windowed-ag"));
      std::map<HloOpcode, int> counts = Counts(*p.spmd);
      EXPECT_EQ(counts[HloOpcode::kWhile], 1) << p.explain;
      EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
      EXPECT_EQ(counts[HloOpcode::kCollectivePermute], 1) << p.spmd->ToString();
      ExpectVerifies(p, devices);
    }
  }
}

// Both ways round the ring: odd (3) and even (4, 8) ring sizes, free and contracting dims.
TEST(DotPartitionTest, BidirectionalAllGatherLoopsVerify) {
  for (int devices : {3, 4, 8}) {
    for (bool contracting : {false, true}) {
      SCOPED_TRACE(devices);
      SCOPED_TRACE(contracting);
      Partitioned p = Partition(AllGatherCase(devices, contracting), Forced("windowed-ag-bidir"));
      std::map<HloOpcode, int> counts = Counts(*p.spmd);
      EXPECT_EQ(counts[HloOpcode::kWhile], 1) << p.explain;
      EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
      // Two permutes per loop step; even rings add a last one-way transfer.
      EXPECT_EQ(counts[HloOpcode::kCollectivePermute], devices % 2 == 0 ? 3 : 2)
          << p.spmd->ToString();
      // The first step, before the loop, starts a sum with its own partial: nothing adds zeros.
      for (const auto& instr : p.spmd->entry_computation()->instructions()) {
        if (instr->opcode() != HloOpcode::kAdd || !instr->shape().IsArray()) continue;
        for (const hlo::HloInstruction* operand : instr->operands()) {
          EXPECT_NE(operand->opcode(), HloOpcode::kBroadcast) << instr->ToString();
        }
      }
      ExpectVerifies(p, devices);
    }
  }
}

TEST(DotPartitionTest, WindowedReduceScatterLoopsVerify) {
  for (int devices : {4, 8}) {
    SCOPED_TRACE(devices);
    Partitioned p = Partition(ReduceScatterCase(devices), Forced("windowed-rs"));
    std::map<HloOpcode, int> counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kWhile], 1) << p.explain;
    EXPECT_EQ(counts[HloOpcode::kReduceScatter], 0) << p.spmd->ToString();
    EXPECT_EQ(counts[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
    ExpectVerifies(p, devices);
  }
}

// Every instruction of a windowed loop (its ring permutes included) names the dot it serves,
// so --by-source can attribute the loop's bytes: the loop body also holds the local dot, which
// carries the dot's metadata itself, and that must not leave the permutes without it.
TEST(DotPartitionTest, WindowedLoopsNameTheirDot) {
  const std::string metadata =
      R"(metadata={op_name="mlp/wi/dot_general" source_file="m.py" source_line=7})";
  const std::string module = ReduceScatterCase(4);
  const std::string with_metadata =
      module.substr(0, module.size() - 3) + ", " + metadata + "\n}\n";  // On the root dot.
  for (const char* family : {"windowed-rs", "windowed-rs-bidir"}) {
    SCOPED_TRACE(family);
    Partitioned p = Partition(with_metadata, Forced(family));
    int collectives = 0;
    for (const auto& computation : p.spmd->computations()) {
      for (const auto& instr : computation->instructions()) {
        if (instr->opcode() != HloOpcode::kCollectivePermute) continue;
        ++collectives;
        EXPECT_EQ(instr->attrs().metadata.op_name, "mlp/wi/dot_general") << instr->ToString();
      }
    }
    EXPECT_GE(collectives, 1) << p.spmd->ToString();
  }
}

// Each block's halves summed travelling opposite ways round the ring.
TEST(DotPartitionTest, BidirectionalReduceScatterLoopsVerify) {
  for (int devices : {4, 8}) {
    SCOPED_TRACE(devices);
    Partitioned p = Partition(ReduceScatterCase(devices), Forced("windowed-rs-bidir"));
    std::map<HloOpcode, int> counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kWhile], 1) << p.explain;
    EXPECT_EQ(counts[HloOpcode::kReduceScatter], 0) << p.spmd->ToString();
    EXPECT_EQ(counts[HloOpcode::kAllReduce], 0) << p.spmd->ToString();
    EXPECT_EQ(counts[HloOpcode::kCollectivePermute], 2) << p.spmd->ToString();
    EXPECT_NE(p.explain.find("windowed-rs-bidir"), std::string::npos) << p.explain;
    ExpectVerifies(p, devices);
  }
}

TEST(DotPartitionTest, ReduceScatterFinishVerifies) {
  spmd::PartitionerOptions options;
  options.dot.enable_windowed_einsum = false;
  Partitioned p = Partition(ReduceScatterCase(4), options);
  std::map<HloOpcode, int> counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kReduceScatter], 1) << p.spmd->ToString() << p.explain;
  ExpectVerifies(p, 4);
}

// Uneven contracting split: padding must be zeroed before the partial dots.
TEST(DotPartitionTest, UnevenContractingSplitIsMasked) {
  constexpr char kText[] = R"(
HloModule uneven, num_partitions=4
ENTRY main {
  x = f32[8,10] parameter(0), sharding={devices=[1,4]<=[4]}
  w = f32[10,6] parameter(1), sharding={devices=[4,1]<=[4]}
  ROOT d = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})";
  Partitioned p = Partition(kText);
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllReduce], 1) << p.spmd->ToString() << p.explain;
  ExpectVerifies(p, 4);
}

// A contracted dim split so that each device's block is wholly data or wholly padding (3
// positions on 4 devices: the last holds none; XLA's ConvAsDotOnTrivialDims splits a size-1
// window dim 2 ways): zeroing the small partial result of the devices holding padding is
// cheaper than zeroing both operands' padding (each a full copy of the operand).
TEST(DotPartitionTest, WhollyPaddedContractedBlocksZeroTheResult) {
  Partitioned p = Partition(R"(
HloModule padded_block, num_partitions=4
ENTRY main {
  x = f32[8,3,32] parameter(0), sharding={devices=[1,4,1]<=[4]}
  w = f32[3,32,4] parameter(1), sharding={devices=[4,1,1]<=[4]}
  ROOT d = f32[8,4] dot(x, w), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}, sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllReduce], 1) << p.spmd->ToString() << p.explain;
  for (const hlo::HloInstruction* instr : Instructions(*p.spmd)) {
    if (instr->opcode() != HloOpcode::kSelect) continue;
    EXPECT_EQ(instr->shape().ToString(), "f32[8,4]") << p.spmd->ToString();
  }
  ExpectVerifies(p, 4);
}

// Batch dims and a 2-D mesh: batch split by one axis, contracting by the other.
TEST(DotPartitionTest, BatchAndContractingOnTwoMeshAxesVerify) {
  constexpr char kText[] = R"(
HloModule batched, num_partitions=8
ENTRY main {
  x = f32[4,16,24] parameter(0), sharding={devices=[2,1,4]<=[8]}
  w = f32[4,24,8] parameter(1), sharding={devices=[2,4,1]<=[8]}
  ROOT d = f32[4,16,8] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, sharding={devices=[2,4,1]<=[8]}
})";
  Partitioned p = Partition(kText);
  ExpectVerifies(p, 8);
  for (const char* family : {"operands", "result", "replicated", "windowed-rs"}) {
    SCOPED_TRACE(family);
    ExpectVerifies(Partition(kText, Forced(family)), 8);
  }
}

}  // namespace

namespace {

// An unreduced result keeps the contracting split's partial sums: no collective at all (the
// executor's verification sums each unreduced group).
TEST(DotPartitionTest, UnreducedResultKeepsPartialSums) {
  constexpr char kText[] = R"(
HloModule unreduced, num_partitions=8
ENTRY main {
  a = f32[8,64] parameter(0), sharding={devices=[2,2,2]<=[2,2,2]T(0,1,2) last_tile_dim_replicate}
  b = f32[64,16] parameter(1), sharding={devices=[2,2,2]<=[2,2,2]T(1,2,0) last_tile_dim_replicate}
  ROOT dot = f32[8,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={unreduced}}
})";
  Partitioned p = Partition(kText);
  std::map<HloOpcode, int> counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 0) << p.spmd->ToString() << p.explain;
  EXPECT_NE(p.explain.find("+unreduced"), std::string::npos) << p.explain;
  ExpectVerifies(p, 8);
}

// From unreduced to replicated: one all-reduce over each unreduced group.
TEST(DotPartitionTest, UnreducedParameterIsAllReducedForAReplicatedUse) {
  constexpr char kText[] = R"(
HloModule unreduced_param, num_partitions=4
ENTRY main {
  p = f32[8,16] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dims={unreduced}}
  ROOT n = f32[8,16] negate(p), sharding={replicated}
})";
  Partitioned p = Partition(kText);
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

}  // namespace

namespace {

// Reduces over split dims with an init value that is not the reducer's identity (random here)
// and uneven padding: the init must count once, not once per device (sum, max, and a product
// in f32; also an s32 max).
TEST(ReducePartitionTest, NonIdentityInitCountsOnce) {
  for (const char* op : {"add", "maximum", "multiply"}) {
    SCOPED_TRACE(op);
    const std::string text = std::string(R"(
HloModule reduce_init, num_partitions=4
r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] )") + op + R"((a, b)
}
ENTRY main {
  x = f32[7,6] parameter(0), sharding={devices=[2,2]<=[4]}
  init = f32[] parameter(1)
  ROOT s = f32[6] reduce(x, init), dimensions={0}, to_apply=r, sharding={devices=[2,2]<=[4] last_tile_dim_replicate}
})";
    Partitioned p = Partition(text);
    EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
  constexpr char kIntMax[] = R"(
HloModule reduce_int, num_partitions=2
r {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] maximum(a, b)
}
ENTRY main {
  x = s32[5] parameter(0), sharding={devices=[2]<=[2]}
  init = s32[] parameter(1)
  ROOT s = s32[] reduce(x, init), dimensions={0}, to_apply=r
})";
  ExpectVerifies(Partition(kIntMax), 2);
}

// Padding along a kept dim only reaches the result's padding: a reduce over whole dims of an
// operand split unevenly along the others masks nothing (XLA's ShardedReduceForwardPass).
TEST(ReducePartitionTest, KeptDimsPaddingIsNotMasked) {
  Partitioned p = Partition(R"(
HloModule reduce_kept, num_partitions=2
r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[4,7] parameter(0), sharding={devices=[1,2]<=[2]}
  init = f32[] parameter(1)
  ROOT s = f32[7] reduce(x, init), dimensions={0}, to_apply=r, sharding={devices=[2]<=[2]}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kSelect], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce] + counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

constexpr char kArgmax[] = R"(
argmax {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = f32[] select(gt, a, b)
  k = s32[] select(gt, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}
sum_pair {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  s = f32[] add(a, b)
  n = s32[] add(i, j)
  ROOT t = (f32[], s32[]) tuple(s, n)
}
)";

// A variadic reduce (argmax) over a split, uneven dim with random inits: each device reduces its
// block, the partial (value, index) pairs are gathered (not the operands) and reduced again.
TEST(ReducePartitionTest, ArgmaxOverASplitDimGathersPartialResults) {
  Partitioned p = Partition(std::string("HloModule argmax, num_partitions=4\n") + kArgmax + R"(
ENTRY main {
  x = f32[6,7] parameter(0), sharding={devices=[2,2]<=[4]}
  i = s32[6,7] iota(), iota_dimension=1, sharding={devices=[2,2]<=[4]}
  v0 = f32[] parameter(1)
  i0 = s32[] parameter(2)
  ROOT r = (f32[6], s32[6]) reduce(x, i, v0, i0), dimensions={1}, to_apply=argmax,
    sharding={{devices=[2,2]<=[4] last_tile_dim_replicate},
              {devices=[2,2]<=[4] last_tile_dim_replicate}}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::AllGather(), HasShape("(f32[2,3], s32[2,3])"))))
      << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd), Not(Contains(AllOf(op::AllGather(), HasShape("f32[3,8]")))));
  ExpectVerifies(p, 4);
}

// JAX's argmax reducer (NaN first; a tie on the value goes to the lower index through a second
// predicate) over a split dim, on values with many ties (floor of 2x): partial (value, index)
// pairs are gathered and reduced again, and the lowest index of the maximum still wins.
TEST(ReducePartitionTest, JaxArgmaxWithTiesGathersPartialResults) {
  Partitioned p = Partition(R"(HloModule argmax, num_partitions=4
argmax {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  nan = pred[] compare(a, a), direction=NE
  pv = pred[] or(gt, nan)
  v = f32[] select(pv, a, b)
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lt)
  pi = pred[] or(pv, tie)
  k = s32[] select(pi, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}
ENTRY main {
  x = f32[6,64] parameter(0), sharding={devices=[1,4]<=[4]}
  two = f32[] constant(2)
  t = f32[6,64] broadcast(two), dimensions={}
  m = f32[6,64] multiply(x, t), sharding={devices=[1,4]<=[4]}
  f = f32[6,64] floor(m), sharding={devices=[1,4]<=[4]}
  i = s32[6,64] iota(), iota_dimension=1, sharding={devices=[1,4]<=[4]}
  v0 = f32[] constant(-inf)
  i0 = s32[] constant(0)
  ROOT r = (f32[6], s32[6]) reduce(f, i, v0, i0), dimensions={1}, to_apply=argmax,
    sharding={{replicated}, {replicated}}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_THAT(Instructions(*p.spmd), Not(Contains(AllOf(op::AllGather(), HasShape("f32[6,64]")))))
      << p.spmd->ToString();
  EXPECT_THAT(Instructions(*p.spmd),
              Contains(AllOf(op::AllGather(), HasShape("(f32[4,6], s32[4,6])"))))
      << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// Variadic reduces that need no partial results run where the data is: kept dims split (the
// reduced dim whole), or all on one device. A tuple reducer that is not selecting (a sum pair,
// whose init would count once per block) gathers the split reduced dim instead.
TEST(ReducePartitionTest, VariadicReducesRunWhereTheDataIs) {
  Partitioned local = Partition(std::string("HloModule local, num_partitions=2\n") + kArgmax + R"(
ENTRY main {
  x = f32[6,7] parameter(0), sharding={devices=[2,1]<=[2]}
  i = s32[6,7] parameter(1), sharding={devices=[2,1]<=[2]}
  v0 = f32[] parameter(2)
  i0 = s32[] parameter(3)
  ROOT r = (f32[6], s32[6]) reduce(x, i, v0, i0), dimensions={1}, to_apply=argmax,
    sharding={{devices=[2]<=[2]}, {devices=[2]<=[2]}}
})");
  Partitioned one = Partition(std::string("HloModule one, num_partitions=2\n") + kArgmax + R"(
ENTRY main {
  x = f32[6,7] parameter(0), sharding={maximal device=1}
  i = s32[6,7] parameter(1), sharding={maximal device=1}
  v0 = f32[] parameter(2), sharding={maximal device=1}
  i0 = s32[] parameter(3), sharding={maximal device=1}
  ROOT r = (f32[6], s32[6]) reduce(x, i, v0, i0), dimensions={1}, to_apply=argmax,
    sharding={{maximal device=1}, {maximal device=1}}
})");
  for (const Partitioned* p : {&local, &one}) {
    ASSERT_NE(p->spmd, nullptr);
    auto counts = Counts(*p->spmd);
    EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllReduce] +
                  counts[HloOpcode::kCollectivePermute],
              0)
        << p->spmd->ToString();
    ExpectVerifies(*p, 2);
  }
  Partitioned sums = Partition(std::string("HloModule sums, num_partitions=2\n") + kArgmax + R"(
ENTRY main {
  x = f32[6,7] parameter(0), sharding={devices=[1,2]<=[2]}
  i = s32[6,7] parameter(1), sharding={devices=[1,2]<=[2]}
  v0 = f32[] parameter(2)
  i0 = s32[] parameter(3)
  ROOT r = (f32[6], s32[6]) reduce(x, i, v0, i0), dimensions={1}, to_apply=sum_pair
})");
  ASSERT_NE(sums.spmd, nullptr);
  ExpectVerifies(sums, 2);
}

}  // namespace

namespace {

// Tilings over a subset of the devices (as in XLA's propagation tests): gathered to every
// device by a masked all-reduce, sliced back out for a subset target; uneven tiles included.
TEST(SubsetShardingTest, ReshardsToAndFromTilingsOverSomeDevices) {
  constexpr char kText[] = R"(
HloModule subset, num_partitions=4
ENTRY main {
  p = f32[5,3] parameter(0), sharding={devices=[2,1]0,1}
  q = f32[5,3] parameter(1), sharding={devices=[1,3]0,1,3}
  n = f32[5,3] negate(p), sharding={devices=[4,1]<=[4]}
  a = f32[5,3] add(n, q), sharding={devices=[1,2,2]2,3,1,0 last_tile_dim_replicate}
  ROOT r = f32[5,3] multiply(a, a), sharding={devices=[1,2]3,1}
})";
  Partitioned p = Partition(kText);
  EXPECT_GE(Counts(*p.spmd)[HloOpcode::kAllReduce], 2) << p.spmd->ToString();
  EXPECT_NE(p.explain.find("gather-subset"), std::string::npos) << p.explain;
  EXPECT_NE(p.explain.find("slice-subset"), std::string::npos) << p.explain;
  ExpectVerifies(p, 4);
}

// Ragged-dot runs on the result's batch and free tiles (ragged and group dims whole): each
// device computes its own block instead of the whole ragged-dot.
TEST(RaggedDotPartitionTest, NonContractingModeSplitsBatchAndRhsFreeDims) {
  Partitioned p = Partition(R"(
HloModule ragged, num_partitions=4
ENTRY main {
  a = f32[4,12,16] parameter(0), sharding={devices=[2,1,1,2]<=[4] last_tile_dim_replicate}
  b = f32[3,4,16,8] parameter(1), sharding={devices=[1,2,1,2]<=[4]}
  c = s32[4,3] parameter(2), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  ROOT d = f32[4,12,8] ragged-dot(a, b, c), lhs_batch_dims={0}, rhs_batch_dims={1},
    lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={0},
    sharding={devices=[2,1,2]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  const std::string text = p.spmd->ToString();
  EXPECT_NE(text.find("f32[2,12,4] ragged-dot("), std::string::npos) << text;
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllReduce], 0) << text;
  ExpectVerifies(p, 4);
}

TEST(RaggedDotPartitionTest, ContractingModeKeepsTheGroupDimWhole) {
  Partitioned p = Partition(R"(
HloModule ragged, num_partitions=4
ENTRY main {
  a = f32[6,10,16] parameter(0), sharding={devices=[2,2,1]<=[4]}
  b = f32[6,16,5] parameter(1), sharding={devices=[2,1,1,2]<=[4] last_tile_dim_replicate}
  c = s32[6,3] parameter(2), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  ROOT d = f32[3,6,10,5] ragged-dot(a, b, c), lhs_batch_dims={0}, rhs_batch_dims={0},
    lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={2},
    sharding={devices=[1,2,2,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  const std::string text = p.spmd->ToString();
  // The group dim (0) is whole; batch splits 2 ways and lhs rows 2 ways.
  EXPECT_NE(text.find("f32[3,3,5,5] ragged-dot("), std::string::npos) << text;
  ExpectVerifies(p, 4);
}

// __op$block_scaled_dot runs on batch and free-dim tiles with each scale tiled like its operand
// (its blocks along K stay whole), instead of the whole dot on every device.
TEST(BlockScaledDotPartitionTest, BatchAndFreeDimsSplitWithTheirScales) {
  Partitioned p = Partition(R"(
HloModule mx, num_partitions=8
ENTRY main {
  lhs = f8e4m3fn[4,8,64] parameter(0), sharding={devices=[2,2,1,2]<=[8] last_tile_dim_replicate}
  lhs_scale = f8e8m0fnu[4,8,2] parameter(1), sharding={replicated}
  rhs = f8e4m3fn[4,6,64] parameter(2), sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
  rhs_scale = f8e8m0fnu[4,6,2] parameter(3), sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
  ROOT d = f32[4,8,6] custom-call(lhs, rhs, lhs_scale, rhs_scale),
    custom_call_target="__op$block_scaled_dot", sharding={devices=[2,2,2]<=[8]}
})");
  ASSERT_NE(p.spmd, nullptr);
  const std::string text = p.spmd->ToString();
  EXPECT_NE(text.find("f32[2,4,3] custom-call("), std::string::npos) << text;
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 0) << text;
  ExpectVerifies(p, 8);
}

// Operands split along the batch, the result wanted split along M (XLA's
// MXCustomCall_BatchAndBatch): the dot runs on the batch tiles where the operands are and the
// small result is resharded, instead of gathering the larger rhs to every device.
TEST(BlockScaledDotPartitionTest, ComputesWhereTheOperandsAreWhenTheResultMovesLess) {
  Partitioned p = Partition(R"(
HloModule mx_batch, num_partitions=4
ENTRY main {
  lhs = f8e4m3fn[4,8,64] parameter(0), sharding={devices=[4,1,1]<=[4]}
  lhs_scale = f8e8m0fnu[4,8,2] parameter(1), sharding={devices=[4,1,1]<=[4]}
  rhs = f8e4m3fn[4,64,64] parameter(2), sharding={devices=[4,1,1]<=[4]}
  rhs_scale = f8e8m0fnu[4,64,2] parameter(3), sharding={devices=[4,1,1]<=[4]}
  ROOT d = f32[4,8,64] custom-call(lhs, rhs, lhs_scale, rhs_scale),
    custom_call_target="__op$block_scaled_dot", sharding={devices=[1,4,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  const std::string text = p.spmd->ToString();
  EXPECT_NE(text.find("f32[1,8,64] custom-call("), std::string::npos) << text;
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllGather], 0) << text;
  ExpectVerifies(p, 4);
}

// Operands split along K (XLA's MXCustomCall_ContractingAndContracting and
// _ContractingAndReplicated): every device runs the op on its K block of all four operands
// (the scales' blocks align with the tiles) and the partial results are summed, reduce-scattered
// into a result split as many ways along M, all-reduced into a replicated one; nothing is
// gathered.
TEST(BlockScaledDotPartitionTest, SplitContractingDimSumsPartialResults) {
  struct Case {
    std::string result_sharding, rhs_sharding;
    HloOpcode sum;
  };
  for (const Case& c :
       {Case{"{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}", HloOpcode::kReduceScatter},
        Case{"{replicated}", "{replicated}", HloOpcode::kAllReduce}}) {
    SCOPED_TRACE(c.result_sharding);
    Partitioned p = Partition(R"(
HloModule mx_k, num_partitions=4
ENTRY main {
  lhs = f8e4m3fn[32,256] parameter(0), sharding={devices=[1,4]<=[4]}
  lhs_scale = f8e8m0fnu[32,8] parameter(1), sharding={devices=[1,4]<=[4]}
  rhs = f8e4m3fn[64,256] parameter(2), sharding=)" +
                              c.rhs_sharding + R"(
  rhs_scale = f8e8m0fnu[64,8] parameter(3), sharding=)" +
                              c.rhs_sharding + R"(
  ROOT d = f32[32,64] custom-call(lhs, rhs, lhs_scale, rhs_scale),
    custom_call_target="__op$block_scaled_dot", sharding=)" +
                              c.result_sharding + R"(
})");
    ASSERT_NE(p.spmd, nullptr);
    const std::string text = p.spmd->ToString();
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << text;
    EXPECT_EQ(counts[c.sum], 1) << text;
    EXPECT_NE(text.find("f32[32,64] custom-call("), std::string::npos) << text;
    ExpectVerifies(p, 4);
  }
}

// XLA's MXCustomCall_ContractingNonContractingAndContractingNonContracting1: every operand
// split along M (or N) and K. The lhs keeps both splits, the rhs and its scale are taken split
// like it along K and whole along N (one all-gather each), and the partial results, split
// along M, are summed over the K pairs; the lhs is never gathered along K.
TEST(BlockScaledDotPartitionTest, ContractingSplitKeepsTheLhsOtherTiles) {
  Partitioned p = Partition(R"(
HloModule mx_mk, num_partitions=8
ENTRY main {
  lhs = f8e4m3fn[64,256] parameter(0), sharding={devices=[4,2]<=[8]}
  lhs_scale = f8e8m0fnu[64,8] parameter(1), sharding={devices=[4,2]<=[8]}
  rhs = f8e4m3fn[32,256] parameter(2), sharding={devices=[4,2]<=[8]}
  rhs_scale = f8e8m0fnu[32,8] parameter(3), sharding={devices=[4,2]<=[8]}
  ROOT d = f32[64,32] custom-call(lhs, rhs, lhs_scale, rhs_scale),
    custom_call_target="__op$block_scaled_dot", sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  const std::string text = p.spmd->ToString();
  EXPECT_NE(text.find("f32[16,32] custom-call("), std::string::npos) << text << p.explain;
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllReduce], 1) << text;
  ExpectVerifies(p, 8);
}

// ... but only where the tiles it keeps cut the scales on block boundaries: here M's 4 tiles
// of 2 rows would each read half of a 4-row scale block, so M is not kept split with K.
TEST(BlockScaledDotPartitionTest, ContractingSplitNeedsScaleBlocksAlignedWithKeptTiles) {
  Partitioned p = Partition(R"(
HloModule mx_unaligned, num_partitions=8
ENTRY main {
  lhs = f8e4m3fn[8,32] parameter(0), sharding={devices=[4,2]<=[8]}
  lhs_scale = f8e8m0fnu[2,4] parameter(1), sharding={replicated}
  rhs = f8e4m3fn[16,32] parameter(2), sharding={devices=[4,2]<=[8]}
  rhs_scale = f8e8m0fnu[16,4] parameter(3), sharding={replicated}
  ROOT d = f32[8,16] custom-call(lhs, rhs, lhs_scale, rhs_scale),
    custom_call_target="__op$block_scaled_dot", sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  ExpectVerifies(p, 8);
}

// XLA's EinsumRHSWindowedNonContractingNoDoubleAG: two dots read the same rhs alike with lhs
// operands of one shape and sharding. Gathering the rhs once serves both (the second finds it
// gathered), so each counts half of it: 21 MB in all, where gathering each lhs moved 25 MB.
TEST(DotSharedOperandTest, OneGatherOfASharedOperandServesEveryDotReadingItAlike) {
  Partitioned p = Partition(R"(
HloModule shared_rhs, num_partitions=2
ENTRY main {
  lhs = f32[32,24,64,128] parameter(0), sharding={devices=[1,2,1,1]<=[2]}
  rhs = f32[32,40,64,128] parameter(1), sharding={devices=[1,2,1,1]<=[2]}
  lhs2 = f32[32,24,64,128] parameter(2), sharding={devices=[1,2,1,1]<=[2]}
  d1 = f32[32,24,40] dot(lhs, rhs), lhs_batch_dims={0}, lhs_contracting_dims={2,3},
    rhs_batch_dims={0}, rhs_contracting_dims={2,3}, sharding={devices=[1,2,1]<=[2]}
  d2 = f32[32,24,40] dot(lhs2, rhs), lhs_batch_dims={0}, lhs_contracting_dims={2,3},
    rhs_batch_dims={0}, rhs_contracting_dims={2,3}, sharding={devices=[1,2,1]<=[2]}
  ROOT t = (f32[32,24,40], f32[32,24,40]) tuple(d1, d2),
    sharding={{devices=[1,2,1]<=[2]}, {devices=[1,2,1]<=[2]}}
})");
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 1) << p.spmd->ToString() << p.explain;
  EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 32 * 20 * 64 * 128 * 4)
      << p.spmd->ToString() << p.explain;
  ExpectVerifies(p, 2);
}

}  // namespace

// Convolution strategies beside the output tiles (spmd/partitioner/convolution_handler.cc):
// the kernel-window split (input and kernel split along a window dim, partial results summed),
// output features split along whole batch groups, and results computed in a sharding aligned
// with an operand and then resharded. Each case checks the strategy chosen (--explain) and the
// bytes it moves, and verifies the SPMD program against the unpartitioned module on random
// data, including uneven shards, dilation, negative padding and strides.
#include <string>
#include <tuple>

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

std::string S(int64_t v) { return std::to_string(v); }

// A weight-gradient convolution f32[16,N,6,3] x f32[16,K,3,5] -> f32[M,4,3,5]
// (f01b_i01o->01bf, contracting 16 features) on `t` devices with window `window` along the first
// spatial dim (size K) and size 3 along the second; `lhs` and `rhs` are the operands' shardings,
// the result is replicated unless `out` says otherwise.
std::string WeightGradient(int t, int n, int k, int m, const std::string& window,
                           const std::string& lhs, const std::string& rhs,
                           const std::string& out = "{replicated}") {
  return "HloModule wgrad, num_partitions=" + S(t) + "\nENTRY main {\n  x = f32[16," + S(n) +
         ",6,3] parameter(0), sharding=" + lhs + "\n  g = f32[16," + S(k) +
         ",3,5] parameter(1), sharding=" + rhs + "\n  ROOT c = f32[" + S(m) +
         ",4,3,5] convolution(x, g), window={size=" + S(k) + "x3 " + window +
         "}, dim_labels=f01b_i01o->01bf, sharding=" + out + "\n}\n";
}

std::string SplitDim1(int t) { return "{devices=[1," + S(t) + ",1,1]<=[" + S(t) + "]}"; }

bool Chose(const Partitioned& p, const std::string& strategy) {
  return p.explain.find(": " + strategy) != std::string::npos;
}

// Both operands split along the window dim the kernel spans whole (XLA's
// ConvolutionLhsTiledRhsTiled): each device convolves its input shard with its kernel shard
// and one all-reduce of the f32[1,4,3,5] result sums them; nothing else moves (gathering or
// all-to-all of the operands moved 128 MB per device on the corpus module).
TEST(ConvolutionPartitionTest, KernelWindowSplitSumsPartialResults) {
  Partitioned p = Partition(WeightGradient(2, 16, 16, 1, "", SplitDim1(2), SplitDim1(2)));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_TRUE(Chose(p, "kernel window split")) << p.explain;
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllToAll] + counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 240) << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

// The weight gradient of a data- and sequence-parallel layer (JAX probe strided_conv_grad):
// both operands split along the contracted features (the activations' batch) and along the
// window dim the kernel spans. The result's replication devices split both at once, the
// features 2 ways and the kernel window 4 ways, in the device order the operands hold them:
// nothing moves but halos and one all-reduce of the f32[3,4,3,5] result (we gathered both
// operands, 60 KiB per device, when a summing strategy could split only one dim).
TEST(ConvolutionPartitionTest, KernelWindowAndContractingSplitTogether) {
  for (const bool features_major : {true, false}) {
    SCOPED_TRACE(features_major ? "features major" : "window major");
    const std::string sharding =
        features_major ? "{devices=[2,4,1,1]<=[8]}" : "{devices=[2,4,1,1]<=[4,2]T(1,0)}";
    Partitioned p =
        Partition(WeightGradient(8, 32, 16, 3, "pad=0_1 rhs_dilate=2", sharding, sharding));
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_TRUE(Chose(p,
                      "kernel window split of dimension 1 over 4 devices (halo exchange) and "
                      "contracting split over 2"))
        << p.explain;
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
    EXPECT_EQ(counts[HloOpcode::kAllToAll] + counts[HloOpcode::kAllGather], 0)
        << p.spmd->ToString();
    ExpectVerifies(p, 8);
  }
  // Uneven kernel blocks (15 positions over 4), or operands split unlike any such pairing:
  // still correct.
  for (const auto& [lhs, rhs] :
       {std::pair<std::string, std::string>{"{devices=[2,4,1,1]<=[8]}", "{devices=[2,4,1,1]<=[8]}"},
        {"{devices=[4,2,1,1]<=[8]}",
         "{devices=[2,2,1,1,2]<=[8] "
         "last_tile_dim_replicate}"}}) {
    SCOPED_TRACE(lhs + " x " + rhs);
    Partitioned p = Partition(WeightGradient(8, 30, 15, 3, "pad=0_1 rhs_dilate=2", lhs, rhs));
    ASSERT_NE(p.spmd, nullptr);
    ExpectVerifies(p, 8);
  }
}

// Dilated kernels, negative and positive padding, strides, uneven input and kernel shards, 2
// to 4 devices: halos where a kernel block reads past its input shard, windows sliced when the
// input is whole. Where the output is long (strided case) each block reads most of the input
// and another strategy may win; the program must verify either way.
TEST(ConvolutionPartitionTest, KernelWindowSplitVariantsVerify) {
  struct Case {
    int t, n, k, m;
    std::string window;
    bool lhs_whole;
    bool kernel_split;  // Expected to win.
  };
  const Case cases[] = {
      {2, 14, 7, 1, "pad=0_-1 rhs_dilate=2", false, true},  // NegativeRhsPadding
      {2, 32, 16, 7, "pad=3_2 rhs_dilate=2", false, true},  // WindowDilate: halos both ways
      {4, 14, 7, 1, "pad=0_-1 rhs_dilate=2", false, true},  // UnevenDilatedRHSPartitioned
      {4, 35, 17, 8, "pad=3_2 rhs_dilate=2", false, true},  // uneven input and kernel
      {4, 32, 15, 10, "stride=2 pad=1_1", false, false},    // strided
      {3, 10, 10, 3, "pad=1_1", false, true},               // 3 blocks
      {2, 16, 16, 1, "", true, true},                       // input whole: windows sliced
      {4, 13, 6, 4, "pad=2_-1 rhs_dilate=2", true, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.window + " on " + S(c.t) + ", N=" + S(c.n) + " K=" + S(c.k));
    Partitioned p =
        Partition(WeightGradient(c.t, c.n, c.k, c.m, c.window,
                                 c.lhs_whole ? "{replicated}" : SplitDim1(c.t), SplitDim1(c.t)));
    ASSERT_NE(p.spmd, nullptr);
    if (c.kernel_split) EXPECT_TRUE(Chose(p, "kernel window split")) << p.explain;
    ExpectVerifies(p, c.t);
  }
}

// The result split along its output features and replicated over the pairs that hold the
// input and kernel blocks: the partial sums are reduced within each pair.
TEST(ConvolutionPartitionTest, KernelWindowSplitUnderPartiallyReplicatedResult) {
  Partitioned p = Partition(WeightGradient(
      4, 16, 16, 1, "", "{devices=[1,2,1,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}",
      "{devices=[1,2,1,2]<=[2,2]T(1,0)}", "{devices=[1,1,1,2,2]<=[4] last_tile_dim_replicate}"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_TRUE(Chose(p, "kernel window split")) << p.explain;
  ExpectVerifies(p, 4);
}

// batch_group_count 4 on `t` devices: f32[8,6,3] (b0f) x f32[3,3,8] (0io) -> f32[2,4,8].
std::string BatchGroups(int t, const std::string& lhs, const std::string& rhs,
                        const std::string& out, int out_features = 8) {
  return "HloModule bgc, num_partitions=" + S(t) +
         "\nENTRY main {\n  x = f32[8,6,3] parameter(0), "
         "sharding=" +
         lhs + "\n  k = f32[3,3," + S(out_features) + "] parameter(1), sharding=" + rhs +
         "\n  ROOT c = f32[2,4," + S(out_features) +
         "] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f, batch_group_count=4, "
         "sharding=" +
         out + "\n}\n";
}

// Output features split along whole batch groups, the input batch split alike: each device
// convolves its own groups and nothing moves (we gathered both operands before).
TEST(ConvolutionPartitionTest, BatchGroupsSplitAlongOutputFeatures) {
  for (int t : {2, 4}) {
    SCOPED_TRACE(t);
    const std::string n = S(t);
    Partitioned p = Partition(BatchGroups(t, "{devices=[" + n + ",1,1]<=[" + n + "]}",
                                          "{devices=[1,1," + n + "]<=[" + n + "]}",
                                          "{devices=[1,1," + n + "]<=[" + n + "]}"));
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 0) << p.spmd->ToString();
    ExpectVerifies(p, t);
  }
  // Two output features per group.
  Partitioned p = Partition(BatchGroups(2, "{devices=[2,1,1]<=[2]}", "{devices=[1,1,2]<=[2]}",
                                        "{devices=[1,1,2]<=[2]}", 16));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 0) << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

// The result wanted split along its spatial dim while the operands hold whole batch groups
// (XLA's PartitionConvWithBathGroupCountOutputAlignWithLHS): computing in the operands' split
// and resharding the small result moves less than gathering both operands.
TEST(ConvolutionPartitionTest, ComputesAlignedWithOperandsAndReshardsTheResult) {
  Partitioned p = Partition(
      BatchGroups(2, "{devices=[2,1,1]<=[2]}", "{devices=[1,1,2]<=[2]}", "{devices=[1,2,1]<=[2]}"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_NE(p.explain.find("and resharded"), std::string::npos) << p.explain;
  // Only the result f32[2,4,8] moves: at most half of it per device.
  EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 128) << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

// feature_group_count 16 with the input split 4 ways along features and the result 2 ways
// (XLA's PartitionConvWithFeatureGroupCountAlignWithLHSPartial): computing in the input's
// split and resharding the result beats moving the input.
TEST(ConvolutionPartitionTest, FeatureGroupsAlignWithPartiallyReplicatedInput) {
  Partitioned p = Partition(R"(
HloModule fgc, num_partitions=8
ENTRY main {
  x = f32[4,27,16] parameter(0), sharding={devices=[1,1,4,2]<=[8] last_tile_dim_replicate}
  k = f32[1,27,16] parameter(1), sharding={devices=[1,1,2,4]<=[8] last_tile_dim_replicate}
  ROOT c = f32[5,4,16] convolution(x, k), window={size=27 pad=2_2}, dim_labels=b0f_i0o->0bf,
    feature_group_count=16, sharding={devices=[1,1,2,4]<=[2,4]T(1,0) last_tile_dim_replicate}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_NE(p.explain.find("and resharded"), std::string::npos) << p.explain;
  // Less than the f32[5,4,16] result itself (gathering the input moved 61600 bytes).
  EXPECT_LT(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 1280) << p.spmd->ToString();
  ExpectVerifies(p, 8);
}

// XLA's PartitionConvWithFeatureGroupCountAlignWithOutputPartial: computed in the input's
// split, the result's reshard first slices locally (each device keeps a half of its features),
// then permutes. Computing only that half moves the same bytes at half the FLOPs.
TEST(ConvolutionPartitionTest, AlignedResultIsComputedWhereItsReshardSlices) {
  Partitioned p = Partition(R"(
HloModule fgc_out, num_partitions=8
ENTRY main {
  x = f32[4,275,16] parameter(0), sharding={devices=[1,1,2,4]<=[8] last_tile_dim_replicate}
  k = f32[1,275,16] parameter(1), sharding={devices=[1,1,2,4]<=[8] last_tile_dim_replicate}
  ROOT c = f32[5,4,16] convolution(x, k), window={size=275 pad=2_2}, dim_labels=b0f_i0o->0bf,
    feature_group_count=16, sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
})");
  ASSERT_NE(p.spmd, nullptr);
  const hlo::ModuleStats stats = hlo::ComputeModuleStats(*p.spmd);
  // The quarter of the result each device keeps: 5*4*4 outputs of 275 multiply-adds.
  EXPECT_LE(stats.flops, 2 * 5 * 4 * 4 * 275) << p.explain << p.spmd->ToString();
  EXPECT_LE(stats.comm_bytes, 320) << p.spmd->ToString();
  ExpectVerifies(p, 8);
}

// XLA's TiledDot: a dot written as a convolution (partitioned as the dot it is, conv_as_dot.h),
// its contracting dim split on both operands and the result replicated. Gathering both
// operands moves fewer bytes (48 KiB against the 128 KiB all-reduce) but takes two collectives
// and twice the FLOPs; the choice is by estimated time (each collective's latency counted), so
// the partial products are summed.
TEST(ConvolutionPartitionTest, ChoiceCountsEachCollectivesLatency) {
  Partitioned p = Partition(R"(
HloModule tiled_dot, num_partitions=2
ENTRY main {
  a = f32[128,64] parameter(0), sharding={devices=[1,2]<=[2]}
  b = f32[64,256] parameter(1), sharding={devices=[2,1]<=[2]}
  ROOT c = f32[128,256] convolution(a, b), dim_labels=bf_io->bf, sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_TRUE(Chose(p, "a convolution that is an einsum, partitioned as a dot")) << p.explain;
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

// XLA's ConvolutionLhsTiledRhsTiledWindowReversal: input and kernel split along the reversed
// window dim, the kernel's tiles in reverse device order. Kernel block b (stored positions
// [3b, 3b+3)) applies window offsets counted from the end, so it reads near input shard 1-b:
// the kernel-window split pairs them as they are, one row of halo moves and one all-reduce
// sums the partials (we gathered both operands before: 2.5x XLA's bytes). The same module with
// the kernel in plain order, a window dilation and 3 devices verifies too.
TEST(ConvolutionPartitionTest, ReversedWindowSplitsItsKernelInReverseOrder) {
  auto module = [](int t, int n, const std::string& rhs, const std::string& window) {
    return "HloModule rev, num_partitions=" + S(t) + "\nENTRY main {\n  x = f32[" + S(n) +
           ",4,6] parameter(0), sharding={devices=[" + S(t) + ",1,1]<=[" + S(t) +
           "]}\n  k = f32[5,4,8] parameter(1), sharding=" + rhs +
           "\n  ROOT c = f32[1,6,8] convolution(x, k), window={" + window +
           "}, dim_labels=0fb_0io->0bf, sharding={replicated}\n}\n";
  };
  Partitioned p = Partition(module(2, 5, "{devices=[2,1,1]1,0}", "size=5 rhs_reversal=1"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_TRUE(Chose(p, "kernel window split")) << p.explain;
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[HloOpcode::kAllReduce], 1) << p.spmd->ToString();
  ExpectVerifies(p, 2);
  const std::tuple<int, int, std::string, std::string> cases[] = {
      {2, 5, "{devices=[2,1,1]<=[2]}", "size=5 rhs_reversal=1"},
      {2, 9, "{devices=[2,1,1]1,0}", "size=5 rhs_dilate=2 rhs_reversal=1"},
      {3, 3, "{devices=[3,1,1]2,1,0}", "size=5 pad=1_1 rhs_reversal=1"},
  };
  for (const auto& [t, n, rhs, window] : cases) {
    SCOPED_TRACE(window + " on " + S(t) + ", kernel " + rhs);
    Partitioned q = Partition(module(t, n, rhs, window));
    ASSERT_NE(q.spmd, nullptr);
    ExpectVerifies(q, t);
  }
}

// XLA's ConvAsDotOnTrivialDimsBackward: the result is wanted split along a size-1 spatial dim
// (device 1 holds only padding; propagation splits the input alike), then replicated.
// Computed with that dim whole, the two devices split the kernel window instead and one
// all-reduce of the f32[8,1,1,32] result sums them (1 KiB); the split output tiles fetched
// input halos and gathered the result (6 KiB).
TEST(ConvolutionPartitionTest, WantedSplitDimMayBeComputedWholeAndSummed) {
  Partitioned p = Partition(R"(
HloModule backward, num_partitions=2
ENTRY main {
  a = f32[8,5,5,16] parameter(0), sharding={devices=[1,2,1,1]<=[2]}
  b = f32[5,5,16,32] parameter(1), sharding={replicated}
  c = f32[8,1,1,32] convolution(a, b), window={size=5x5}, dim_labels=b01f_01io->b01f,
    sharding={devices=[1,2,1,1]<=[2]}
  ROOT r = f32[8,1,1,32] copy(c), sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 1024) << p.spmd->ToString() << p.explain;
  ExpectVerifies(p, 2);
}

// XLA's ConvAsDotOnTrivialDimsForward: both operands split on size-1 spatial dims, so device 0
// holds all the data and device 1 padding. A reversed window of size 1 reads what an unreversed
// one does, so the kernel-window split applies: device 0 convolves the whole kernel, device 1
// its zeroed block, and one all-reduce of the f32[128,1,1,1024] result (512 KiB) sums them
// (XLA: 1 MB; gathering the operands: 2.7 to 4.4 MB).
TEST(ConvolutionPartitionTest, ReversedSizeOneWindowSplitsItsKernel) {
  Partitioned p = Partition(R"(
HloModule trivial_dims, num_partitions=2
ENTRY main {
  a = f32[128,1,1,1001] parameter(0), sharding={devices=[1,2,1,1]<=[2]}
  b = f32[1,1,1024,1001] parameter(1), sharding={devices=[1,2,1,1]<=[2]}
  ROOT c = f32[128,1,1,1024] convolution(a, b), window={size=1x1 rhs_reversal=1x1},
    dim_labels=b01f_01oi->b01f
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_TRUE(Chose(p, "kernel window split")) << p.explain;
  EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 524288) << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

// A base-dilated convolution f32[4,N,6,8] x f32[3,3,8,8] -> f32[4,M,6,8] (b01f_01io->b01f) on
// `t` devices, input and result split along the dilated dim.
std::string BaseDilated(int t, int n, int m, const std::string& window) {
  const std::string split = "{devices=[1," + S(t) + ",1,1]<=[" + S(t) + "]}";
  return "HloModule dilated, num_partitions=" + S(t) + "\nENTRY main {\n  x = f32[4," + S(n) +
         ",6,8] parameter(0), sharding=" + split +
         "\n  k = f32[3,3,8,8] parameter(1), sharding={replicated}\n  ROOT c = f32[4," + S(m) +
         ",6,8] convolution(x, k), window={" + window +
         "}, dim_labels=b01f_01io->b01f, sharding=" + split + "\n}\n";
}

// XLA's ConvolutionBaseDilationSameStartPatternLhsTiledRhsReplicated: each output block's
// windows start at the same offset within the block's input shard (Os*stride ==
// Is*lhs_dilate) and read only holes outside it, so each device convolves its own shard
// with adjusted high padding: nothing moves (we gathered the input, 7 MB on the corpus
// module, and computed the whole result, twice XLA's FLOPs). Uneven shards, 2 and 3 devices,
// a reversed kernel; a stride that breaks the pattern still verifies.
TEST(ConvolutionPartitionTest, BaseDilationWithSameStartPatternConvolvesLocally) {
  struct Case {
    int t, n, m;
    std::string window;
    bool local;
  };
  const Case cases[] = {
      {2, 7, 4, "size=3x3 stride=4x1 pad=1_1x1_1 lhs_dilate=2x1 rhs_reversal=1x0", true},
      {2, 8, 4, "size=3x3 stride=4x1 pad=1_1x1_1 lhs_dilate=2x1", true},
      {3, 11, 6, "size=3x3 stride=4x1 pad=1_1x1_1 lhs_dilate=2x1", true},
      {2, 8, 5, "size=3x3 stride=3x1 pad=1_1x1_1 lhs_dilate=2x1", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.window + " on " + S(c.t) + ", N=" + S(c.n));
    Partitioned p = Partition(BaseDilated(c.t, c.n, c.m, c.window));
    ASSERT_NE(p.spmd, nullptr);
    if (c.local) {
      EXPECT_EQ(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 0) << p.spmd->ToString();
    }
    ExpectVerifies(p, c.t);
  }
}

// XLA's ConvolutionBaseDilationStride1LhsTiledRhsReplicated: the blocks' windows start at
// different offsets within their shards, so each device fetches the inputs its windows read
// (one row from its neighbour here, 768 bytes), convolves them base-dilated with one shared
// low padding and keeps its outputs from its own offset (halo_exchange.h DilatedWindow). We
// gathered the input before (7 MB on the corpus module; XLA moves 1.8 MB). Uneven shards, 3
// and 4 devices, strides and window dilation verify too.
TEST(ConvolutionPartitionTest, BaseDilationFetchesTheInputsEachBlockReads) {
  Partitioned xla =
      Partition(BaseDilated(2, 7, 14, "size=3x3 pad=1_2x1_1 lhs_dilate=2x1 rhs_reversal=1x1"));
  ASSERT_NE(xla.spmd, nullptr);
  auto counts = Counts(*xla.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll], 0)
      << xla.spmd->ToString();
  EXPECT_LE(hlo::ComputeModuleStats(*xla.spmd).comm_bytes, 768) << xla.spmd->ToString();
  ExpectVerifies(xla, 2);
  struct Case {
    int t, n, m;
    std::string window;
  };
  const Case cases[] = {
      {3, 11, 33, "size=3x3 pad=2_2x1_1 lhs_dilate=3x1"},
      {2, 8, 8, "size=3x3 stride=2x1 pad=1_1x1_1 lhs_dilate=2x1"},
      {2, 8, 10, "size=3x3 stride=2x1 pad=0_0x1_1 lhs_dilate=3x1"},
      {4, 9, 14, "size=3x3 pad=0_1x1_1 lhs_dilate=2x1 rhs_dilate=2x1"},
      {4, 10, 9, "size=3x3 stride=2x1 pad=0_1x1_1 lhs_dilate=2x1 rhs_reversal=1x0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.window + " on " + S(c.t) + ", N=" + S(c.n));
    Partitioned p = Partition(BaseDilated(c.t, c.n, c.m, c.window));
    ASSERT_NE(p.spmd, nullptr);
    ExpectVerifies(p, c.t);
  }
}

// A convolution used as an einsum whose spatial dim pairs input and kernel position by
// position (XLA's dot-as-convolution batch dim: size = lhs_dilate = the input's and kernel's
// length L, stride L-1 or window dilation L-1, no padding): split along the output's spatial
// dim, each device convolves its slice of both operands with the window of its L/t positions.
// XLA's EinsumOutputBatchPartitioned computed whole on every device (4x XLA's FLOPs); both
// window forms, 2 and 4 devices, a second ordinary spatial dim.
std::string ParallelSpatial(int t, int l, const std::string& window, const std::string& out) {
  return "HloModule parallel, num_partitions=" + S(t) + "\nENTRY main {\n  x = f32[" + S(l) +
         ",6,5,8] parameter(0)\n  k = f32[" + S(l) + ",3,8,4] parameter(1)\n  ROOT c = f32[" +
         S(l) + ",6,3,4] convolution(x, k), window={" + window +
         "}, dim_labels=0b1f_01io->0b1f, sharding=" + out + "\n}\n";
}

TEST(ConvolutionPartitionTest, SpatialDimPairingInputAndKernelSplitsLikeABatch) {
  struct Case {
    int t;
    std::string window;
  };
  const Case cases[] = {
      {2, "size=8x3 stride=7x1 lhs_dilate=8x1"},
      {4, "size=8x3 stride=7x1 lhs_dilate=8x1"},
      {2, "size=8x3 rhs_dilate=7x1 lhs_dilate=8x1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.window + " on " + S(c.t));
    const std::string split = "{devices=[" + S(c.t) + ",1,1,1]<=[" + S(c.t) + "]}";
    Partitioned p = Partition(ParallelSpatial(c.t, 8, c.window, split));
    ASSERT_NE(p.spmd, nullptr);
    const hlo::ModuleStats stats = hlo::ComputeModuleStats(*p.spmd);
    EXPECT_EQ(stats.comm_bytes, 0) << p.spmd->ToString();
    // Each device: 8/t output positions x 6 x 3 x 4, a window of 8/t x 3, 8 input features.
    EXPECT_DOUBLE_EQ(stats.flops, 2.0 * (8 / c.t) * 6 * 3 * 4 * (8 / c.t) * 3 * 8)
        << p.spmd->ToString();
    ExpectVerifies(p, c.t);
  }
}

// The kernel's free dim in disguise (XLA's dot-as-convolution rhs non-contracting dim: a
// one-element input padded by N-1 on both sides, a reversed kernel of N) beside a real window
// of 3 over 5 positions: split along the output, each device convolves its slice of the kernel
// with a window of N/t positions; the input stays whole. XLA's
// EinsumOutputRHSNonContractingPartitioned computed whole (2x XLA's FLOPs). Uneven (N = 6 on
// 4 devices) keeps the window split with the whole kernel. (Without the real window the
// convolution is an einsum and becomes a dot: ConvolutionsThatAreEinsumsArePartitionedAsDots.)
std::string KernelFree(int t, int n, const std::string& out) {
  return "HloModule kernel_free, num_partitions=" + S(t) +
         "\nENTRY main {\n  x = f32[6,1,5,8] parameter(0)\n  k = f32[" + S(n) +
         ",3,8,4] parameter(1)\n  ROOT c = f32[6," + S(n) +
         ",5,4] convolution(x, k), window={size=" + S(n) + "x3 pad=" + S(n - 1) + "_" + S(n - 1) +
         "x1_1 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f, sharding=" + out + "\n}\n";
}

TEST(ConvolutionPartitionTest, KernelFreeDimSplitsTheKernel) {
  for (int t : {2, 4}) {
    SCOPED_TRACE("on " + S(t));
    const std::string split = "{devices=[1," + S(t) + ",1,1]<=[" + S(t) + "]}";
    Partitioned p = Partition(KernelFree(t, 8, split));
    ASSERT_NE(p.spmd, nullptr);
    const hlo::ModuleStats stats = hlo::ComputeModuleStats(*p.spmd);
    EXPECT_EQ(stats.comm_bytes, 0) << p.spmd->ToString();
    EXPECT_DOUBLE_EQ(stats.flops, 2.0 * 6 * (8 / t) * 5 * 4 * (8 / t) * 3 * 8)
        << p.spmd->ToString();
    ExpectVerifies(p, t);
  }
  Partitioned uneven = Partition(KernelFree(4, 6, "{devices=[1,4,1,1]<=[4]}"));
  ASSERT_NE(uneven.spmd, nullptr);
  ExpectVerifies(uneven, 4);
}

// A convolution whose every window dim is an einsum dim (conv_as_dot.h) is partitioned as a
// dot: batch (base-dilated by its size, strided by one less), contracted (the window spans
// the input), the kernel's free dim (one input element padded both sides, a reversed kernel)
// and the input's free dim (a one-position kernel), the result transposed and a size-1 dim put
// back; even and uneven splits of each kind verify, nothing is computed whole, and each device
// multiplies only what a dot does (the convolution's kernel-free window of 5 multiplied 5 times
// that). A real window (6 over 6 padded by one on both sides) stays a convolution.
TEST(ConvolutionPartitionTest, ConvolutionsThatAreEinsumsArePartitionedAsDots) {
  const auto module = [](const std::string& lhs, const std::string& rhs, const std::string& out,
                         bool padded = false) {
    return "HloModule einsum, num_partitions=4\nENTRY main {\n"
           "  x = f32[4,3,6,8,1,7] parameter(0), sharding=" +
           lhs +
           "\n"
           "  k = f32[3,2,6,8,5,1] parameter(1), sharding=" +
           rhs +
           "\n"
           "  ROOT c = f32[5,2,3,4," +
           (padded ? "3" : "1") +
           ",7] convolution(x, k), window={size=3x6x5x1 stride=2x1x1x1 pad=0_0x" +
           (padded ? "1_1" : "0_0") +
           "x4_4x0_0 lhs_dilate=3x1x1x1 rhs_reversal=0x0x1x0}, dim_labels=b01f23_0o1i23->2f0b13, "
           "sharding=" +
           out + "\n}\n";
  };
  struct Case {
    std::string lhs, rhs, out;
  };
  const Case cases[] = {
      // The result split along the kernel's free dim (5 on 2: uneven) and the batch.
      {"{devices=[2,1,1,1,1,1,2]<=[4] last_tile_dim_replicate}", "{replicated}",
       "{devices=[2,1,1,2,1,1]<=[4]}"},
      // Contracted dims split on both operands (the window-spanned one and the features).
      {"{devices=[1,1,2,2,1,1]<=[4]}", "{devices=[1,1,2,2,1,1]<=[4]}", "{replicated}"},
      // The batch-in-disguise split on all three, the input's free dim on the result.
      {"{devices=[1,2,1,1,1,2]<=[4]}", "{devices=[2,1,1,1,1,1,2]<=[4] last_tile_dim_replicate}",
       "{devices=[1,1,2,1,1,2]<=[4]}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.lhs + " x " + c.rhs + " -> " + c.out);
    Partitioned p = Partition(module(c.lhs, c.rhs, c.out));
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_TRUE(Chose(p, "a convolution that is an einsum, partitioned as a dot")) << p.explain;
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kConvolution], 0) << p.spmd->ToString();
    EXPECT_EQ(counts[HloOpcode::kDot], 1) << p.spmd->ToString();
    // The whole product is 2 x 5*2*3*4*7 results x 6*8 contracted; each device does at most
    // half of it (every case splits the work at least 2 ways).
    EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).flops, 2.0 * 5 * 2 * 3 * 4 * 7 * 6 * 8 / 2)
        << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
  Partitioned window = Partition(module("{devices=[2,1,1,1,1,1,2]<=[4] last_tile_dim_replicate}",
                                        "{replicated}", "{devices=[2,1,1,2,1,1]<=[4]}", true));
  ASSERT_NE(window.spmd, nullptr);
  EXPECT_FALSE(Chose(window, "a convolution that is an einsum")) << window.explain;
  EXPECT_EQ(Counts(*window.spmd)[HloOpcode::kConvolution], 1) << window.spmd->ToString();
  ExpectVerifies(window, 4);
}

// XLA's EinsumNonContractingDimPartitionOnTwoDims: the result split along a spatial dim whose
// window is one position (the input split alike, no halo) and along its output features; the
// input and kernel also split along the second window dim, which the window spans whole. An
// einsum in disguise, partitioned as a dot (conv_as_dot.h): its devices compute the result whole
// along the features, each multiplying its blocks of the contracted dim, and sum (XLA's
// choice); gathering the input along the window dim moved 2.7x XLA's bytes.
TEST(ConvolutionPartitionTest, SpatialSplitCombinesWithAKernelWindowSplit) {
  Partitioned p = Partition(R"(
HloModule two_dims, num_partitions=8
ENTRY main {
  lhs = f32[8,64,2,8192] parameter(0), sharding={devices=[4,1,2,1]<=[8]}
  rhs = f32[2,8192,32,1] parameter(1),
    sharding={devices=[2,1,2,1,2]<=[2,2,2]T(2,1,0) last_tile_dim_replicate}
  ROOT c = f32[8,64,32,1] convolution(lhs, rhs), window={size=1x2}, dim_labels=0b1f_1io0->0bf1,
    sharding={devices=[4,1,2,1]<=[8]}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_TRUE(Chose(p, "a convolution that is an einsum, partitioned as a dot")) << p.explain;
  // The kernel gathered along its output features (8192*16*4 bytes) and the f32[2,64,32,1]
  // partial results reduce-scattered over pairs along the features, which the result splits
  // (XLA all-reduces and slices: twice the bytes); gathering the input moves 4 MiB.
  EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 8192 * 16 * 4 + 2 * 64 * 16 * 4)
      << p.spmd->ToString() << p.explain;
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kReduceScatter], 1) << p.spmd->ToString();
  ExpectVerifies(p, 8);
}

// A spatial split whose window reads neighbours' rows (halos) with the input features split
// alike with the kernel's: each device exchanges halos of its feature slice, convolves it and
// the pairs sum (the input and kernel stay where they are; gathering the input's features
// moves 3 MiB). Uneven spatial blocks, strides and window dilation verify too.
TEST(ConvolutionPartitionTest, SpatialSplitWithHalosCombinesWithAContractingSplit) {
  struct Case {
    int n, m;
    std::string window;
  };
  const Case cases[] = {{64, 64, "size=3x1 pad=1_1x0_0"},
                        {65, 65, "size=3x1 pad=1_1x0_0"},
                        {67, 33, "size=3x1 stride=2x1"},
                        {66, 64, "size=3x1 pad=1_1x0_0 rhs_dilate=2x1"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.window + " N=" + S(c.n));
    Partitioned p = Partition("HloModule halo_contracting, num_partitions=4\nENTRY main {\n"
                              "  x = f32[2," + S(c.n) + ",3,8192] parameter(0), "
                              "sharding={devices=[1,2,1,2]<=[4]}\n"
                              "  k = f32[3,1,8192,4] parameter(1), "
                              "sharding={devices=[1,1,2,1,2]<=[2,2]T(1,0) "
                              "last_tile_dim_replicate}\n"
                              "  ROOT c = f32[2," + S(c.m) + ",3,4] convolution(x, k), window={" +
                              c.window + "}, dim_labels=b01f_01io->b01f, "
                              "sharding={devices=[1,2,1,1,2]<=[4] last_tile_dim_replicate}\n}\n");
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_TRUE(Chose(p, "contracting split")) << p.explain;
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllToAll] + counts[HloOpcode::kAllGather], 0)
        << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
}

// Both at once: the spatial split exchanges halos (uneven blocks) while the second window
// dim, which the kernel spans, splits its kernel positions over the result's replicas.
TEST(ConvolutionPartitionTest, SpatialSplitWithHalosCombinesWithAKernelWindowSplit) {
  for (int n : {64, 63}) {
    SCOPED_TRACE(n);
    Partitioned p = Partition("HloModule halo_kernel_window, num_partitions=4\nENTRY main {\n"
                              "  x = f32[2," + S(n) + ",4,8192] parameter(0), "
                              "sharding={devices=[1,2,2,1]<=[4]}\n"
                              "  k = f32[3,4,8192,4] parameter(1), "
                              "sharding={devices=[1,2,1,1,2]<=[2,2]T(1,0) "
                              "last_tile_dim_replicate}\n"
                              "  ROOT c = f32[2," + S(n) + ",1,4] convolution(x, k), "
                              "window={size=3x4 pad=1_1x0_0}, dim_labels=b01f_01io->b01f, "
                              "sharding={devices=[1,2,1,1,2]<=[4] last_tile_dim_replicate}\n}\n");
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_TRUE(Chose(p, "kernel window split")) << p.explain;
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllToAll] + counts[HloOpcode::kAllGather], 0)
        << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
}

// Partial results are reduce-scattered along a dim the wanted result splits further than the
// summing strategy computes it (half the bytes of an all-reduce): along untiled output
// features, five of them padded to six; along a spatial dim the halo split already tiles (68
// rows: blocks of 34 halve into the wanted 17; 66 rows: 33 do not, so they are all-reduced).
TEST(ConvolutionPartitionTest, SummedPartialResultsReduceScatterWhereTheResultSplitsFurther) {
  struct Case {
    int n, features;
    std::string x, k, out;
    int scatters;
  };
  const std::string split_in = "{devices=[1,1,2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}";
  const Case cases[] = {
      {64, 5, "{devices=[1,1,1,4]<=[4]}", "{devices=[1,1,4,1]<=[4]}", "{devices=[1,1,1,4]<=[4]}",
       1},
      {68, 4, "{devices=[1,2,1,2]<=[4]}", split_in, "{devices=[1,4,1,1]<=[4]}", 1},
      {66, 4, "{devices=[1,2,1,2]<=[4]}", split_in, "{devices=[1,4,1,1]<=[4]}", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(S(c.n) + " rows, " + c.out);
    Partitioned p = Partition("HloModule scatter, num_partitions=4\nENTRY main {\n"
                              "  x = f32[2," + S(c.n) + ",3,8192] parameter(0), sharding=" + c.x +
                              "\n  k = f32[3,1,8192," + S(c.features) +
                              "] parameter(1), sharding=" + c.k + "\n  ROOT c = f32[2," + S(c.n) +
                              ",3," + S(c.features) +
                              "] convolution(x, k), window={size=3x1 pad=1_1x0_0}, "
                              "dim_labels=b01f_01io->b01f, sharding=" + c.out + "\n}\n");
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_TRUE(Chose(p, "contracting split")) << p.explain;
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kReduceScatter], c.scatters) << p.spmd->ToString();
    if (c.scatters == 1) {  // Else the summed rows move to their wanted blocks.
      EXPECT_EQ(counts[HloOpcode::kAllToAll] + counts[HloOpcode::kAllGather], 0)
          << p.spmd->ToString();
    }
    ExpectVerifies(p, 4);
  }
}

// XLA's ConvolutionLhsTiledRhsReplicatedNeedReshard: the input split along its batch, the
// larger result along a spatial dim. Moving the input to the spatial split (one all-to-all, a
// quarter of the input on 2 devices) and exchanging halos beats gathering the dim whole to
// slice windows (half the input), and computing in the input's split (a quarter of the
// result). On a fast link (0.1 us a collective) so the test stays small.
TEST(ConvolutionPartitionTest, InputReshardedToTheSpatialSplitForHalos) {
  spmd::PartitionerOptions options;
  options.device_model.levels = {{"fast", 0, spmd::LinkModel{0.1, 350000.0}}};
  Partitioned p = Partition(R"(
HloModule need_reshard, num_partitions=2
ENTRY main {
  x = f32[64,32,32,2] parameter(0), sharding={devices=[2,1,1,1]<=[2]}
  k = f32[3,3,2,16] parameter(1), sharding={replicated}
  ROOT c = f32[64,32,32,16] convolution(x, k), window={size=3x3 pad=1_1x1_1},
    dim_labels=b01f_01io->b01f, sharding={devices=[1,2,1,1]<=[2]}
})",
                            options);
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[HloOpcode::kAllGather], 0) << p.spmd->ToString() << p.explain;
  EXPECT_EQ(counts[HloOpcode::kAllToAll], 1) << p.spmd->ToString() << p.explain;
  // A quarter of the input and one halo row of 64x32x2 each way.
  EXPECT_LE(hlo::ComputeModuleStats(*p.spmd).comm_bytes, 64 * 32 * 32 * 2 * 4 / 4 + 2 * 16384)
      << p.spmd->ToString() << p.explain;
  ExpectVerifies(p, 2);
}

}  // namespace

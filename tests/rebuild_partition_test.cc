// Values rebuilt where they are wanted instead of moved (spmd/partitioner/rebuild.h): chains of
// cheap ops over available values are computed again in the layout a user asks for, with no
// collective, and never turn a split computation into a whole one. Each program is verified on
// the CPU executor against the unpartitioned module.
#include <string>

#include "gtest/gtest.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/ir/hlo_module.h"
#include "runtime/cpu/modular_verify.h"
#include "tests/partition_test_util.h"

namespace {

using testing_util::ExpectVerifies;
using testing_util::Partition;
using testing_util::Partitioned;

Partitioned PartitionBody(const std::string& body, int devices) {
  return Partition("HloModule m, num_partitions=" + std::to_string(devices) + "\nENTRY main {\n" +
                   body + "\n}\n");
}

int64_t BytesReceived(const Partitioned& p) { return hlo::ComputeModuleStats(*p.spmd).comm_bytes; }

// XLA's RemoveCSEPrevention: a sum of a broadcast scalar, wanted in the reverse device order,
// is computed again there (the scalar is on every device) rather than permuted.
TEST(RebuildPartitionTest, ChainOverAScalarIsComputedAgainInAnotherDeviceOrder) {
  Partitioned p = PartitionBody(
      "s = f32[] parameter(0), sharding={replicated}\n"
      "b = f32[64,8] broadcast(s), dimensions={}, sharding={devices=[4,1]<=[4]}\n"
      "e = f32[64,8] exponential(b), sharding={devices=[4,1]<=[4]}\n"
      "a = f32[64,8] add(e, b), sharding={devices=[4,1]<=[4]}\n"
      "ROOT c = f32[64,8] copy(a), sharding={devices=[4,1]3,2,1,0}",
      4);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(BytesReceived(p), 0) << p.explain << p.spmd->ToString();
  EXPECT_NE(p.explain.find("rebuilt from available operands"), std::string::npos) << p.explain;
  ExpectVerifies(p, 4);
}

// XLA's ReshapeWithSpecialCache: a split reshape of a replicated parameter, wanted whole again,
// is reshaped again from the parameter instead of gathered; so is a transpose of one.
TEST(RebuildPartitionTest, ReshapeAndTransposeOfAWholeValueAreRebuiltWhole) {
  for (const std::string& body :
       {std::string("p = f32[8,8] parameter(0), sharding={replicated}\n"
                    "r = f32[64] reshape(p), sharding={devices=[4]<=[4]}\n"
                    "ROOT n = f32[64] negate(r), sharding={replicated}"),
        std::string("p = f32[8,16] parameter(0), sharding={replicated}\n"
                    "t = f32[16,8] transpose(p), dimensions={1,0}, sharding={devices=[4,1]<=[4]}\n"
                    "ROOT n = f32[16,8] negate(t), sharding={devices=[1,4]<=[4]}")}) {
    SCOPED_TRACE(body);
    Partitioned p = PartitionBody(body, 4);
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_EQ(BytesReceived(p), 0) << p.explain << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
}

// XLA's NoReshardOnBroadcastDims: a split reshape of a split broadcast, wanted in another
// device order, is rebuilt tile by tile (the reshape maps the tiles exactly) from the broadcast
// rebuilt in the matching order; never from the whole broadcast, which held the full array on
// every device (3.8x the peak).
TEST(RebuildPartitionTest, ReshapeThatMapsTilesIsRebuiltTileByTile) {
  Partitioned p = PartitionBody(
      "p = f32[2,3] parameter(0), sharding={replicated}\n"
      "b = f32[20,2,20,3,20] broadcast(p), dimensions={1,3}, sharding={devices=[2,1,2,1,2]<=[8]}\n"
      "r = f32[10,4,10,6,20] reshape(b), sharding={devices=[2,1,2,1,2]<=[8]}\n"
      "ROOT c = f32[10,4,10,6,20] copy(r), sharding={devices=[2,1,2,1,2]7,6,3,2,5,4,0,1}",
      8);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(BytesReceived(p), 0) << p.explain << p.spmd->ToString();
  EXPECT_EQ(p.spmd->ToString().find("f32[20,2,20,3,20]"), std::string::npos) << p.spmd->ToString();
  ExpectVerifies(p, 8);
}

// A value rebuilt instead of sliced from its whole (a split reshape of a split parameter,
// wanted split where its own sharding is whole) is a second home of the original: it has an
// origin record, so modular verification cuts it like the first. Unrecorded, the rebuilt
// value was computed from cut operands and compared with the original's cut values: a false
// mismatch the partition fuzzer found. A marker (a Sharding custom-call) rebuilt so returns
// its operand's home, which must not be recorded as the marker's (the verifier cuts a marker
// with its operand's values).
TEST(RebuildPartitionTest, ValuesRebuiltInsteadOfSlicedAreRecorded) {
  for (const std::string& body :
       {std::string("p0 = bf16[8,8] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                    "reshape = bf16[64] reshape(p0), sharding={replicated}\n"
                    "abs = bf16[64] abs(reshape), sharding={devices=[4]<=[4]}\n"
                    "ROOT tuple = (bf16[64], bf16[64]) tuple(reshape, abs), "
                    "sharding={{replicated}, {devices=[4]<=[4]}}"),
        std::string("p = f32[] parameter(0), sharding={replicated}\n"
                    "br = f32[3] broadcast(p), dimensions={}, sharding={devices=[4]<=[4]}\n"
                    "add = f32[3] add(br, br)\n"
                    "annotate = f32[3] custom-call(add), custom_call_target=\"Sharding\", "
                    "sharding={replicated}\n"
                    "ROOT copy = f32[3] copy(annotate), sharding={devices=[4]3,2,1,0}")}) {
    SCOPED_TRACE(body);
    spmd::PartitionerOptions recording;
    recording.record_origins = true;
    Partitioned p =
        Partition("HloModule m, num_partitions=4\nENTRY main {\n" + body + "\n}\n", recording);
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_NE(p.explain.find("rather than sliced from the whole value"), std::string::npos)
        << p.explain;
    ExpectVerifies(p, 4);
    for (uint64_t seed : {0, 1, 2}) {
      runtime::ModularVerifyOptions options;
      options.seed = seed;
      options.num_partitions = 4;
      absl::StatusOr<runtime::ModularResult> checked =
          runtime::VerifyModular(*p.original, *p.spmd, p.origins, options);
      ASSERT_TRUE(checked.ok()) << checked.status();
      EXPECT_TRUE(checked->ok()) << checked->ToString() << p.spmd->ToString();
    }
  }
}

// XLA's SelectAndScatterNoOverlap and TiledToReplicated: a split constant, wanted whole (or
// in another layout), is cloned from its literal and sliced locally instead of gathered. A
// constant over CSE's merge limit (1 KiB) is not: its clones would each hold the literal.
TEST(RebuildPartitionTest, SmallConstantsAreClonedNotGathered) {
  for (const std::string& to : {std::string("{replicated}"), std::string("{devices=[1,4]<=[4]}")}) {
    SCOPED_TRACE(to);
    Partitioned p = PartitionBody(
        "k = f32[4,2] constant({ {1, 2}, {3, 4}, {1, 0}, {2, 8} }), sharding={devices=[4,1]<=[4]}\n"
        "ROOT n = f32[4,2] negate(k), sharding=" +
            to,
        4);
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_EQ(BytesReceived(p), 0) << p.explain << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
  std::string literal;
  for (int i = 0; i < 320; ++i) literal += (i == 0 ? "" : ", ") + std::to_string(i);
  Partitioned big = PartitionBody("c = f32[320] constant({" + literal +
                                      "}), sharding={devices=[4]<=[4]}\n"
                                      "ROOT n = f32[320] negate(c), sharding={replicated}",
                                  4);
  ASSERT_NE(big.spmd, nullptr);
  EXPECT_GT(BytesReceived(big), 0) << big.explain << big.spmd->ToString();
  ExpectVerifies(big, 4);
}

// XLA's SortShardedOnSortDim_SlowSortBug: an unannotated (so replicated) broadcast that its
// only user wants split is broadcast again to the user's shard instead of sliced from the
// whole, which then dies: no device holds the f32[1024,8] (32 KiB) at all.
TEST(RebuildPartitionTest, WholeBroadcastsAreNotHeldForUsersThatWantThemSplit) {
  Partitioned p = PartitionBody(
      "p = f32[8] parameter(0), sharding={replicated}\n"
      "b = f32[1024,8] broadcast(p), dimensions={1}\n"
      "ROOT n = f32[1024,8] negate(b), sharding={devices=[4,1]<=[4]}",
      4);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(p.spmd->ToString().find("f32[1024,8]"), std::string::npos) << p.spmd->ToString();
  EXPECT_LT(hlo::ComputeModuleStats(*p.spmd).peak_memory_bytes, 32768) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// XLA's CorrectlyReplicateGatherIndex: a split gather (or slice, dynamic-slice, pad) of whole
// operands, wanted whole again, is computed again from them instead of gathered.
TEST(RebuildPartitionTest, IndexingOpsOfWholeValuesAreRebuiltWhole) {
  const std::string whole = "p = f32[8,16] parameter(0), sharding={replicated}\n";
  for (const std::string& op :
       {std::string("i = s32[4,1] parameter(1), sharding={replicated}\n"
                    "v = f32[4,16] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, "
                    "start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}, "
                    "sharding={devices=[1,4]<=[4]}"),
        std::string("v = f32[4,16] slice(p), slice={[2:6], [0:16]}, sharding={devices=[1,4]<=[4]}"),
        std::string("i = s32[] parameter(1), sharding={replicated}\n"
                    "z = s32[] constant(0), sharding={replicated}\n"
                    "v = f32[4,16] dynamic-slice(p, i, z), dynamic_slice_sizes={4,16}, "
                    "sharding={devices=[1,4]<=[4]}"),
        std::string("z = f32[] constant(0), sharding={replicated}\n"
                    "v = f32[4,16] pad(p, z), padding=-2_-2x0_0, sharding={devices=[1,4]<=[4]}")}) {
    SCOPED_TRACE(op);
    Partitioned p =
        PartitionBody(whole + op + "\nROOT c = f32[4,16] copy(v), sharding={replicated}", 4);
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_EQ(BytesReceived(p), 0) << p.explain << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
}

// XLA's TiledToSingleDevice: a split broadcast wanted on one device is broadcast there again.
TEST(RebuildPartitionTest, SplitBroadcastWantedOnOneDeviceIsBroadcastAgain) {
  Partitioned p = PartitionBody(
      "c = s32[] constant(1)\n"
      "b = s32[2,3] broadcast(c), dimensions={}, sharding={devices=[2,1]<=[2]}\n"
      "ROOT r = s32[2,3] copy(b), sharding={maximal device=0}",
      2);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(BytesReceived(p), 0) << p.explain << p.spmd->ToString();
  ExpectVerifies(p, 2);
}

// A rebuild re-lays work out; it never makes a device compute more of an elementwise op than
// the op's own layout gave it: a split sum wanted whole is gathered, not summed whole again...
TEST(RebuildPartitionTest, SplitElementwiseWantedWholeIsGathered) {
  Partitioned p = PartitionBody(
      "x = f32[256] parameter(0), sharding={replicated}\n"
      "y = f32[256] parameter(1), sharding={replicated}\n"
      "a = f32[256] add(x, y), sharding={devices=[4]<=[4]}\n"
      "ROOT s = f32[192] slice(a), slice={[0:192]}, sharding={replicated}",
      4);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_GT(BytesReceived(p), 0) << p.explain << p.spmd->ToString();
  EXPECT_EQ(p.explain.find("rebuilt from available operands"), std::string::npos) << p.explain;
  ExpectVerifies(p, 4);
}

// ... unless the whole is tiny (XLA's DoNotPropagateToOutputIfNotDivisible): a few hundred
// operations cost less than any collective.
TEST(RebuildPartitionTest, TinySplitElementwiseWantedWholeIsComputedWhole) {
  Partitioned p = PartitionBody(
      "x = f32[4] parameter(0), sharding={replicated}\n"
      "y = f32[4] parameter(1), sharding={replicated}\n"
      "a = f32[4] add(x, y), sharding={devices=[4]<=[4]}\n"
      "ROOT s = f32[3] slice(a), slice={[0:3]}, sharding={replicated}",
      4);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(BytesReceived(p), 0) << p.explain << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// Operands that are not available where wanted stop a rebuild: the split parameter moves.
TEST(RebuildPartitionTest, UnavailableOperandsAreMoved) {
  Partitioned p = PartitionBody(
      "x = f32[64,8] parameter(0), sharding={devices=[4,1]<=[4]}\n"
      "e = f32[64,8] exponential(x), sharding={devices=[4,1]<=[4]}\n"
      "ROOT c = f32[64,8] copy(e), sharding={devices=[4,1]3,2,1,0}",
      4);
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_GT(BytesReceived(p), 0) << p.explain << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

}  // namespace

// Manual subgroups whose free axes split the values inside each group (JAX's partly manual
// shard_map): the partitioner runs each op on the tiles, as it does on a global tiling, with its
// collectives inside the groups (manual_partition_test.cc has regions, conversions and nesting).
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/strings.h"
#include "tests/manual_partition_util.h"

namespace {

using manual_test::CommBytes;
using manual_test::Parse;
using manual_test::Partition;
using manual_test::PartitionAndVerify;
using manual_test::PropagatePartitionAndVerify;
using manual_test::Verify;

// A transpose of a value the free axis splits inside its manual groups runs on each device's
// tile (it used to gather inside the groups, transpose whole and slice).
TEST(ManualPartitionTest, ATransposeInsideManualGroupsRunsOnTiles) {
  const std::string spmd = PropagatePartitionAndVerify(R"(
HloModule transpose_in_groups, num_partitions=8
ENTRY main {
  x = f32[8,64] parameter(0), sharding={devices=[2,4]<=[8]}
  m = f32[8,16] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}
  t = f32[16,8] transpose(m), dimensions={1,0}, sharding={devices=[1,2,4]<=[8] last_tile_dims={manual}}
  r = f32[4,4,8] reshape(t), sharding={devices=[1,1,2,4]<=[8] last_tile_dims={manual}}
  ts = f32[4,4,8] custom-call(r), custom_call_target="Sharding", sharding={devices=[1,1,2,4]<=[8] last_tile_dims={manual}}
  ROOT f = f32[16,4,8] custom-call(ts), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1,2]<=[2,4]T(1,0)}
})",
                                                       8);
  EXPECT_EQ(spmd.find("all-gather"), std::string::npos) << spmd;
}

// A call whose operands the free axis splits inside their groups partitions its body: the dot
// there contracts the split dim, and summing its small result beats gathering the operands.
// It used to run as written, both operands gathered first.
TEST(ManualPartitionTest, ACallOnValuesSplitInsideGroupsPartitionsItsBody) {
  const std::string spmd = PropagatePartitionAndVerify(R"(
HloModule call_in_groups, num_partitions=8
body {
  a = f32[64,32] parameter(0)
  b = f32[64,16] parameter(1)
  ROOT d = f32[32,16] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
ENTRY main {
  x = f32[64,32] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  xs = f32[64,32] custom-call(x), custom_call_target="Sharding", sharding={replicated}, backend_config="unspecified_dims=[0,1]"
  xm = f32[64,32] custom-call(xs), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  y = f32[64,64] parameter(1), sharding={devices=[2,4]<=[8]}
  ys = f32[64,64] custom-call(y), custom_call_target="Sharding", sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}, backend_config="unspecified_dims=[0,1]"
  ym = f32[64,16] custom-call(ys), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  o = f32[32,16] call(xm, ym), to_apply=body
  os = f32[32,16] custom-call(o), custom_call_target="Sharding", sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  ROOT r = f32[32,64] custom-call(os), custom_call_target="SPMDShardToFullShape", sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}, backend_config="unspecified_dims=[0,1]"
})",
                                                       8);
  std::unique_ptr<hlo::HloModule> m = Parse(spmd);
  ASSERT_NE(m, nullptr);
  // Gathering both operands inside the groups would receive (8192 + 4096) / 2 bytes; the sum
  // of the f32[32,16] partials receives 2048.
  EXPECT_EQ(hlo::ComputeModuleStats(*m).comm_bytes, 2048) << spmd;
}

// Found by the partition fuzzer (seed 2325, mutant 19680): a manual-subgroup dot over 4 of 6
// devices. Summing the partials inside the groups would leave devices 4 and 5 in no group of
// the all-reduce (an invalid program); the dot is refused as before, with a located error.
TEST(ManualPartitionTest, PartialSumsNeedEveryDevice) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = Partition(R"(
HloModule some_devices, num_partitions=6
ENTRY e {
  p0 = f32[8,512] parameter(0), sharding={devices=[1,2,2]0,1,2,3 last_tile_dims={manual}}
  p1 = f32[512,128] parameter(1)
  c1 = f32[512,128] copy(p1)
  d = f32[8,128] dot(p0, c1), lhs_contracting_dims={1}, rhs_contracting_dims={0},
    sharding={devices=[1,1,2,2]0,1,2,3 last_tile_dims={replicated, manual}}
  ROOT c = f32[8,128] copy(d)
})");
  if (spmd.ok()) {
    EXPECT_EQ((*spmd)->ToString().find("all-reduce"), std::string::npos) << (*spmd)->ToString();
  }
}

// A cache write (dynamic-update-slice of one row) into a value the free axis splits along its
// other dim runs on each device's columns (found in the JAX probe's scan: it used to gather
// the cache inside the groups and slice it back).
TEST(ManualPartitionTest, ACacheWriteInsideManualGroupsRunsOnTiles) {
  const std::string spmd = PropagatePartitionAndVerify(R"(
HloModule cache_in_groups, num_partitions=8
ENTRY main {
  c = f32[4,64] parameter(0), sharding={devices=[1,8]<=[2,4]T(1,0)}
  cm = f32[4,16] custom-call(c), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,2,4]<=[8] last_tile_dims={manual}}
  r = f32[1,64] parameter(1), sharding={devices=[1,8]<=[2,4]T(1,0)}
  rm = f32[1,16] custom-call(r), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,2,4]<=[8] last_tile_dims={manual}}
  i = s32[] parameter(2), sharding={replicated}
  im = s32[] custom-call(i), custom_call_target="SPMDFullToShardShape", sharding={devices=[4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}
  z = s32[] constant(0)
  u = f32[4,16] dynamic-update-slice(cm, rm, im, z), sharding={devices=[1,2,4]<=[8] last_tile_dims={manual}}
  ROOT f = f32[4,64] custom-call(u), custom_call_target="SPMDShardToFullShape", sharding={devices=[1,8]<=[2,4]T(1,0)}
})",
                                                       8);
  EXPECT_EQ(spmd.find("all-gather"), std::string::npos) << spmd;
}

// Ops that only move data run on the tiles the free axis splits inside manual groups (found by
// the JAX probe's batch6: each computed its group's whole value, gathered inside the groups).
// x is split along rows by the free axis (data) and along columns by the manual one (model).
std::string InGroups(const std::string& shape, const std::string& local_shape,
                     const std::string& body) {
  return "HloModule in_groups, num_partitions=8\n"
         "cmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT lt = pred[] compare(a, b), direction=LT\n}\n"
         "ENTRY main {\n  x = f32" +
         shape +
         " parameter(0), sharding={devices=[2,4]<=[8]}\n"
         "  xm = f32" +
         local_shape +
         " custom-call(x), custom_call_target=\"SPMDFullToShardShape\", "
         "sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}\n" +
         body + "  ROOT f = f32" + shape +
         " custom-call(y), custom_call_target=\"SPMDShardToFullShape\", "
         "sharding={devices=[2,4]<=[8]}\n}\n";
}

constexpr char kInGroupsSharding[] = "sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}";

TEST(ManualPartitionTest, ASortInsideManualGroupsRunsOnTiles) {
  const std::string spmd = PartitionAndVerify(
      InGroups("[16,128]", "[16,32]",
               hlo::StrCat("  y = f32[16,32] sort(xm), dimensions={1}, to_apply=cmp, ",
                           kInGroupsSharding, "\n")),
      8);
  EXPECT_EQ(CommBytes(spmd), 0) << spmd;  // Each row is whole on its device.
}

TEST(ManualPartitionTest, AReverseInsideManualGroupsPermutesTiles) {
  const std::string spmd = PartitionAndVerify(
      InGroups(
          "[32,64]", "[32,16]",
          hlo::StrCat("  y = f32[32,16] reverse(xm), dimensions={0}, ", kInGroupsSharding, "\n")),
      8);
  // Each device takes the mirrored tile (16 rows of 16 floats), nothing is gathered.
  EXPECT_EQ(spmd.find("all-gather"), std::string::npos) << spmd;
  EXPECT_EQ(CommBytes(spmd), 1024) << spmd;
}

// JAX's concatenate([b[16:], b[:16]]) of a padded slice (pam_slice_pad_concat): the slice and
// pad run on the tiles, and the concatenate is not computed whole (it gathered x and computed
// every op on the group's whole value, then sliced its tile out).
TEST(ManualPartitionTest, SlicePadAndConcatenateInsideManualGroupsStayOnTiles) {
  const std::string g = kInGroupsSharding;
  const std::string spmd = PartitionAndVerify(
      InGroups("[32,64]", "[32,16]",
               "  a = f32[28,16] slice(xm), slice={[2:30], [0:16]}, " + g +
                   "\n  z = f32[] constant(0)\n"
                   "  b = f32[32,16] pad(a, z), padding=2_2x0_0, " +
                   g + "\n  s1 = f32[16,16] slice(b), slice={[16:32], [0:16]}, " + g +
                   "\n  s2 = f32[16,16] slice(b), slice={[0:16], [0:16]}, " + g +
                   "\n  y = f32[32,16] concatenate(s1, s2), dimensions={0}, " + g + "\n"),
      8);
  EXPECT_LE(CommBytes(spmd), 1024) << spmd;
  EXPECT_EQ(spmd.find("f32[28,16] slice"), std::string::npos) << spmd;
  EXPECT_EQ(spmd.find("f32[32,16] concatenate"), std::string::npos) << spmd;
}

// An op that no strategy partitions inside the groups is computed whole in each group: a
// fallback, counted (and refused under --strict) like one computed whole on every device.
TEST(ManualPartitionTest, ComputingWholeInsideManualGroupsIsACountedFallback) {
  std::unique_ptr<hlo::HloModule> m = Parse(InGroups(
      "[32,128]", "[32,32]",
      hlo::StrCat("  y = f32[32,32] cholesky(xm), lower=true, ", kInGroupsSharding, "\n")));
  ASSERT_NE(m, nullptr);
  spmd::SpmdPartitioner partitioner;
  ASSERT_TRUE(partitioner.Run(m.get()).ok());
  EXPECT_EQ(partitioner.log().replicated_fallbacks, 1);
}

// An embedding lookup inside manual groups from a table the free axis splits by rows: each
// device gathers its rows, masked, and the groups sum the partials (it gathered the table).
TEST(ManualPartitionTest, AGatherInsideManualGroupsMasksItsRowsAndSums) {
  const std::string spmd = PartitionAndVerify(R"(
HloModule gather_in_groups, num_partitions=8
ENTRY main {
  t = f32[128,64] parameter(0), sharding={devices=[2,4]<=[8]}
  tm = f32[128,16] custom-call(t), custom_call_target="SPMDFullToShardShape", sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}
  i = s32[8,1] parameter(1), sharding={replicated}
  im = s32[8,1] custom-call(i), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}
  g = f32[8,16] gather(tm, im), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}, sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}
  ROOT f = f32[8,64] custom-call(g), custom_call_target="SPMDShardToFullShape", sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
})",
                                              8);
  EXPECT_LE(CommBytes(spmd), 512) << spmd;  // The f32[8,16] partials; the table is 8 KiB.
}

// A segment sum (scatter-add) inside manual groups into rows the free axis splits: each device
// scatters into its own rows (it was computed whole in each group, a fallback).
TEST(ManualPartitionTest, AScatterInsideManualGroupsWritesItsRows) {
  std::unique_ptr<hlo::HloModule> m = Parse(R"(
HloModule scatter_in_groups, num_partitions=8
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[32,64] parameter(0), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  xm = f32[32,16] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}
  s = s32[32,1] parameter(1), sharding={replicated}
  sm = s32[32,1] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}
  z = f32[] constant(0)
  o = f32[16,16] broadcast(z), dimensions={}, sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}
  y = f32[16,16] scatter(o, sm, xm), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add, sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}
  ROOT f = f32[16,64] custom-call(y), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,4]<=[8]}
})");
  ASSERT_NE(m, nullptr);
  const std::string text = m->ToString();
  spmd::SpmdPartitioner partitioner;
  ASSERT_TRUE(partitioner.Run(m.get()).ok());
  EXPECT_EQ(partitioner.log().replicated_fallbacks, 0);
  absl::StatusOr<runtime::VerifyResult> result = Verify(text, *m, 8);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString() << m->ToString();
}

// A convolution inside manual groups whose batch the free axis splits runs on each device's
// batch rows; nothing moves (it gathered the input in the groups, a fallback).
TEST(ManualPartitionTest, AConvolutionInsideManualGroupsRunsOnItsBatchRows) {
  const std::string spmd = PartitionAndVerify(R"(
HloModule conv_in_groups, num_partitions=8
ENTRY main {
  x = f32[8,16,16] parameter(0), sharding={devices=[2,1,4]<=[8]}
  xm = f32[8,16,4] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={devices=[2,1,1,4]<=[8] last_tile_dims={manual}}
  k = f32[3,4,8] parameter(1), sharding={replicated}
  km = f32[3,4,8] custom-call(k), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}
  c = f32[8,16,8] convolution(xm, km), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, sharding={devices=[2,1,1,4]<=[8] last_tile_dims={manual}}
  ROOT f = f32[8,16,32] custom-call(c), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1,4]<=[8]}
})",
                                              8);
  EXPECT_EQ(CommBytes(spmd), 0) << spmd;
}

// A small dynamic-slice inside manual groups of rows the free axis splits: each device slices
// and masks its own rows, and the groups sum the f32[4,16] result (it gathered the 64 rows).
TEST(ManualPartitionTest, ADynamicSliceInsideManualGroupsMasksItsRowsAndSums) {
  const std::string spmd = PartitionAndVerify(R"(
HloModule ds_in_groups, num_partitions=8
ENTRY main {
  x = f32[64,64] parameter(0), sharding={devices=[2,4]<=[8]}
  xm = f32[64,16] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}
  i = s32[] parameter(1), sharding={replicated}
  im = s32[] custom-call(i), custom_call_target="SPMDFullToShardShape", sharding={devices=[4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}
  z = s32[] constant(0)
  y = f32[4,16] dynamic-slice(xm, im, z), dynamic_slice_sizes={4,16}, sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}
  ROOT f = f32[4,64] custom-call(y), custom_call_target="SPMDShardToFullShape", sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
})",
                                              8);
  EXPECT_LE(CommBytes(spmd), 256) << spmd;
}

}  // namespace

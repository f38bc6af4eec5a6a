// XLA's _SPMDInternalOp_MultiSlice on split dims (spmd/partitioner/window_handlers.cc): along
// the split slice dimension each device builds one window input for its block by halo exchange
// and cuts every shifted slice from it; other split dims stay split when sliced whole. Its
// window siblings MultiRotate, Wrap and MultiPad (spmd/partitioner/window_custom_calls.cc)
// build each result from the pieces of the operand its blocks read. Checked for the
// collectives chosen and numerically against the unpartitioned module (uneven shards
// included).
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

// f32[6,n] split by `tiles` on `t` devices; A+1 slices along dim 1 from `start` to `limit`.
std::string MultiSlice(int t, const std::string& tiles, int n, int amount, int start, int limit,
                       int stride = 1) {
  const std::string sharding = "{devices=[" + tiles + "]<=[" + std::to_string(t) + "]}";
  const int m = (limit - start + stride - 1) / stride;
  const std::string leaf = "f32[6," + std::to_string(m) + "]";
  std::string shape = "(";
  std::string shardings = "{";
  for (int i = 0; i <= amount; ++i) {
    shape += (i ? ", " : "") + leaf;
    shardings += (i ? ", " : "") + sharding;
  }
  return "HloModule ms, num_partitions=" + std::to_string(t) + "\nENTRY main {\n  x = f32[6," +
         std::to_string(n) + "] parameter(0), sharding=" + sharding + "\n  ROOT r = " + shape +
         ") custom-call(x), custom_call_target=\"_SPMDInternalOp_MultiSlice\", sharding=" +
         shardings + "}, backend_config=\"dimension=1,amount=" + std::to_string(amount) +
         ",start_indices=[0," + std::to_string(start) + "],limit_indices=[6," +
         std::to_string(limit) + "],strides=[1," + std::to_string(stride) + "]\"\n}\n";
}

TEST(MultiSlicePartitionTest, ShiftedSlicesExchangeHalosOnly) {
  for (const auto& [n, amount, start, limit] : std::vector<std::tuple<int, int, int, int>>{
           {32, 3, 2, 26}, {30, 2, 3, 25}, {29, 0, 1, 28}, {32, 4, 0, 28}}) {
    SCOPED_TRACE(std::to_string(n) + " amount " + std::to_string(amount));
    Partitioned p = Partition(MultiSlice(4, "1,4", n, amount, start, limit));
    ASSERT_NE(p.spmd, nullptr);
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll], 0)
        << p.spmd->ToString();
    EXPECT_GT(counts[HloOpcode::kCollectivePermute], 0) << p.spmd->ToString();
    EXPECT_NE(p.explain.find("halo exchange"), std::string::npos) << p.explain;
    EXPECT_EQ(p.explain.find("fallback"), std::string::npos) << p.explain;
    ExpectVerifies(p, 4);
  }
}

TEST(MultiSlicePartitionTest, OtherSplitDimsAndStridesVerify) {
  // Rows split too (sliced whole): they stay split. A strided slice takes its dim whole.
  Partitioned rows = Partition(MultiSlice(8, "2,4", 32, 2, 3, 27));
  ASSERT_NE(rows.spmd, nullptr);
  EXPECT_EQ(Counts(*rows.spmd)[HloOpcode::kAllGather], 0) << rows.spmd->ToString();
  ExpectVerifies(rows, 8);
  Partitioned strided = Partition(MultiSlice(4, "1,4", 32, 2, 1, 29, 2));
  ASSERT_NE(strided.spmd, nullptr);
  ExpectVerifies(strided, 4);
}

// `call` on f32[n,3] x (and a pad value v) split 4 ways along dim 0, its `count` results of
// `m` rows split alike.
std::string WindowCall(int n, int m, int count, const std::string& call) {
  const std::string leaf = "f32[" + std::to_string(m) + ",3]";
  std::string shape = count == 1 ? leaf : "(";
  std::string shardings = count == 1 ? "{devices=[4,1]<=[4]}" : "{";
  for (int i = 0; count > 1 && i < count; ++i) {
    shape += (i ? ", " : "") + leaf;
    shardings += std::string(i ? ", " : "") + "{devices=[4,1]<=[4]}";
  }
  if (count > 1) {
    shape += ")";
    shardings += "}";
  }
  return "HloModule w, num_partitions=4\nENTRY main {\n  x = f32[" + std::to_string(n) +
         ",3] parameter(0), sharding={devices=[4,1]<=[4]}\n  v = f32[] parameter(1)\n  ROOT r = " +
         shape + " " + call + ", sharding=" + shardings + "\n}\n";
}

TEST(MultiSlicePartitionTest, RotationsWrapsAndPadsFetchOnlyTheirEdges) {
  const std::tuple<int, int, int, std::string> cases[] = {
      {12, 12, 3,
       "custom-call(x), custom_call_target=\"_SPMDInternalOp_MultiRotate\", "
       "backend_config=\"dimension=0,left_amount=1,right_amount=1,bufferize=0\""},
      {14, 14, 4,
       "custom-call(x), custom_call_target=\"_SPMDInternalOp_MultiRotate\", "
       "backend_config=\"dimension=0,left_amount=2,right_amount=1\""},
      {12, 14, 1,
       "custom-call(x), custom_call_target=\"_SPMDInternalOp_Wrap\", "
       "backend_config=\"dimension=0,left_amount=1,right_amount=1\""},
      // Positions past the wrapped value are zeros.
      {12, 20, 1,
       "custom-call(x), custom_call_target=\"_SPMDInternalOp_Wrap\", "
       "backend_config=\"dimension=0,left_amount=1,right_amount=2\""},
      {13, 15, 3,
       "custom-call(x, v), custom_call_target=\"_SPMDInternalOp_MultiPad\", "
       "backend_config=\"dimension=0,amt=2,bufferize=0\""}};
  for (const auto& [n, m, count, call] : cases) {
    SCOPED_TRACE(call);
    Partitioned p = Partition(WindowCall(n, m, count, call));
    ASSERT_NE(p.spmd, nullptr);
    auto counts = Counts(*p.spmd);
    EXPECT_EQ(counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll], 0)
        << p.spmd->ToString();
    EXPECT_EQ(p.explain.find("fallback"), std::string::npos) << p.explain;
    ExpectVerifies(p, 4);
  }
}

}  // namespace

// Where an elementwise op is computed (spmd/partitioner/elementwise_handlers.cc): in its own
// sharding, or in its operands' when computing there and resharding the result once is cheaper.
// Each program is verified on the CPU executor against the unpartitioned module.
#include <string>

#include "gtest/gtest.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/verify.h"
#include "spmd/propagation/sharding_propagation.h"
#include "tests/partition_test_util.h"

namespace {

using testing_util::Counts;
using testing_util::ExpectVerifies;
using testing_util::Partition;
using testing_util::Partitioned;

int64_t BytesReceived(const Partitioned& p) { return hlo::ComputeModuleStats(*p.spmd).comm_bytes; }

// A product wanted whole of two operands split alike: computed split and gathered once (896 B a
// device), not computed whole from two gathered operands (1792 B). XLA's PropagateShardAs.
TEST(ElementwisePartitionTest, OperandsSplitAlikeAreMultipliedSplitAndTheResultGathered) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  a = s32[16,16] parameter(0), sharding={devices=[4,2]<=[8]}
  b = s32[16,16] parameter(1), sharding={devices=[4,2]<=[8]}
  ROOT m = s32[16,16] multiply(a, b), sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(BytesReceived(p), 896) << p.explain << p.spmd->ToString();
  EXPECT_NE(p.explain.find("%m: computed in {devices=[4,2]<=[8]}"), std::string::npos) << p.explain;
  ExpectVerifies(p, 8);
}

// Operands split differently: the one already in the result's layout costs nothing, so the op
// runs in the result's sharding and only the other operand moves.
TEST(ElementwisePartitionTest, TheResultsOwnShardingWinsWhenAnOperandIsAlreadyThere) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  a = f32[32,32] parameter(0), sharding={devices=[4,1]<=[4]}
  b = f32[32,32] parameter(1), sharding={devices=[1,4]<=[4]}
  ROOT s = f32[32,32] subtract(a, b), sharding={devices=[4,1]<=[4]}
})");
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(p.explain.find("computed in"), std::string::npos) << p.explain;
  EXPECT_EQ(Counts(*p.spmd)[hlo::HloOpcode::kAllToAll], 1) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

// XLA's UnreducedParam: a sum of two partial sums (unreduced alike), wanted whole, is summed on
// each device and all-reduced once (32 B), not all-reduced operand by operand (64 B, two
// collectives). A product of partial sums is not a partial sum: its operands are reduced first.
TEST(ElementwisePartitionTest, SumsOfPartialSumsAreReducedOnce) {
  for (const std::string& sharding :
       {std::string("{unreduced}"),
        std::string("{devices=[1,2,2]<=[4] last_tile_dims={unreduced}}")}) {
    SCOPED_TRACE(sharding);
    Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  a = s32[2,4] parameter(0), sharding=)" +
                              sharding + R"(
  b = s32[2,4] parameter(1), sharding=)" +
                              sharding + R"(
  s = s32[2,4] add(a, b)
  ROOT n = s32[2,4] subtract(s, a), sharding={replicated}
})");
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_EQ(Counts(*p.spmd)[hlo::HloOpcode::kAllReduce], 1) << p.explain << p.spmd->ToString();
    ExpectVerifies(p, 4);
  }
  Partitioned product = Partition(R"(HloModule m, num_partitions=2
ENTRY e {
  a = s32[2,4] parameter(0), sharding={unreduced}
  b = s32[2,4] parameter(1), sharding={unreduced}
  ROOT m = s32[2,4] multiply(a, b), sharding={replicated}
})");
  ASSERT_NE(product.spmd, nullptr);
  EXPECT_EQ(Counts(*product.spmd)[hlo::HloOpcode::kAllReduce], 2) << product.spmd->ToString();
  ExpectVerifies(product, 2);
}

// Partial maxima (Shardy's `unreduced=max{...}`, XLA's NamedUnreducedParamGrouped): a sum of
// two values held as partial maxima needs each maximum first (two all-reduces with a `maximum`
// reducer); a maximum of partial maxima is itself one (reduced once, as sums of sums are).
// Combining by add instead is caught by verification.
TEST(ElementwisePartitionTest, PartialMaximaAreReducedByMaximum) {
  const std::string params = R"(HloModule m, num_partitions=4
ENTRY e {
  a = s32[2,4] parameter(0), sharding={mesh['a'=2, 'b'=2], [], unreduced=max{'a', 'b'}}
  b = s32[2,4] parameter(1), sharding={mesh['a'=2, 'b'=2], [], unreduced=max{'a', 'b'}}
)";
  Partitioned sum = Partition(params + "  ROOT s = s32[2,4] add(a, b)\n}");
  ASSERT_NE(sum.spmd, nullptr);
  EXPECT_EQ(Counts(*sum.spmd)[hlo::HloOpcode::kAllReduce], 2) << sum.spmd->ToString();
  EXPECT_EQ(Counts(*sum.spmd)[hlo::HloOpcode::kMaximum], 1) << sum.spmd->ToString();
  ExpectVerifies(sum, 4);
  Partitioned max = Partition(params + "  ROOT s = s32[2,4] maximum(a, b)\n}");
  ASSERT_NE(max.spmd, nullptr);
  EXPECT_EQ(Counts(*max.spmd)[hlo::HloOpcode::kAllReduce], 1) << max.spmd->ToString();
  ExpectVerifies(max, 4);
  // The same program reducing by add.
  std::string text = max.spmd->ToString();
  for (size_t at; (at = text.find("maximum(")) != std::string::npos;) text.replace(at, 7, "add");
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> wrong = hlo::ParseHloModule(text);
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  runtime::VerifyOptions options;
  options.num_partitions = 4;
  absl::StatusOr<runtime::VerifyResult> result =
      runtime::VerifyAgainst(*max.original, **wrong, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->ok()) << text;
}

// A bitcast-convert between types of one width runs on each device's tile (no gather); one
// between widths is computed whole.
TEST(ElementwisePartitionTest, SameWidthBitcastConvertRunsOnTheTile) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  x = u32[32,64] parameter(0), sharding={devices=[2,4]<=[8]}
  b = f32[32,64] bitcast-convert(x), sharding={devices=[2,4]<=[8]}
  ROOT w = u8[32,64,4] bitcast-convert(b), sharding={replicated}
})");
  ASSERT_NE(p.spmd, nullptr);
  bool tiled = false;
  for (const auto& computation : p.spmd->computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->opcode() == hlo::HloOpcode::kBitcastConvert &&
          instr->shape().ToString() == "f32[16,16]") {
        tiled = true;
      }
    }
  }
  EXPECT_TRUE(tiled) << p.spmd->ToString();
  ExpectVerifies(p, 8);
}

TEST(ElementwisePartitionTest, X64SplitAndCombineArePointwise) {
  // XLA's 64-bit emulation custom-calls carry Shardy's built-in pointwise rule: propagation
  // splits them like their operand and each device runs them on its shard (they were computed
  // whole, 30 MB gathered on XLA's X64Combine test). The executors do not run them, so this
  // checks the program's shapes and collectives.
  const std::string text = R"(HloModule x64, num_partitions=4
ENTRY main {
  x = f64[16,8] parameter(0), sharding={devices=[2,2]<=[4]}
  lo = f32[16,8] custom-call(x), custom_call_target="X64SplitLow"
  hi = f32[16,8] custom-call(x), custom_call_target="X64SplitHigh"
  ROOT c = f64[16,8] custom-call(lo, hi), custom_call_target="X64Combine", sharding={devices=[2,2]<=[4]}
}
)";
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  spmd::ShardingPropagation propagation;
  ASSERT_TRUE(propagation.Run(module->get()).ok());
  Partitioned p = Partition((*module)->ToString());
  ASSERT_NE(p.spmd, nullptr);
  auto counts = Counts(*p.spmd);
  EXPECT_EQ(counts[hlo::HloOpcode::kAllGather] + counts[hlo::HloOpcode::kAllToAll] +
                counts[hlo::HloOpcode::kCollectivePermute],
            0)
      << p.spmd->ToString();
  EXPECT_EQ(p.explain.find("fallback"), std::string::npos) << p.explain;
  int local = 0;
  for (const auto& instr : p.spmd->entry_computation()->instructions()) {
    if (instr->opcode() == hlo::HloOpcode::kCustomCall) {
      EXPECT_EQ(instr->shape().dimensions(), (std::vector<int64_t>{8, 4})) << instr->ToString();
      ++local;
    }
  }
  EXPECT_EQ(local, 3) << p.spmd->ToString();
}

// A map over every dim and a stochastic-convert are elementwise, as XLA partitions them: each
// runs on its tiles and nothing moves (they were computed whole behind all-gathers, 4608
// bytes a device here). Propagation carries the parameters' tiling through both. The executor
// checks the map; stochastic-convert's rounding is the backend's, so it is checked by shape.
TEST(ElementwisePartitionTest, MapsAndStochasticConvertsRunOnTiles) {
  const std::string head = R"(HloModule mapsc, num_partitions=4
add_mul {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  sum = f32[] add(p0, p1)
  ROOT product = f32[] multiply(sum, p0)
}
ENTRY main {
  x = f32[16,32] parameter(0), sharding={devices=[2,2]<=[4]}
  y = f32[16,32] parameter(1), sharding={devices=[2,2]<=[4]}
  m = f32[16,32] map(x, y), dimensions={0,1}, to_apply=add_mul
)";
  spmd::PartitionerOptions strict;
  strict.strict = true;  // A replicated fallback is an error.
  Partitioned map =
      Partition(testing_util::PropagatedText(
                    head + "  ROOT n = f32[16,32] negate(m), sharding={devices=[2,2]<=[4]}\n}\n"),
                strict);
  ASSERT_NE(map.spmd, nullptr);
  EXPECT_TRUE(testing_util::RunsOnItsShard(map, "m", hlo::HloOpcode::kMap));
  EXPECT_EQ(BytesReceived(map), 0) << map.spmd->ToString();
  ExpectVerifies(map, 4);
  Partitioned convert = Partition(
      testing_util::PropagatedText(
          head +
          "  r = u32[16,32] parameter(2), sharding={devices=[2,2]<=[4]}\n"
          "  ROOT c = bf16[16,32] stochastic-convert(m, r), sharding={devices=[2,2]<=[4]}\n}\n"),
      strict);
  ASSERT_NE(convert.spmd, nullptr);
  EXPECT_TRUE(testing_util::RunsOnItsShard(convert, "c", hlo::HloOpcode::kStochasticConvert));
  EXPECT_EQ(BytesReceived(convert), 0) << convert.spmd->ToString();
}

}  // namespace

// Manual sharding end to end: regions entered through SPMDFullToShardShape and left through
// SPMDShardToFullShape are run as written on each device, and the verifier's per-device
// reference (verify.h) checks them. A hand-written wrong SPMD program must fail verification.
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/transforms/dead_code_elimination.h"
#include "runtime/cpu/verify.h"
#include "spmd/partitioner/spmd_partitioner.h"

namespace {

std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> m = hlo::ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

absl::StatusOr<std::unique_ptr<hlo::HloModule>> Partition(const std::string& text) {
  std::unique_ptr<hlo::HloModule> m = Parse(text);
  if (m == nullptr) return absl::InvalidArgumentError("parse");
  spmd::SpmdPartitioner partitioner;
  absl::StatusOr<bool> ran = partitioner.Run(m.get());
  if (!ran.ok()) return ran.status();
  hlo::DeadCodeElimination cleanup;
  if (absl::StatusOr<bool> c = cleanup.Run(m.get()); !c.ok()) return c.status();
  return m;
}

absl::StatusOr<runtime::VerifyResult> Verify(const std::string& original,
                                             const hlo::HloModule& spmd, int64_t devices) {
  std::unique_ptr<hlo::HloModule> full = Parse(original);
  runtime::VerifyOptions options;
  options.seed = 7;
  options.num_partitions = devices;
  return runtime::VerifyAgainst(*full, spmd, options);
}

// Enter, compute with the device's id, all-reduce inside the region, leave, and compute on.
constexpr char kRegion[] = R"(
HloModule region, num_partitions=4
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  own = f32[4,6] parameter(1), sharding={manual}
  s = f32[4,6] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  id = u32[] partition-id(), sharding={manual}
  idf = f32[] convert(id), sharding={manual}
  b = f32[4,6] broadcast(idf), dimensions={}, sharding={manual}
  m = f32[4,6] multiply(s, b), sharding={manual}
  a = f32[4,6] add(m, own), sharding={manual}
  r = f32[4,6] all-reduce(a), replica_groups={{0,1},{2,3}}, to_apply=sum, channel_id=1, use_global_device_ids=true, sharding={manual}
  f = f32[8,6] custom-call(r), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  n = f32[8,6] negate(f), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
  ROOT t = (f32[8,6], f32[4,6]) tuple(n, a), sharding={{replicated}, {manual}}
})";

TEST(ManualPartitionTest, RegionRunsAsWrittenAndVerifies) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = Partition(kRegion);
  ASSERT_TRUE(spmd.ok()) << spmd.status();
  const std::string text = (*spmd)->ToString();
  EXPECT_EQ(text.find("SPMDFullToShardShape"), std::string::npos) << text;
  EXPECT_NE(text.find("f32[4,6] multiply("), std::string::npos) << text;
  absl::StatusOr<runtime::VerifyResult> result = Verify(kRegion, **spmd, 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString() << text;
}

TEST(ManualPartitionTest, WrongManualProgramFailsVerification) {
  // Same interface, but device d's manual output ignores its own id: devices 1..3 differ.
  constexpr char kWrong[] = R"(
HloModule wrong, num_partitions=4
ENTRY main {
  x = f32[4,6] parameter(0)
  own = f32[4,6] parameter(1)
  ROOT a = f32[4,6] add(x, own)
})";
  constexpr char kOriginal[] = R"(
HloModule original, num_partitions=4
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  own = f32[4,6] parameter(1), sharding={manual}
  s = f32[4,6] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  id = u32[] partition-id(), sharding={manual}
  idf = f32[] convert(id), sharding={manual}
  b = f32[4,6] broadcast(idf), dimensions={}, sharding={manual}
  m = f32[4,6] multiply(s, b), sharding={manual}
  ROOT a = f32[4,6] add(m, own), sharding={manual}
})";
  std::unique_ptr<hlo::HloModule> wrong = Parse(kWrong);
  absl::StatusOr<runtime::VerifyResult> result = Verify(kOriginal, *wrong, 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->ok()) << result->ToString();
  // And the partitioned original passes.
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = Partition(kOriginal);
  ASSERT_TRUE(spmd.ok()) << spmd.status();
  absl::StatusOr<runtime::VerifyResult> good = Verify(kOriginal, **spmd, 4);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(good->ok()) << good->ToString();
}

// Partitioning `text` fails with a message containing `needle`.
void ExpectPartitionError(const std::string& text, const std::string& needle) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = Partition(text);
  ASSERT_FALSE(spmd.ok());
  EXPECT_NE(std::string(spmd.status().message()).find(needle), std::string::npos)
      << spmd.status();
}

TEST(ManualPartitionTest, TiledValueCannotEnterWithoutConversion) {
  ExpectPartitionError(R"(
HloModule bad, num_partitions=2
ENTRY main {
  x = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  ROOT n = f32[8] negate(x), sharding={manual}
})", "SPMDFullToShardShape");
}

TEST(ManualPartitionTest, ShapeMismatchIsAnError) {
  ExpectPartitionError(R"(
HloModule bad, num_partitions=2
ENTRY main {
  x = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  ROOT s = f32[3] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
})", "f32[4]");
}

TEST(ManualPartitionTest, ManualSubgroupsAreRefusedClearly) {
  ExpectPartitionError(R"(
HloModule sub, num_partitions=4
ENTRY main {
  x = f32[8,2] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dims={manual}}
  ROOT n = f32[8,2] negate(x), sharding={devices=[1,2,2]<=[4] last_tile_dims={manual}}
})", "manual");
}

}  // namespace

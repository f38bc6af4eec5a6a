// The oracle on small programs made of parameters, copies and collectives: slicing and
// assembling uneven and partially replicated shardings, tolerance by type, a correct SPMD
// program verifying, and wrong ones (a permuted replica group, devices that should agree but
// do not) reported as mismatches with the first differing index.
#include "runtime/cpu/verify.h"

#include <cmath>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/strings.h"
#include "runtime/cpu/compare.h"
#include "runtime/cpu/verify_exact.h"

namespace runtime {
namespace {

using hlo::HloSharding;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;
using ::testing::HasSubstr;

std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

HloSharding Sharding(const std::string& text) {
  absl::StatusOr<HloSharding> sharding = HloSharding::Parse(text);
  EXPECT_TRUE(sharding.ok()) << sharding.status();
  return sharding.ok() ? *sharding : HloSharding::Replicate();
}

absl::StatusOr<VerifyResult> Verify(const std::string& full, const std::string& spmd,
                                    int64_t devices) {
  std::unique_ptr<hlo::HloModule> a = Parse(full);
  std::unique_ptr<hlo::HloModule> b = Parse(spmd);
  if (!a || !b) return absl::InvalidArgumentError("parse failed");
  VerifyOptions options;
  options.seed = 7;
  options.num_partitions = devices;
  options.collective_timeout_seconds = 10;
  return VerifyAgainst(*a, *b, options);
}

TEST(VerifyTest, ShardsAndAssemblesUnevenTiles) {
  const Shape full_shape = Shape::Array(PrimitiveType::kF32, {7, 5});
  const Literal full = RandomLiteral(full_shape, 1, 0);
  const HloSharding sharding = Sharding("{devices=[4,1]<=[4]}");
  const Shape padded = Shape::Array(PrimitiveType::kF32, {2, 5});
  std::vector<Literal> shards;
  for (int64_t d = 0; d < 4; ++d) {
    absl::StatusOr<Literal> shard = ShardForDevice(full, sharding, padded, d);
    ASSERT_TRUE(shard.ok()) << shard.status();
    shards.push_back(*std::move(shard));
  }
  // Device 3 holds row 6 and a poisoned padding row.
  EXPECT_EQ(shards[3].GetDouble(0), full.GetDouble(30));
  EXPECT_TRUE(std::isnan(shards[3].GetDouble(5)));
  std::vector<const Literal*> views;
  for (const Literal& s : shards) views.push_back(&s);
  absl::StatusOr<Assembled> back = AssembleFromShards(views, sharding, full_shape);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->value, full);
  EXPECT_EQ(back->disagreement, "");
  // A shard that does not fit the SPMD program's shape is an error.
  EXPECT_THAT(
      std::string(ShardForDevice(full, sharding, Shape::Array(PrimitiveType::kF32, {1, 5}), 0)
                      .status()
                      .message()),
      HasSubstr("but the SPMD program's parameter is f32[1,5]"));
}

TEST(VerifyTest, PartiallyReplicatedHoldersMustAgree) {
  const Shape full_shape = Shape::Array(PrimitiveType::kS32, {4});
  const HloSharding sharding = Sharding("{devices=[2,2]<=[4] last_tile_dim_replicate}");
  Literal full(full_shape);
  for (int64_t i = 0; i < 4; ++i) full.SetInt(i, i + 1);
  std::vector<Literal> shards;
  for (int64_t d = 0; d < 4; ++d) {
    shards.push_back(*ShardForDevice(full, sharding, Shape::Array(PrimitiveType::kS32, {2}), d));
  }
  shards[3].SetInt(1, 99);  // Device 3 holds tile 1 with device 2.
  std::vector<const Literal*> views;
  for (const Literal& s : shards) views.push_back(&s);
  absl::StatusOr<Assembled> back = AssembleFromShards(views, sharding, full_shape);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->value, full);
  EXPECT_THAT(back->disagreement, HasSubstr("devices 2 and 3"));
  EXPECT_THAT(back->disagreement, HasSubstr("first at [3]: device 2 has 4, device 3 has 99"));
}

TEST(VerifyTest, ToleranceByType) {
  Literal expected(Shape::Array(PrimitiveType::kF32, {3}));
  Literal actual(Shape::Array(PrimitiveType::kF32, {3}));
  for (int64_t i = 0; i < 3; ++i) expected.SetDouble(i, i + 1.0);
  actual = expected;
  actual.SetDouble(0, 1.0 + 1e-6);
  actual.SetDouble(2, NAN);
  expected.SetDouble(2, NAN);
  ArrayComparison close = CompareArrays(expected, actual, DefaultTolerance(PrimitiveType::kF32));
  EXPECT_TRUE(close.ok());
  EXPECT_NEAR(close.max_abs_error, 1e-6, 1e-7);
  actual.SetDouble(1, 2.01);
  ArrayComparison far = CompareArrays(expected, actual, DefaultTolerance(PrimitiveType::kF32));
  EXPECT_EQ(far.mismatches, 1);
  EXPECT_EQ(FormatIndex(far.first_mismatch), "[1]");
  EXPECT_EQ(far.expected_value, "2");
  EXPECT_EQ(far.actual_value, "2.01");
  EXPECT_TRUE(CompareArrays(expected, actual, DefaultTolerance(PrimitiveType::kBF16)).ok());
  Literal ints(Shape::Array(PrimitiveType::kS64, {1}));
  Literal other = ints;
  other.SetInt(0, 1);
  EXPECT_EQ(CompareArrays(ints, other, DefaultTolerance(PrimitiveType::kS64)).mismatches, 1);
}

// The real-float fast path reads f32, f64 and bf16 buffers directly; every real type must
// still see NaN, infinities and out-of-tolerance values.
TEST(VerifyTest, RealTypesCompareNanInfinityAndTolerance) {
  for (PrimitiveType type : {PrimitiveType::kF32, PrimitiveType::kF64, PrimitiveType::kBF16,
                             PrimitiveType::kF16}) {
    SCOPED_TRACE(hlo::PrimitiveTypeName(type));
    Literal expected(Shape::Array(type, {4}));
    expected.SetDouble(0, 1.5);
    expected.SetDouble(1, -2.0);
    expected.SetDouble(2, INFINITY);
    expected.SetDouble(3, NAN);
    Literal actual = expected;
    EXPECT_TRUE(CompareArrays(expected, actual, DefaultTolerance(type)).ok());
    actual.SetDouble(2, -INFINITY);
    actual.SetDouble(3, 0.0);
    actual.SetDouble(1, -2.5);
    ArrayComparison c = CompareArrays(expected, actual, DefaultTolerance(type));
    EXPECT_EQ(c.mismatches, 3);
    EXPECT_EQ(FormatIndex(c.first_mismatch), "[1]");
    EXPECT_NEAR(c.max_rel_error, 0.25, 1e-9);
  }
}

// f32 and s32 fill in typed loops; f64 and s64 through SetRandomElement: the same draws.
TEST(VerifyTest, TypedRandomFillsDrawWhatTheGenericOneDraws) {
  const Literal f32 = RandomLiteral(Shape::Array(PrimitiveType::kF32, {300}), 5, 2);
  const Literal f64 = RandomLiteral(Shape::Array(PrimitiveType::kF64, {300}), 5, 2);
  const Literal s32 = RandomLiteral(Shape::Array(PrimitiveType::kS32, {300}), 5, 2);
  const Literal s64 = RandomLiteral(Shape::Array(PrimitiveType::kS64, {300}), 5, 2);
  for (int64_t i = 0; i < 300; ++i) {
    EXPECT_EQ(f32.GetDouble(i), static_cast<float>(f64.GetDouble(i))) << i;
    EXPECT_EQ(s32.GetInt(i), s64.GetInt(i)) << i;
  }
}

TEST(VerifyTest, RandomArgumentsAreSeededAndInRange) {
  const Shape shape = Shape::Array(PrimitiveType::kF32, {64});
  const Literal a = RandomLiteral(shape, 3, 0);
  EXPECT_EQ(a, RandomLiteral(shape, 3, 0));
  EXPECT_FALSE(a == RandomLiteral(shape, 4, 0));
  EXPECT_FALSE(a == RandomLiteral(shape, 3, 1));
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_GE(a.GetDouble(i), -1.0);
    EXPECT_LT(a.GetDouble(i), 1.0);
  }
  const Literal ints = RandomLiteral(Shape::Array(PrimitiveType::kS32, {64}), 3, 0);
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_GE(ints.GetInt(i), -8);
    EXPECT_LT(ints.GetInt(i), 8);
  }
}

constexpr char kFull[] = R"(
HloModule full, num_partitions=4
ENTRY e {
  p = f32[8,3] parameter(0), sharding={devices=[4,1]<=[4]}
  q = s32[6] parameter(1), sharding={devices=[4]<=[4]}
  c = f32[8,3] copy(p), sharding={replicated}
  d = s32[6] copy(q)
  ROOT t = (f32[8,3], s32[6]) tuple(c, d), sharding={{replicated}, {devices=[4]<=[4]}}
}
)";

std::string Spmd(const std::string& groups) {
  return R"(
HloModule spmd, num_partitions=4
ENTRY e {
  p = f32[2,3] parameter(0)
  q = s32[2] parameter(1)
  g = f32[8,3] all-gather(p), channel_id=1, replica_groups=)" +
         groups + R"(, dimensions={0}, use_global_device_ids=true
  ROOT t = (f32[8,3], s32[2]) tuple(g, q)
}
)";
}

TEST(VerifyTest, CorrectProgramVerifies) {
  absl::StatusOr<VerifyResult> result = Verify(kFull, Spmd("{{0,1,2,3}}"), 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString();
  ASSERT_EQ(result->leaves.size(), 2u);
  EXPECT_EQ(result->leaves[0].name, "output {0}");
  EXPECT_EQ(result->leaves[1].tolerance.exact(), true);
  EXPECT_EQ(result->assembled, result->expected);
  EXPECT_THAT(result->ToString(), HasSubstr("output {1}: s32[6]: max abs error 0"));
}

TEST(VerifyTest, WrongReplicaGroupIsAMismatch) {
  absl::StatusOr<VerifyResult> result = Verify(kFull, Spmd("{{0,2,1,3}}"), 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->ok());
  EXPECT_FALSE(result->leaves[0].ok());
  EXPECT_TRUE(result->leaves[1].ok());
  EXPECT_EQ(FormatIndex(result->leaves[0].comparison.first_mismatch), "[2,0]");
  EXPECT_THAT(result->ToString(), HasSubstr("output {0}: f32[8,3]: max abs error"));
  EXPECT_THAT(result->ToString(), HasSubstr("MISMATCH: 12 of 24 elements differ; first at [2,0]"));
}

// The exact rerun: a bf16 module widened to f64 computes its sum without rounding (checked
// against the sum of the same arguments in double), its constants widened too.
TEST(VerifyExactTest, WidenedModuleComputesInF64) {
  std::unique_ptr<hlo::HloModule> m = Parse(R"(HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  p = bf16[4,512] parameter(0)
  k = bf16[] constant(100)
  kb = bf16[4,512] broadcast(k), dimensions={}
  u = bf16[4,512] add(p, kb)
  z = bf16[] constant(0)
  ROOT r = bf16[4] reduce(u, z), dimensions={1}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> wide = WidenToF64(*m);
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ((*wide)->entry_computation()->root_instruction()->shape().element_type(),
            PrimitiveType::kF64);
  std::vector<Literal> args = RandomArguments(*m, 3);
  std::vector<Literal> wide_args = {WidenLiteral(args[0])};
  absl::StatusOr<std::vector<Literal>> exact = RunReference(**wide, wide_args, 1, 10);
  ASSERT_TRUE(exact.ok()) << exact.status();
  for (int64_t row = 0; row < 4; ++row) {
    double sum = 0;
    for (int64_t c = 0; c < 512; ++c) sum += args[0].GetDouble(row * 512 + c) + 100;
    EXPECT_DOUBLE_EQ(exact->front().GetDouble(row), sum);
  }
  // Bits matter to a bitcast-convert: no widening.
  std::unique_ptr<hlo::HloModule> bits = Parse(R"(HloModule m
ENTRY e {
  p = bf16[4] parameter(0)
  ROOT b = s16[4] bitcast-convert(p)
})");
  ASSERT_NE(bits, nullptr);
  EXPECT_FALSE(WidenToF64(*bits).ok());
}

// The verdict against the exact result: the SPMD program passes when it is at most
// kErrorFactor times as far from the exact values as the reference (plus atol), not when it
// is off by whole values.
TEST(VerifyExactTest, HeldToTheReferencesOwnError) {
  const Shape shape = Shape::Array(PrimitiveType::kBF16, {3});
  const Shape wide = Shape::Array(PrimitiveType::kF64, {3});
  Literal exact(wide), expected(shape), near(shape), far(shape);
  const double values[] = {1000, -2000, 500};
  for (int64_t i = 0; i < 3; ++i) {
    exact.SetDouble(i, values[i] + 0.3);
    expected.SetDouble(i, values[i] + (i == 1 ? 8 : 0));  // The reference's rounding: 8.
    near.SetDouble(i, values[i] - (i == 2 ? 24 : 0));     // Ours: 24.3, within 4 x 7.7 + atol.
    far.SetDouble(i, values[i] + (i == 0 ? 250 : 0));     // Off by 250.
  }
  const Tolerance tolerance = DefaultTolerance(PrimitiveType::kBF16);
  std::optional<ExactCheck> ok = CheckAgainstExact(expected, near, exact, tolerance);
  ASSERT_TRUE(ok.has_value());
  EXPECT_NEAR(ok->reference_error, 7.7, 1e-9);
  EXPECT_TRUE(ok->ok()) << ok->spmd_error << " vs " << ok->bound;
  std::optional<ExactCheck> wrong = CheckAgainstExact(expected, far, exact, tolerance);
  ASSERT_TRUE(wrong.has_value());
  EXPECT_FALSE(wrong->ok()) << wrong->spmd_error << " vs " << wrong->bound;
  Literal ints(Shape::Array(PrimitiveType::kS32, {3}));
  EXPECT_FALSE(CheckAgainstExact(ints, ints, ints, tolerance).has_value());
}

// A tolerance the caller gives replaces the type's and the exact rerun.
TEST(VerifyTest, GivenToleranceIsFinal) {
  std::unique_ptr<hlo::HloModule> a = Parse(kFull);
  std::unique_ptr<hlo::HloModule> b = Parse(Spmd("{{0,2,1,3}}"));
  ASSERT_TRUE(a && b);
  VerifyOptions options;
  options.seed = 7;
  options.num_partitions = 4;
  options.collective_timeout_seconds = 10;
  options.tolerance = Tolerance{1e9, 1e9};
  absl::StatusOr<VerifyResult> result = VerifyAgainst(*a, *b, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->leaves[0].exact.has_value());
  EXPECT_TRUE(result->ok()) << result->ToString();
}

// A program that sums its shards' padding (f32[7] on 4 devices: device 3 holds one pad) is
// caught: the padding is poisoned, where zeros would let the unmasked sum pass.
TEST(VerifyTest, ReadingShardPaddingIsAMismatch) {
  const std::string full = R"(
HloModule full, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[7] parameter(0), sharding={devices=[4]<=[4]}
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add, sharding={replicated}
})";
  const std::string spmd = R"(
HloModule spmd, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[2] parameter(0)
  z = f32[] constant(0)
  l = f32[] reduce(p, z), dimensions={0}, to_apply=add
  ROOT r = f32[] all-reduce(l), channel_id=1, replica_groups={{0,1,2,3}},
    use_global_device_ids=true, to_apply=add
})";
  absl::StatusOr<VerifyResult> result = Verify(full, spmd, 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->ok()) << result->ToString();
}

TEST(VerifyTest, ReplicatedOutputThatDevicesDisagreeOn) {
  const std::string full = R"(
HloModule full, num_partitions=4
ENTRY e {
  p = f32[4] parameter(0), sharding={replicated}
  ROOT c = f32[4] copy(p), sharding={replicated}
})";
  const std::string spmd = R"(
HloModule spmd, num_partitions=4
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,0}}
})";
  absl::StatusOr<VerifyResult> result = Verify(full, spmd, 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->ok());
  EXPECT_TRUE(result->leaves[0].comparison.ok());
  EXPECT_THAT(result->leaves[0].disagreement, HasSubstr("devices 0 and 2"));
}

// A module whose manual code gives devices different values where its shardings say there is
// one value (SPMDShardToFullShape to {replicated} of per-device shards) has no single meaning:
// the oracle names the input's fault instead of reporting the partitioned program wrong.
TEST(VerifyTest, ReplicatedValueThatTheModuleItselfMakesDiffer) {
  const std::string full = R"(
HloModule full, num_partitions=2
ENTRY e {
  p = f32[4,3] parameter(0), sharding={devices=[2,1]0,1}
  m = f32[2,3] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={manual}
  ROOT r = f32[2,3] custom-call(m), custom_call_target="SPMDShardToFullShape", sharding={replicated}
})";
  const std::string spmd = R"(
HloModule spmd, num_partitions=2
ENTRY e {
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] copy(p)
})";
  absl::StatusOr<VerifyResult> result = Verify(full, spmd, 2);
  ASSERT_FALSE(result.ok()) << result->ToString();
  EXPECT_TRUE(IsDeviceDependentInput(result.status())) << result.status();
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("%r output: the unpartitioned module itself gives devices 0 and 1 "
                                "different values"));
}

// The same fault where the result is tiled: SPMDShardToFullShape makes devices 0 and 1 replicas
// of rows 0-1, but their manual values differ (rows 0 and 1 of p). Each device's reference
// keeps its own value where it holds one, so the references differ and the oracle names the
// input's fault (before, every reference took device 0's rows and device 1 looked wrong).
TEST(VerifyTest, TiledReplicasThatTheModuleItselfMakesDiffer) {
  const std::string full = R"(
HloModule full, num_partitions=4
ENTRY e {
  p = f32[4,3] parameter(0), sharding={devices=[4,1]<=[4]}
  m = f32[1,3] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={manual}
  ROOT r = f32[2,3] custom-call(m), custom_call_target="SPMDShardToFullShape",
    sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
})";
  const std::string spmd = R"(
HloModule spmd, num_partitions=4
ENTRY e {
  p = f32[1,3] parameter(0)
  ROOT r = f32[1,3] copy(p)
})";
  absl::StatusOr<VerifyResult> result = Verify(full, spmd, 4);
  ASSERT_FALSE(result.ok()) << result->ToString();
  EXPECT_TRUE(IsDeviceDependentInput(result.status())) << result.status();
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("the unpartitioned module itself gives devices 0 and 1 different values"));
}

TEST(VerifyTest, ProgramsThatDoNotFitAreErrors) {
  const std::string spmd = R"(
HloModule spmd, num_partitions=4
ENTRY e {
  ROOT p = f32[2,3] parameter(0)
})";
  absl::StatusOr<VerifyResult> result = Verify(kFull, spmd, 4);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(
      std::string(result.status().message()),
      HasSubstr("the unpartitioned module takes 2 parameters but the SPMD program takes 1"));
}

}  // namespace
}  // namespace runtime

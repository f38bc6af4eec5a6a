// Sampled verification must pass right programs and catch wrong ones, including a mistake
// confined to one element per shard (the shard boundaries it always samples).
#include "runtime/cpu/sampled_verify.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"

namespace runtime {
namespace {

absl::StatusOr<VerifyResult> Verify(const std::string& unpartitioned, const std::string& spmd,
                                    int64_t devices) {
  auto full = hlo::ParseHloModule(unpartitioned);
  if (!full.ok()) return full.status();
  auto program = hlo::ParseHloModule(spmd);
  if (!program.ok()) return program.status();
  SampledVerifyOptions options;
  options.num_partitions = devices;
  return VerifySampled(**full, **program, options);
}

const char kContractingDot[] = R"(
HloModule m
ENTRY e {
  a = f32[8,16] parameter(0), sharding={devices=[1,2]<=[2]}
  b = f32[16,8] parameter(1), sharding={devices=[2,1]<=[2]}
  ROOT d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})";

TEST(SampledVerifyTest, PassesAContractingDotWithItsAllReduce) {
  absl::StatusOr<VerifyResult> r = Verify(kContractingDot, R"(
HloModule m_spmd, num_partitions=2
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[8,8] parameter(0)
  b = f32[8,8] parameter(1)
  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT ar = f32[8,8] all-reduce(d), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
})", 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok()) << r->ToString();
  EXPECT_NE(r->ToString().find("sampled:"), std::string::npos) << r->ToString();
}

TEST(SampledVerifyTest, CatchesAMissingAllReduce) {
  absl::StatusOr<VerifyResult> r = Verify(kContractingDot, R"(
HloModule m_spmd, num_partitions=2
ENTRY e {
  a = f32[8,8] parameter(0)
  b = f32[8,8] parameter(1)
  ROOT d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->ok()) << r->ToString();
}

const char kUnevenCopy[] = R"(
HloModule m
ENTRY e {
  p = f32[7,5] parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT c = f32[7,5] copy(p), sharding={devices=[2,1]<=[2]}
})";

TEST(SampledVerifyTest, UnevenShardsArePaddedAndThePaddingIsNotCompared) {
  absl::StatusOr<VerifyResult> r = Verify(kUnevenCopy, R"(
HloModule m_spmd, num_partitions=2
ENTRY e { p = f32[4,5] parameter(0)  ROOT c = f32[4,5] copy(p) })", 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok()) << r->ToString();
}

TEST(SampledVerifyTest, CatchesAWrongLastElementOfEachShard) {
  // Each device overwrites the last element of its (unpadded) shard.
  absl::StatusOr<VerifyResult> r = Verify(kUnevenCopy, R"(
HloModule m_spmd, num_partitions=2
ENTRY e {
  p = f32[4,5] parameter(0)
  zero = f32[1,1] constant({{0}})
  id = u32[] partition-id()
  rows = u32[2] constant({3, 2})
  row = u32[1] dynamic-slice(rows, id), dynamic_slice_sizes={1}
  r = u32[] reshape(row)
  four = u32[] constant(4)
  ROOT c = f32[4,5] dynamic-update-slice(p, zero, r, four)
})", 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->ok()) << r->ToString();
  EXPECT_NE(r->ToString().find("MISMATCH"), std::string::npos) << r->ToString();
}

// Unreduced values, as the full verifier reads them: an unreduced result is the combination of
// its group's partial values (sum here, maximum below); an unreduced parameter is held by its
// group's first member, the others holding the reduction's identity (zeros for a sum).
const char kUnreducedDot[] = R"(
HloModule m
ENTRY e {
  a = f32[8,16] parameter(0), sharding={devices=[1,2]<=[2]}
  b = f32[16,8] parameter(1), sharding={devices=[2,1]<=[2]}
  c = f32[8,8] parameter(2), sharding={unreduced}
  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[8,8] add(d, c), sharding={unreduced}
})";

TEST(SampledVerifyTest, UnreducedValuesAreTheirGroupsSums) {
  // Right: each device's partial dot plus its part of c.
  const std::string right = R"(
HloModule m_spmd, num_partitions=2
ENTRY e {
  a = f32[8,8] parameter(0)
  b = f32[8,8] parameter(1)
  c = f32[8,8] parameter(2)
  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[8,8] add(d, c)
})";
  // Wrong: the partial dots summed before the group's sum (twice the dot), and c dropped.
  const std::string summed_twice = R"(
HloModule m_spmd, num_partitions=2
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[8,8] parameter(0)
  b = f32[8,8] parameter(1)
  c = f32[8,8] parameter(2)
  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ar = f32[8,8] all-reduce(d), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ROOT s = f32[8,8] add(ar, c)
})";
  absl::StatusOr<VerifyResult> r = Verify(kUnreducedDot, right, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok()) << r->ToString();
  r = Verify(kUnreducedDot, summed_twice, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->ok()) << r->ToString();
}

// A maximum's group: the holder holds the value and the others the lowest value (-inf), so a
// copy of the parts keeps the group's maximum, and negating the parts does not (the others'
// +inf wins).
std::string MaxModule(const std::string& op) {
  const std::string max =
      "{devices=[1,2,2]<=[4] last_tile_dims={unreduced} metadata={op_type="
      "\"sdy::reduction_op\" op_name=\"MAX\"}}";
  return "HloModule m\nENTRY e {\n  a = f32[8,4] parameter(0), sharding=" + max +
         "\n  ROOT n = f32[8,4] " + op + "(a), sharding=" + max + "\n}\n";
}

std::string LocalModule(const std::string& op) {
  return "HloModule m_spmd, num_partitions=4\nENTRY e {\n  a = f32[8,2] parameter(0)\n  ROOT n = "
         "f32[8,2] " +
         op + "(a)\n}\n";
}

TEST(SampledVerifyTest, UnreducedMaximaTakeTheirGroupsMaximum) {
  absl::StatusOr<VerifyResult> r = Verify(MaxModule("copy"), LocalModule("copy"), 4);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok()) << r->ToString();
  r = Verify(MaxModule("negate"), LocalModule("negate"), 4);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->ok()) << r->ToString();
}

TEST(SampledVerifyTest, RefusesModulesThatNeedAPerDeviceReference) {
  absl::StatusOr<VerifyResult> r = Verify(R"(
HloModule m
ENTRY e { p = f32[4] parameter(0)  ROOT id = u32[] partition-id() })", R"(
HloModule m_spmd, num_partitions=2
ENTRY e { p = f32[4] parameter(0)  ROOT id = u32[] partition-id() })", 2);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("in part SPMD programs"), std::string_view::npos)
      << r.status();
}

}  // namespace
}  // namespace runtime

// Modular verification (runtime/cpu/modular_verify.h) must catch wrong programs on modules far
// too large to run here (each over 1e12 unpartitioned FLOPs): our partitioner's output with one
// mistake put in by hand -- a wrong replica group, an offset off by one, a missing all-reduce, a
// collective-permute with a wrong pair, a windowed loop one trip short -- fails, and the
// unchanged output passes. Also: an opaque custom-call is named as not verified while the
// program around it is still checked; manual values are checked on each device (reading
// another device's is caught), partially manual ones on each manual group, and shard_map's
// conversions between global and manual values as each device; checks past the deadline are
// named as not verified.
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/modular_verify.h"
#include "tests/partition_test_util.h"
#include "tests/tool_runner.h"

namespace {

// 2 * 16384 * 8192 * 8192 = 2.2e12 FLOPs: the contraction is split, the result wanted by rows.
constexpr char kBigDot[] = R"(
HloModule big_dot, num_partitions=8

ENTRY e {
  a = f32[16384,8192] parameter(0), sharding={devices=[1,8]<=[8]}
  b = f32[8192,8192] parameter(1), sharding={devices=[8,1]<=[8]}
  d = f32[16384,8192] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
  ROOT n = f32[16384,8192] negate(d), sharding={devices=[8,1]<=[8]}
}
)";

using Mutation = std::function<std::string(const std::string&)>;

// Replaces `from` by `to` on every line that contains `where` (at least one must change).
Mutation OnLines(std::string where, std::string from, std::string to) {
  return [=](const std::string& text) {
    std::istringstream in(text);
    std::string line, out;
    int changed = 0;
    while (std::getline(in, line)) {
      const size_t at = line.find(from);
      if (line.find(where) != std::string::npos && at != std::string::npos) {
        line.replace(at, from.size(), to);
        ++changed;
      }
      out += line + "\n";
    }
    EXPECT_GT(changed, 0) << "nothing to mutate: no line has '" << where << "' and '" << from
                          << "'\n" << text;
    return out;
  };
}

// Every all-reduce becomes a copy of its operand: the partial sums are never added up.
std::string DropAllReduce(const std::string& text) {
  static const std::regex kAllReduce(R"(all-reduce\((%[^)]+)\),[^\n]*)");
  std::string out = std::regex_replace(text, kAllReduce, "copy($1)");
  EXPECT_NE(out, text) << "no all-reduce to drop\n" << text;
  return out;
}

struct Verdict {
  bool ok = false;
  std::string report;
};

// Partitions `text` (records kept) for `devices`, applies `mutation` to the printed program,
// parses it back and verifies it instruction by instruction: the result and the program, or
// nullopt after a failed expectation.
std::optional<std::pair<runtime::ModularResult, std::string>> PartitionMutateVerify(
    const std::string& text, spmd::PartitionerOptions options, const Mutation& mutation,
    int64_t devices, double min_flops) {
  options.record_origins = true;
  testing_util::Partitioned p = testing_util::Partition(text, std::move(options));
  EXPECT_NE(p.spmd, nullptr);
  if (p.spmd == nullptr) return std::nullopt;
  EXPECT_GE(hlo::ComputeModuleStats(*p.original).flops, min_flops);
  const std::string program = mutation ? mutation(p.spmd->ToString()) : p.spmd->ToString();
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = hlo::ParseHloModule(program);
  EXPECT_TRUE(spmd.ok()) << spmd.status() << "\n" << program;
  if (!spmd.ok()) return std::nullopt;
  runtime::ModularVerifyOptions verify;
  verify.num_partitions = devices;
  absl::StatusOr<runtime::ModularResult> result =
      runtime::VerifyModular(*p.original, **spmd, p.origins, verify);
  EXPECT_TRUE(result.ok()) << result.status() << "\n" << program;
  if (!result.ok()) return std::nullopt;
  EXPECT_TRUE(result->unverified.empty()) << result->ToString();
  if (getenv("SHOW_REPORT")) std::cout << result->ToString();
  return std::make_pair(*std::move(result), program);
}

// The big dot's partitioning (over 1e12 FLOPs) with `mutation`, on 8 devices.
Verdict VerifyMutated(const std::string& text, spmd::PartitionerOptions options,
                      const Mutation& mutation) {
  auto verified = PartitionMutateVerify(text, std::move(options), mutation, 8, 1e12);
  if (!verified) return {};
  return {verified->first.ok(), verified->first.ToString() + verified->second};
}

// `text` partitioned with its records, verified instruction by instruction on `devices`.
absl::StatusOr<runtime::ModularResult> VerifyOwnPartitioning(const std::string& text,
                                                             int64_t devices) {
  spmd::PartitionerOptions options;
  options.record_origins = true;
  testing_util::Partitioned p = testing_util::Partition(text, options);
  if (p.spmd == nullptr) return absl::InternalError("partitioning failed");
  runtime::ModularVerifyOptions verify;
  verify.num_partitions = devices;
  return runtime::VerifyModular(*p.original, *p.spmd, p.origins, verify);
}

spmd::PartitionerOptions AllReduceStrategy() {
  spmd::PartitionerOptions options;
  options.dot.enable_windowed_einsum = false;
  return options;
}

TEST(WrongProgramTest, AllReduceProgramVerifies) {
  Verdict v = VerifyMutated(kBigDot, AllReduceStrategy(), nullptr);
  EXPECT_TRUE(v.ok) << v.report;
  EXPECT_NE(v.report.find("all-reduce("), std::string::npos) << v.report;
}

TEST(WrongProgramTest, WrongReplicaGroupIsCaught) {
  Verdict v = VerifyMutated(kBigDot, AllReduceStrategy(),
                            OnLines("all-reduce(", "replica_groups=[1,8]<=[8]",
                                    "replica_groups=[2,4]<=[8]"));
  EXPECT_FALSE(v.ok) << v.report;
}

TEST(WrongProgramTest, OffsetOffByOneIsCaught) {
  Verdict v = VerifyMutated(kBigDot, AllReduceStrategy(),
                            OnLines("constant({0, 2048, 4096", "2048", "2049"));
  EXPECT_FALSE(v.ok) << v.report;
}

TEST(WrongProgramTest, MissingAllReduceIsCaught) {
  Verdict v = VerifyMutated(kBigDot, AllReduceStrategy(), DropAllReduce);
  EXPECT_FALSE(v.ok) << v.report;
}

// Without the all-reduce option the partitioner reduce-scatters in a windowed loop: each step
// adds a block and passes the partial sum on with a collective-permute.
TEST(WrongProgramTest, WindowedProgramVerifies) {
  Verdict v = VerifyMutated(kBigDot, {}, nullptr);
  EXPECT_TRUE(v.ok) << v.report;
  EXPECT_NE(v.report.find("collective-permute("), std::string::npos) << v.report;
}

TEST(WrongProgramTest, CollectivePermuteWithAWrongPairIsCaught) {
  Verdict v = VerifyMutated(kBigDot, {},
                            OnLines("collective-permute(", "{0,1},{1,2}", "{0,2},{1,1}"));
  EXPECT_FALSE(v.ok) << v.report;
}

TEST(WrongProgramTest, WindowedLoopOneTripShortIsCaught) {
  Verdict v = VerifyMutated(kBigDot, {}, OnLines(".cond.", "s32[] constant(7)", "s32[] constant(6)"));
  EXPECT_FALSE(v.ok) << v.report;
}

// A loop that does not stop on the devices is a mismatch, not an op "not verified".
TEST(WrongProgramTest, WindowedLoopThatDoesNotStopIsCaught) {
  Verdict v = VerifyMutated(kBigDot, {},
                            OnLines(".cond.", "s32[] constant(7)", "s32[] constant(1000000)"));
  EXPECT_FALSE(v.ok) << v.report;
  EXPECT_NE(v.report.find("the SPMD program cannot compute it ("), std::string::npos) << v.report;
}

// An opaque custom-call has no element semantics: it is named, and its consumer (whose
// reshard is real work) is still checked, with the call's value cut like any other.
TEST(WrongProgramTest, OpaqueCallIsNamedAndTheProgramAroundItChecked) {
  constexpr char kOpaque[] = R"(
HloModule opaque, num_partitions=4

ENTRY e {
  a = f32[64,32] parameter(0), sharding={devices=[4,1]<=[4]}
  c = f32[64,32] custom-call(a), custom_call_target="MyOpaqueKernel", sharding={devices=[4,1]<=[4]}
  ROOT t = f32[32,64] transpose(c), dimensions={1,0}, sharding={devices=[4,1]<=[4]}
}
)";
  absl::StatusOr<runtime::ModularResult> result = VerifyOwnPartitioning(kOpaque, 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString();
  ASSERT_EQ(result->unverified.size(), 1u) << result->ToString();
  EXPECT_NE(result->unverified[0].find("%c"), std::string::npos) << result->ToString();
  EXPECT_NE(result->unverified[0].find("MyOpaqueKernel"), std::string::npos)
      << result->ToString();
  EXPECT_EQ(result->instructions, 1) << result->ToString();  // t (c is not verified).
}

// One SPMD value held for several originals: two sharding custom-calls of one parameter share
// its reshard (computed alike from one operand), a copy shares its operand's value (the same
// value), a sharding custom-call already in its operand's sharding is the entry parameter
// itself. None is a mismatch.
TEST(WrongProgramTest, OriginalsSharingOneValueVerify) {
  constexpr char kShared[] = R"(
HloModule shared, num_partitions=4

ENTRY e {
  a = f32[8] parameter(0)
  p = f32[8] parameter(1), sharding={devices=[4]<=[4]}
  c3 = f32[8] custom-call(p), custom_call_target="Sharding", sharding={devices=[4]<=[4]}
  c1 = f32[8] custom-call(a), custom_call_target="Sharding", sharding={devices=[4]<=[4]}
  c2 = f32[8] custom-call(a), custom_call_target="Sharding", sharding={devices=[4]<=[4]}
  k = f32[8] copy(c2), sharding={devices=[4]<=[4]}
  two = f32[] constant(2)
  b = f32[8] broadcast(two), dimensions={}
  m = f32[8] multiply(k, b), sharding={devices=[4]<=[4]}
  ROOT t = (f32[8], f32[8], f32[8]) tuple(c1, m, c3), sharding={{devices=[4]<=[4]}, {devices=[4]<=[4]}, {devices=[4]<=[4]}}
}
)";
  absl::StatusOr<runtime::ModularResult> result = VerifyOwnPartitioning(kShared, 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString();
  EXPECT_TRUE(result->unverified.empty()) << result->ToString();
}

// A sharding custom-call's value is its operand's: the partitioner may read the one for the
// other (here the replicated reshard made for `r` also feeds the reduce of `x`, which asks for
// `x` replicated: `x` is tiled over 4 of the 8 devices). Both are cut with the same random
// values, laid out by their own shardings, so that is no mismatch (a false alarm the fuzzer
// found).
TEST(WrongProgramTest, ShardingCustomCallSharesItsOperandsValues) {
  constexpr char kIdentity[] = R"(
HloModule identity, num_partitions=8

%add {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %s = s32[] add(%a, %b)
}

ENTRY e {
  p = s32[8,8] parameter(0), sharding={devices=[2,2]0,1,2,3}
  x = s32[8,8] add(p, p), sharding={devices=[2,2]0,1,2,3}
  r = s32[8,8] custom-call(x), custom_call_target="Sharding", sharding={replicated}
  zero = s32[] constant(0)
  ROOT sum = s32[] reduce(x, zero), dimensions={0,1}, to_apply=%add
}
)";
  absl::StatusOr<runtime::ModularResult> result = VerifyOwnPartitioning(kIdentity, 8);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString();
}

// A callee parameter nothing reads is passed zeros (control_flow_handlers.cc) and left out of
// the records, so the call-site check does not compare the zeros with the operand
// (tests/testdata/partition/unread_call_parameter.hlo, shared with
// control_flow_partition_test.cc).
TEST(WrongProgramTest, UnreadCallParameterIsNotComparedAtTheCallSite) {
  absl::StatusOr<runtime::ModularResult> result = VerifyOwnPartitioning(
      testing_tools::ReadFile("tests/testdata/partition/unread_call_parameter.hlo"), 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString();
}

// A Sharding marker of a replicated parameter, wanted replicated again by its user, is rebuilt
// as the parameter's own instruction (rebuild.h): that instruction is the parameter's home, and
// the rebuild records no second home there, or the modular verifier, which reads an
// instruction's first record, lost the parameter's and refused a correct program ("entry
// parameter 0 has no record"; found by the partition fuzzer on XLA's ShardAsWithShardBarrier2).
TEST(WrongProgramTest, MarkerRebuiltAsItsOperandKeepsTheOperandsRecord) {
  absl::StatusOr<runtime::ModularResult> result = VerifyOwnPartitioning(R"(
HloModule marker, num_partitions=8
ENTRY main {
  p = f32[5,7,11,1] parameter(0)
  a = f32[5,7,11,1] custom-call(p), custom_call_target="Sharding",
    sharding={devices=[1,2,4,1]<=[4,2]T(1,0)}
  ROOT b = f32[5,7,11,1] custom-call(a), custom_call_target="Sharding",
    custom_call_has_side_effect=true, sharding={replicated}
}
)",
                                                                        8);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString();
}

// A module on 2 partitions with an f32 sum reducer, for the all-reduce cases below.
const std::string kSumOnTwo = R"(
HloModule ar, num_partitions=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}
)";

// An all-reduce across replicas alone in a module of one replica is the identity: a module
// holding one is verified like any other (XLA's
// EinsumWindowedNonContractingDimensionsNoCodeMotionWithDependentNodes), not refused as an SPMD
// program, and the all-reduce itself is checked.
TEST(WrongProgramTest, CrossReplicaAllReduceOfOneReplicaIsVerified) {
  absl::StatusOr<runtime::ModularResult> result = VerifyOwnPartitioning(kSumOnTwo + R"(
ENTRY main {
  x = f32[4,6] parameter(0), sharding={devices=[2,1]<=[2]}
  e = f32[4,6] exponential(x), sharding={devices=[2,1]<=[2]}
  r = f32[4,6] all-reduce(e), to_apply=sum, replica_groups={}, sharding={devices=[2,1]<=[2]}
  ROOT n = f32[4,6] negate(r), sharding={devices=[1,2]<=[2]}
}
)",
                                                                        2);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString();
  EXPECT_TRUE(result->unverified.empty()) << result->ToString();
}

// The same all-reduce with groups {{0},{1}} names a replica the module lacks: no program at all
// (the executor refuses it), so not the identity either. Verification refuses the module as
// one it cannot model, naming the all-reduce, instead of reporting the partitioned program
// wrong (the partition fuzzer's TiledAllReduce mutant: "1 instructions of the SPMD program do
// not compute what ... computes").
TEST(WrongProgramTest, AllReduceNamingAMissingReplicaIsNotTheIdentity) {
  absl::StatusOr<runtime::ModularResult> result = VerifyOwnPartitioning(kSumOnTwo + R"(
ENTRY main {
  x = f32[4,6] parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT r = f32[4,6] all-reduce(x), to_apply=sum, replica_groups={{0},{1}},
    sharding={devices=[2,1]<=[2]}
}
)",
                                                                        2);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("%r is an all-reduce"), std::string::npos)
      << result.status();
}

// Past its deadline nothing more is evaluated: every check left is named as not verified,
// none is a mismatch (the fuzzer bounds a mutant's time this way).
TEST(WrongProgramTest, ChecksPastTheDeadlineAreNotVerified) {
  spmd::PartitionerOptions options;
  options.record_origins = true;
  testing_util::Partitioned p = testing_util::Partition(kBigDot, options);
  ASSERT_NE(p.spmd, nullptr);
  runtime::ModularVerifyOptions verify;
  verify.num_partitions = 8;
  verify.deadline = std::chrono::steady_clock::now();
  absl::StatusOr<runtime::ModularResult> result =
      runtime::VerifyModular(*p.original, *p.spmd, p.origins, verify);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString();
  EXPECT_EQ(result->instructions, 0);
  ASSERT_FALSE(result->unverified.empty());
  EXPECT_NE(result->unverified.front().find("out of time"), std::string::npos)
      << result->ToString();
}

// Manual values are a different array on each device: each is cut per device, and the
// reference computes as each device. A program that reads another device's manual value
// (here through a collective-permute put in by hand) computes every element from the wrong
// values and is caught; the unchanged program passes, loop and tiled values included.
constexpr char kManual[] = R"(
HloModule manual, num_partitions=4

%cond {
  %s = (s32[], f32[8,16]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %three = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %three), direction=LT
}

%body {
  %s = (s32[], f32[8,16]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %x = f32[8,16] get-tuple-element(%s), index=1
  %y = f32[8,16] multiply(%x, %x)
  ROOT %t = (s32[], f32[8,16]) tuple(%next, %y)
}

ENTRY e {
  p = f32[8,16] parameter(0), sharding={manual}
  n = f32[8,16] negate(p), sharding={manual}
  zero = s32[] constant(0)
  init = (s32[], f32[8,16]) tuple(zero, n), sharding={{manual}, {manual}}
  w = (s32[], f32[8,16]) while(init), condition=%cond, body=%body, sharding={{manual}, {manual}}
  r = f32[8,16] get-tuple-element(w), index=1, sharding={manual}
  q = f32[64,16] parameter(1), sharding={devices=[4,1]<=[4]}
  t = f32[16,64] transpose(q), dimensions={1,0}, sharding={devices=[1,4]<=[4]}
  ROOT out = (f32[8,16], f32[16,64]) tuple(r, t), sharding={{manual}, {devices=[1,4]<=[4]}}
}
)";

runtime::ModularResult VerifyManual(const Mutation& mutation) {
  auto verified = PartitionMutateVerify(kManual, {}, mutation, 4, 0);
  return verified ? verified->first : runtime::ModularResult{};
}

// A small error (1e-3 relative in f32) fails under the default tolerances and passes under ten
// times them (ModularVerifyOptions::tolerance_scale, the fuzzer's near-miss check); a large one
// fails under both.
TEST(WrongProgramTest, ToleranceScaleLoosensTheDefaultTolerances) {
  spmd::PartitionerOptions options;
  options.record_origins = true;
  testing_util::Partitioned p = testing_util::Partition(R"(
HloModule scaled, num_partitions=2
ENTRY main {
  a = f32[8,8] parameter(0), sharding={devices=[2,1]<=[2]}
  c = f32[] constant(2)
  b = f32[8,8] broadcast(c), dimensions={}, sharding={devices=[2,1]<=[2]}
  ROOT m = f32[8,8] multiply(a, b), sharding={devices=[2,1]<=[2]}
})",
                                                        options);
  ASSERT_NE(p.spmd, nullptr);
  auto verifies = [&](const std::string& constant, double scale) {
    std::string program = p.spmd->ToString();
    const std::string two = "constant(2)";
    const size_t at = program.find(two);
    EXPECT_NE(at, std::string::npos) << program;
    if (at != std::string::npos) program.replace(at, two.size(), "constant(" + constant + ")");
    absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = hlo::ParseHloModule(program);
    EXPECT_TRUE(spmd.ok()) << spmd.status();
    if (!spmd.ok()) return false;
    runtime::ModularVerifyOptions verify;
    verify.num_partitions = 2;
    verify.tolerance_scale = scale;
    absl::StatusOr<runtime::ModularResult> result =
        runtime::VerifyModular(*p.original, **spmd, p.origins, verify);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() && result->ok() && result->compared > 0;
  };
  EXPECT_TRUE(verifies("2", 1));
  EXPECT_FALSE(verifies("2.002", 1));
  EXPECT_TRUE(verifies("2.002", 10));
  EXPECT_FALSE(verifies("3", 10));
}

TEST(WrongProgramTest, ManualValuesVerifyPerDevice) {
  const runtime::ModularResult result = VerifyManual(nullptr);
  EXPECT_TRUE(result.ok()) << result.ToString();
  EXPECT_GE(result.instructions, 4) << result.ToString();
}

TEST(WrongProgramTest, ReadingAnotherDevicesManualValueIsCaught) {
  const runtime::ModularResult result = VerifyManual([](const std::string& text) {
    const std::string swapped = OnLines(
        "negate(", "negate(%p)", "negate(%swap)")(text);
    const size_t negate = swapped.find("negate(%swap)");
    EXPECT_NE(negate, std::string::npos) << swapped;
    if (negate == std::string::npos) return swapped;
    const size_t at = swapped.rfind('\n', negate) + 1;  // The negate's line.
    std::string out = swapped;
    out.insert(at,
               "  %swap = f32[8,16] collective-permute(%p), channel_id=77, "
               "source_target_pairs={{0,1},{1,0},{2,3},{3,2}}\n");
    return out;
  });
  EXPECT_FALSE(result.ok()) << result.ToString();
  ASSERT_FALSE(result.mismatches.empty());
  EXPECT_NE(result.mismatches.front().find("manual value"), std::string::npos)
      << result.ToString();
}

// The first instruction applying `op` reads its first operand moved along `pairs` by a
// collective-permute (of `shape`) put in before it.
Mutation ReadThroughPermute(std::string op, std::string shape, std::string pairs) {
  return [=](const std::string& text) {
    std::string out = text;
    const size_t call = out.find(" " + op + "(");
    EXPECT_NE(call, std::string::npos) << "no " << op << " in\n" << text;
    if (call == std::string::npos) return out;
    const size_t open = call + op.size() + 2;
    const size_t close = out.find_first_of(",)", open);
    const std::string operand = out.substr(open, close - open);
    out.replace(open, close - open, "%moved");
    out.insert(out.rfind('\n', call) + 1, "  %moved = " + shape + " collective-permute(" + operand +
                                              "), channel_id=77, source_target_pairs=" + pairs +
                                              "\n");
    return out;
  };
}

// A partially manual value is one array per manual group, tiled inside the group: each group's
// is cut on its own and each device holds its tile. [1,2,2] last_tile_dims={manual}: groups
// {0,2} and {1,3}, the first member of each holding columns 0-3.
constexpr char kPartial[] = R"(
HloModule partial, num_partitions=4

ENTRY e {
  p = f32[2,8] parameter(0), sharding={devices=[1,2,2]<=[4] last_tile_dims={manual}}
  ROOT n = f32[2,8] negate(p), sharding={devices=[1,2,2]<=[4] last_tile_dims={manual}}
}
)";

runtime::ModularResult VerifyPartial(const Mutation& mutation) {
  auto verified = PartitionMutateVerify(kPartial, {}, mutation, 4, 0);
  return verified ? verified->first : runtime::ModularResult{};
}

TEST(WrongProgramTest, PartiallyManualValuesVerifyPerGroup) {
  const runtime::ModularResult result = VerifyPartial(nullptr);
  EXPECT_TRUE(result.ok()) << result.ToString();
  EXPECT_GE(result.instructions, 1) << result.ToString();
}

TEST(WrongProgramTest, ReadingAnotherGroupsValueIsCaught) {
  // The same tile of the other group.
  const runtime::ModularResult result =
      VerifyPartial(ReadThroughPermute("negate", "f32[2,4]", "{{0,1},{1,0},{2,3},{3,2}}"));
  EXPECT_FALSE(result.ok()) << result.ToString();
  ASSERT_FALSE(result.mismatches.empty());
  EXPECT_NE(result.mismatches.front().find("manual value"), std::string::npos) << result.ToString();
}

TEST(WrongProgramTest, ReadingTheOtherTileOfTheGroupIsCaught) {
  const runtime::ModularResult result =
      VerifyPartial(ReadThroughPermute("negate", "f32[2,4]", "{{0,2},{2,0},{1,3},{3,1}}"));
  EXPECT_FALSE(result.ok()) << result.ToString();
}

// A global value entering manual groups through a marker that names the groups (a Sharding
// custom-call with the manual-subgroup sharding; here dead, as a shard_like group leaves it):
// every group holds the global value, so the marker's stand-in must agree across groups. The
// partitioner's reshard for the marker also serves the multiply, and cutting it per group made
// a false mismatch (partition fuzzer, seed 2526).
TEST(WrongProgramTest, GlobalValueMarkedIntoManualGroupsVerifies) {
  absl::StatusOr<runtime::ModularResult> result = VerifyOwnPartitioning(R"(
HloModule entering, num_partitions=8
ENTRY e {
  p0 = s32[16,16] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}
  p1 = s32[16,16] parameter(1), sharding={devices=[2,4]<=[8]}
  a = s32[16,16] add(p1, p1), sharding={devices=[2,4]<=[8]}
  m = s32[16,16] custom-call(a), custom_call_target="Sharding", sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}
  ROOT mul = s32[16,16] multiply(p0, a), sharding={devices=[2,1,4]<=[8] last_tile_dims={manual}}
}
)",
                                                                        8);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString();
}

// shard_map as JAX writes it: a global value enters a manual region by SPMDFullToShardShape,
// is computed on per device, and leaves by SPMDShardToFullShape to be resharded. The reference
// evaluates the conversions as each device (a device's manual value is its shard; the global
// value reads each device's), so the region and what reads its result are checked.
constexpr char kShardMap[] = R"(
HloModule shard_map, num_partitions=4

ENTRY e {
  p = f32[8,16] parameter(0), sharding={devices=[4,1]<=[4]}
  c = f32[8,16] custom-call(p), custom_call_target="Sharding", sharding={devices=[4,1]<=[4]}
  m = f32[2,16] custom-call(c), custom_call_target="SPMDFullToShardShape", sharding={manual}
  n = f32[2,16] negate(m), sharding={manual}
  f = f32[8,16] custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]<=[4]}
  ROOT t = f32[16,8] transpose(f), dimensions={1,0}, sharding={devices=[1,4]<=[4]}
}
)";

runtime::ModularResult VerifyShardMap(const Mutation& mutation) {
  auto verified = PartitionMutateVerify(kShardMap, {}, mutation, 4, 0);
  return verified ? verified->first : runtime::ModularResult{};
}

TEST(WrongProgramTest, ShardMapConversionsVerify) {
  const runtime::ModularResult result = VerifyShardMap(nullptr);
  EXPECT_TRUE(result.ok()) << result.ToString();
  EXPECT_GE(result.instructions, 4) << result.ToString();
}

TEST(WrongProgramTest, ShardMapReadingAnotherDevicesShardIsCaught) {
  const runtime::ModularResult result =
      VerifyShardMap(ReadThroughPermute("negate", "f32[2,16]", "{{0,1},{1,0},{2,3},{3,2}}"));
  EXPECT_FALSE(result.ok()) << result.ToString();
}

TEST(WrongProgramTest, ShardMapResultPlacedOnTheWrongDevicesIsCaught) {
  // The global value after the region holds the devices' manual values in reverse order.
  const runtime::ModularResult result =
      VerifyShardMap(ReadThroughPermute("transpose", "f32[2,16]", "{{0,3},{3,0},{1,2},{2,1}}"));
  EXPECT_FALSE(result.ok()) << result.ToString();
}

// shard_map's psum: devices 0 and 1 (and 2 and 3) sum their blocks, so SPMDShardToFullShape
// may place their equal values in one region, replicated, reading the first. Their stand-ins
// must agree too (the program relies on it, and the all-reduce that makes them agree is checked
// itself); dropping the all-reduce is caught.
constexpr char kShardMapPsum[] = R"(
HloModule shard_map_psum, num_partitions=4

%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY e {
  x = f32[8,16] parameter(0), sharding={devices=[2,2]<=[4]}
  m = f32[4,8] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  s = f32[4,8] all-reduce(m), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%sum, sharding={manual}
  f = f32[8,8] custom-call(s), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  ROOT t = f32[8,8] tanh(f), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
}
)";

TEST(WrongProgramTest, ShardMapPsumReplicatedOnLeavingVerifies) {
  auto verified = PartitionMutateVerify(kShardMapPsum, {}, nullptr, 4, 0);
  ASSERT_TRUE(verified.has_value());
  EXPECT_TRUE(verified->first.ok()) << verified->first.ToString() << verified->second;
}

TEST(WrongProgramTest, ShardMapPsumDroppedIsCaught) {
  auto verified = PartitionMutateVerify(kShardMapPsum, {}, DropAllReduce, 4, 0);
  ASSERT_TRUE(verified.has_value());
  EXPECT_FALSE(verified->first.ok()) << verified->first.ToString() << verified->second;
}

// shard_map over one mesh axis of two (partially manual: groups {0,1} and {2,3}, each holding
// its block of rows whole), with a sharding annotation forwarding the manual value. What only
// forwards a conversion is not cut either: its value is the global operand's block.
constexpr char kPartialShardMap[] = R"(
HloModule partial_shard_map, num_partitions=4

ENTRY e {
  x = f32[8,16] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  m = f32[4,16] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,2,2]<=[2,2]T(1,0) last_tile_dims={replicated, manual}}
  a = f32[4,16] custom-call(m), custom_call_target="Sharding", sharding={devices=[1,1,2,2]<=[2,2]T(1,0) last_tile_dims={replicated, manual}}
  n = f32[4,16] negate(a), sharding={devices=[1,1,2,2]<=[2,2]T(1,0) last_tile_dims={replicated, manual}}
  f = f32[8,16] custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  ROOT t = f32[8,16] tanh(f), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
}
)";

TEST(WrongProgramTest, PartiallyManualShardMapVerifies) {
  auto verified = PartitionMutateVerify(kPartialShardMap, {}, nullptr, 4, 0);
  ASSERT_TRUE(verified.has_value());
  EXPECT_TRUE(verified->first.ok()) << verified->first.ToString() << verified->second;
}

TEST(WrongProgramTest, PartiallyManualShardMapReadingAnotherGroupIsCaught) {
  auto verified = PartitionMutateVerify(
      kPartialShardMap, {}, ReadThroughPermute("negate", "f32[4,16]", "{{0,2},{2,0},{1,3},{3,1}}"),
      4, 0);
  ASSERT_TRUE(verified.has_value());
  EXPECT_FALSE(verified->first.ok()) << verified->first.ToString() << verified->second;
}

// shard_map over some mesh axes (tests/testdata/partition/shard_map_over_some_axes.hlo), the
// manual value tiled by columns inside its group: SPMDFullToShardShape gives each group its
// block of rows whole in the reference. The program moves tiles to the result's devices after
// the region; keeping them in place is caught.
std::string ShardMapOverSomeAxes() {
  return testing_tools::ReadFile("tests/testdata/partition/shard_map_over_some_axes.hlo");
}

TEST(WrongProgramTest, ShardMapOverSomeAxesVerifies) {
  auto verified = PartitionMutateVerify(ShardMapOverSomeAxes(), {}, nullptr, 4, 0);
  ASSERT_TRUE(verified.has_value());
  EXPECT_TRUE(verified->first.ok()) << verified->first.ToString() << verified->second;
  EXPECT_GE(verified->first.instructions, 4) << verified->first.ToString();
}

TEST(WrongProgramTest, ShardMapOverSomeAxesTilesLeftInPlaceAreCaught) {
  auto verified =
      PartitionMutateVerify(ShardMapOverSomeAxes(), {},
                            OnLines("collective-permute", "{1,2},{2,1}", "{1,1},{2,2}"), 4, 0);
  ASSERT_TRUE(verified.has_value());
  EXPECT_FALSE(verified->first.ok()) << verified->first.ToString() << verified->second;
}

}  // namespace

// Found by the partition fuzzer (seed 1796481622, mutant 20607): SPMDShardToFullShape places
// device 0's manual value (rows 0-3 of x) and device 2's (rows 4-7) in one replicated region,
// so the module itself has no single value there. That is the input's fault, named as such
// (as the full run names it), not a mismatch of the partitioning.
TEST(WrongProgramTest, DeviceDependentManualCodeIsNamedNotAMismatch) {
  absl::StatusOr<runtime::ModularResult> result = VerifyOwnPartitioning(R"(
HloModule device_dependent, num_partitions=4
ENTRY e {
  x = f32[8,4] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  a = f32[8,4] add(x, x), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  m = f32[4,4] custom-call(a), custom_call_target="SPMDFullToShardShape", sharding={manual}
  ROOT f = f32[8,4] custom-call(m), custom_call_target="SPMDShardToFullShape",
    sharding={devices=[2,1,2]3,1,2,0 last_tile_dim_replicate}
})",
                                                                        4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->ToString();
  ASSERT_FALSE(result->unverified.empty()) << result->ToString();
  EXPECT_NE(result->unverified.front().find("result is not defined"), std::string::npos)
      << result->ToString();
}

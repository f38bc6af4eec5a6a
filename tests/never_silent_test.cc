// End-to-end: the defects fuzzing and real modules found (issue 20), each through the programs
// a user runs. Wrong results: a manual value reaching an unannotated root, replica groups that
// name a device twice. Silently worse: tuples of tuples computed whole, replicated fallbacks
// that went unreported (now counted, explained, and an error under --strict), a device count
// that contradicts the module, propagation time counted as partition time. Crashes: a
// directory where a file is expected, a .npy header with a 26-digit dimension, an endless
// input, deep nesting of calls and conditionals, more device threads than the machine gives.
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tool_runner.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using testing_tools::FreshDir;
using testing_tools::Outcome;
using testing_tools::RunShell;
using testing_tools::WriteFile;

constexpr char kPartition[] = "tools/spmd-partition";
constexpr char kRun[] = "tools/spmd-run";
constexpr char kInspect[] = "tools/spmd-inspect";

std::string Cmd(const char* tool, const std::string& args) {
  return std::string(tool) + " " + args;
}

// Writes `text` as NAME under a fresh directory; returns its path.
std::string Module(const std::string& name, const std::string& text) {
  const fs::path path = FreshDir(name) / (name + ".hlo");
  WriteFile(path, text);
  return path.string();
}

// `spmd-run --verify` on `path` passes: the SPMD program matches the unpartitioned one.
Outcome ExpectVerifies(const std::string& path, const std::string& flags = "") {
  Outcome r = RunShell(Cmd(kRun, "--verify " + flags + path));
  EXPECT_EQ(r.code, 0) << path << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("verification passed")) << path;
  return r;
}

// `spmd-run --verify` on `path` refuses it with `message`, placed at `line`:8 (a ROOT line).
void ExpectRefused(const std::string& path, int line, const std::string& message,
                   const std::string& flags = "") {
  Outcome r = RunShell(Cmd(kRun, "--verify " + flags + path));
  EXPECT_EQ(r.code, 1) << path << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(path + ":" + std::to_string(line) + ":8: error: "));
  EXPECT_THAT(r.err, HasSubstr(message));
}

// ---- Wrong results, exit 0 ------------------------------------------------------------------

TEST(NeverSilentTest, ManualValueAtAnUnannotatedRootStaysManual) {
  // Each device's own value leaves as its own (it was taken as replicated: a mismatch).
  for (const char* body : {"  ROOT n = f32[2,8] negate(p)\n",
                           "  n = f32[2,8] negate(p)\n  ROOT a = f32[2,8] abs(n)\n"}) {
    const std::string path = Module("manual_root", std::string("HloModule m, num_partitions=2\n"
                                                               "ENTRY e {\n"
                                                               "  p = f32[2,8] parameter(0), "
                                                               "sharding={manual}\n") +
                                                       body + "}\n");
    Outcome r = RunShell(Cmd(kRun, "--verify " + path));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_THAT(r.out + r.err, HasSubstr("output (manual"));
  }
}

// Found by the partition fuzzer (seed 1202): partition-id called replicated was computed once
// per device and each device kept its own id, so "replicated" devices disagreed. Its value
// differs on every device: only a manual region gives it a meaning (XLA refuses it too).
TEST(NeverSilentTest, PartitionIdOutsideAManualRegionIsRefused) {
  for (const char* sharding : {", sharding={replicated}", ""}) {
    ExpectRefused(Module("partition_id", std::string("HloModule m, num_partitions=4\n"
                                                     "ENTRY e {\n"
                                                     "  ROOT p = u32[] partition-id()") +
                                             sharding + "\n}\n"),
                  3, "partition-id has sharding {replicated}, but its value differs");
  }
  ExpectVerifies(Module("partition_id_manual",
                        "HloModule m, num_partitions=4\n"
                        "ENTRY e {\n"
                        "  ROOT p = u32[] partition-id(), "
                        "sharding={manual}\n}\n"));
}

// Found by the partition fuzzer: propagation carries {manual} through every op that consumes a
// manual value (async calls, scan, custom-calls, barriers, tuple-shaped results), so the root
// is manual there too. Without propagation an unannotated root is replicated, and a manual
// value reaching it is refused as for an explicit {replicated}.
TEST(NeverSilentTest, ManualRegionReachesTheRootThroughAnyOp) {
  const std::string head = "HloModule m, num_partitions=2\n";
  const std::string sum =
      "add {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
      "  s = f32[2] add(a, b)\n  ROOT t = (f32[2], f32[2]) tuple(s, s)\n}\n";
  const std::string called =
      "c {\n  a = s32[8] parameter(0)\n  b = s32[8] parameter(1)\n"
      "  ROOT s = s32[8] add(a, b)\n}, execution_thread=\"thread_1\"\n";
  const std::string cmp =
      "cmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
      "  ROOT lt = pred[] compare(a, b), direction=LT\n}\n";
  const std::string f32_p = "  p = f32[2,8] parameter(0), sharding={manual}\n";
  const std::vector<std::string> modules = {
      head + called +
          "ENTRY e {\n  p = s32[8] parameter(0), sharding={manual}\n"
          "  q = s32[8] parameter(1), sharding={manual}\n"
          "  s = ((s32[8], s32[8]), s32[8], u32[]) call-start(p, q), "
          "async_execution_thread=\"thread_1\", to_apply=c\n"
          "  ROOT d = s32[8] call-done(s)\n}, execution_thread=\"thread_0\"\n",
      head + sum + "ENTRY e {\n" + f32_p + "  q = f32[2] parameter(1)\n" +
          "  s = (f32[2,8], f32[2]) scan(p, q), dimensions={1}, to_apply=add, "
          "is_associative=true, num_carries=1\n"
          "  ROOT g = f32[2,8] get-tuple-element(s), index=0\n}\n",
      head + "ENTRY e {\n" + f32_p +
          "  b = f32[2,8] custom-call(p), custom_call_target=\"ShardBarrierFrom\"\n"
          "  ROOT n = f32[2,8] negate(b)\n}\n",
      head + "ENTRY e {\n" + f32_p +
          "  ROOT t = (f32[2,3], s32[2,3]) custom-call(p), custom_call_target=\"TopK\"\n}\n",
      head + cmp + "ENTRY e {\n" + f32_p + "  i = s32[2,8] iota(), iota_dimension=1\n" +
          "  ROOT s = (f32[2,8], s32[2,8]) sort(p, i), dimensions={1}, to_apply=cmp\n}\n"};
  for (const std::string& text : modules) {
    Outcome r = ExpectVerifies(Module("manual_through", text));
    EXPECT_THAT(r.out, HasSubstr("(manual; worst device")) << text;
    EXPECT_THAT(r.out, Not(HasSubstr("MISMATCH"))) << text;
  }
  ExpectRefused(Module("manual_unannotated_root",
                       head + "ENTRY e {\n  p = f32[4] parameter(0), sharding={manual}\n"
                              "  ROOT c = f32[4] copy(p)\n}\n"),
                4, "cannot reshard {manual} to {replicated}", "--passes partition,cleanup ");
}

TEST(NeverSilentTest, ReplicaGroupNamingADeviceTwiceIsRefused) {
  const std::string path = Module("dup_groups",
                                  "HloModule m, num_partitions=2\n"
                                  "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                                  "  ROOT c = f32[] add(a, b)\n}\n"
                                  "ENTRY e {\n  p = f32[2,8] parameter(0)\n"
                                  "  ROOT n = f32[2,8] all-reduce(p), replica_groups={{0,0},{1}}, "
                                  "to_apply=add\n}\n");
  Outcome r = RunShell(Cmd(kPartition, "--passes=none " + path));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(path + ":9:8: error: "));
  EXPECT_THAT(r.err, HasSubstr("id 0 appears more than once in replica_groups"));
}

// Found by the partition fuzzer: a non-linear op on partial sums ({unreduced}) must see whole
// values; sums of partial sums stay partial (no all-reduce).
TEST(NeverSilentTest, NonLinearOpOnUnreducedValuesReducesFirst) {
  const std::string head =
      "HloModule m, num_partitions=2\nENTRY e {\n"
      "  a = f32[2,4] parameter(0), sharding={devices=[1,2]<=[2]}\n"
      "  b = f32[4,3] parameter(1), sharding={devices=[2,1]<=[2]}\n"
      "  d = f32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
      "sharding={unreduced}\n";
  const std::string nonlinear = Module(
      "unreduced_exp", head + "  ROOT s = f32[2,3] exponential(d), sharding={unreduced}\n}\n");
  Outcome r = RunShell(Cmd(kRun, "--verify " + nonlinear));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const std::string linear =
      Module("unreduced_add", head + "  ROOT s = f32[2,3] add(d, d), sharding={unreduced}\n}\n");
  r = RunShell(Cmd(kPartition, linear));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("all-reduce(")));
  EXPECT_EQ(RunShell(Cmd(kRun, "--verify " + linear)).code, 0);
}

// Found by the partition fuzzer: an unreduced subgroup over 4 of 8 devices is all-reduced with
// replica groups that name every device (the others alone), so the program runs and verifies.
TEST(NeverSilentTest, UnreducedOverSomeDevicesReducesWithEveryDeviceInAGroup) {
  const std::string path = Module("unreduced_subset",
                                  "HloModule m, num_partitions=8\nENTRY e {\n"
                                  "  a = s32[2,4] parameter(0), sharding={devices=[1,2,2]<=[4] "
                                  "last_tile_dims={unreduced}}\n"
                                  "  ROOT c = s32[2,4] copy(a), sharding={replicated}\n}\n");
  ExpectVerifies(path);
}

// Found by the partition fuzzer: manual subgroups. A value stays on its devices: the same
// groups numbered in another order need no data moved (the reference gave device 0 group 0's
// value whatever its group); groups of other devices, devices outside the groups asked for
// {manual}, and an all-reduce over every device while the groups are tiled are refused where
// they are written, naming both sides.
TEST(NeverSilentTest, ManualSubgroupReshardsKeepValuesOnTheirDevices) {
  const std::string head = "HloModule m, num_partitions=4\nENTRY e {\n  p = f32[2] parameter(0), ";
  ExpectVerifies(Module(
      "subgroup_order",
      head + "sharding={devices=[1,2,2]2,3,0,1 last_tile_dims={manual, replicated}}\n"
             "  ROOT c = f32[2] copy(p), sharding={devices=[1,2,2]<=[4] last_tile_dims={manual, "
             "replicated}}\n}\n"));
  ExpectRefused(
      Module("subgroup_other",
             head + "sharding={devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}\n"
                    "  ROOT c = f32[2] copy(p), sharding={devices=[1,2,2]<=[2,2]T(1,0) "
                    "last_tile_dims={manual, replicated}}\n}\n"),
      4, "the manual groups hold different devices");
  ExpectRefused(
      Module("subgroup_subset",
             "HloModule m, num_partitions=8\nENTRY e {\n"
             "  p = f32[2] parameter(0), sharding={devices=[1,2,2]<=[4] "
             "last_tile_dims={replicated, manual}}\n"
             "  ROOT c = f32[2] copy(p), sharding={manual}\n}\n"),
      4,
      "cannot reshard {devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual, replicated}} to "
      "{manual}: it is over 4 of the 8 devices, and the others (device 4 first) hold no value to "
      "make theirs");
  ExpectRefused(Module("subgroup_all_reduce",
                       "HloModule m, num_partitions=4\nsum {\n  a = f32[] parameter(0)\n"
                       "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n"
                       "  p = f32[2,2] parameter(0), sharding={devices=[2,1,2]<=[2,2]T(1,0) "
                       "last_tile_dims={manual}}\n"
                       "  ROOT r = f32[2,2] all-reduce(p), to_apply=sum, replica_groups={}, "
                       "use_global_device_ids=true, channel_id=1, "
                       "sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={manual}}\n}\n"),
                9, "all-reduce groups devices 0 and 1, which hold different tiles");
}

// Found by the partition fuzzer (seed 1202): a branch index or loop condition in manual
// subgroups lets each group take its own branch or trip count, so the collectives there may
// only combine devices of one group, and each group meets at them on its own (the executor
// waited for the other group's devices, which ran the other branch). A value tiled across the
// groups enters them before the conditional; a collective inside a branch that would combine
// two groups is refused where it is written. Seeds 0 to 3 give the groups the same and
// different decisions.
TEST(NeverSilentTest, PerGroupDecisionsKeepCollectivesInTheirGroups) {
  const std::string head = "HloModule m, num_partitions=4\n";
  const std::string in_groups = ", sharding={devices=[2,2]<=[4] last_tile_dims={manual}}";
  const std::string index =
      "  c = pred[] parameter(0), sharding={devices=[2,2]<=[4] last_tile_dims={replicated, "
      "manual}}\n";
  auto conditional = [&](const std::string& param, const std::string& neg, const std::string& arg) {
    const std::string type = param.empty() ? "f32[8]" : "f32[4]";
    return "neg {\n  x = " + type + " parameter(0)" + param + "\n  ROOT n = " + type + neg +
           "\n}\nid {\n  ROOT y = " + type + " parameter(0)" + param + "\n}\nENTRY e {\n" + index +
           "  p = " + type + " parameter(1)" + arg + "\n  ROOT r = " + type +
           " conditional(c, p, p), true_computation=neg, false_computation=id" + in_groups +
           "\n}\n";
  };
  const std::string loop =
      "body {\n  t = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(t), index=0\n"
      "  x = f32[4] get-tuple-element(t), index=1\n  n = f32[4] negate(x)\n"
      "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
      "  ROOT r = (s32[], f32[4]) tuple(j, n)\n}\n"
      "cond {\n  t = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(t), index=0\n"
      "  two = s32[] constant(2)\n  ROOT lt = pred[] compare(i, two), direction=LT\n}\n"
      "ENTRY e {\n" +
      index + "  p = f32[4] parameter(1)" + in_groups +
      "\n  i0 = s32[] convert(c), sharding={devices=[2,2]<=[4] last_tile_dims={replicated, "
      "manual}}\n  t0 = (s32[], f32[4]) tuple(i0, p)\n"
      "  ROOT w = (s32[], f32[4]) while(t0), condition=cond, body=body, "
      "sharding={{devices=[2,2]<=[4] last_tile_dims={replicated, manual}}, {devices=[2,2]<=[4] "
      "last_tile_dims={manual}}}\n}\n";
  const std::vector<std::string> verified = {
      Module("per_group_branch", head + conditional(in_groups, " negate(x)", in_groups)),
      Module("per_group_entering",
             head + conditional("", " negate(x)", ", sharding={devices=[4]<=[4]}")),
      Module("per_group_loop", head + loop)};
  for (int seed = 0; seed < 4; ++seed) {
    for (const std::string& path : verified) {
      ExpectVerifies(path, "--passes partition,cleanup --collective-timeout 5 --seed " +
                               std::to_string(seed) + " ");
    }
  }
  const std::string sum =
      "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";
  const std::string across =
      Module("per_group_across",
             head + sum +
                 conditional(in_groups,
                             " all-reduce(x), channel_id=1, replica_groups={{0,1},{2,3}}, "
                             "use_global_device_ids=true, to_apply=sum" +
                                 in_groups,
                             in_groups));
  Outcome r = RunShell(Cmd(kRun, "--verify --passes partition,cleanup " + across));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(across + ":9:8: error: "));
  EXPECT_THAT(r.err, HasSubstr("its all-reduce would combine devices 0 and 1 of different manual "
                               "groups"));
}

// ---- Silently worse, exit 0 -----------------------------------------------------------------

TEST(NeverSilentTest, TupleOfTuplesKeepsItsShards) {
  const std::string path = Module("tuple_of_tuples",
                                  "HloModule m, num_partitions=2\n"
                                  "ENTRY e {\n"
                                  "  p = f32[4,8] parameter(0), sharding={devices=[2,1]0,1}\n"
                                  "  q = f32[4,8] parameter(1), sharding={devices=[2,1]0,1}\n"
                                  "  t = (f32[4,8], f32[4,8]) tuple(p, q)\n"
                                  "  r = ((f32[4,8], f32[4,8]), f32[4,8]) tuple(t, p)\n"
                                  "  g = (f32[4,8], f32[4,8]) get-tuple-element(r), index=0\n"
                                  "  g1 = f32[4,8] get-tuple-element(g), index=1\n"
                                  "  ROOT n = f32[4,8] negate(g1), sharding={devices=[2,1]0,1}\n"
                                  "}\n");
  Outcome r = RunShell(Cmd(kPartition, "--stats json " + path));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("all-gather(")));
  EXPECT_THAT(r.err, HasSubstr("\"replicated_fallbacks\": {\"count\": 0, \"bytes\": 0}"));
  r = RunShell(Cmd(kRun, "--verify " + path));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

constexpr char kFallback[] =
    "HloModule m, num_partitions=2\n"
    "ENTRY e {\n"
    "  p = f32[16,16] parameter(0), sharding={devices=[2,1]0,1}\n"
    "  ROOT f = f32[16,16] cholesky(p), lower=true, sharding={devices=[2,1]0,1}\n"
    "}\n";

TEST(NeverSilentTest, ReplicatedFallbackIsCountedExplainedAndStrictRefusesIt) {
  const std::string path = Module("fallback", kFallback);
  Outcome r = RunShell(Cmd(kPartition, "--stats json --explain -o /dev/null " + path));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("\"replicated_fallbacks\": {\"count\": 1, \"bytes\": 1024}"));
  EXPECT_THAT(r.err, HasSubstr("fallback: cholesky %f wanted {devices=[2,1]0,1} but is computed "
                               "whole on every device (its dims 0,1 must stay whole and no other "
                               "dim takes their tiles)"));
  r = RunShell(Cmd(kPartition, "--stats text -o /dev/null " + path));
  EXPECT_THAT(r.err, HasSubstr("replicated fallbacks: 1 (1.0 KiB computed whole per device)"));
  for (const char* tool : {kPartition, kRun}) {
    r = RunShell(Cmd(tool, "--strict " + path));
    EXPECT_EQ(r.code, 1) << tool << r.err;
    EXPECT_THAT(r.err, HasSubstr(path + ":4:8: error: "));
    EXPECT_THAT(r.err, HasSubstr("replicated fallback under --strict"));
  }
}

TEST(NeverSilentTest, DeviceCountMustAgreeWithTheModule) {
  const std::string path = Module("four_devices",
                                  "HloModule m, num_partitions=4\n"
                                  "ENTRY e {\n"
                                  "  p = f32[8] parameter(0), sharding={devices=[4]<=[4]}\n"
                                  "  ROOT n = f32[8] negate(p)\n}\n");
  for (const char* tool : {kPartition, kRun}) {
    Outcome r = RunShell(Cmd(tool, "--num-partitions 8 " + path));
    EXPECT_EQ(r.code, 1) << tool << r.err;
    EXPECT_THAT(r.err, HasSubstr("--num-partitions 8 contradicts the module's num_partitions=4"));
  }
  EXPECT_EQ(RunShell(Cmd(kPartition, "--num-partitions 4 -o /dev/null " + path)).code, 0);
  // Shardings naming devices beyond the declared count: both programs refuse it alike (spmd-run
  // used to raise the count to cover them, running a program spmd-partition rejects).
  const std::string beyond = Module("beyond",
                                    "HloModule m, num_partitions=2\nENTRY e {\n"
                                    "  ROOT p = f32[8] parameter(0), "
                                    "sharding={devices=[4]<=[4]}\n}\n");
  for (const char* tool : {kPartition, kRun}) {
    Outcome r = RunShell(Cmd(tool, beyond));
    EXPECT_EQ(r.code, 1) << tool << r.err;
    EXPECT_THAT(r.err, HasSubstr("uses 4 devices but only 2 are available")) << tool;
  }
  // A header far beyond any machine is refused where it is written, not allocated.
  for (const char* count : {"9223372036854775807", "2147483648"}) {
    const std::string huge = Module("huge", std::string("HloModule m, num_partitions=") + count +
                                                "\nENTRY e {\n  ROOT p = f32[8] parameter(0)\n}\n");
    Outcome r = RunShell(Cmd(kPartition, huge));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(huge + ":1:14: error: num_partitions " + count +
                                 " is over the limit of 65536 devices"));
  }
}

TEST(NeverSilentTest, PropagationTimeIsItsOwn) {
  std::string text =
      "HloModule m, num_partitions=2\nENTRY e {\n"
      "  x0 = f32[64,64] parameter(0), sharding={devices=[2,1]0,1}\n";
  for (int i = 1; i <= 400; ++i) {
    text += "  x" + std::to_string(i) + " = f32[64,64] negate(x" + std::to_string(i - 1) + ")\n";
  }
  text += "  ROOT r = f32[64,64] abs(x400)\n}\n";
  Outcome r = RunShell(Cmd(kPartition, "--stats json -o /dev/null " + Module("chain", text)));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("\"propagation\": "));
  EXPECT_THAT(r.err, Not(HasSubstr("\"propagation\": 0.000")));
  EXPECT_THAT(r.err, Not(HasSubstr("inf")));
}

// ---- Rough edges ----------------------------------------------------------------------------

TEST(NeverSilentTest, OutputThatIsItsInputIsRefused) {
  const std::string path = Module("self",
                                  "HloModule m\nENTRY e {\n"
                                  "  ROOT p = f32[2] parameter(0)\n}\n");
  const std::string before = testing_tools::ReadFile(path);
  Outcome r = RunShell(Cmd(kPartition, path + " -o " + path));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("the output would overwrite its input"));
  EXPECT_EQ(testing_tools::ReadFile(path), before);
  // A batch written into its own directory under the same names.
  const std::string dir = fs::path(path).parent_path().string();
  r = RunShell(Cmd(kPartition, dir + " -o " + dir));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(testing_tools::ReadFile(path), before);
}

TEST(NeverSilentTest, DanglingLinkInABatchFailsThatInput) {
  const fs::path dir = FreshDir("dangling");
  WriteFile(dir / "good.hlo", "HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n");
  fs::create_symlink(dir / "nowhere.hlo", dir / "gone.hlo");
  Outcome r =
      RunShell(Cmd(kPartition, "--passes=none " + dir.string() + " -o " + (dir / "out").string()));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("gone.hlo: error: cannot open"));
  EXPECT_TRUE(fs::exists(dir / "out" / "good.hlo"));
}

TEST(NeverSilentTest, ProtoInputsPrintNoProtobufLogLines) {
  const std::string path = Module("proto_source",
                                  "HloModule m\nENTRY e {\n"
                                  "  ROOT p = f32[2] parameter(0)\n}\n");
  const std::string pb = path + ".pb";
  ASSERT_EQ(RunShell(Cmd(kPartition, "--passes=none --emit proto " + path + " -o " + pb)).code, 0);
  Outcome r = RunShell(Cmd(kPartition, "--passes=none -o /dev/null " + pb));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("libprotobuf")));
}

TEST(NeverSilentTest, InterruptedBatchLeavesNoTempFiles) {
  const fs::path dir = FreshDir("interrupted");
  std::string text =
      "HloModule m, num_partitions=2\nENTRY e {\n"
      "  x0 = f32[64,64] parameter(0), sharding={devices=[2,1]0,1}\n";
  for (int i = 1; i <= 2000; ++i) {
    text += "  x" + std::to_string(i) + " = f32[64,64] negate(x" + std::to_string(i - 1) + ")\n";
  }
  text += "  ROOT r = f32[64,64] abs(x2000)\n}\n";
  for (int i = 0; i < 40; ++i) WriteFile(dir / "in" / ("m" + std::to_string(i) + ".hlo"), text);
  // Interrupted while it writes: whatever it had in flight is removed.
  RunShell("timeout -s INT 1.5 " +
           Cmd(kPartition, "-j 2 " + (dir / "in").string() + " -o " + (dir / "out").string()));
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

// ---- Crashes: every bad input is exit 1 with a located message ------------------------------

TEST(NeverSilentTest, DirectoryWhereAFileIsExpected) {
  const fs::path dir = FreshDir("a_directory");
  const std::string module = Module("fine",
                                    "HloModule m\nENTRY e {\n"
                                    "  ROOT p = f32[2] parameter(0)\n}\n");
  fs::create_directories(dir / "inputs" / "param_0.npy");
  const std::string d = dir.string();
  for (const std::string& command :
       {Cmd(kRun, d), Cmd(kInspect, d), Cmd(kInspect, "--diff " + d + " " + module),
        Cmd(kRun, "--verify " + module + " --against " + d),
        Cmd(kRun, module + " --inputs " + d + "/inputs")}) {
    Outcome r = RunShell(command);
    EXPECT_EQ(r.code, 1) << command << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("error: is a directory, not a file")) << command;
  }
}

TEST(NeverSilentTest, NpyDimensionBeyond64Bits) {
  const fs::path dir = FreshDir("npy_overflow");
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999999, 2), }";
  header.resize(117, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  WriteFile(dir / "param_0.npy", bytes + header);
  // A dimension that fits but whose product does not: refused before any allocation.
  std::string big = header;
  big.replace(big.find("99999999999999999999999999, 2"), 29, "4611686018427387904, 8       ");
  fs::create_directories(dir / "big");
  WriteFile(dir / "big" / "param_0.npy", bytes + big);
  const std::string module = Module("npy_module",
                                    "HloModule m\nENTRY e {\n"
                                    "  ROOT p = f32[2] parameter(0)\n}\n");
  Outcome r = RunShell(Cmd(kRun, module + " --inputs " + dir.string()));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("param_0.npy: error: not a valid .npy file: a 'shape' dimension "
                               "does not fit in 64 bits"));
  r = RunShell(Cmd(kRun, module + " --inputs " + (dir / "big").string()));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("param_0.npy: error: not a valid .npy file"));
}

TEST(NeverSilentTest, EndlessInputStopsAtTheLimit) {
  Outcome r = RunShell(Cmd(kPartition, "/dev/zero"));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/dev/zero: error: input is larger than 2 GiB"));
}

// Nested 5,000 deep: one recursion per level in the partitioner and the executor.
TEST(NeverSilentTest, DeeplyNestedCallsAndConditionals) {
  const int depth = 5000;
  std::string calls =
      "HloModule m, num_partitions=2\n"
      "c0 {\n  p = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p)\n}\n";
  std::string conds =
      "HloModule m, num_partitions=2\n"
      "b0 {\n  p = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p)\n}\n"
      "f {\n  p = f32[8] parameter(0)\n  ROOT n = f32[8] abs(p)\n}\n";
  for (int i = 1; i < depth; ++i) {
    const std::string n = std::to_string(i), prev = std::to_string(i - 1);
    calls += "c" + n + " {\n  p = f32[8] parameter(0)\n  ROOT r = f32[8] call(p), to_apply=c" +
             prev + "\n}\n";
    conds += "b" + n +
             " {\n  p = f32[8] parameter(0)\n  c = pred[] constant(true)\n"
             "  ROOT r = f32[8] conditional(c, p, p), true_computation=b" +
             prev + ", false_computation=f\n}\n";
  }
  const std::string last = std::to_string(depth - 1);
  calls +=
      "ENTRY e {\n  p = f32[8] parameter(0), sharding={devices=[2]0,1}\n"
      "  ROOT r = f32[8] call(p), to_apply=c" +
      last + "\n}\n";
  conds +=
      "ENTRY e {\n  p = f32[8] parameter(0), sharding={devices=[2]0,1}\n"
      "  c = pred[] constant(true)\n  ROOT r = f32[8] conditional(c, p, p), "
      "true_computation=b" +
      last + ", false_computation=f\n}\n";
  for (const std::string& path : {Module("calls", calls), Module("conds", conds)}) {
    Outcome r = RunShell(Cmd(kRun, "--verify " + path));
    EXPECT_EQ(r.code, 0) << path << r.err;
    EXPECT_THAT(r.out, HasSubstr("verification passed"));
  }
}

TEST(NeverSilentTest, MoreDevicesThanThreadsIsAnError) {
  // Thread creation fails somewhere below 65,536 here (it aborted the process).
  const std::string path = Module("many",
                                  "HloModule m\nENTRY e {\n"
                                  "  p = f32[2] parameter(0)\n"
                                  "  ROOT n = f32[2] negate(p)\n}\n");
  Outcome r = RunShell("ulimit -u 512 2>/dev/null; " + Cmd(kRun, "--num-partitions 4096 " + path));
  EXPECT_THAT(r.code, ::testing::AnyOf(0, 1)) << r.err;
  if (r.code == 1) {
    EXPECT_THAT(r.err, HasSubstr("simulate fewer devices"));
  }
}

}  // namespace

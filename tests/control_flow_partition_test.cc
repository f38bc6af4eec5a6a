// While, conditional and call partition their called computations (spmd/partitioner/
// control_flow_handlers.cc): loop state and branch values stay sharded, nothing is gathered
// around the loop, and a branch index that differs between manual subgroups makes the
// results per group. Checked for the collectives and local shapes, and numerically against
// the unpartitioned module.
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_opcode.h"
#include "hlo/parser/hlo_parser.h"
#include "tests/partition_test_util.h"
#include "tests/tool_runner.h"

namespace {

using hlo::HloOpcode;
using testing_util::Counts;
using testing_util::ExpectVerifies;
using testing_util::Partition;
using testing_util::Partitioned;

int Collectives(const hlo::HloModule& module) {
  auto counts = Counts(module);
  return counts[HloOpcode::kAllGather] + counts[HloOpcode::kAllToAll] +
         counts[HloOpcode::kAllReduce] + counts[HloOpcode::kCollectivePermute] +
         counts[HloOpcode::kReduceScatter];
}

// Three steps of x <- tanh(x . w) with x split by rows; `body_sharding` on the body's dot.
std::string Loop(const std::string& state_sharding, const std::string& body_sharding) {
  return R"(HloModule loop, num_partitions=4
%body (p: (s32[], f32[16,8], f32[8,8])) -> (s32[], f32[16,8], f32[8,8]) {
  %p = (s32[], f32[16,8], f32[8,8]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %x = f32[16,8] get-tuple-element(%p), index=1
  %w = f32[8,8] get-tuple-element(%p), index=2
  %d = f32[16,8] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding=)" +
         body_sharding + R"(
  %t = f32[16,8] tanh(%d), sharding=)" + body_sharding + R"(
  %one = s32[] constant(1)
  %n = s32[] add(%i, %one)
  ROOT %r = (s32[], f32[16,8], f32[8,8]) tuple(%n, %t, %w)
}
%cond (c: (s32[], f32[16,8], f32[8,8])) -> pred[] {
  %c = (s32[], f32[16,8], f32[8,8]) parameter(0)
  %ci = s32[] get-tuple-element(%c), index=0
  %lim = s32[] constant(3)
  ROOT %lt = pred[] compare(%ci, %lim), direction=LT
}
ENTRY %e (x: f32[16,8], w: f32[8,8]) -> f32[16,8] {
  %x = f32[16,8] parameter(0), sharding={devices=[4,1]<=[4]}
  %w = f32[8,8] parameter(1), sharding={replicated}
  %zero = s32[] constant(0)
  %init = (s32[], f32[16,8], f32[8,8]) tuple(%zero, %x, %w)
  %loop = (s32[], f32[16,8], f32[8,8]) while(%init), condition=%cond, body=%body, sharding=)" +
         state_sharding + R"(
  ROOT %out = f32[16,8] get-tuple-element(%loop), index=1, sharding={devices=[4,1]<=[4]}
})";
}

TEST(ControlFlowPartitionTest, WhileLoopKeepsItsStateShardedWithoutCollectives) {
  Partitioned p = Partition(Loop("{{replicated}, {devices=[4,1]<=[4]}, {replicated}}",
                                 "{devices=[4,1]<=[4]}"));
  ASSERT_NE(p.spmd, nullptr);
  const std::string text = p.spmd->ToString();
  EXPECT_EQ(Collectives(*p.spmd), 0) << text;
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kWhile], 1) << text;
  // The body computes one f32[4,8] block per device.
  EXPECT_NE(text.find("f32[4,8] dot("), std::string::npos) << text;
  EXPECT_NE(text.find("(s32[], f32[4,8], f32[8,8]) while("), std::string::npos) << text;
  ExpectVerifies(p, 4);
}

TEST(ControlFlowPartitionTest, BodyShardedDifferentlyFromTheStateReshardsInsideTheLoop) {
  // The state is split by rows, the body's dot by columns: the body reshards both ways on
  // every iteration, and the loop still computes the original.
  Partitioned p = Partition(Loop("{{replicated}, {devices=[4,1]<=[4]}, {replicated}}",
                                 "{devices=[1,4]<=[4]}"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_GT(Collectives(*p.spmd), 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

TEST(ControlFlowPartitionTest, ReplicatedLoopStateStillVerifies) {
  Partitioned p = Partition(Loop("{replicated}", "{devices=[2,2]<=[4]}"));
  ASSERT_NE(p.spmd, nullptr);
  ExpectVerifies(p, 4);
}

// A conditional on `predicate` whose branches compute in their own shardings, then a call.
std::string Branches(const std::string& predicate) {
  return R"(HloModule branches, num_partitions=4
%then (t: (f32[16,8], f32[8,4])) -> f32[16,4] {
  %t = (f32[16,8], f32[8,4]) parameter(0), sharding={{devices=[2,2]<=[4]}, {devices=[2,1,2]<=[4] last_tile_dim_replicate}}
  %x = f32[16,8] get-tuple-element(%t), index=0
  %y = f32[8,4] get-tuple-element(%t), index=1
  ROOT %d = f32[16,4] dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
}
%else (f: f32[16,4]) -> f32[16,4] {
  %f = f32[16,4] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %n = f32[16,4] negate(%f), sharding={devices=[4,1]<=[4]}
}
%helper (h0: f32[16,4], h1: f32[16,4]) -> f32[16,4] {
  %h0 = f32[16,4] parameter(0)
  %h1 = f32[16,4] parameter(1)
  ROOT %m = f32[16,4] multiply(%h0, %h1), sharding={devices=[4,1]<=[4]}
}
ENTRY %e (x: f32[16,8], y: f32[8,4], z: f32[16,4]) -> f32[16,4] {
  %pred = pred[] constant()" + predicate + R"()
  %x = f32[16,8] parameter(0), sharding={devices=[2,2]<=[4]}
  %y = f32[8,4] parameter(1), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  %z = f32[16,4] parameter(2), sharding={devices=[4,1]<=[4]}
  %tt = (f32[16,8], f32[8,4]) tuple(%x, %y)
  %c = f32[16,4] conditional(%pred, %tt, %z), true_computation=%then, false_computation=%else, sharding={devices=[4,1]<=[4]}
  %k = f32[16,4] call(%c, %z), to_apply=%helper, sharding={devices=[4,1]<=[4]}
  ROOT %r = f32[16,4] add(%k, %c), sharding={devices=[4,1]<=[4]}
})";
}

TEST(ControlFlowPartitionTest, ConditionalBranchesAndCallComputeShards) {
  for (const std::string predicate : {"true", "false"}) {
    SCOPED_TRACE(predicate);
    Partitioned p = Partition(Branches(predicate));
    ASSERT_NE(p.spmd, nullptr);
    const std::string text = p.spmd->ToString();
    // Branch operands arrive as annotated (no reshard of x, y or z before the conditional),
    // and the call multiplies f32[4,4] blocks.
    EXPECT_NE(text.find("f32[4,4] conditional("), std::string::npos) << text;
    EXPECT_NE(text.find("f32[4,4] multiply("), std::string::npos) << text;
    EXPECT_NE(text.find("f32[4,4] call("), std::string::npos) << text;
    ExpectVerifies(p, 4);
  }
}

// Each manual group (devices {0,1} and {2,3}) holds its own predicate and takes its own
// branch; the scalar result differs between groups.
constexpr char kPerGroupConditional[] = R"(HloModule per_group, num_partitions=4
%true_comp (tp: (f32[3,5], f32[])) -> (f32[5,3], f32[]) {
  %tp = (f32[3,5], f32[]) parameter(0)
  %a = f32[3,5] get-tuple-element(%tp), index=0
  %s = f32[] get-tuple-element(%tp), index=1
  %tr = f32[5,3] transpose(%a), dimensions={1,0}
  ROOT %r = (f32[5,3], f32[]) tuple(%tr, %s)
}
%false_comp (fp: (f32[5,3], f32[])) -> (f32[5,3], f32[]) {
  ROOT %fp = (f32[5,3], f32[]) parameter(0)
}
ENTRY %entry (cond: pred[], tp.0: f32[3,5], fp.0: f32[5,3]) -> (f32[5,3], f32[]) {
  %cond = pred[] parameter(0), sharding={devices=[2,2]<=[4] last_tile_dims={manual, replicated}}
  %tp.0 = f32[3,5] parameter(1), sharding={devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}
  %fp.0 = f32[5,3] parameter(2), sharding={devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}
  %const0 = f32[] constant(0)
  %const1 = f32[] constant(1)
  %true_param = (f32[3,5], f32[]) tuple(%tp.0, %const0)
  %false_param = (f32[5,3], f32[]) tuple(%fp.0, %const1)
  ROOT %c = (f32[5,3], f32[]) conditional(%cond, %true_param, %false_param), true_computation=%true_comp, false_computation=%false_comp, sharding=SHARDING
})";

std::string PerGroup(const std::string& sharding) {
  std::string text = kPerGroupConditional;
  text.replace(text.find("SHARDING"), 8, sharding);
  return text;
}

TEST(ControlFlowPartitionTest, BranchIndexPerManualGroupGivesPerGroupResults) {
  Partitioned p = Partition(PerGroup(
      "{{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}, "
      "{devices=[2,2]<=[4] last_tile_dims={manual, replicated}}}"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Collectives(*p.spmd), 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

TEST(ControlFlowPartitionTest, PerGroupResultCannotBeClaimedReplicated) {
  // The scalar differs between the groups, so it cannot leave them as one replicated value:
  // a clear error, never a silently wrong "replicated" result.
  const std::string text = PerGroup(
      "{{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}, {replicated}}");
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  spmd::SpmdPartitioner partitioner;
  absl::StatusOr<bool> result = partitioner.Run(module->get());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(std::string(result.status().message()).find("instruction %c: cannot reshard"),
            std::string::npos)
      << result.status();
}

// XLA's PartitionCallMultipleCallsitesMatchedByReshard, as XLA receives it: the callee never
// reads its parameter, so the call passes zeros of its shard's shape and the operand, which
// would need a reshard there, is not moved (XLA inlines the call and the operand dies).
// (tests/testdata/partition/unread_call_parameter.hlo, shared with wrong_program_test.cc.)
TEST(ControlFlowPartitionTest, UnreadCallParameterMovesNothing) {
  Partitioned p =
      Partition(testing_tools::ReadFile("tests/testdata/partition/unread_call_parameter.hlo"));
  ASSERT_NE(p.spmd, nullptr);
  EXPECT_EQ(Collectives(*p.spmd), 0) << p.spmd->ToString();
  ExpectVerifies(p, 4);
}

}  // namespace

namespace {

// An op with an external effect held on one device runs there alone, as XLA does (its test
// OutfeedSingleDevice): a conditional on partition-id, the other devices' branch yielding a
// fresh token. It used to run on every device after an all-reduce of its data: one outfeed per
// device.
TEST(ControlFlowPartitionTest, OutfeedOnOneDeviceRunsThereAlone) {
  Partitioned p = Partition(R"(
HloModule outfeed_one_device, num_partitions=2
ENTRY main {
  data = f32[1024] parameter(0), sharding={maximal device=1}
  t = (f32[1024]) tuple(data), sharding={{maximal device=1}}
  token = token[] after-all()
  ROOT o = token[] outfeed(t, token), outfeed_shape=(f32[1024]{0}), sharding={maximal device=1}
})");
  ASSERT_NE(p.spmd, nullptr);
  // Per computation: the entry holds the conditional, one branch the outfeed.
  std::map<std::string, std::map<HloOpcode, int>> counts;
  for (const auto& computation : p.spmd->computations()) {
    for (const auto& instr : computation->instructions()) {
      ++counts[computation->name()][instr->opcode()];
    }
  }
  const std::string entry = p.spmd->entry_computation()->name();
  EXPECT_EQ(counts[entry][HloOpcode::kOutfeed], 0) << p.spmd->ToString();
  EXPECT_EQ(counts[entry][HloOpcode::kConditional], 1) << p.spmd->ToString();
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kOutfeed], 1) << p.spmd->ToString();
  EXPECT_EQ(Counts(*p.spmd)[HloOpcode::kAllReduce] + Counts(*p.spmd)[HloOpcode::kAllGather] +
                Counts(*p.spmd)[HloOpcode::kCollectivePermute],
            0)
      << p.spmd->ToString();
  EXPECT_NE(p.spmd->ToString().find("constant(1)"), std::string::npos) << p.spmd->ToString();
}

}  // namespace

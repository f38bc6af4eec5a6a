#include "hlo/sdy/sdy_import.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/sdy/sdy_attributes.h"

namespace hlo::sdy {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

const HloInstruction* Find(const HloModule& module, const std::string& name) {
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->name() == name) return instr.get();
    }
  }
  return nullptr;
}

std::string ShardingOf(const HloModule& module, const std::string& name) {
  const HloInstruction* instr = Find(module, name);
  if (instr == nullptr) return "(no such instruction)";
  return instr->has_sharding() ? instr->sharding().ToString() : "(none)";
}

constexpr char kMeshes[] =
    R"(frontend_attributes={xla.sdy.meshes="{mesh = #sdy.mesh<[\"data\"=2, \"model\"=4]>}"})";

std::string Module(const std::string& body) {
  return std::string("HloModule m, ") + kMeshes + "\n\nENTRY e {\n" + body + "}\n";
}

TEST(SdyImportTest, ShardingsOnlyInSdyAttributes) {
  std::unique_ptr<HloModule> m = Parse(Module(R"(
  x = f32[64,256] parameter(0), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"data\"}, {}]>"}
  w = f32[256,512] parameter(1), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{}, {\"model\"}]>"}
  d = f32[64,512] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[64,512] custom-call(d), custom_call_target="Sharding", frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"model\", \"data\"}, {?}]>]>"}
)"));
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(ImportShardy(m.get()).ok());
  EXPECT_EQ(m->config().num_partitions, 8);
  EXPECT_EQ(ShardingOf(*m, "x"), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(ShardingOf(*m, "w"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(ShardingOf(*m, "s"), "{devices=[8,1]<=[2,4]T(1,0)}");
  EXPECT_EQ(Find(*m, "s")->attrs().backend_config, "unspecified_dims=[1]");
  EXPECT_EQ(m->ToString().find("xla.sdy"), std::string::npos) << m->ToString();
}

TEST(SdyImportTest, SubAxesPrioritiesReplicatedAndMaximal) {
  std::unique_ptr<HloModule> m = Parse(
      "HloModule m, frontend_attributes={xla.sdy.meshes=\"{mesh = #sdy.mesh<[\\\"x\\\"=8]>, "
      "one = #sdy.mesh<[], device_ids=[5]>}\"}\n\nENTRY e {\n"
      R"(  a = f32[8,8] parameter(0), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"x\":(1)2}p0, {\"x\":(2)4}p1]>"}
  b = f32[8,8] parameter(1), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@one, [{}, {}]>"}
  ROOT c = f32[8,8] add(a, b), frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"x\":(4)2}, {}], replicated={\"x\":(1)4}>]>"}
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(ImportShardy(m.get()).ok());
  EXPECT_EQ(ShardingOf(*m, "a"), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(ShardingOf(*m, "b"), "{maximal device=5}");
  EXPECT_EQ(ShardingOf(*m, "c"), "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}");
}

TEST(SdyImportTest, AgreeingAndConflictingShardingAttributes) {
  const std::string agree = Module(R"(
  ROOT x = f32[64,256] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"data\"}, {}]>"}
)");
  std::unique_ptr<HloModule> m = Parse(agree);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(ImportShardy(m.get()).ok());
  const std::string conflict = Module(R"(
  ROOT x = f32[64,256] parameter(0), sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"data\"}, {}]>"}
)");
  m = Parse(conflict);
  ASSERT_NE(m, nullptr);
  absl::Status status = ImportShardy(m.get());
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("%x: sharding="));
  EXPECT_THAT(std::string(status.message()), HasSubstr("disagree"));
}

TEST(SdyImportTest, UnknownShardyConstructsAreErrors) {
  for (
      const std::string body : {
          R"(  ROOT x = f32[4] parameter(0), frontend_attributes={xla.sdy.new_thing="1"})",
          R"(  p = f32[4] parameter(0)
  ROOT x = f32[4] custom-call(p), custom_call_target="xla.sdy.Mystery")",
          R"(  ROOT x = f32[4] parameter(0), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@nomesh, [{}]>"})",
          R"(  ROOT x = f32[4] parameter(0), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"data\"}, {}]>"})",
      }) {
    std::unique_ptr<HloModule> m = Parse(Module(body + "\n"));
    ASSERT_NE(m, nullptr);
    absl::Status status = ImportShardy(m.get());
    EXPECT_FALSE(status.ok()) << body;
    EXPECT_THAT(std::string(status.message()), HasSubstr("%x: ")) << status;
  }
}

TEST(SdyImportTest, ShardMapBecomesManualRegion) {
  std::unique_ptr<HloModule> m = Parse(std::string("HloModule m, ") + kMeshes + R"(

body {
  a = f32[32,64] parameter(0)
  ROOT n = f32[32,64] negate(a)
}

ENTRY e {
  x = f32[64,256] parameter(0), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>"}
  g = f32[32,64] custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"data\"}, {\"model\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"data\", \"model\"}>"}
  c = f32[32,64] call(g), to_apply=body
  ROOT l = f32[64,256] custom-call(c), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"data\", \"model\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{\"data\"}, {}]>]>"}
}
)");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(ImportShardy(m.get()).ok());
  EXPECT_EQ(ShardingOf(*m, "g.global0"), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(ShardingOf(*m, "g.local0"), "{manual}");
  EXPECT_EQ(Find(*m, "g.local0")->attrs().custom_call_target, "SPMDFullToShardShape");
  EXPECT_EQ(Find(*m, "c")->operand(0)->name(), "g.local0");
  EXPECT_EQ(ShardingOf(*m, "l.local0"), "{manual}");
  EXPECT_EQ(ShardingOf(*m, "l.global0"), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(m->entry_computation()->root_instruction()->name(), "l.global0");
  EXPECT_EQ(m->ToString().find("xla.sdy"), std::string::npos) << m->ToString();
}

// A boundary of several values becomes a tuple of per-value boundaries; its readers come
// after it in the computation's order (the executors and verifiers walk it in order).
TEST(SdyImportTest, TupleBoundaryPrecedesItsReaders) {
  std::unique_ptr<HloModule> m = Parse(Module(R"(
  x = f32[64,256] parameter(0)
  y = f32[64,256] parameter(1)
  g = (f32[32,64], f32[32,64]) custom-call(x, y), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"data\"}, {\"model\"}]>, <@mesh, [{\"data\"}, {\"model\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"data\", \"model\"}>"}
  a = f32[32,64] get-tuple-element(g), index=0
  b = f32[32,64] get-tuple-element(g), index=1
  ROOT s = f32[32,64] add(a, b), sharding={manual}
)"));
  ASSERT_NE(m, nullptr);
  absl::Status status = ImportShardy(m.get());
  ASSERT_TRUE(status.ok()) << status;
  std::vector<std::string> seen;
  for (const auto& instr : m->entry_computation()->instructions()) {
    for (const HloInstruction* op : instr->operands()) {
      EXPECT_NE(std::find(seen.begin(), seen.end(), op->name()), seen.end())
          << "%" << instr->name() << " reads %" << op->name() << " before it\n"
          << m->ToString();
    }
    seen.push_back(instr->name());
  }
  EXPECT_EQ(m->entry_computation()->root_instruction()->name(), "s");
}

TEST(SdyImportTest, PartlyManualShardMapKeepsFreeAxesSplit) {
  std::unique_ptr<HloModule> m = Parse(Module(R"(
  x = f32[64,256] parameter(0)
  ROOT g = f32[64,64] custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape", frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"data\"}, {\"model\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"model\"}>"}
)"));
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(ImportShardy(m.get()).ok());
  EXPECT_EQ(ShardingOf(*m, "g.local0"), "{devices=[2,1,4]<=[8] last_tile_dims={manual}}");
}

// Open dims (`?`) at the boundary stay open on both sides of the conversion, as JAX's GSPMD
// export writes them, so that propagation may split them by the free axes.
TEST(SdyImportTest, OpenDimsAtAManualBoundaryStayOpenOnBothSides) {
  std::unique_ptr<HloModule> m = Parse(Module(R"(
  x = f32[64,256] parameter(0)
  ROOT g = f32[64,64] custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape", frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{?}, {\"model\", ?}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"model\"}>"}
)"));
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(ImportShardy(m.get()).ok());
  EXPECT_EQ(Find(*m, "g.global0")->attrs().backend_config, "unspecified_dims=[0,1]");
  EXPECT_EQ(Find(*m, "g.local0")->attrs().backend_config, "unspecified_dims=[0,1]");
  EXPECT_EQ(ShardingOf(*m, "g.global0"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
}

// JAX's partly manual shard_map (axis_names={'model'}): inside the body, the shardings name only
// the free axes, and the HLO sharding JAX writes beside them lacks the manual subgroup
// ({replicated} for open dims). The body's shardings become manual-subgroup ones.
TEST(SdyImportTest, ShardingsInAPartlyManualBodyKeepTheManualAxes) {
  std::unique_ptr<HloModule> m = Parse(std::string("HloModule m, ") + kMeshes + R"(

xla.sdy.manual_computation_body.1 {
  p = f32[64,64] parameter(0)
  n = f32[64,64] negate(p)
  c = f32[64,64] custom-call(n), custom_call_target="Sharding", sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{?}, {?}]>]>"}
  d = f32[64,64] custom-call(c), custom_call_target="Sharding", sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"data\"}, {}]>]>"}
  ROOT t = (f32[64,64]) tuple(d)
}

ENTRY e {
  x = f32[64,256] parameter(0)
  g = f32[64,64] custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape", frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"data\"}, {\"model\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"model\"}>"}
  k = (f32[64,64]) call(g), to_apply=xla.sdy.manual_computation_body.1
  r = f32[64,64] get-tuple-element(k), index=0
  ROOT l = f32[64,256] custom-call(r), custom_call_target="xla.sdy.LocalToGlobalShape", frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"model\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{\"data\"}, {\"model\"}]>]>"}
}
)");
  ASSERT_NE(m, nullptr);
  absl::Status status = ImportShardy(m.get());
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(ShardingOf(*m, "c"),
            "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}");
  EXPECT_EQ(ShardingOf(*m, "d"), "{devices=[2,1,4]<=[8] last_tile_dims={manual}}");
}

// A shard_map nested in a partly manual one (JAX's pa_nested probe): the inner boundary's
// global side is already manual along the outer axes (data), its local side along both; as
// JAX's GSPMD export writes them. Both sides used to lose the outer manual axis.
TEST(SdyImportTest, ANestedShardMapsBoundaryKeepsTheOuterManualAxes) {
  std::unique_ptr<HloModule> m = Parse(std::string("HloModule m, ") + kMeshes + R"(

xla.sdy.manual_computation_body.2 {
  a = f32[4,16] parameter(0)
  ROOT n = f32[4,16] negate(a)
}

xla.sdy.manual_computation_body.1 {
  p = f32[4,64] parameter(0)
  g = f32[4,16] custom-call(p), custom_call_target="xla.sdy.GlobalToLocalShape", frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{?}, {\"model\", ?}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"model\"}>"}
  k = f32[4,16] call(g), to_apply=xla.sdy.manual_computation_body.2
  l = f32[4,64] custom-call(k), custom_call_target="xla.sdy.LocalToGlobalShape", frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"model\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{?}, {\"model\", ?}]>]>"}
  ROOT t = (f32[4,64]) tuple(l)
}

ENTRY e {
  x = f32[8,64] parameter(0)
  g = f32[4,64] custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape", frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"data\", ?}, {?}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"data\"}>"}
  k = (f32[4,64]) call(g), to_apply=xla.sdy.manual_computation_body.1
  r = f32[4,64] get-tuple-element(k), index=0
  ROOT l = f32[8,64] custom-call(r), custom_call_target="xla.sdy.LocalToGlobalShape", frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"data\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{\"data\", ?}, {?}]>]>"}
}
)");
  ASSERT_NE(m, nullptr);
  absl::Status status = ImportShardy(m.get());
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(ShardingOf(*m, "g.global0"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}");
  EXPECT_EQ(ShardingOf(*m, "g.local0"), "{manual}");
  EXPECT_EQ(ShardingOf(*m, "l.local0"), "{manual}");
  EXPECT_EQ(ShardingOf(*m, "l.global0"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}");
}

TEST(SdyImportTest, FuncResultShardingAndShardingGroup) {
  std::unique_ptr<HloModule> m = Parse(Module(R"(
  x = f32[64,256] parameter(0)
  y = f32[64,256] parameter(1)
  s = () custom-call(x), custom_call_target="xla.sdy.ShardingGroup", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding_group_id="3 : i64"}
  a = f32[64,256] add(x, y)
  r = f32[64,256] custom-call(a), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"data\"}, {}]>]>"}
  o = f32[64,256] custom-call(y), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{?}, {?}]>]>"}
  ROOT t = (f32[64,256], f32[64,256]) tuple(r, o)
)"));
  ASSERT_NE(m, nullptr);
  absl::Status status = ImportShardy(m.get());
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(Find(*m, "r")->attrs().custom_call_target, "Sharding");
  EXPECT_EQ(ShardingOf(*m, "r"), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(Find(*m, "o"), nullptr);
  EXPECT_EQ(Find(*m, "t")->operand(1)->name(), "y");
  EXPECT_EQ(Find(*m, "s"), nullptr);
  EXPECT_EQ(ShardingOf(*m, "x"), "{unknown shard_as 3}");
}

// A result the root tuple returns and holds alike (JAX writes the root's sharding= too) is held
// by the root, as in a GSPMD-mode export: the value joins the root's class. Where the root says
// otherwise, the constraint stays.
TEST(SdyImportTest, FuncResultShardingTheRootHoldsAlikeIsTheRoots) {
  const std::string body = R"(
  x = f32[64,256] parameter(0)
  n = f32[64,256] negate(x)
  r = f32[64,256] custom-call(n), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"data\"}, {}]>]>"}
  unused = f32[64,256] reshape(r), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT t = (f32[64,256]) tuple(r), sharding={%s}
)";
  auto with_root = [&](const std::string& root) {
    std::string text = body;
    text.replace(text.find("%s"), 2, root);
    return text;
  };
  std::unique_ptr<HloModule> m =
      Parse(Module(with_root("{devices=[2,1,4]<=[8] last_tile_dim_replicate}")));
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(ImportShardy(m.get()).ok());
  EXPECT_EQ(Find(*m, "r"), nullptr);
  EXPECT_EQ(Find(*m, "t")->operand(0)->name(), "n");
  m = Parse(Module(with_root("{devices=[1,2,4]<=[8] last_tile_dim_replicate}")));
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(ImportShardy(m.get()).ok());
  ASSERT_NE(Find(*m, "r"), nullptr);
  EXPECT_EQ(Find(*m, "r")->attrs().custom_call_target, "Sharding");
}

TEST(SdyAttributesTest, ShardingRule) {
  absl::StatusOr<ShardingRule> rule = ParseShardingRule(
      "#sdy.op_sharding_rule<([i, j], [j, k], [])->([ik, 1]) {i=8, j=16, k=4} "
      "reduction={j} need_replication={k}, custom>");
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_EQ(rule->factor_names, (std::vector<std::string>{"i", "j", "k"}));
  EXPECT_EQ(rule->factor_sizes, (std::vector<int64_t>{8, 16, 4}));
  EXPECT_EQ(rule->factor_kinds[1], ShardingRule::FactorKind::kReduction);
  EXPECT_EQ(rule->factor_kinds[2], ShardingRule::FactorKind::kNeedReplication);
  ASSERT_EQ(rule->results.size(), 1u);
  EXPECT_EQ(rule->results[0], (ShardingRule::TensorFactors{{0, 2}, {}}));
  EXPECT_EQ(rule->operands[2].size(), 0u);
  EXPECT_TRUE(rule->is_custom);
  EXPECT_FALSE(ParseShardingRule("#sdy.op_sharding_rule<([i])->([i]) {q=2}>").ok());
}

}  // namespace
}  // namespace hlo::sdy

// Parser + printer tests: canonical round trips (print(parse(x)) is a fixpoint), the forms XLA
// accepts (bare and %-names, typed operands, nested and shape-less instructions, compact
// get-tuple-element, async sugar, splat constants), and structural checks on what is parsed.
#include "hlo/parser/hlo_parser.h"

#include "gtest/gtest.h"
#include "hlo/ir/hlo_printer.h"

namespace hlo {
namespace {

std::string Print(const HloModule& m) {
  std::string out;
  PrintModule(m, &out);
  return out;
}

// Parses, prints, re-parses and re-prints; both prints must agree. Returns the first print.
std::string RoundTrip(std::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "";
  std::string first = Print(**m);
  absl::StatusOr<std::unique_ptr<HloModule>> again = ParseHloModule(first, "p.hlo");
  EXPECT_TRUE(again.ok()) << again.status().message() << "\n" << first;
  if (!again.ok()) return first;
  EXPECT_EQ(first, Print(**again));
  return first;
}

TEST(HloParserTest, CanonicalFormIsAFixpoint) {
  const char* text = R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[3]{0}}, num_partitions=4

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %add = f32[] add(%a, %b)
}

ENTRY %main (p: f32[2,3]) -> f32[3] {
  %p = f32[2,3]{1,0} parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  %zero = f32[] constant(0)
  ROOT %r = f32[3]{0} reduce(%p, %zero), dimensions={0}, to_apply=%sum, metadata={op_name="x" source_line=3}
}
)";
  EXPECT_EQ(RoundTrip(text), text);
}

TEST(HloParserTest, BareNamesTypedOperandsAndDefaultRoot) {
  std::string printed = RoundTrip(R"(
HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  n = f32[4] negate(f32[4] p0)
  a = f32[4] add(f32[4] %n, p0)
})");
  EXPECT_NE(printed.find("ROOT %a = f32[4] add(%n, %p0)"), std::string::npos) << printed;
}

TEST(HloParserTest, LastComputationIsEntryWhenUnmarked) {
  auto m = ParseHloModule("HloModule m\nc {\n ROOT p = f32[] parameter(0)\n}\nd {\n ROOT q = s32[] parameter(0)\n}\n");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)->entry_computation()->name(), "d");
}

TEST(HloParserTest, NestedAndShapelessInstructions) {
  auto m = ParseHloModule(
      "HloModule m\nENTRY e {\n  ROOT r = add(f32[2] parameter(0), multiply(f32[2] parameter(1), "
      "f32[2] parameter(2)))\n}\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloInstruction* root = (*m)->entry_computation()->root_instruction();
  EXPECT_EQ(root->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(root->shape().ToString(), "f32[2]");
  EXPECT_EQ(root->operand(1)->opcode(), HloOpcode::kMultiply);
  EXPECT_EQ((*m)->entry_computation()->num_parameters(), 3);
}

TEST(HloParserTest, CompactGetTupleElement) {
  auto m = ParseHloModule(
      "HloModule m\nENTRY e {\n  p = (f32[2], (s32[], f32[3])) parameter(0)\n"
      "  ROOT r = f32[3] negate(p#1#1)\n}\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloInstruction* operand = (*m)->entry_computation()->root_instruction()->operand(0);
  EXPECT_EQ(operand->opcode(), HloOpcode::kGetTupleElement);
  EXPECT_EQ(operand->tuple_index(), 1);
  EXPECT_EQ(operand->operand(0)->tuple_index(), 1);
}

TEST(HloParserTest, OutOfOrderDefinitions) {
  auto m = ParseHloModule(
      "HloModule m\nENTRY e {\n  ROOT r = f32[] negate(q)\n  q = f32[] parameter(0)\n}\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->entry_computation()->root_instruction()->name(), "r");
  EXPECT_EQ((*m)->entry_computation()->instructions().front()->name(), "q");
}

TEST(HloParserTest, AttributesRoundTrip) {
  RoundTrip(R"(HloModule m, replica_count=2, allow_spmd_sharding_propagation_to_output={true,false}
ENTRY e {
  a = f32[8,16]{1,0:T(8,128)} parameter(0), frontend_attributes={k="v"}
  b = f32[16,4] parameter(1)
  d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={high,default}
  s = f32[4,4] slice(d), slice={[0:8:2], [0:4]}
  q = f32[6,6] pad(s, f32[] constant(0)), padding=1_1x0_2_0
  ag = f32[8,6] all-gather(q), channel_id=3, replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}, use_global_device_ids=true
  cp = f32[8,6] collective-permute(ag), source_target_pairs={{0,1},{1,0}}
  c = f32[2,2] constant({ {1.5, -inf}, {nan, 3} })
  k = f32[3] constant(7)
  i = s32[3] iota(), iota_dimension=0
  ROOT t = (f32[8,6], f32[2,2], f32[3], s32[3]) tuple(cp, c, k, i), sharding={{replicated}, {maximal device=1}, {manual}, {devices=[2]0,1}}
}
)");
}

TEST(HloParserTest, ConvolutionWindowAndDimLabels) {
  std::string printed = RoundTrip(R"(HloModule m
ENTRY e {
  x = f32[1,8,8,3] parameter(0)
  w = f32[3,3,3,16] parameter(1)
  ROOT c = f32[1,8,8,16] convolution(x, w), window={size=3x3 pad=1_1x1_1 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f, feature_group_count=1
})");
  EXPECT_NE(printed.find("window={size=3x3 pad=1_1x1_1 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f"),
            std::string::npos)
      << printed;
}

TEST(HloParserTest, AsyncSugarKeepsItsForm) {
  std::string printed = RoundTrip(R"(HloModule m
ENTRY e {
  p = f32[10] parameter(0)
  s = ((f32[10]), f32[20], s32[]) custom-call-start(p), custom_call_target="foo"
  ROOT d = f32[20] custom-call-done(s)
})");
  EXPECT_NE(printed.find("custom-call-start(%p), custom_call_target=\"foo\""), std::string::npos)
      << printed;
}

TEST(HloParserTest, SplatConstantPrintsAsScalar) {
  auto m = ParseHloModule("HloModule m\nENTRY e {\n  ROOT c = f32[1000,1000] constant(2)\n}\n");
  ASSERT_TRUE(m.ok());
  const Literal& lit = *(*m)->entry_computation()->root_instruction()->attrs().literal;
  EXPECT_EQ(lit.GetDouble(999999), 2.0);
  EXPECT_NE(Print(**m).find("constant(2)"), std::string::npos);
}

TEST(HloParserTest, NarrowFloatConstantsRoundTrip) {
  RoundTrip(R"(HloModule m
ENTRY e {
  a = bf16[3] constant({1.5, -0.1, 65504})
  b = f16[2] constant({0.0001, 70000})
  c = f8e4m3fn[3] constant({nan, 7, -0.5})
  ROOT t = (bf16[3], f16[2], f8e4m3fn[3]) tuple(a, b, c)
})");
}

TEST(HloParserTest, ErrorsCarryFileLineColumn) {
  auto m = ParseHloModule("HloModule m\nENTRY e {\n  ROOT p = f32[] parameterr(0)\n}\n", "x.hlo");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(std::string(m.status().message()), "x.hlo:3:18: error: unknown opcode 'parameterr'");
}

TEST(HloParserTest, NamesAreMadeUniqueAcrossComputations) {
  auto m = ParseHloModule(
      "HloModule m\nc {\n  ROOT x = f32[] parameter(0)\n}\n"
      "ENTRY e {\n  x = f32[] parameter(0)\n  x.1 = f32[] negate(x)\n"
      "  ROOT r = f32[] call(x.1), to_apply=c\n}\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<std::string> names;
  for (const auto& instr : (*m)->entry_computation()->instructions()) names.push_back(instr->name());
  EXPECT_EQ(names, (std::vector<std::string>{"x.2", "x.1", "r"}));
}

TEST(HloParserTest, CommentsAreSkipped) {
  RoundTrip("// leading\nHloModule m /* a */\nENTRY e { // x\n  ROOT p = f32[] /*t*/ parameter(0)\n}\n");
}

TEST(HloParserTest, MeshAxesReplicaGroupsExpand) {
  // Mesh x=2,y=2 devices [[0,1],[2,3]]: groups vary in the listed axes, ordered as listed.
  const char* text = R"(HloModule m, replica_count=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[8] parameter(0)
  r0 = f32[8] all-reduce(p), replica_groups=mesh['x'=2,'y'=2] {'y'}, to_apply=add
  r1 = f32[8] all-reduce(r0), replica_groups=mesh['x'=2,'y'=2] {'y', 'x'}, to_apply=add
  ROOT r2 = f32[8] all-reduce(r1), replica_groups=mesh['x'=4], device_ids=(3,2,1,0) {'x':(2)2}, to_apply=add
})";
  const std::string printed = RoundTrip(text);
  EXPECT_NE(printed.find("replica_groups={{0,1},{2,3}}"), std::string::npos) << printed;
  EXPECT_NE(printed.find("replica_groups={{0,2,1,3}}"), std::string::npos) << printed;
  EXPECT_NE(printed.find("replica_groups={{3,2},{1,0}}"), std::string::npos) << printed;
  auto bad = ParseHloModule(
      "HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n"
      "  ROOT r = f32[8] all-gather(p), replica_groups=mesh['x'=2] {'z'}, dimensions={0}\n}\n",
      "x.hlo");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(std::string(bad.status().message()),
            "x.hlo:4:62: error: bad mesh replica groups: unknown mesh axis 'z'");
}

// Errors raised after parsing (passes, the verifier) are placed at the instruction or header
// attribute they name, by name: the instruction itself may be gone by then.
TEST(HloParserTest, LocateNamesThePlaceAfterTheFact) {
  auto parsed = ParseHloModuleWithLocations(
      "HloModule m, entry_computation_layout={(f32[8])->f32[8]}\nENTRY e {\n"
      "  p = f32[8] parameter(0)\n  ROOT w.1 = f32[8] negate(p)\n}\n",
      "m.hlo");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->Locate("while %w.1: conflicting device assignments: %p"),
            "m.hlo:4:8: error: while %w.1: conflicting device assignments: %p");
  EXPECT_EQ(parsed->Locate("instruction %gone: no, then %p."),
            "m.hlo:3:3: error: instruction %gone: no, then %p.");
  EXPECT_EQ(parsed->Locate("module m: entry_computation_layout result is f32[4]"),
            "m.hlo:1:14: error: module m: entry_computation_layout result is f32[4]");
  EXPECT_EQ(parsed->Locate("nothing named"), "m.hlo: error: nothing named");
  EXPECT_EQ(parsed->Locate("x.hlo:1:1: error: placed"), "x.hlo:1:1: error: placed");
}

}  // namespace
}  // namespace hlo

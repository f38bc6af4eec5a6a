#include "hlo/transforms/dead_code_elimination.h"

#include "gtest/gtest.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/parser/hlo_parser.h"

namespace hlo {
namespace {

TEST(DeadCodeEliminationTest, RemovesUnusedInstructionsAndComputations) {
  auto m = ParseHloModule(R"(HloModule m
unused {
  ROOT x = f32[] parameter(0)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  dead = f32[4] negate(p)
  dead2 = f32[4] exponential(dead)
  z = f32[] constant(0)
  keep = f32[] custom-call(), custom_call_target="x", custom_call_has_side_effect=true
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  DeadCodeElimination dce;
  absl::StatusOr<bool> changed = dce.Run(m->get());
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  std::vector<std::string> names;
  for (const auto& instr : (*m)->entry_computation()->instructions()) names.push_back(instr->name());
  EXPECT_EQ(names, (std::vector<std::string>{"p", "z", "keep", "r"}));
  EXPECT_EQ((*m)->computations().size(), 2u);
  EXPECT_EQ((*m)->GetComputation("unused"), nullptr);
  // A second run finds nothing.
  EXPECT_FALSE(*dce.Run(m->get()));
}

}  // namespace
}  // namespace hlo

namespace hlo {
namespace {

// Dead computations calling each other go together (one pass over the module, whatever their
// order); RemoveComputations refuses, removing nothing, while a live one still calls one.
TEST(DeadCodeEliminationTest, RemovesDeadCallersAndCalleesTogether) {
  auto m = ParseHloModule(R"(HloModule m
leaf {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
mid {
  q = f32[] parameter(0)
  ROOT c = f32[] call(q), to_apply=leaf
}
live {
  r = f32[] parameter(0)
  ROOT e = f32[] exponential(r)
}
ENTRY e {
  x = f32[] parameter(0)
  ROOT y = f32[] call(x), to_apply=live
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloModule& module = **m;
  absl::Status refused = module.RemoveComputations({module.GetComputation("live")});
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(module.computations().size(), 4u);
  DeadCodeElimination dce;
  absl::StatusOr<bool> changed = dce.Run(&module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(module.computations().size(), 2u);
  EXPECT_EQ(module.GetComputation("mid"), nullptr);
  EXPECT_EQ(module.GetComputation("leaf"), nullptr);
  EXPECT_NE(module.GetComputation("live"), nullptr);
}

}  // namespace
}  // namespace hlo

#include "hlo/transforms/flatten_call_graph.h"

#include <string>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/verifier/hlo_verifier.h"

namespace hlo {
namespace {

// JAX's jnp.flip(jnp.cumsum(jnp.flip(x))): one private function called at two sites, and a
// nested call reached along two paths.
constexpr char kSharedCallees[] = R"(HloModule m, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
inner {
  q = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(q, z), dimensions={0}, to_apply=add
}
flip {
  p = f32[4] parameter(0), sharding={devices=[2]0,1}
  rev = f32[4] reverse(p), dimensions={0}
  sum = f32[] call(rev), to_apply=inner
  ROOT t = (f32[4], f32[]) tuple(rev, sum)
}
ENTRY e {
  x = f32[4] parameter(0)
  site1 = (f32[4], f32[]) call(x), to_apply=flip
  a0 = f32[4] get-tuple-element(site1), index=0
  site2 = (f32[4], f32[]) call(a0), to_apply=flip
  ROOT b0 = f32[4] get-tuple-element(site2), index=0
})";

TEST(FlattenCallGraphTest, EachSiteRunsItsOwnCopy) {
  auto m = ParseHloModule(kSharedCallees);
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloModule& module = **m;
  const CloneNames names = FlattenCallGraph(module);
  ASSERT_TRUE(VerifyModule(module).ok()) << VerifyModule(module).message();
  const HloComputation* entry = module.entry_computation();
  const HloInstruction* a = nullptr;
  const HloInstruction* b = nullptr;
  for (const auto& instr : entry->instructions()) {
    if (instr->name() == "site1") a = instr.get();
    if (instr->name() == "site2") b = instr.get();
  }
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->to_apply()->name(), "flip");  // The first site keeps the original.
  const HloComputation* copy = b->to_apply();
  EXPECT_EQ(copy->name(), "flip.clone");
  EXPECT_EQ(names.OriginalComputation("flip.clone"), "flip");
  // Instructions, shardings and stored order copied; the nested call copied per path; the
  // reducer shared.
  std::vector<std::string> order;
  for (const auto& instr : copy->instructions()) order.push_back(instr->name());
  EXPECT_EQ(order, (std::vector<std::string>{"p.clone", "rev.clone", "sum.clone", "t.clone"}));
  EXPECT_TRUE(copy->parameter_instruction(0)->has_sharding());
  EXPECT_EQ(names.OriginalInstruction("rev.clone"), "rev");
  EXPECT_EQ(names.OriginalInstruction("rev"), "rev");
  const HloComputation* inner_copy = copy->instructions()[2]->to_apply();
  EXPECT_EQ(inner_copy->name(), "inner.clone");
  EXPECT_EQ(names.OriginalComputation("inner.clone"), "inner");
  EXPECT_EQ(inner_copy->root_instruction()->to_apply()->name(), "add");
  EXPECT_EQ(module.computations().size(), 6u);
  // Flat already: a second run copies nothing.
  EXPECT_TRUE(FlattenCallGraph(module).computations.empty());
}

TEST(FlattenCallGraphTest, CopiesOfCopiesNameTheOriginal) {
  // `outer` is called twice and calls `leaf` twice: four paths to `leaf`.
  auto m = ParseHloModule(R"(HloModule m
leaf {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
outer {
  p.1 = f32[] parameter(0)
  c1 = f32[] call(p.1), to_apply=leaf
  ROOT c2 = f32[] call(c1), to_apply=leaf
}
ENTRY e {
  x = f32[] parameter(0)
  y = f32[] call(x), to_apply=outer
  ROOT w = f32[] call(y), to_apply=outer
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const CloneNames names = FlattenCallGraph(**m);
  ASSERT_TRUE(VerifyModule(**m).ok()) << VerifyModule(**m).message();
  EXPECT_EQ((*m)->computations().size(), 7u);  // entry, outer x2, leaf x4
  int leaves = 0;
  for (const auto& c : (*m)->computations()) {
    if (names.OriginalComputation(c->name()) == "leaf") {
      ++leaves;
      EXPECT_EQ(names.OriginalInstruction(c->root_instruction()->name()), "n");
    }
  }
  EXPECT_EQ(leaves, 4);
}

}  // namespace
}  // namespace hlo

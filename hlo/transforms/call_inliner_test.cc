#include "hlo/transforms/call_inliner.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/transforms/flatten_call_graph.h"
#include "hlo/verifier/hlo_verifier.h"

namespace hlo {
namespace {

std::vector<std::string> Names(const HloComputation& c) {
  std::vector<std::string> names;
  for (const auto& instr : c.instructions()) names.push_back(instr->name());
  return names;
}

// Nested calls inlined where they stood, names kept, callees removed; the root may be a call.
TEST(CallInlinerTest, InlinesNestedCallsInPlace) {
  auto m = ParseHloModule(R"(HloModule m
inner {
  q = f32[4] parameter(0)
  ROOT n = f32[4] negate(q)
}
outer {
  p = f32[4] parameter(0)
  e = f32[4] exponential(p)
  c = f32[4] call(e), to_apply=inner
  ROOT t = (f32[4], f32[4]) tuple(c, p)
}
ENTRY main {
  x = f32[4] parameter(0)
  a = f32[4] abs(x)
  site = (f32[4], f32[4]) call(a), to_apply=outer
  g = f32[4] get-tuple-element(site), index=0
  ROOT s = f32[4] sqrt(g)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::StatusOr<int64_t> inlined = InlineCalls(**m);
  ASSERT_TRUE(inlined.ok()) << inlined.status().message();
  EXPECT_EQ(*inlined, 2);
  ASSERT_TRUE(VerifyModule(**m).ok()) << VerifyModule(**m).message();
  EXPECT_EQ((*m)->computations().size(), 1u);
  EXPECT_EQ(Names(*(*m)->entry_computation()),
            (std::vector<std::string>{"x", "a", "e", "n", "t", "g", "s"}));
}

TEST(CallInlinerTest, KeepsCallsThatCarryMeaning) {
  auto m = ParseHloModule(R"(HloModule m, num_partitions=2
f {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
g {
  p.1 = f32[4] parameter(0), sharding={devices=[2]0,1}
  ROOT n.1 = f32[4] negate(p.1)
}
h {
  p.2 = f32[4] parameter(0)
  ROOT n.2 = f32[4] negate(p.2)
}
k {
  p.3 = f32[4] parameter(0)
  ROOT n.3 = f32[4] negate(p.3)
}
ENTRY main {
  x = f32[4] parameter(0)
  c1 = f32[4] call(x), to_apply=f
  c2 = f32[4] call(c1), to_apply=f
  c3 = f32[4] call(c2), to_apply=g
  c4 = f32[4] call(c3), to_apply=h, sharding={devices=[2]0,1}
  ROOT c5 = f32[4] call(c4), to_apply=k, frontend_attributes={inlineable="false"}
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  // A callee two sites share, a parameter's sharding, the call's own sharding, and
  // inlineable="false" all keep their calls.
  absl::StatusOr<int64_t> inlined = InlineCalls(**m);
  ASSERT_TRUE(inlined.ok()) << inlined.status().message();
  EXPECT_EQ(*inlined, 0);
  // Flattened, the shared callee's two sites are inlined.
  FlattenCallGraph(**m);
  inlined = InlineCalls(**m);
  ASSERT_TRUE(inlined.ok()) << inlined.status().message();
  EXPECT_EQ(*inlined, 2);
  ASSERT_TRUE(VerifyModule(**m).ok()) << VerifyModule(**m).message();
  EXPECT_EQ(Names(*(*m)->entry_computation()),
            (std::vector<std::string>{"x", "n", "n.clone", "c3", "c4", "c5"}));
}

// A shard_map body (manual operands or results) runs as written: its partition-id means the
// device's index only inside the region.
TEST(CallInlinerTest, KeepsShardMapBodies) {
  auto m = ParseHloModule(R"(HloModule m, num_partitions=2
body {
  p = f32[2] parameter(0)
  id = u32[] partition-id()
  c = f32[] convert(id)
  b = f32[2] broadcast(c), dimensions={}
  ROOT a = f32[2] add(p, b)
}
empty {
  ROOT id.1 = u32[] partition-id()
}
ENTRY main {
  x = f32[4] parameter(0), sharding={devices=[2]0,1}
  to = f32[2] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  r = f32[2] call(to), to_apply=body
  back = f32[4] custom-call(r), custom_call_target="SPMDShardToFullShape", sharding={devices=[2]0,1}
  i = u32[] call(), to_apply=empty
  s = u32[] custom-call(i), custom_call_target="Sharding", sharding={manual}
  ROOT t = (f32[4], u32[]) tuple(back, s)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::StatusOr<int64_t> inlined = InlineCalls(**m);
  ASSERT_TRUE(inlined.ok()) << inlined.status().message();
  EXPECT_EQ(*inlined, 0);
  EXPECT_EQ((*m)->computations().size(), 3u);
}

}  // namespace
}  // namespace hlo

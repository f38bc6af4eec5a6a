#include "hlo/transforms/common_subexpression_elimination.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/transforms/dead_code_elimination.h"

namespace hlo {
namespace {

// Runs CSE then DCE on `text`; returns the entry's instruction names and fills `merged`.
std::vector<std::string> Cleaned(const std::string& text,
                                 std::vector<MergedInstruction>* merged = nullptr) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return {};
  CommonSubexpressionElimination cse;
  EXPECT_TRUE(cse.Run(m->get()).ok());
  EXPECT_TRUE(DeadCodeElimination().Run(m->get()).ok());
  if (merged != nullptr) *merged = cse.merged();
  std::vector<std::string> names;
  for (const auto& instr : (*m)->entry_computation()->instructions())
    names.push_back(instr->name());
  // A second run finds nothing more.
  EXPECT_FALSE(*cse.Run(m->get()));
  return names;
}

// Two reshards of one value rebuilt the same slices and the same collective-permute (channel ids
// aside) and the same index arithmetic; one copy of each remains, the chain collapsing in one
// walk, and the merges are reported for records that name the removed instructions.
TEST(CommonSubexpressionEliminationTest, MergesDuplicateChainsAndCollectives) {
  std::vector<MergedInstruction> merged;
  const std::vector<std::string> names = Cleaned(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[8,4] parameter(0)
  id1 = u32[] partition-id()
  id2 = u32[] partition-id()
  s1 = f32[2,4] slice(p), slice={[0:2], [0:4]}, metadata={op_name="a"}
  s2 = f32[2,4] slice(p), slice={[0:2], [0:4]}, metadata={op_name="b"}
  c1 = f32[2,4] collective-permute(s1), channel_id=1, source_target_pairs={{0,1},{1,0}}
  c2 = f32[2,4] collective-permute(s2), channel_id=2, source_target_pairs={{0,1},{1,0}}
  c3 = f32[2,4] collective-permute(s2), channel_id=3, source_target_pairs={{1,0},{0,1}}
  a = f32[2,4] add(c1, c2)
  b = f32[2,4] add(a, c3)
  ROOT t = (f32[2,4], u32[], u32[]) tuple(b, id1, id2)
})",
                                                 &merged);
  EXPECT_EQ(names, (std::vector<std::string>{"p", "id1", "s1", "c1", "c3", "a", "b", "t"}));
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].removed, "id2");
  EXPECT_EQ(merged[0].kept, "id1");
  EXPECT_EQ(merged[2].removed, "c2");
  EXPECT_EQ(merged[2].kept, "c1");
  EXPECT_EQ(merged[2].computation, "e");
}

// Random numbers, custom-calls and large constants stay.
TEST(CommonSubexpressionEliminationTest, KeepsWhatMayNotBeMerged) {
  const std::vector<std::string> names = Cleaned(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r1 = f32[4] rng(lo, hi), distribution=rng_uniform
  r2 = f32[4] rng(lo, hi), distribution=rng_uniform
  k1 = f32[4] custom-call(p), custom_call_target="f"
  k2 = f32[4] custom-call(p), custom_call_target="f"
  big1 = f32[512] constant({...})
  big2 = f32[512] constant({...})
  ROOT out = (f32[4], f32[4], f32[4], f32[4], f32[512], f32[512]) tuple(r1, r2, k1, k2, big1, big2)
})");
  EXPECT_EQ(names, (std::vector<std::string>{"p", "lo", "hi", "r1", "r2", "k1", "k2", "big1",
                                             "big2", "out"}));
}

// An all-reduce without a channel id reduces across replicas, one with an id across
// partitions: not the same (XLA's propagation test AllReduce).
TEST(CommonSubexpressionEliminationTest, ChannelIdsMatterByPresenceNotValue) {
  const std::vector<std::string> names = Cleaned(R"(HloModule m, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[3] parameter(0)
  none = f32[3] all-reduce(p), to_apply=add
  one = f32[3] all-reduce(p), channel_id=1, to_apply=add
  two = f32[3] all-reduce(p), channel_id=2, to_apply=add
  ROOT t = (f32[3], f32[3], f32[3]) tuple(none, one, two)
})");
  EXPECT_EQ(names, (std::vector<std::string>{"p", "none", "one", "t"}));
}

// Instructions that differ only in an attribute stay apart: the dimension a get-dimension-size
// reads (printed since this test; it was not), and a backend_config whose text looks like the
// metadata or channel-id fields the key leaves out.
TEST(CommonSubexpressionEliminationTest, EveryAttributeCounts) {
  const std::vector<std::string> names = Cleaned(R"(HloModule m
ENTRY e {
  p = f32[8,4] parameter(0)
  d0 = s32[] get-dimension-size(p), dimensions={0}
  d1 = s32[] get-dimension-size(p), dimensions={1}
  a = f32[8,4] custom-call(p), custom_call_target="f", backend_config="x, metadata={y}, channel_id=2"
  n1 = f32[8,4] negate(p), frontend_attributes={k="a, metadata={b}"}
  n2 = f32[8,4] negate(p), frontend_attributes={k="a, metadata={c}"}
  ROOT t = (s32[], s32[], f32[8,4], f32[8,4], f32[8,4]) tuple(d0, d1, a, n1, n2)
})");
  EXPECT_EQ(names, (std::vector<std::string>{"p", "d0", "d1", "a", "n1", "n2", "t"}));
}

// A root that repeats an earlier instruction stays the root.
TEST(CommonSubexpressionEliminationTest, KeepsTheRoot) {
  const std::vector<std::string> names = Cleaned(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  o = f32[4] custom-call(n), custom_call_target="f", custom_call_has_side_effect=true
  ROOT n2 = f32[4] negate(p)
})");
  EXPECT_EQ(names, (std::vector<std::string>{"p", "n", "o", "n2"}));
}

// Constants that print alike but hold different bits are different values: two NaNs with
// different payloads (both print "nan") stay apart; two with the same payload merge.
TEST(CommonSubexpressionEliminationTest, NaNPayloadsAreDifferentConstants) {
  auto m = ParseHloModule(R"(HloModule m
ENTRY e {
  a = f32[2] constant({nan, 1})
  b = f32[2] constant({nan, 1})
  c = f32[2] constant({nan, 1})
  ROOT t = (f32[2], f32[2], f32[2]) tuple(a, b, c)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloComputation* entry = (*m)->entry_computation();
  const uint32_t payload = 0x7fc00001;
  for (const auto& instr : entry->instructions()) {
    if (instr->name() != "b") continue;
    std::vector<uint8_t>* bytes = instr->mutable_attrs()->literal->mutable_data();
    std::memcpy(bytes->data(), &payload, sizeof(payload));
  }
  CommonSubexpressionElimination cse;
  ASSERT_TRUE(cse.Run(m->get()).ok());
  ASSERT_EQ(cse.merged().size(), 1u);
  EXPECT_EQ(cse.merged()[0].removed, "c");
  EXPECT_EQ(cse.merged()[0].kept, "a");
}

// A fill that a dynamic-update-slice writes into stays its own: shared, one of the two writers
// would have to copy it. Fills read only (the negates') still merge.
TEST(CommonSubexpressionEliminationTest, KeepsFillsUpdatedInPlaceApart) {
  const std::vector<std::string> names = Cleaned(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  z = f32[] constant(0)
  i = s32[] constant(1)
  a = f32[8] broadcast(z), dimensions={}
  u = f32[8] dynamic-update-slice(a, p, i)
  b = f32[8] broadcast(z), dimensions={}
  v = f32[8] dynamic-update-slice(b, p, i)
  c = f32[8] broadcast(z), dimensions={}
  d = f32[8] broadcast(z), dimensions={}
  nc = f32[8] negate(c)
  nd = f32[8] negate(d)
  ROOT t = (f32[8], f32[8], f32[8], f32[8]) tuple(u, v, nc, nd)
})");
  EXPECT_EQ(names, (std::vector<std::string>{"p", "z", "i", "a", "u", "b", "v", "c", "nc", "t"}));
}

}  // namespace
}  // namespace hlo

#include "hlo/transforms/memory_order.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/analysis/peak_memory.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/parser/hlo_parser.h"

namespace hlo {
namespace {

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *std::move(m) : nullptr;
}

std::vector<std::string> Names(const HloComputation& comp) {
  std::vector<std::string> names;
  for (const auto& instr : comp.instructions()) names.push_back(instr->name());
  return names;
}

int Position(const HloComputation& comp, const std::string& name) {
  const std::vector<std::string> names = Names(comp);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

// A square read by two norms, the second after an unrelated large product (what common-
// subexpression elimination makes of MaxText's two gradient norms): the square (4 KiB) stays
// live through `b` unless the second norm moves up.
constexpr char kTwoNorms[] = R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[1024] parameter(0)
  zero = f32[] constant(0)
  sq = f32[1024] multiply(p, p)
  n1 = f32[] reduce(sq, zero), dimensions={0}, to_apply=add
  b = f32[1024] add(p, p)
  c = f32[1024] reverse(b), dimensions={0}
  nb = f32[] reduce(c, zero), dimensions={0}, to_apply=add
  n2 = f32[] reduce(sq, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[], f32[]) tuple(n1, n2, nb)
})";

TEST(MemoryOrderTest, MovesTheLastReaderUpAndLowersThePeak) {
  std::unique_ptr<HloModule> m = Parse(kTwoNorms);
  ASSERT_NE(m, nullptr);
  const HloComputation& entry = *m->entry_computation();
  const int64_t before = ComputePeakMemory(entry).bytes;
  // p, sq, b and c (and the scalars zero and n1) live together at c.
  EXPECT_EQ(before, 4 * 4096 + 8);
  absl::StatusOr<bool> changed = MemoryOrder().Run(m.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_LT(Position(entry, "n2"), Position(entry, "b")) << m->ToString();
  MemoryOrder order;
  std::unique_ptr<HloModule> again = Parse(kTwoNorms);
  ASSERT_TRUE(order.Run(again.get()).ok());
  ASSERT_EQ(order.reordered().size(), 1u);
  EXPECT_EQ(order.reordered()[0].computation, "e");
  EXPECT_EQ(order.reordered()[0].peak_before, before);
  EXPECT_EQ(order.reordered()[0].peak_after, 3 * 4096 + 12);
  EXPECT_EQ(ComputePeakMemory(entry).bytes, 3 * 4096 + 12) << m->ToString();
  EXPECT_EQ(entry.root_instruction()->name(), "t");
  EXPECT_EQ(Names(entry).back(), "t");
  // Already in a best order: a second run changes nothing.
  EXPECT_FALSE(*MemoryOrder().Run(m.get()));
}

// Side effects keep their order, and control dependencies hold, even where moving them would
// free memory sooner.
TEST(MemoryOrderTest, KeepsSideEffectsAndControlDependenciesInOrder) {
  std::unique_ptr<HloModule> m = Parse(R"(HloModule m
ENTRY e {
  p = f32[1024] parameter(0)
  tok = token[] after-all()
  big = f32[1024] multiply(p, p)
  o1 = token[] outfeed(p, tok), outfeed_shape=f32[1024]
  o2 = token[] outfeed(big, o1), outfeed_shape=f32[1024]
  small = f32[8] slice(p), slice={[0:8]}
  late = f32[8] negate(small), control-predecessors={o2}
  ROOT t = (token[], f32[8]) tuple(o2, late)
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(MemoryOrder().Run(m.get()).ok());
  const HloComputation& entry = *m->entry_computation();
  EXPECT_LT(Position(entry, "o1"), Position(entry, "o2"));
  EXPECT_LT(Position(entry, "o2"), Position(entry, "late"));
  EXPECT_LT(Position(entry, "big"), Position(entry, "o2"));
  EXPECT_EQ(Names(entry).size(), 8u);
}

// A call whose computation outfeeds is a side effect too: the outfeed after it stays after it,
// though moving that one up would free `big` sooner. A reducer's parameters are not effects.
TEST(MemoryOrderTest, CalleesWithSideEffectsKeepTheirPlace) {
  std::unique_ptr<HloModule> m = Parse(R"(HloModule m
effect {
  x = f32[8] parameter(0)
  t = token[] after-all()
  o = token[] outfeed(x, t), outfeed_shape=f32[8]
  ROOT r = f32[8] negate(x)
}
ENTRY e {
  p = f32[1024] parameter(0)
  tok = token[] after-all()
  big = f32[1024] multiply(p, p)
  s = f32[8] slice(p), slice={[0:8]}
  c = f32[8] call(s), to_apply=effect
  o2 = token[] outfeed(big, tok), outfeed_shape=f32[1024]
  ROOT t = (f32[8], token[]) tuple(c, o2)
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(MemoryOrder().Run(m.get()).ok());
  const HloComputation& entry = *m->entry_computation();
  EXPECT_LT(Position(entry, "c"), Position(entry, "o2")) << m->ToString();
}

// Local moves never raise the peak: moving x (88 B, the last reader of a, 100 B) up to just
// after w would put it beside c (1000 B) above the old peak; it stops short of that.
TEST(MemoryOrderTest, LocalMovesNeverRaiseThePeak) {
  std::unique_ptr<HloModule> m = Parse(R"(HloModule m
ENTRY e {
  p = f32[25] parameter(0)
  a = f32[25] negate(p)
  c = f32[250] iota(), iota_dimension=0
  w = f32[2] slice(a), slice={[0:2]}
  y = f32[2] slice(c), slice={[0:2]}
  x = f32[22] slice(a), slice={[0:22]}
  ROOT t = (f32[2], f32[2], f32[22]) tuple(w, y, x)
})");
  ASSERT_NE(m, nullptr);
  HloComputation* entry = m->entry_computation();
  const int64_t before = ComputePeakMemory(*entry).bytes;
  ASSERT_TRUE(entry->ReorderInstructions(LocallyImprovedOrder(*entry)).ok());
  EXPECT_LE(ComputePeakMemory(*entry).bytes, before) << m->ToString();
}

// The greedy order is kept only where it lowers the peak; a scheduled module keeps its order.
TEST(MemoryOrderTest, LeavesScheduledModulesAlone) {
  std::string text = kTwoNorms;
  text.replace(text.find("HloModule m"), 11, "HloModule m, is_scheduled=true");
  std::unique_ptr<HloModule> m = Parse(text);
  ASSERT_NE(m, nullptr);
  const std::vector<std::string> before = Names(*m->entry_computation());
  EXPECT_FALSE(*MemoryOrder().Run(m.get()));
  EXPECT_EQ(Names(*m->entry_computation()), before);
}

TEST(MemoryOrderTest, ReorderRejectsAnOrderThatIsNotAPermutation) {
  std::unique_ptr<HloModule> m = Parse(kTwoNorms);
  ASSERT_NE(m, nullptr);
  HloComputation* entry = m->entry_computation();
  std::vector<HloInstruction*> order;
  for (const auto& instr : entry->instructions()) order.push_back(instr.get());
  const std::vector<std::string> before = Names(*entry);
  std::vector<HloInstruction*> twice = order;
  twice[1] = twice[0];
  EXPECT_FALSE(entry->ReorderInstructions(twice).ok());
  EXPECT_EQ(Names(*entry), before);
  order.pop_back();
  EXPECT_FALSE(entry->ReorderInstructions(order).ok());
  EXPECT_EQ(Names(*entry), before);
}

// Arguments are there before the program starts: a parameter listed after a temporary still
// counts at the temporary.
TEST(MemoryOrderTest, PeakCountsParametersFromTheStart) {
  std::unique_ptr<HloModule> m = Parse(R"(HloModule m
ENTRY e {
  a = f32[256] parameter(0)
  t = f32[256] negate(a)
  b = f32[1024] parameter(1)
  ROOT r = f32[1024] negate(b)
})");
  ASSERT_NE(m, nullptr);
  const PeakMemory peak = ComputePeakMemory(*m->entry_computation());
  // At t: a, b and t; at r: a, b and r.
  EXPECT_EQ(peak.bytes, 1024 + 4096 + 4096);
  EXPECT_EQ(peak.at->name(), "r");
}

}  // namespace
}  // namespace hlo

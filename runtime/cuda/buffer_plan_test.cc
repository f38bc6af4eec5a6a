// The buffer plan: aliasing instructions define no buffer, outputs and parameters stay out of
// the arena, buffers whose live ranges overlap never share bytes, and dead ones are reused.
#include "runtime/cuda/buffer_plan.h"

#include "gtest/gtest.h"
#include "runtime/cuda/testing/differential_test_util.h"

namespace runtime {
namespace cuda {
namespace {

BufferPlan Plan(const std::string& text) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(text);
  EXPECT_TRUE(module.ok()) << module.status();
  absl::StatusOr<BufferPlan> plan = PlanBuffers(*(*module)->entry_computation());
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *plan;
}

// No two arena buffers with overlapping live ranges overlap in bytes.
void ExpectNoConflicts(const BufferPlan& plan) {
  for (size_t a = 0; a < plan.buffers.size(); ++a) {
    for (size_t b = a + 1; b < plan.buffers.size(); ++b) {
      const PlannedBuffer& x = plan.buffers[a];
      const PlannedBuffer& y = plan.buffers[b];
      if (x.kind != BufferKind::kArena || y.kind != BufferKind::kArena || !x.bytes || !y.bytes) {
        continue;
      }
      const bool live_together = x.first <= y.last && y.first <= x.last;
      const bool share = x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
      EXPECT_FALSE(live_together && share) << "buffers " << a << " and " << b;
    }
  }
}

TEST(BufferPlanTest, ChainReusesDeadBuffers) {
  const BufferPlan plan = Plan(R"(HloModule m
ENTRY e {
  p = f32[1024] parameter(0)
  a = f32[1024] reverse(p), dimensions={0}
  b = f32[1024] reverse(a), dimensions={0}
  c = f32[1024] reverse(b), dimensions={0}
  d = f32[1024] reverse(c), dimensions={0}
  ROOT r = f32[1024] reverse(d), dimensions={0}
})");
  // a..d are arena buffers of 4 KiB; at most two are live at once.
  EXPECT_EQ(plan.unshared_bytes, 4 * 4096);
  EXPECT_EQ(plan.arena_bytes, 2 * 4096);
  EXPECT_EQ(plan.buffers[plan.leaves[0][0]].kind, BufferKind::kParameter);
  EXPECT_EQ(plan.buffers[plan.leaves[5][0]].kind, BufferKind::kOutput);
  ExpectNoConflicts(plan);
}

TEST(BufferPlanTest, AliasesExtendLiveRanges) {
  const BufferPlan plan = Plan(R"(HloModule m
ENTRY e {
  p = f32[256] parameter(0)
  a = f32[256] exponential(p)
  t = (f32[256], f32[256]) tuple(a, p)
  r = f32[16,16] reshape(a)
  b = f32[256] negate(p)
  g = f32[256] get-tuple-element(t), index=0
  c = f32[256] add(g, b)
  ROOT o = f32[16,16] transpose(r), dimensions={1,0}
})");
  // The tuple, reshape and get-tuple-element name a's buffer: it lives until o (index 7).
  const int64_t a = plan.leaves[1][0];
  EXPECT_EQ(plan.leaves[2][0], a);
  EXPECT_EQ(plan.leaves[3][0], a);
  EXPECT_EQ(plan.leaves[5][0], a);
  EXPECT_EQ(plan.buffers[a].last, 7);
  EXPECT_EQ(plan.leaves[2][1], plan.leaves[0][0]);  // The tuple's second leaf is p.
  ExpectNoConflicts(plan);
}

TEST(BufferPlanTest, RootLeavesAreOutputsAndConstantsStayOut) {
  const BufferPlan plan = Plan(R"(HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  k = f32[8] constant({1,2,3,4,5,6,7,8})
  a = f32[8] add(p, k)
  ROOT t = (f32[8], f32[8]) tuple(a, k)
})");
  EXPECT_EQ(plan.buffers[plan.leaves[1][0]].kind, BufferKind::kConstant);
  EXPECT_EQ(plan.buffers[plan.leaves[2][0]].kind, BufferKind::kOutput);
  EXPECT_EQ(plan.arena_bytes, 0);
}

// Updates write into an operand buffer that nothing reads afterwards, under any name; never into
// an argument, a constant, or a buffer read later or by another operand.
TEST(BufferPlanTest, InPlaceUpdatesReuseOperandsReadLast) {
  const BufferPlan plan = Plan(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[64] parameter(0)
  u = f32[8] parameter(1)
  i = s32[] constant(3)
  n = f32[64] negate(p)
  d1 = f32[64] dynamic-update-slice(n, u, i)
  x = f32[64] exponential(p)
  r = f32[64] reshape(x)
  d2 = f32[64] dynamic-update-slice(x, u, i)
  m = f32[64] multiply(r, d2)
  d3 = f32[64] dynamic-update-slice(p, u, i)
  idx = s32[2,1] constant({{1},{5}})
  v = f32[2] slice(d1), slice={[0:2]}
  s = f32[64] scatter(d1, idx, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  y = f32[64] tanh(p)
  c = f32[64] copy(y)
  d4 = f32[64] dynamic-update-slice(y, c, i)
  ROOT t = (f32[64], f32[64], f32[64], f32[64]) tuple(s, m, d3, d4)
})");
  const auto buffer = [&](int64_t instr) { return plan.leaves[instr][0]; };
  EXPECT_EQ(buffer(4), buffer(3)) << "d1 writes into n";
  EXPECT_NE(buffer(7), buffer(5)) << "x is read after d2 (through r)";
  EXPECT_NE(buffer(9), buffer(0)) << "never into an argument";
  EXPECT_EQ(buffer(12), buffer(3)) << "the scatter writes into d1, read last there";
  EXPECT_NE(buffer(15), buffer(13)) << "the update reads y's buffer (copy aliases)";
  ExpectNoConflicts(plan);
}

TEST(BufferPlanTest, WhileStateReusesInitialLeavesReadLast) {
  const BufferPlan plan = Plan(R"(HloModule m
cond {
  p = (f32[16], f32[16]) parameter(0)
  ROOT c = pred[] constant(false)
}
body {
  ROOT p = (f32[16], f32[16]) parameter(0)
}
ENTRY e {
  x = f32[16] parameter(0)
  a = f32[16] negate(x)
  b = f32[16] exponential(x)
  init = (f32[16], f32[16]) tuple(a, b)
  w = (f32[16], f32[16]) while(init), condition=cond, body=body
  ROOT t = ((f32[16], f32[16]), f32[16]) tuple(w, b)
})");
  EXPECT_EQ(plan.leaves[4][0], plan.leaves[1][0]) << "the state's first leaf is a's buffer";
  EXPECT_NE(plan.leaves[4][1], plan.leaves[2][0]) << "b is read after the loop";
  ExpectNoConflicts(plan);
}

// A state leaf the body returns unchanged stays in the initial value's buffer, even an
// argument's that is read after the loop; a leaf the body changes gets its own.
TEST(BufferPlanTest, WhileStateKeepsForwardedLeavesWhereTheyAre) {
  const BufferPlan plan = Plan(R"(HloModule m
cond {
  p = (f32[16], f32[16]) parameter(0)
  ROOT c = pred[] constant(false)
}
body {
  p = (f32[16], f32[16]) parameter(0)
  a = f32[16] get-tuple-element(p), index=0
  x = f32[16] get-tuple-element(p), index=1
  s = f32[16] add(a, x)
  ROOT t = (f32[16], f32[16]) tuple(s, x)
}
ENTRY e {
  x = f32[16] parameter(0)
  init = (f32[16], f32[16]) tuple(x, x)
  w = (f32[16], f32[16]) while(init), condition=cond, body=body
  ROOT t = ((f32[16], f32[16]), f32[16]) tuple(w, x)
})");
  EXPECT_NE(plan.leaves[2][0], plan.leaves[0][0]) << "the body changes leaf 0";
  EXPECT_EQ(plan.leaves[2][1], plan.leaves[0][0]) << "leaf 1 is forwarded";
  ExpectNoConflicts(plan);
}

}  // namespace
}  // namespace cuda
}  // namespace runtime

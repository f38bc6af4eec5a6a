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
  a = f32[1024] exponential(p)
  b = f32[1024] negate(a)
  c = f32[1024] tanh(b)
  d = f32[1024] sine(c)
  ROOT r = f32[1024] cosine(d)
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
  ROOT o = f32[16,16] add(r, r)
})");
  // The tuple, reshape and get-tuple-element name a's buffer: it lives until c (index 6).
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

}  // namespace
}  // namespace cuda
}  // namespace runtime

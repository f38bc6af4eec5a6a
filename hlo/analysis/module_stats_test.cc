// Statistics with hand-computed expectations. Each module's comment derives the numbers from
// the contract's formulas (S the per-device buffer, g the largest replica group).
#include "hlo/analysis/module_stats.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "hlo/analysis/collectives.h"
#include "hlo/analysis/executed_instructions.h"
#include "hlo/analysis/peak_memory.h"
#include "hlo/parser/hlo_parser.h"

namespace hlo {
namespace {

// Every kind, synchronous, 4 devices; a counted loop (5 iterations, found from its pattern)
// holds one collective-permute.
//   ag  S_out = 8*64*4 = 2048, g=4: 1536       ar  S = 2048, g=2: 2*2048/2 = 2048
//   rs  S_in = 2048, g=4: 1536                 a2a S = 2*64*4 = 512, no groups so g=4: 384
//   cp  pairs {0,0},{1,1} move nothing: 0      loop cp S = 128*4 = 512, 5 times: 2560
constexpr char kEveryCollective[] = R"(HloModule every_collective, num_partitions=4

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[128] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[128] collective-permute(x), channel_id=6, source_target_pairs={{0,1},{1,0},{2,2}}
  ROOT t = (s32[], f32[128]) tuple(i1, y)
}

ENTRY main {
  x = f32[8,16] parameter(0)
  ag = f32[8,64] all-gather(x), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={1}
  ar = f32[8,64] all-reduce(ag), channel_id=2, replica_groups={{0,1},{2,3}}, to_apply=sum
  rs = f32[2,64] reduce-scatter(ar), channel_id=3, replica_groups=[1,4]<=[4], dimensions={0}, to_apply=sum
  a2a = f32[2,64] all-to-all(rs), channel_id=4, dimensions={1}
  cp = f32[2,64] collective-permute(a2a), channel_id=5, source_target_pairs={{0,0},{1,1}}
  flat = f32[128] reshape(cp)
  zero = s32[] constant(0)
  init = (s32[], f32[128]) tuple(zero, flat)
  ROOT w = (s32[], f32[128]) while(init), condition=cond, body=body
}
)";

std::unique_ptr<HloModule> Parse(const char* text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

const CollectiveStats& Of(const ModuleStats& s, CollectiveKind kind) {
  return s.collectives[static_cast<int>(kind)];
}

TEST(ModuleStatsTest, EveryCollectiveKindHandComputed) {
  std::unique_ptr<HloModule> m = Parse(kEveryCollective);
  ASSERT_NE(m, nullptr);
  const ModuleStats s = ComputeModuleStats(*m);
  EXPECT_EQ(Of(s, CollectiveKind::kAllGather).count, 1);
  EXPECT_EQ(Of(s, CollectiveKind::kAllGather).bytes, 1536);
  EXPECT_EQ(Of(s, CollectiveKind::kAllReduce).bytes, 2048);
  EXPECT_EQ(Of(s, CollectiveKind::kReduceScatter).bytes, 1536);
  EXPECT_EQ(Of(s, CollectiveKind::kAllToAll).bytes, 384);
  EXPECT_EQ(Of(s, CollectiveKind::kCollectivePermute).count, 6);
  EXPECT_EQ(Of(s, CollectiveKind::kCollectivePermute).bytes, 2560);
  EXPECT_EQ(s.comm_bytes, 1536 + 2048 + 1536 + 384 + 2560);
  // Entry 10, cond 4, body 7; sum (a combiner) is not visited.
  EXPECT_EQ(s.instructions_after, 21);
  // Body's s32 add runs 5 times; nothing else computes.
  EXPECT_EQ(s.flops, 5);
}

// The loop's collective-permute feeds only the root tuple: the next iteration reads it.
TEST(ModuleStatsTest, LoopCarriedCollectivesAreListedPerIteration) {
  std::unique_ptr<HloModule> m = Parse(kEveryCollective);
  ASSERT_NE(m, nullptr);
  const ModuleStats s = ComputeModuleStats(*m);
  ASSERT_EQ(s.loop_overlaps.size(), 1u);
  EXPECT_EQ(s.loop_overlaps[0].iterations, 5);
  EXPECT_EQ(s.loop_overlaps[0].flops, 1);  // The counter's add.
  EXPECT_EQ(s.loop_overlaps[0].carried_collectives, 1);
  EXPECT_EQ(s.loop_overlaps[0].carried_bytes, 512);  // f32[128]; the entry's permute is to self.
}

// JAX's fori_loop over a shard_map body: the permute sits in a computation the body calls, and
// reaches the body's root through the call's tuple.
TEST(ModuleStatsTest, LoopCarriedCollectivesInsideACalledComputation) {
  std::unique_ptr<HloModule> m = Parse(R"(HloModule m, num_partitions=2
step {
  x = f32[128] parameter(0)
  n = f32[128] negate(x)
  y = f32[128] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,0}}
  ROOT t = (f32[128], f32[128]) tuple(n, y)
}
cond {
  p = (s32[], f32[128], f32[128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
body {
  p = (s32[], f32[128], f32[128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[128] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  c = (f32[128], f32[128]) call(x), to_apply=step
  n = f32[128] get-tuple-element(c), index=0
  y = f32[128] get-tuple-element(c), index=1
  ROOT t = (s32[], f32[128], f32[128]) tuple(i1, n, y)
}
ENTRY main {
  x = f32[128] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[128], f32[128]) tuple(zero, x, x)
  ROOT w = (s32[], f32[128], f32[128]) while(init), condition=cond, body=body
})");
  ASSERT_NE(m, nullptr);
  const ModuleStats s = ComputeModuleStats(*m);
  ASSERT_EQ(s.loop_overlaps.size(), 1u);
  EXPECT_EQ(s.loop_overlaps[0].iterations, 3);
  EXPECT_EQ(s.loop_overlaps[0].flops, 128);  // The call's negate; the counter is elsewhere.
  EXPECT_EQ(s.loop_overlaps[0].carried_collectives, 1);
  EXPECT_EQ(s.loop_overlaps[0].carried_bytes, 512);
}

// A sum all-reduced for the next iteration, which needs it at once: nothing overlaps it (the
// dot it reduces runs before it, and the next dot reads it).
TEST(ModuleStatsTest, ACarriedCollectiveTheNextIterationWaitsForOverlapsNothing) {
  std::unique_ptr<HloModule> m = Parse(R"(HloModule m, num_partitions=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  p = (f32[8,8], f32[8,8]) parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  p = (f32[8,8], f32[8,8]) parameter(0)
  w = f32[8,8] get-tuple-element(p), index=0
  x = f32[8,8] get-tuple-element(p), index=1
  y = f32[8,8] dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[8,8] all-reduce(y), channel_id=1, replica_groups={{0,1}}, to_apply=sum
  ROOT t = (f32[8,8], f32[8,8]) tuple(w, g)
}
ENTRY main {
  w = f32[8,8] parameter(0)
  x = f32[8,8] parameter(1)
  init = (f32[8,8], f32[8,8]) tuple(w, x)
  ROOT l = (f32[8,8], f32[8,8]) while(init), condition=cond, body=body
})");
  ASSERT_NE(m, nullptr);
  const ModuleStats s = ComputeModuleStats(*m);
  ASSERT_EQ(s.loop_overlaps.size(), 1u);
  EXPECT_EQ(s.loop_overlaps[0].carried_collectives, 1);
  EXPECT_EQ(s.loop_overlaps[0].flops, 0);
}

TEST(ModuleStatsTest, TripCountFromPatternAndBackendConfig) {
  std::unique_ptr<HloModule> m = Parse(kEveryCollective);
  ASSERT_NE(m, nullptr);
  const HloInstruction* loop = m->entry_computation()->root_instruction();
  EXPECT_EQ(StaticTripCount(*loop), 5);
  HloInstruction* mutable_loop = m->entry_computation()->root_instruction();
  mutable_loop->mutable_attrs()->backend_config = R"({"known_trip_count":{"n":"12"}})";
  EXPECT_EQ(StaticTripCount(*loop), 12);
}

// XLA's partitioned dumps (CPU pipeline) copy the counter, the bound and the step: the
// pattern reads through copies (the JAX probe's scan counted its loop once in XLA's program).
TEST(ModuleStatsTest, TripCountReadsThroughCopies) {
  std::string text = kEveryCollective;
  text.replace(text.find("ROOT lt = pred[] compare(i, n)"), 30,
               "ci = s32[] copy(i)\n  cn = s32[] copy(n)\n  ROOT lt = pred[] compare(ci, cn)");
  text.replace(text.find("i1 = s32[] add(i, one)"), 22,
               "c1 = s32[] copy(one)\n  a1 = s32[] add(i, c1)\n  i1 = s32[] copy(a1)");
  text.replace(text.find("init = (s32[], f32[128]) tuple(zero, flat)"), 42,
               "z = s32[] copy(zero)\n  init = (s32[], f32[128]) tuple(z, flat)");
  std::unique_ptr<HloModule> m = Parse(text.c_str());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(StaticTripCount(*m->entry_computation()->root_instruction()), 5);
}

TEST(ModuleStatsTest, UnknownTripCountCountsOnce) {
  std::string text = kEveryCollective;
  // A step of 2 is not the counted-loop pattern.
  text.replace(text.find("one = s32[] constant(1)"), 23, "one = s32[] constant(2)");
  std::unique_ptr<HloModule> m = Parse(text.c_str());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(StaticTripCount(*m->entry_computation()->root_instruction()), std::nullopt);
  const ModuleStats s = ComputeModuleStats(*m);
  EXPECT_EQ(Of(s, CollectiveKind::kCollectivePermute).count, 2);
  EXPECT_EQ(Of(s, CollectiveKind::kCollectivePermute).bytes, 512);
}

// A generic async-start wrapping a computation: the inner all-gather counts once
// (S_out = 64, g = 4: 48), the -done not at all.
TEST(ModuleStatsTest, GenericAsyncStartCountsItsWrappedCollectiveOnce) {
  std::unique_ptr<HloModule> m = Parse(R"(HloModule async, num_partitions=4

wrapped {
  x = f32[4] parameter(0)
  ROOT ag = f32[16] all-gather(x), replica_groups={{0,1,2,3}}, dimensions={0}
}

ENTRY main {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[16], s32[]) async-start(p), calls=wrapped
  ROOT d = f32[16] async-done(s)
}
)");
  ASSERT_NE(m, nullptr);
  const ModuleStats s = ComputeModuleStats(*m);
  EXPECT_EQ(Of(s, CollectiveKind::kAllGather).count, 1);
  EXPECT_EQ(Of(s, CollectiveKind::kAllGather).bytes, 48);
  EXPECT_EQ(s.comm_bytes, 48);
}

// Peak: x (512) + ag (2048) + ar (2048) live together when ar is defined = 4608.
TEST(ModuleStatsTest, PeakMemoryFollowsLiveness) {
  std::unique_ptr<HloModule> m = Parse(kEveryCollective);
  ASSERT_NE(m, nullptr);
  const PeakMemory peak = ComputePeakMemory(*m->entry_computation());
  EXPECT_EQ(peak.bytes, 512 + 2048 + 2048);
  ASSERT_NE(peak.at, nullptr);
  EXPECT_EQ(peak.at->name(), "ar");
  ASSERT_EQ(peak.live.size(), 3u);
  EXPECT_EQ(peak.live.back()->opcode(), HloOpcode::kParameter);  // x, the smallest.
}

// Updates write into operand buffers nothing reads later, as XLA's buffer assignment does:
// d1 reuses n (4096 B), w reuses a; d2 copies because x is read after it, d3 because p is an
// argument; the elementwise m and a write into x and m. Live at d2: p, d1 (n's bytes), x, d2 =
// 4 * 4096 (5 if d1 copied), with u and i.
TEST(ModuleStatsTest, PeakMemoryCountsInPlaceUpdatesOnce) {
  std::unique_ptr<HloModule> m = Parse(R"(HloModule m
cond {
  s = (f32[1024]) parameter(0)
  ROOT c = pred[] constant(false)
}
body {
  ROOT s = (f32[1024]) parameter(0)
}
ENTRY e {
  p = f32[1024] parameter(0)
  u = f32[8] constant({1,2,3,4,5,6,7,8})
  i = s32[] constant(3)
  n = f32[1024] negate(p)
  d1 = f32[1024] dynamic-update-slice(n, u, i)
  x = f32[1024] exponential(p)
  d2 = f32[1024] dynamic-update-slice(x, u, i)
  m = f32[1024] multiply(x, d2)
  d3 = f32[1024] dynamic-update-slice(p, u, i)
  a = f32[1024] add(m, d3)
  t = (f32[1024]) tuple(a)
  w = (f32[1024]) while(t), condition=cond, body=body
  g = f32[1024] get-tuple-element(w), index=0
  ROOT r = (f32[1024], f32[1024]) tuple(g, d1)
}
)");
  ASSERT_NE(m, nullptr);
  const PeakMemory peak = ComputePeakMemory(*m->entry_computation());
  EXPECT_EQ(peak.bytes, 4 * 4096 + 32 + 4);
  ASSERT_NE(peak.at, nullptr);
  EXPECT_EQ(peak.at->name(), "d2");
  ASSERT_EQ(peak.live.size(), peak.live_allocated.size());
  for (size_t k = 0; k < peak.live.size(); ++k) {
    EXPECT_NE(peak.live[k]->name(), "d1") << "d1 allocates nothing: it writes into n";
  }
  EXPECT_EQ(peak.live_bytes.back(), peak.live_bytes[peak.live_bytes.size() - 4])
      << "the loop writes into a's buffer";
}

// A sort writes each result leaf into its operand's buffer when it reads that buffer last (XLA's
// dataflow analysis shares them): sorting the negate and the iota allocates nothing more. The
// second sort reads the argument p, which it may not overwrite, and allocates its 4096 bytes.
TEST(ModuleStatsTest, PeakMemorySortsInPlace) {
  std::unique_ptr<HloModule> m = Parse(R"(HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT l = pred[] compare(a, b), direction=LT
}
lt1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT l = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[1024] parameter(0)
  n = f32[1024] negate(p)
  i = s32[1024] iota(), iota_dimension=0
  s = (f32[1024], s32[1024]) sort(n, i), dimensions={0}, to_apply=lt
  k = f32[1024] sort(p), dimensions={0}, to_apply=lt1
  ROOT r = ((f32[1024], s32[1024]), f32[1024]) tuple(s, k)
}
)");
  ASSERT_NE(m, nullptr);
  const PeakMemory peak = ComputePeakMemory(*m->entry_computation());
  EXPECT_EQ(peak.bytes, 4 * 4096) << "p, n, i (the sorted pair in place), k";
}

// A copy of a tuple is shallow, as XLA's: its elements stay its operand's buffers.
TEST(ModuleStatsTest, PeakMemoryTupleCopyIsShallow) {
  std::unique_ptr<HloModule> m = Parse(R"(HloModule m
ENTRY e {
  p = f32[1024] parameter(0)
  n = f32[1024] negate(p)
  t = (f32[1024], f32[1024]) tuple(n, n)
  ROOT c = (f32[1024], f32[1024]) copy(t)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ComputePeakMemory(*m->entry_computation()).bytes, 2 * 4096) << "p and n";
}

// A loop's state elements its body returns unchanged stay in the initial buffers (here the
// arguments): the while allocates only the element it changes. Peak at w: p, q, w's 4096.
TEST(ModuleStatsTest, PeakMemoryKeepsForwardedLoopStateInPlace) {
  std::unique_ptr<HloModule> m = Parse(R"(HloModule m
cond {
  s = (f32[1024], f32[1024], f32[1024]) parameter(0)
  ROOT c = pred[] constant(false)
}
body {
  s = (f32[1024], f32[1024], f32[1024]) parameter(0)
  a = f32[1024] get-tuple-element(s), index=0
  b = f32[1024] get-tuple-element(s), index=1
  c = f32[1024] get-tuple-element(s), index=2
  n = f32[1024] add(a, b)
  ROOT t = (f32[1024], f32[1024], f32[1024]) tuple(n, b, c)
}
ENTRY e {
  p = f32[1024] parameter(0)
  q = f32[1024] parameter(1)
  t = (f32[1024], f32[1024], f32[1024]) tuple(p, q, p)
  ROOT w = (f32[1024], f32[1024], f32[1024]) while(t), condition=cond, body=body
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ComputePeakMemory(*m->entry_computation()).bytes, 3 * 4096);
}

TEST(ModuleStatsTest, CollectiveListHasGroupsAndExecutions) {
  std::unique_ptr<HloModule> m = Parse(kEveryCollective);
  ASSERT_NE(m, nullptr);
  const std::vector<CollectiveRecord> list = ListCollectives(*m);
  ASSERT_EQ(list.size(), 6u);
  EXPECT_EQ(list[2].instr->name(), "rs");
  EXPECT_EQ(DescribeGroups(*list[2].instr), "[1,4]<=[4]");
  EXPECT_EQ(list[2].group_size, 4);
  EXPECT_EQ(list[5].executions, 5);
  EXPECT_EQ(list[5].bytes, 512);
  EXPECT_EQ(DescribeGroups(*list[5].instr), "{{0,1},{1,0},{2,2}}");
  EXPECT_EQ(CollectiveKindName(list[3].kind), "all-to-all");
}

}  // namespace
}  // namespace hlo

namespace hlo {
namespace {

// JSON has no inf or nan: such times are null, and the fallback counts appear.
TEST(ModuleStatsJsonTest, NonFiniteNumbersAreNullAndFallbacksAreListed) {
  ModuleStats stats;
  stats.estimated_step_time_us = std::numeric_limits<double>::infinity();
  stats.time_ms_partition = std::nan("");
  stats.replicated_fallbacks = 2;
  stats.replicated_fallback_bytes = 96;
  const std::string json = StatsToJson(stats);
  EXPECT_NE(json.find("\"estimated_step_time_us\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"partition\": null"), std::string::npos) << json;
  EXPECT_EQ(json.find("inf"), std::string::npos) << json;
  EXPECT_EQ(json.find("nan"), std::string::npos) << json;
  EXPECT_NE(json.find("\"replicated_fallbacks\": {\"count\": 2, \"bytes\": 96}"), std::string::npos)
      << json;
}

// Text statistics are in human units; the JSON carries the key only when set.
TEST(ModuleStatsTextTest, HumanUnitsAndKey) {
  EXPECT_EQ(HumanBytes(512), "512 bytes");
  EXPECT_EQ(HumanBytes(2048), "2.0 KiB");
  EXPECT_EQ(HumanBytes(33554432), "32.0 MiB");
  EXPECT_EQ(HumanFlops(5), "5 FLOP");
  EXPECT_EQ(HumanFlops(137438953472.0), "137.4 GFLOP");
  ModuleStats stats;
  stats.flops = 137438953472;
  stats.comm_bytes = 33554432;
  stats.peak_memory_bytes = 1536;
  EXPECT_NE(StatsToText(stats).find("per device: 137.4 GFLOP, 32.0 MiB received, peak memory "
                                    "1.5 KiB\n"),
            std::string::npos)
      << StatsToText(stats);
  EXPECT_EQ(StatsToJson(stats).find("\"key\""), std::string::npos);
  stats.input = "./m/../a.hlo";
  stats.key = "a.hlo";
  EXPECT_NE(StatsToJson(stats).find("\"input\": \"./m/../a.hlo\", \"key\": \"a.hlo\", "),
            std::string::npos);
}

// A call runs its callee's instructions while the caller's values stay live: the callee's own
// temporaries (a 1.6 MB broadcast reduced to 16 bytes) count at the call, not only the bytes
// the call returns. Its parameters are the caller's operands and count once.
TEST(PeakMemoryTest, CalleeTemporariesCountAtTheCall) {
  std::unique_ptr<HloModule> m = Parse(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
big {
  p = f32[4] parameter(0)
  b = f32[4,100000] broadcast(p), dimensions={0}
  c = f32[4,100000] exponential(b)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(c, z), dimensions={1}, to_apply=add
}
ENTRY main {
  a = f32[4] parameter(0)
  k = f32[4] call(a), to_apply=big
  ROOT n = f32[4] negate(k)
}
)");
  ASSERT_NE(m, nullptr);
  const PeakMemory callee = ComputePeakMemory(*m->GetComputation("big"));
  const PeakMemory peak = ComputePeakMemory(*m->entry_computation());
  EXPECT_GE(callee.bytes, 4 * 100000 * 4);
  // The caller's argument (16 B) plus the callee's peak less its parameter (the same 16 B).
  EXPECT_EQ(peak.bytes, callee.bytes);
  ASSERT_NE(peak.at, nullptr);
  EXPECT_EQ(peak.at->name(), "k");
}

}  // namespace
}  // namespace hlo

// The point evaluator must give, element for element, what the CPU executor computes: every
// element of each test module's output is asked for (in a shuffled order, in two halves, so
// memoized and fresh elements mix) and compared with the executor's run on the same random
// arguments -- on one device, and for SPMD programs with collectives on every simulated device.
#include "runtime/cpu/point_evaluator.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/literal.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/common/tuple_leaves.h"
#include "runtime/cpu/compare.h"
#include "runtime/cpu/multi_device_runner.h"
#include "runtime/cpu/point_elements.h"
#include "runtime/cpu/verify.h"

namespace runtime {
namespace {

using hlo::Literal;

// Arguments held in full: args[device][parameter] (device -1 reads args[0]).
class LiteralArguments : public ArgumentSource {
 public:
  explicit LiteralArguments(const std::vector<std::vector<Literal>>& args) : args_(args) {}
  absl::Status Fill(int64_t parameter, int64_t leaf, int64_t device,
                    absl::Span<const int64_t> indices, Literal& out) const override {
    const Literal& all = args_[std::max<int64_t>(0, device)][parameter];
    const Literal& value = LeafOf(all, LeafIndices(all.shape()).at(leaf));
    const int width = hlo::ByteWidth(value.shape().element_type());
    for (size_t i = 0; i < indices.size(); ++i) {
      points::SetBits(out, static_cast<int64_t>(i), width, points::BitsAt(value, indices[i], width));
    }
    return absl::OkStatus();
  }

 private:
  const std::vector<std::vector<Literal>>& args_;
};

// Asks `evaluator` for every element of every root leaf on `device` and compares them with
// `expected` (the executor's result on that device).
void ExpectSameElements(PointEvaluator& evaluator, int64_t device, const Literal& expected,
                        const Tolerance& tolerance) {
  const std::vector<hlo::ShapeIndex> leaves = LeafIndices(expected.shape());
  for (size_t k = 0; k < leaves.size(); ++k) {
    const Literal& want = LeafOf(expected, leaves[k]);
    std::vector<int64_t> order(want.element_count());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(k + 7)));
    const size_t half = order.size() / 2;
    Literal got(want.shape());
    const int width = hlo::ByteWidth(want.shape().element_type());
    for (auto part : {absl::MakeSpan(order).subspan(0, half), absl::MakeSpan(order).subspan(half)}) {
      absl::StatusOr<Literal> values =
          evaluator.EntryRootElements(device, static_cast<int64_t>(k), part);
      ASSERT_TRUE(values.ok()) << values.status();
      for (size_t i = 0; i < part.size(); ++i) {
        points::SetBits(got, part[i], width, points::BitsAt(*values, static_cast<int64_t>(i), width));
      }
    }
    const ArrayComparison c = CompareArrays(want, got, tolerance);
    EXPECT_TRUE(c.ok()) << "device " << device << " leaf " << k << ": " << c.mismatches
                        << " mismatches, first at " << FormatIndex(c.first_mismatch)
                        << ": expected " << c.expected_value << ", got " << c.actual_value;
  }
}

// One device: the point evaluator against Evaluator::RunEntry.
// `reduce_block`: PointEvaluator::set_reduce_block's value (0: the default).
void CheckOneDevice(const std::string& text, Tolerance tolerance = {}, int64_t reduce_block = 0) {
  SCOPED_TRACE(text);
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<std::vector<Literal>> args = {RandomArguments(**module, 5)};
  absl::StatusOr<std::vector<Literal>> expected = RunOnDevices(**module, {args[0]}, {});
  ASSERT_TRUE(expected.ok()) << expected.status();
  LiteralArguments source(args);
  PointEvaluator evaluator(**module, source, 1);
  if (reduce_block > 0) evaluator.set_reduce_block(reduce_block);
  ExpectSameElements(evaluator, -1, expected->front(), tolerance);
}

// N devices with their own random arguments: the point evaluator against RunOnDevices.
void CheckDevices(const std::string& text, int64_t devices) {
  SCOPED_TRACE(text);
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < devices; ++d) args.push_back(RandomArguments(**module, 100 + d));
  MultiDeviceOptions options;
  options.num_partitions = devices;
  absl::StatusOr<std::vector<Literal>> expected = RunOnDevices(**module, args, options);
  ASSERT_TRUE(expected.ok()) << expected.status();
  LiteralArguments source(args);
  PointEvaluator evaluator(**module, source, devices);
  for (int64_t d = 0; d < devices; ++d) {
    ExpectSameElements(evaluator, d, (*expected)[d], {1e-5, 1e-5});
  }
}

TEST(PointEvaluatorTest, DataMovement) {
  CheckOneDevice(R"(
HloModule m
ENTRY e {
  p = f32[4,6] parameter(0)
  t = f32[6,4] transpose(p), dimensions={1,0}
  r = f32[3,8] reshape(t)
  b = f32[2,3,8] broadcast(r), dimensions={1,2}
  s = f32[2,2,3] slice(b), slice={[0:2], [1:3], [1:8:3]}
  v = f32[2,2,3] reverse(s), dimensions={0,2}
  z = f32[] constant(-7)
  pd = f32[3,4,4] pad(v, z), padding=1_0_0x-1_2_1x0_1
  bz = f32[3,4,1] broadcast(z), dimensions={}
  c = f32[3,4,9] concatenate(pd, pd, bz), dimensions={2}
  ROOT out = (f32[3,4,9], f32[6,4]) tuple(c, t)
})");
}

TEST(PointEvaluatorTest, DynamicSlicesClampTheirStarts) {
  CheckOneDevice(R"(
HloModule m
ENTRY e {
  p = f32[8,6] parameter(0)
  u = f32[3,2] parameter(1)
  i = s32[] constant(7)
  j = s32[] constant(-2)
  k = s32[] constant(2)
  ds = f32[3,2] dynamic-slice(p, i, j), dynamic_slice_sizes={3,2}
  dus = f32[8,6] dynamic-update-slice(p, u, k, i)
  ROOT out = (f32[3,2], f32[8,6]) tuple(ds, dus)
})");
}

TEST(PointEvaluatorTest, ArithmeticGoesThroughTheExecutorsHandlers) {
  CheckOneDevice(R"(
HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
argmax {
  a = f32[] parameter(0)  i = s32[] parameter(1)  b = f32[] parameter(2)  j = s32[] parameter(3)
  ge = pred[] compare(a, b), direction=GE
  ROOT r = (f32[], s32[]) tuple(f32[] select(ge, a, b), s32[] select(ge, i, j))
}
less { a = f32[] parameter(0)  b = f32[] parameter(1)  i = s32[] parameter(2)  j = s32[] parameter(3)
       ROOT lt = pred[] compare(a, b), direction=LT }
ENTRY e {
  x = f32[2,3,5] parameter(0)
  y = f32[2,5,4] parameter(1)
  d = f32[2,3,4] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  c = f32[2,3,4] clamp(lo, d, hi)
  e = f32[2,3,4] exponential(c)
  cv = bf16[2,3,4] convert(e)
  zero = f32[] constant(0)
  sum = f32[3] reduce(d, zero), dimensions={0,2}, to_apply=add
  io = s32[2,3,4] iota(), iota_dimension=2
  ninf = f32[] constant(-inf)
  izero = s32[] constant(0)
  am = (f32[2,3], s32[2,3]) reduce(d, io, ninf, izero), dimensions={2}, to_apply=argmax
  st = (f32[2,3,4], s32[2,3,4]) sort(d, io), dimensions={2}, to_apply=less
  ROOT out = (bf16[2,3,4], f32[3], (f32[2,3], s32[2,3]), (f32[2,3,4], s32[2,3,4])) tuple(cv, sum, am, st)
})", {1e-5, 1e-5});
}

// Reductions over more than the reduce block (here 1000 operand elements) run in pieces: a sum
// of a whole array (blocks, each one's result the next one's initial value: an initial value
// that is not the identity is added once, as the executor adds it), column sums and a
// variadic argmax (groups of columns). The executor's order of operations, so exactly its
// results.
TEST(PointEvaluatorTest, LargeReductionsRunBlockByBlock) {
  CheckOneDevice(R"(
HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
argmax {
  a = f32[] parameter(0)  i = s32[] parameter(1)  b = f32[] parameter(2)  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  ROOT r = (f32[], s32[]) tuple(f32[] select(pick, a, b), s32[] select(pick, i, j))
}
ENTRY e {
  x = f32[48,70] parameter(0)
  zero = f32[] constant(0)
  offset = f32[] constant(1.5)
  all = f32[] reduce(x, offset), dimensions={0,1}, to_apply=add
  cols = f32[70] reduce(x, zero), dimensions={0}, to_apply=add
  io = s32[48,70] iota(), iota_dimension=0
  ninf = f32[] constant(-inf)
  izero = s32[] constant(0)
  am = (f32[70], s32[70]) reduce(x, io, ninf, izero), dimensions={0}, to_apply=argmax
  ROOT out = (f32[], f32[70], (f32[70], s32[70])) tuple(all, cols, am)
})", {}, /*reduce_block=*/1000);
}

// topk needs the whole last-dim row of each asked element, like sort.
TEST(PointEvaluatorTest, TopKReadsWholeRows) {
  CheckOneDevice(R"(
HloModule m
ENTRY e {
  x = f32[2,3,7] parameter(0)
  big = (f32[2,3,3], s32[2,3,3]) topk(x), k=3
  y = s32[4,5] parameter(1)
  small = (s32[4,2], s32[4,2]) topk(y), k=2, largest=false
  ROOT out = ((f32[2,3,3], s32[2,3,3]), (s32[4,2], s32[4,2])) tuple(big, small)
})");
}

TEST(PointEvaluatorTest, ControlFlow) {
  CheckOneDevice(R"(
HloModule m
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  w = f32[4] add(v, v)
  r = f32[4] reverse(w), dimensions={0}
  ROOT n = (s32[], f32[4]) tuple(s32[] add(i, one), r)
}
cond { s = (s32[], f32[4]) parameter(0)  i = s32[] get-tuple-element(s), index=0
       three = s32[] constant(3)  ROOT lt = pred[] compare(i, three), direction=LT }
yes { p = f32[4] parameter(0)  ROOT n = f32[4] negate(p) }
no { p = f32[4] parameter(0)  ROOT a = f32[4] abs(p) }
twice { p = f32[4] parameter(0)  ROOT m = f32[4] multiply(p, p) }
ENTRY e {
  x = f32[4] parameter(0)
  flag = pred[] parameter(1)
  zero = s32[] constant(0)
  loop = (s32[], f32[4]) while((s32[], f32[4]) tuple(zero, x)), condition=cond, body=body
  lv = f32[4] get-tuple-element(loop), index=1
  br = f32[4] conditional(flag, lv, x), true_computation=yes, false_computation=no
  ROOT c = f32[4] call(br), to_apply=twice
})");
}

TEST(PointEvaluatorTest, CollectivesOnEveryDevice) {
  CheckDevices(R"(
HloModule m, num_partitions=4
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  p = f32[4,6] parameter(0)
  ar = f32[4,6] all-reduce(p), channel_id=1, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=add
  ag = f32[16,6] all-gather(p), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  rs = f32[4,3] reduce-scatter(p), channel_id=3, replica_groups={{0,1},{2,3}}, dimensions={1}, use_global_device_ids=true, to_apply=add
  a2a = f32[4,6] all-to-all(p), channel_id=4, replica_groups={{0,1,2,3}}, dimensions={0}
  cp = f32[4,6] collective-permute(p), channel_id=5, source_target_pairs={{0,1},{1,2},{2,0}}
  id = u32[] partition-id()
  cb = f32[4,6] collective-broadcast(p), channel_id=6, replica_groups={{2,0},{3,1}}
  ROOT out = (f32[4,6], f32[16,6], f32[4,3], f32[4,6], f32[4,6], u32[], f32[4,6]) tuple(ar, ag, rs, a2a, cp, id, cb)
})",
               4);
}

// SPMDFullToShardShape and SPMDShardToFullShape as the executor runs them on each device
// (ops/manual_ops.h): uneven shards zero-padded, a region held by several devices read from
// the first, a partially manual operand bringing its device's tile.
TEST(PointEvaluatorTest, ManualConversionsMatchTheExecutor) {
  CheckDevices(R"(
HloModule m, num_partitions=4
ENTRY e {
  p = f32[7,6] parameter(0), sharding={devices=[4,1]<=[4]}
  m = f32[2,6] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={manual}
  n = f32[2,6] negate(m), sharding={manual}
  f = f32[7,6] custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]<=[4]}
  q = f32[6,4] parameter(1), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
  g = f32[6,2] custom-call(q), custom_call_target="SPMDFullToShardShape", sharding={manual}
  h = f32[6,4] custom-call(g), custom_call_target="SPMDShardToFullShape", sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
  r = f32[4,6] parameter(2), sharding={devices=[2,1,2]<=[4] last_tile_dims={manual}}
  s = f32[4,12] custom-call(r), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,2]<=[4]}
  ROOT out = (f32[2,6], f32[7,6], f32[6,4], f32[4,12]) tuple(n, f, h, s)
})",
               4);
}

TEST(PointEvaluatorTest, CollectivesInsideALoopMeetAtTheSameIteration) {
  CheckDevices(R"(
HloModule m, num_partitions=2
body {
  s = (s32[], f32[3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[3] get-tuple-element(s), index=1
  acc = f32[3] get-tuple-element(s), index=2
  next = f32[3] collective-permute(v), channel_id=1, source_target_pairs={{0,1},{1,0}}
  one = s32[] constant(1)
  ROOT n = (s32[], f32[3], f32[3]) tuple(s32[] add(i, one), next, f32[3] multiply(acc, next))
}
cond { s = (s32[], f32[3], f32[3]) parameter(0)  i = s32[] get-tuple-element(s), index=0
       two = s32[] constant(3)  ROOT lt = pred[] compare(i, two), direction=LT }
ENTRY e {
  x = f32[3] parameter(0)
  zero = s32[] constant(0)
  loop = (s32[], f32[3], f32[3]) while((s32[], f32[3], f32[3]) tuple(zero, x, x)), condition=cond, body=body
  ROOT r = f32[3] get-tuple-element(loop), index=2
})", 2);
}

// Scalar bodies for the indexed and window ops' tests: recognised combiners (typed loops in the
// executor) and bodies it calls per element.
constexpr char kBodies[] = R"(
HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
mul { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] multiply(a, b) }
odd { a = f32[] parameter(0)  b = f32[] parameter(1)  h = f32[] constant(0.5)
      ROOT s = f32[] add(f32[] multiply(a, h), b) }
put { a = f32[] parameter(0)  ROOT b = f32[] parameter(1) }
imax { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT m = s32[] maximum(a, b) }
argmax {
  a = f32[] parameter(0)  i = s32[] parameter(1)  b = f32[] parameter(2)  j = s32[] parameter(3)
  ge = pred[] compare(a, b), direction=GE
  ROOT r = (f32[], s32[]) tuple(f32[] select(ge, a, b), s32[] select(ge, i, j))
}
ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }
absless { a = f32[] parameter(0)  b = f32[] parameter(1)
          ROOT c = pred[] compare(f32[] abs(a), f32[] abs(b)), direction=LT }
)";

// Gather: clamped starts (random indices run from -8 to 7), an index vector in the middle, an
// implicit one of unsigned indices, batching dims.
TEST(PointEvaluatorTest, GatherClampsStartsLikeTheExecutor) {
  CheckOneDevice(std::string(kBodies) + R"(
ENTRY e {
  x = f32[6,5,4] parameter(0)
  i = s32[3,2] parameter(1)
  j = s32[2,3] parameter(2)
  k = u32[4] parameter(3)
  y = f32[3,6,2] parameter(4)
  b = s32[3,4,1] parameter(5)
  g1 = f32[3,2,4] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,1,4}
  g2 = f32[3,3] gather(x, j), offset_dims={1}, collapsed_slice_dims={0,2}, start_index_map={0,2}, index_vector_dim=0, slice_sizes={1,3,1}
  g3 = f32[4,5,4] gather(x, k), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,5,4}
  g4 = f32[3,4,2] gather(y, b), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,2}
  ROOT out = (f32[3,2,4], f32[3,3], f32[4,5,4], f32[3,4,2]) tuple(g1, g2, g3, g4)
})");
}

// Scatter: windows out of bounds dropped whole, duplicate indices combined in the executor's
// order (exactly: multiply, a body called per element, a variadic body), assign, batching dims.
TEST(PointEvaluatorTest, ScatterCombinesDuplicatesAndDropsOutOfBounds) {
  CheckOneDevice(std::string(kBodies) + R"(
ENTRY e {
  x = f32[6,4] parameter(0)
  i = s32[12,1] parameter(1)
  u = f32[12,4] parameter(2)
  d = s32[6,1] constant({ {1}, {3}, {1}, {-1}, {6}, {1} })
  v = f32[6,4] parameter(3)
  w = s32[4,1] parameter(4)
  u2 = f32[4,2,4] parameter(5)
  i2 = s32[9,2] parameter(6)
  u3 = f32[9] parameter(7)
  n = s32[6,4] parameter(8)
  y = f32[3,6] parameter(9)
  b = s32[3,5,1] parameter(10)
  u4 = f32[3,5] parameter(11)
  s1 = f32[6,4] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  s2 = f32[6,4] scatter(x, d, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mul
  s3 = f32[6,4] scatter(x, d, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=odd
  s4 = f32[6,4] scatter(x, w, u2), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  s5 = f32[6,4] scatter(x, i2, u3), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=put
  s6 = (f32[6,4], s32[6,4]) scatter(x, n, d, v, n), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=argmax
  s7 = f32[3,6] scatter(y, b, u4), update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=add
  ROOT out = (f32[6,4], f32[6,4], f32[6,4], f32[6,4], f32[6,4], (f32[6,4], s32[6,4]), f32[3,6]) tuple(s1, s2, s3, s4, s5, s6, s7)
})");
}

// Convolution: padding, lhs and rhs dilation, stride, reversal, feature and batch groups, and a
// dimension order other than b01f. Summation order differs from the executor's GEMM.
TEST(PointEvaluatorTest, ConvolutionWithPaddingDilationAndGroups) {
  CheckOneDevice(std::string(kBodies) + R"(
ENTRY e {
  x = f32[2,7,6,4] parameter(0)
  k = f32[3,3,4,6] parameter(1)
  c1 = f32[2,7,3,6] convolution(x, k), window={size=3x3 stride=2x1 pad=1_2x0_1 lhs_dilate=2x1 rhs_dilate=1x2 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f
  x2 = f32[1,5,5,4] parameter(2)
  k2 = f32[3,3,2,6] parameter(3)
  c2 = f32[1,5,5,6] convolution(x2, k2), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2
  x3 = f32[4,5,3] parameter(4)
  k3 = f32[2,3,6] parameter(5)
  c3 = f32[2,4,6] convolution(x3, k3), window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=2
  x4 = f32[3,2,6] parameter(6)
  k4 = f32[5,2,3] parameter(7)
  c4 = f32[5,2,2] convolution(x4, k4), window={size=2 pad=0_-1 stride=2}, dim_labels=fb0_o0i->f0b
  ROOT out = (f32[2,7,3,6], f32[1,5,5,6], f32[2,4,6], f32[5,2,2]) tuple(c1, c2, c3, c4)
})",
                 {1e-5, 1e-5});
}

// Reduce-window: padding (skipped, not folded: the init is not the identity), negative
// padding, base and window dilation, stride, a variadic argmax, a body called per element.
TEST(PointEvaluatorTest, ReduceWindowSkipsPaddingLikeTheExecutor) {
  CheckOneDevice(std::string(kBodies) + R"(
ENTRY e {
  x = f32[7,6] parameter(0)
  n = s32[7,6] parameter(1)
  c = f32[9] parameter(2)
  init = f32[] constant(1.5)
  lo = s32[] constant(-100)
  ninf = f32[] constant(-inf)
  r1 = f32[4,7] reduce-window(x, init), window={size=3x2 stride=2x2 pad=1_1x1_2 lhs_dilate=1x2}, to_apply=add
  r2 = f32[4,3] reduce-window(x, init), window={size=2x4 stride=1x3 pad=0_0x2_3 rhs_dilate=3x1}, to_apply=odd
  r3 = s32[5,6] reduce-window(n, lo), window={size=2x1 pad=-1_0x0_0}, to_apply=imax
  r4 = (f32[4,7], s32[4,7]) reduce-window(x, n, ninf, lo), window={size=3x2 stride=2x2 pad=1_1x1_2 lhs_dilate=1x2}, to_apply=argmax
  r5 = f32[9] reduce-window(c, init), window={size=9 pad=8_0}, to_apply=add
  ROOT out = (f32[4,7], f32[4,3], s32[5,6], (f32[4,7], s32[4,7]), f32[9]) tuple(r1, r2, r3, r4, r5)
})");
}

// Select-and-scatter: overlapping windows (stride < size) with padding, so an element is picked
// by several windows; a compare select with an add scatter and bodies called per element.
TEST(PointEvaluatorTest, SelectAndScatterFoldsEveryWindowThatPicksAnElement) {
  CheckOneDevice(std::string(kBodies) + R"(
ENTRY e {
  x = f32[7,6] parameter(0)
  s = f32[4,3] parameter(1)
  t = f32[7,2] parameter(2)
  z = f32[] constant(0)
  one = f32[] constant(1)
  ss1 = f32[7,6] select-and-scatter(x, s, z), window={size=3x3 stride=2x2 pad=1_1x1_1}, select=ge, scatter=add
  ss2 = f32[7,6] select-and-scatter(x, t, one), window={size=2x3 stride=1x3 pad=0_1x2_0}, select=absless, scatter=odd
  ROOT out = (f32[7,6], f32[7,6]) tuple(ss1, ss2)
})");
}

// fft needs each element's whole block of the trailing fft dims (lengths that are not powers
// of two included); get-dimension-size is the static size.
TEST(PointEvaluatorTest, FftReadsWholeBlocks) {
  CheckOneDevice(R"(
HloModule m
ENTRY e {
  x = c64[3,5,6] parameter(0)
  r = f32[2,3,8] parameter(1)
  f = c64[3,5,6] fft(x), fft_type=FFT, fft_length={5,6}
  i = c64[3,5,6] fft(x), fft_type=IFFT, fft_length={6}
  rf = c64[2,3,5] fft(r), fft_type=RFFT, fft_length={8}
  ir = f32[2,3,8] fft(rf), fft_type=IRFFT, fft_length={3,8}
  n = s32[] get-dimension-size(x), dimensions={1}
  ROOT out = (c64[3,5,6], c64[3,5,6], c64[2,3,5], f32[2,3,8], s32[]) tuple(f, i, rf, ir, n)
})",
                 {1e-5, 1e-5});
}

TEST(PointEvaluatorTest, UnsupportedOpcodesAreNamed) {
  auto module = hlo::ParseHloModule(R"(
HloModule m
ENTRY e { p = f32[4] parameter(0)  ROOT r = f32[4] rng(p, p), distribution=rng_uniform })");
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<std::vector<Literal>> args = {RandomArguments(**module, 1)};
  LiteralArguments source(args);
  PointEvaluator evaluator(**module, source, 1);
  absl::StatusOr<Literal> r = evaluator.EntryRootElements(-1, 0, {0});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not support rng (%r)"), std::string_view::npos)
      << r.status();
}

}  // namespace
// The walk advances from one asked index to the next (carrying through dimensions, gaps of
// any size) or unravels afresh when they descend: always the multi-index Unravel gives.
TEST(PointElementsTest, MultiIndexWalkMatchesUnravel) {
  const std::vector<int64_t> dims = {3, 1, 5, 7};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> gap(-20, 40);
  points::MultiIndexWalk walk(dims);
  std::vector<int64_t> expected(dims.size());
  int64_t linear = 0;
  for (int step = 0; step < 2000; ++step) {
    linear = std::clamp<int64_t>(linear + gap(rng), 0, 3 * 5 * 7 - 1);
    const int64_t* got = walk.To(linear);
    points::Unravel(linear, dims, expected.data());
    ASSERT_EQ(std::vector<int64_t>(got, got + dims.size()), expected) << linear;
  }
}

}  // namespace runtime

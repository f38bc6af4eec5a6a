// The propagate pass on hand-written modules: forward, backward and sideways propagation,
// conflicts settled by cost, annotations kept, 2-D merges, while loops, with_sharding_constraint
// with unspecified_dims, the propagation flags, shard groups and the provenance log.
#include "spmd/propagation/sharding_propagation.h"

#include <map>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/parser/hlo_parser.h"

namespace spmd {
namespace {

using ::testing::HasSubstr;

// Runs the pass; returns "computation/instruction" -> sharding text ("none" when unset).
class PropagationTest : public ::testing::Test {
 protected:
  void Propagate(const std::string& text) {
    auto m = hlo::ParseHloModule(text);
    ASSERT_TRUE(m.ok()) << m.status().message();
    module_ = *std::move(m);
    absl::StatusOr<bool> changed = pass_.Run(module_.get());
    ASSERT_TRUE(changed.ok()) << changed.status().message();
    changed_ = *changed;
  }
  std::string S(const std::string& name) const {
    for (const auto& comp : module_->computations()) {
      for (const auto& instr : comp->instructions()) {
        if (instr->name() != name) continue;
        return instr->has_sharding() ? instr->sharding().ToString() : "none";
      }
    }
    return "missing";
  }
  std::string LogLine(const std::string& name) const {
    for (const std::string& line : pass_.log().lines) {
      if (line.rfind("%" + name + ":", 0) == 0) return line;
    }
    return "";
  }

  std::unique_ptr<hlo::HloModule> module_;
  ShardingPropagation pass_;
  bool changed_ = false;
};

// `text` with its `%s` replaced by `header` (module header attributes).
std::string WithHeader(const std::string& text, const std::string& header) {
  std::string out = text;
  out.replace(out.find("%s"), 2, header);
  return out;
}

constexpr char kMlp[] = R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[8,16] parameter(0), sharding={replicated}
  a = f32[16,32] parameter(1), sharding={devices=[1,2]<=[2]}
  b = f32[32,16] parameter(2), sharding={devices=[2,1]<=[2]}
  xa = f32[8,32] dot(x, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = f32[8,32] tanh(xa)
  ROOT z = f32[8,16] dot(y, b), lhs_contracting_dims={1}, rhs_contracting_dims={0},
    sharding={replicated}
})";

TEST_F(PropagationTest, ForwardThroughDotAndElementwise) {
  Propagate(kMlp);
  EXPECT_TRUE(changed_);
  EXPECT_EQ(S("xa"), "{devices=[1,2]<=[2]}");
  EXPECT_EQ(S("y"), "{devices=[1,2]<=[2]}");
  EXPECT_EQ(S("z"), "{replicated}");
  EXPECT_EQ(S("x"), "{replicated}");
}

// JAX's random bits: a bitcast-convert between types of one width (u32 -> f32) is elementwise,
// so the split of the values they feed reaches back to the iota counters; one between widths
// (f32 -> u8[..., 4]) gets no rule.
TEST_F(PropagationTest, SameWidthBitcastConvertIsElementwise) {
  Propagate(R"(HloModule m, num_partitions=8
ENTRY e {
  x = f32[32,64] parameter(0), sharding={devices=[2,4]<=[8]}
  i = u32[32,64] iota(), iota_dimension=1
  b = f32[32,64] bitcast-convert(i)
  y = f32[32,64] add(x, b)
  w = u8[32,64,4] bitcast-convert(y)
  ROOT t = (f32[32,64], u8[32,64,4]) tuple(y, w), sharding={{devices=[2,4]<=[8]}, {replicated}}
})");
  EXPECT_EQ(S("b"), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(S("i"), "{devices=[2,4]<=[8]}");
}

// jnp.fft.rfft over the last axis of a ('data', _, 'model') operand: the batch split passes to
// the result, the transformed dim stays whole.
TEST_F(PropagationTest, FftKeepsTheSplitsOfTheDimsItDoesNotTransform) {
  Propagate(R"(HloModule m, num_partitions=8
ENTRY e {
  x = f32[4,16,32] parameter(0), sharding={devices=[2,1,4]<=[8]}
  f = c64[4,16,17] fft(x), fft_type=RFFT, fft_length={32}
  a = f32[4,16,17] abs(f)
  ROOT t = (f32[4,16,17]) tuple(a), sharding={{devices=[2,1,1,4]<=[8] last_tile_dim_replicate}}
})");
  EXPECT_EQ(S("f"), "{devices=[2,1,1,4]<=[8] last_tile_dim_replicate}");
}

// lax.top_k over a split last dim: both result leaves keep the operand's other splits (the rows
// on 'data'), the top-k dim whole, so the top-k need not be computed replicated.
TEST_F(PropagationTest, TopKLeavesKeepTheOperandsOtherSplits) {
  Propagate(R"(HloModule m, num_partitions=8
ENTRY e {
  x = f32[16,128] parameter(0), sharding={devices=[2,4]<=[8]}
  t = (f32[16,8], s32[16,8]) topk(x), k=8, largest=true
  v = f32[16,8] get-tuple-element(t), index=0
  i = s32[16,8] get-tuple-element(t), index=1
  c = f32[16,8] convert(i)
  ROOT a = f32[16,8] add(v, c)
})");
  EXPECT_EQ(S("t"),
            "{{devices=[2,1,4]<=[8] last_tile_dim_replicate}, "
            "{devices=[2,1,4]<=[8] last_tile_dim_replicate}}");
}

// A sort of (values, iota) -- top-k as JAX emits it: the batch split of the values reaches the
// iota and both result leaves (and through them the get-tuple-elements), the sorted dim stays
// whole.
TEST_F(PropagationTest, VariadicSortSharesTheBatchSplitAcrossOperandsAndLeaves) {
  Propagate(R"(HloModule m, num_partitions=2
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT
}
ENTRY e {
  p = f32[4,64] parameter(0), sharding={devices=[2,1]<=[2]}
  iota = s32[4,64] iota(), iota_dimension=1
  s = (f32[4,64], s32[4,64]) sort(p, iota), dimensions={1}, is_stable=true, to_apply=gt
  v = f32[4,64] get-tuple-element(s), index=0
  k = s32[4,64] get-tuple-element(s), index=1
  vs = f32[4,8] slice(v), slice={[0:4], [0:8]}
  ks = s32[4,8] slice(k), slice={[0:4], [0:8]}
  ROOT t = (f32[4,8], s32[4,8]) tuple(vs, ks)
})");
  EXPECT_EQ(S("iota"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(S("s"), "{{devices=[2,1]<=[2]}, {devices=[2,1]<=[2]}}");
  EXPECT_EQ(S("k"), "{devices=[2,1]<=[2]}");
  EXPECT_THAT(LogLine("k"), HasSubstr("via %s (sort"));
}

TEST_F(PropagationTest, PlacementCustomCallsPassShardingsThroughOthersDoNot) {
  Propagate(R"(HloModule m, num_partitions=4
ENTRY e {
  p = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}
  h = f32[8,4] custom-call(p), custom_call_target="MoveToHost"
  d = f32[8,4] custom-call(h), custom_call_target="MoveToDevice"
  n = f32[8,4] negate(d)
  o = f32[8,4] custom-call(n), custom_call_target="some_kernel"
  ROOT c = f32[8,4] copy(o)
})");
  EXPECT_EQ(S("h"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(S("d"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(S("n"), "{devices=[4,1]<=[4]}");
  EXPECT_THAT(LogLine("h"), HasSubstr("(placement operand 0 -> result"));
  EXPECT_EQ(S("o"), "none");  // An unknown custom-call is a barrier.
}

TEST_F(PropagationTest, BranchIndexInManualSubgroupsMakesTheResultsPerGroup) {
  // Each manual group ({0,1} and {2,3}) takes its own branch: the scalar result, whose
  // branches return different constants, is whole within each group, not replicated.
  Propagate(R"(HloModule m, num_partitions=4
t { tp = (f32[4], f32[]) parameter(0)  ROOT tr = (f32[4], f32[]) tuple(tp) }
f { fp = (f32[4], f32[]) parameter(0)  a = f32[4] get-tuple-element(fp), index=0
    one = f32[] constant(1)  ROOT fr = (f32[4], f32[]) tuple(a, one) }
ENTRY e {
  p = pred[] parameter(0), sharding={devices=[2,2]<=[4] last_tile_dims={manual, replicated}}
  x = f32[4] parameter(1), sharding={devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}
  zero = f32[] constant(0)
  args = (f32[4], f32[]) tuple(x, zero)
  ROOT c = (f32[4], f32[]) conditional(p, args, args), true_computation=t, false_computation=f
})");
  EXPECT_EQ(S("c"),
            "{{devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}, "
            "{devices=[2,2]<=[4] last_tile_dims={manual, replicated}}}");
  // The constants that flow into it join the groups too, and say why.
  EXPECT_EQ(S("one"), "{devices=[2,2]<=[4] last_tile_dims={manual, replicated}}");
  EXPECT_THAT(LogLine("one"), HasSubstr("per manual group"));
}

TEST_F(PropagationTest, ProvenanceNamesTheSourceTheRuleAndTheAnnotation) {
  Propagate(kMlp);
  EXPECT_EQ(LogLine("a"), "%a: {devices=[1,2]<=[2]} <- annotation");
  EXPECT_THAT(LogLine("y"), HasSubstr("<- %xa via %y (elementwise operand 0 -> result"));
  EXPECT_THAT(LogLine("y"), HasSubstr("from annotation on %a"));
  EXPECT_THAT(LogLine("xa"), HasSubstr("(dot operand 1 -> result"));
}

TEST_F(PropagationTest, BackwardFromRootThroughTransposeAndBroadcast) {
  Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[4,8] parameter(0)
  t = f32[8,4] transpose(p), dimensions={1,0}
  b = f32[3,8,4] broadcast(t), dimensions={1,2}
  n = f32[3,8,4] negate(b)
  ROOT c = f32[3,8,4] copy(n), sharding={devices=[1,2,1]<=[2]}
})");
  EXPECT_EQ(S("n"), "{devices=[1,2,1]<=[2]}");
  EXPECT_EQ(S("b"), "{devices=[1,2,1]<=[2]}");
  EXPECT_EQ(S("t"), "{devices=[2,1]<=[2]}");
  // An unannotated entry parameter is the program's interface: it stays replicated.
  EXPECT_EQ(S("p"), "none");
  EXPECT_THAT(LogLine("t"), HasSubstr("broadcast result -> operand 0"));
}

TEST_F(PropagationTest, AnnotationsBeatInferredShardings) {
  Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[8,8] parameter(0), sharding={devices=[2,1]<=[2]}
  n = f32[8,8] negate(p), sharding={devices=[1,2]<=[2]}
  ROOT e = f32[8,8] exponential(n)
})");
  EXPECT_EQ(S("n"), "{devices=[1,2]<=[2]}");
  EXPECT_EQ(S("e"), "none");  // The root is held replicated.
}

// XLA's PropagateShardAs, like for like: the operands of an elementwise root held replicated
// are each gathered whole, so neither moves to the other's layout (which only adds an exchange).
TEST_F(PropagationTest, OperandsOfAReplicatedElementwiseRootKeepTheirOwnLayouts) {
  Propagate(R"(HloModule m, num_partitions=8
ENTRY e {
  p = s32[16,16] parameter(0), sharding={devices=[4,2]<=[8]}
  q = s32[16,16] parameter(1), sharding={devices=[2,4]<=[8]}
  a = s32[16,16] add(p, p)
  b = s32[16,16] add(q, q)
  ROOT m = s32[16,16] multiply(a, b)
})");
  EXPECT_EQ(S("a"), "{devices=[4,2]<=[8]}");
  EXPECT_EQ(S("b"), "{devices=[2,4]<=[8]}");
}

TEST_F(PropagationTest, ConflictingProposalsAreSettledByCostNotOrder) {
  // The predicate (operand 0, proposed first) is split by columns, both data operands by rows:
  // taking the rows costs one reshard, taking the columns two.
  Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  c = pred[256,256] parameter(0), sharding={devices=[1,2]<=[2]}
  x = f32[256,256] parameter(1), sharding={devices=[2,1]<=[2]}
  y = f32[256,256] parameter(2), sharding={devices=[2,1]<=[2]}
  s = f32[256,256] select(c, x, y)
  ROOT r = f32[256,256] negate(s), sharding={devices=[2,1]<=[2]}
})");
  EXPECT_EQ(S("s"), "{devices=[2,1]<=[2]}");
  EXPECT_THAT(LogLine("s"), HasSubstr("us"));
}

TEST_F(PropagationTest, CheaperSideWinsWhenOrderIsReversed) {
  Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  c = pred[256,256] parameter(0), sharding={devices=[2,1]<=[2]}
  x = f32[256,256] parameter(1), sharding={devices=[1,2]<=[2]}
  y = f32[256,256] parameter(2), sharding={devices=[1,2]<=[2]}
  s = f32[256,256] select(c, x, y)
  ROOT r = f32[256,256] negate(s), sharding={devices=[1,2]<=[2]}
})");
  EXPECT_EQ(S("s"), "{devices=[1,2]<=[2]}");
}

TEST_F(PropagationTest, ACheaperShardingWithAsManyTilesReplacesAnEarlierChoice) {
  // The first sweep gives a x's column split. r, costed over its whole neighbourhood (the
  // annotated w and root included), takes y's row split at once; a then moves sideways to it.
  Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[256,256] parameter(0), sharding={devices=[1,2]<=[2]}
  y = f32[256,256] parameter(1), sharding={devices=[2,1]<=[2]}
  w = f32[256,256] parameter(2), sharding={devices=[2,1]<=[2]}
  a = f32[256,256] negate(x)
  r = f32[256,256] add(a, y)
  ROOT o = f32[256,256] multiply(r, w), sharding={devices=[2,1]<=[2]}
})");
  EXPECT_EQ(S("r"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(S("a"), "{devices=[2,1]<=[2]}");
  EXPECT_THAT(LogLine("a"), HasSubstr("moved sideways from {devices=[1,2]<=[2]}"));
}

TEST_F(PropagationTest, ScalarBroadcastsCostNoReshard) {
  // k, proposed first, is rebuilt by the partitioner in any tiling: following x moves nothing.
  Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  c = f32[] constant(1)
  k = f32[256,256] broadcast(c), dimensions={}, sharding={devices=[1,2]<=[2]}
  x = f32[256,256] parameter(0), sharding={devices=[2,1]<=[2]}
  s = f32[256,256] add(k, x)
  ROOT n = f32[256,256] negate(s), sharding={replicated}
})");
  EXPECT_EQ(S("s"), "{devices=[2,1]<=[2]}");
}

TEST_F(PropagationTest, ReshapeKeepsTheTilesThatMap) {
  // Dim 1's tiles would land on a minor part of the merged dim; dim 2 keeps its 4 tiles.
  Propagate(R"(HloModule m, num_partitions=8
ENTRY e {
  x = s32[2,64,8] parameter(0), sharding={devices=[1,2,4]<=[8]}
  r = s32[128,8] reshape(x)
  ROOT n = s32[128,8] negate(r), sharding={replicated}
})");
  EXPECT_EQ(S("r"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
}

TEST_F(PropagationTest, PartialSpecificationsMergeIntoTwoDimensions) {
  Propagate(R"(HloModule m, num_partitions=4
ENTRY e {
  x = f32[8,16] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  a = f32[16,32] parameter(1), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  xa = f32[8,32] dot(x, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[8,32] negate(xa), sharding={replicated}
})");
  EXPECT_EQ(S("xa"), "{devices=[2,2]<=[4]}");
  EXPECT_THAT(LogLine("xa"), HasSubstr("merged"));
}

TEST_F(PropagationTest, WhileBodyConditionAndStateAgree) {
  Propagate(R"(HloModule m, num_partitions=2
cond {
  cp = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  bp = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  v = f32[8,4] get-tuple-element(bp), index=1
  nv = f32[8,4] negate(v)
  ROOT t = (s32[], f32[8,4]) tuple(next, nv)
}
ENTRY e {
  p = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}
  zero = s32[] constant(0)
  init = (s32[], f32[8,4]) tuple(zero, p)
  w = (s32[], f32[8,4]) while(init), condition=cond, body=body
  g = f32[8,4] get-tuple-element(w), index=1
  ROOT r = f32[8,4] negate(g), sharding={devices=[2,1]<=[2]}
})");
  const std::string state = "{{replicated}, {devices=[2,1]<=[2]}}";
  EXPECT_EQ(S("init"), state);
  EXPECT_EQ(S("w"), state);
  EXPECT_EQ(S("bp"), state);
  EXPECT_EQ(S("t"), state);
  EXPECT_EQ(S("cp"), state);
  EXPECT_EQ(S("v"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(S("nv"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(S("g"), "{devices=[2,1]<=[2]}");
}

// XLA's PropagateThroughSingleUsers: an unannotated root returns a loop's state. Held
// replicated by the root, the loop would gather it on every iteration; instead the state keeps
// the body's split and only the root (left unannotated, so replicated) gathers it, once.
TEST_F(PropagationTest, LoopStateReturnedByTheRootStaysSplitInTheLoop) {
  Propagate(R"(HloModule m, num_partitions=2
cond {
  cp = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  bp = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  v = f32[8,4] get-tuple-element(bp), index=1
  a = f32[8,4] negate(v), sharding={devices=[2,1]<=[2]}
  nv = f32[8,4] negate(a)
  ROOT t = (s32[], f32[8,4]) tuple(next, nv)
}
ENTRY e {
  p = f32[8,4] parameter(0)
  c = f32[8,4] copy(p)
  zero = s32[] constant(0)
  init = (s32[], f32[8,4]) tuple(zero, c)
  w = (s32[], f32[8,4]) while(init), condition=cond, body=body
  ROOT g = f32[8,4] get-tuple-element(w), index=1
})");
  EXPECT_EQ(S("nv"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(S("w"), "{{replicated}, {devices=[2,1]<=[2]}}");
  EXPECT_EQ(S("g"), "none");
}

// A value the root returns outside any loop stays replicated with the root: its own handler
// then chooses how to produce it whole.
TEST_F(PropagationTest, ValueReturnedByTheRootOutsideLoopsStaysReplicated) {
  Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}
  n = f32[8,4] negate(p)
  ROOT t = (f32[8,4]) tuple(n)
})");
  EXPECT_EQ(S("n"), "none");
  EXPECT_EQ(S("t"), "none");
}

// XLA's ScatterUpdateToIndex_RankMismatch: the updates' split scatter dims reach the indices
// (paired like a contracting dim), so their copy runs on its slice, not whole.
TEST_F(PropagationTest, ScatterUpdatesSplitTheirIndicesAlike) {
  Propagate(R"(HloModule m, num_partitions=8
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1,24,24,24,3,3] parameter(0), sharding={replicated}
  p = s32[1,24,24,24,5] parameter(1), sharding={replicated}
  i = s32[1,24,24,24,5] copy(p)
  u = f32[1,24,24,24,3] parameter(2), sharding={devices=[1,2,2,2,1]<=[8]}
  ROOT s = f32[1,24,24,24,3,3] scatter(x, i, u), update_window_dims={4},
    inserted_window_dims={0,1,2,3,4}, scatter_dims_to_operand_dims={0,1,2,3,4},
    index_vector_dim=4, to_apply=add, sharding={replicated}
})");
  EXPECT_EQ(S("i"), "{devices=[1,2,2,2,1]<=[8]}");
}

// XLA's ShardedOnReduceDimTupleReduceForwardAndBackwardPass: an argmax reduce of two arrays
// relates each array to each result leaf and so to each other, so the unannotated values
// array takes the indices array's split (reduced dim included) and the results keep the kept
// dim's.
TEST_F(PropagationTest, VariadicReduceSharesItsOperandsSplit) {
  Propagate(R"(HloModule m, num_partitions=4
argmax {
  lv = f32[] parameter(0)
  li = s32[] parameter(1)
  rv = f32[] parameter(2)
  ri = s32[] parameter(3)
  gt = pred[] compare(lv, rv), direction=GT
  v = f32[] select(gt, lv, rv)
  i = s32[] select(gt, li, ri)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  p = f32[28,10] parameter(0)
  x = f32[28,10] copy(p)
  y = s32[28,10] parameter(1), sharding={devices=[2,2]<=[4]}
  a = f32[] parameter(2)
  b = s32[] parameter(3)
  r = (f32[28], s32[28]) reduce(x, y, a, b), dimensions={1}, to_apply=argmax
  g = f32[28] get-tuple-element(r), index=0
  ROOT c = f32[28] copy(g)
})");
  EXPECT_EQ(S("x"), "{devices=[2,2]<=[4]}");
  EXPECT_EQ(S("g"), "{devices=[2,2]<=[4] last_tile_dim_replicate}");
}

TEST_F(PropagationTest, UnspecifiedDimsAreRefinedAndSpecifiedDimsKept) {
  Propagate(R"(HloModule m, num_partitions=4
ENTRY e {
  x = f32[8,16] parameter(0), sharding={replicated}
  y = f32[8,16] parameter(1), sharding={devices=[2,2]<=[4]}
  c = f32[8,16] custom-call(x), custom_call_target="Sharding",
    sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate},
    backend_config="unspecified_dims=[0]"
  ROOT s = f32[8,16] add(c, y), sharding={devices=[2,2]<=[4]}
})");
  // Dim 1 keeps the constraint's split, dim 0 takes the user's.
  EXPECT_EQ(S("c"), "{devices=[2,2]<=[4]}");
}

TEST_F(PropagationTest, ConstraintThatDisagreesOnItsSpecifiedDimIsKept) {
  Propagate(R"(HloModule m, num_partitions=4
ENTRY e {
  x = f32[8,16] parameter(0), sharding={replicated}
  y = f32[8,16] parameter(1), sharding={devices=[2,2]<=[4]}
  c = f32[8,16] custom-call(x), custom_call_target="Sharding",
    sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}, backend_config="unspecified_dims=[0]"
  ROOT s = f32[8,16] add(c, y), sharding={devices=[2,2]<=[4]}
})");
  // y splits dim 1 over other device pairs than the constraint, so nothing merges.
  EXPECT_EQ(S("c"), "{devices=[1,2,2]<=[4] last_tile_dim_replicate}");
}

TEST_F(PropagationTest, SpecifiedDimsOfAConstraintAreNotOverridden) {
  Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[8,16] parameter(0), sharding={replicated}
  y = f32[8,16] parameter(1), sharding={devices=[1,2]<=[2]}
  c = f32[8,16] custom-call(x), custom_call_target="Sharding",
    sharding={replicated}, backend_config="unspecified_dims=[0]"
  ROOT s = f32[8,16] add(c, y), sharding={devices=[1,2]<=[2]}
})");
  EXPECT_EQ(S("c"), "{replicated}");
}

TEST_F(PropagationTest, AProposalWithMoreTilesDoesNotDropAConstraintsSpecifiedSplit) {
  Propagate(R"(HloModule m, num_partitions=8
ENTRY e {
  p = f32[16,64] parameter(0), sharding={devices=[8,1]<=[8]}
  c = f32[16,64] custom-call(p), custom_call_target="Sharding",
    sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}, backend_config="unspecified_dims=[0]"
  ROOT n = f32[16,64] negate(c)
})");
  // p's 8-way split of dim 0 cannot join the constraint's split of dim 1 (its replicas are
  // pairs of devices); dim 1 keeps the constraint's split whatever the proposal's tile count.
  EXPECT_EQ(S("c"), "{devices=[1,4,2]<=[8] last_tile_dim_replicate}");
}

TEST_F(PropagationTest, AnOpenDimTakesTheSplitThatFitsTheConstraintsReplicas) {
  Propagate(R"(HloModule m, num_partitions=8
ENTRY e {
  p = f32[16,64] parameter(0), sharding={devices=[2,4]<=[4,2]T(1,0)}
  c = f32[16,64] custom-call(p), custom_call_target="Sharding",
    sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}, backend_config="unspecified_dims=[0]"
  ROOT n = f32[16,64] negate(c)
})");
  EXPECT_EQ(S("c"), "{devices=[2,4]<=[4,2]T(1,0)}");
}

// JAX's partly manual shard_map as its GSPMD export writes it (every dim open): the free axis
// (data) splits the open dim 0 on both sides of the conversion; the manual axis (model) keeps
// dim 1 of the global side whatever is proposed there.
constexpr char kPartlyManual[] = R"(HloModule m, num_partitions=8
ENTRY e {
  x = f32[16,64] parameter(0), sharding=%s
  gx = f32[16,64] custom-call(x), custom_call_target="Sharding",
    sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}, backend_config="unspecified_dims=[0,1]"
  lx = f32[16,16] custom-call(gx), custom_call_target="SPMDFullToShardShape",
    sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  n = f32[16,16] negate(lx)
  lo = f32[16,16] custom-call(n), custom_call_target="Sharding",
    sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}, backend_config="unspecified_dims=[0,1]"
  go = f32[16,64] custom-call(lo), custom_call_target="SPMDShardToFullShape",
    sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}, backend_config="unspecified_dims=[0,1]"
  ROOT t = f32[16,64] tanh(go)
})";

TEST_F(PropagationTest, FreeAxesSplitTheOpenDimsOfAManualConversion) {
  Propagate(WithHeader(kPartlyManual, "{devices=[2,4]<=[8]}"));
  EXPECT_EQ(S("gx"), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(S("lx"), "{devices=[2,1,4]<=[8] last_tile_dims={manual}}");
  EXPECT_EQ(S("n"), "{devices=[2,1,4]<=[8] last_tile_dims={manual}}");
  EXPECT_EQ(S("lo"), "{devices=[2,1,4]<=[8] last_tile_dims={manual}}");
  EXPECT_EQ(S("go"), "{devices=[2,4]<=[8]}");
}

TEST_F(PropagationTest, TheGlobalSideOfAManualConversionKeepsTheManualSplit) {
  // x's 8-way split of dim 0 cannot sit beside the manual axis's split of dim 1.
  Propagate(WithHeader(kPartlyManual, "{devices=[8,1]<=[8]}"));
  EXPECT_EQ(S("gx"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(S("lx"), "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}");
}

TEST_F(PropagationTest, OutputFlagLetsPropagationChangeTheRoot) {
  const char* text = R"(HloModule m, num_partitions=2%s
ENTRY e {
  p = f32[8,8] parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT n = f32[8,8] negate(p), sharding={replicated}
})";
  Propagate(WithHeader(text, ", allow_spmd_sharding_propagation_to_output={true}"));
  EXPECT_EQ(S("n"), "{devices=[2,1]<=[2]}");
  Propagate(WithHeader(text, ""));
  EXPECT_EQ(S("n"), "{replicated}");
}

TEST_F(PropagationTest, ShardAsGroupMembersShareASharding) {
  Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[8,8] parameter(0), sharding={devices=[2,1]<=[2]}
  q = f32[8,8] parameter(1), sharding={replicated}
  a = f32[8,8] negate(p), sharding={unknown shard_as 0}
  b = f32[8,8] exponential(q), sharding={unknown shard_as 0}
  ROOT r = f32[8,8] add(a, b), sharding={replicated}
})");
  EXPECT_EQ(S("a"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(S("b"), "{devices=[2,1]<=[2]}");
}

TEST_F(PropagationTest, ShardingsThatDoNotFitAreNotAssigned) {
  Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  b = f32[8,1] broadcast(p), dimensions={0}
  t = f32[1,8] transpose(b), dimensions={1,0}
  ROOT r = f32[1,8] copy(t), sharding={devices=[2,1]<=[2]}
})");
  EXPECT_EQ(S("b"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(S("t"), "{devices=[1,2]<=[2]}");
}

TEST_F(PropagationTest, BarriersStopPropagationAndAreRemoved) {
  Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[8,8] parameter(0), sharding={devices=[2,1]<=[2]}
  n = f32[8,8] negate(p)
  b = f32[8,8] custom-call(n), custom_call_target="ShardBarrierFrom"
  x = f32[8,8] exponential(b)
  ROOT r = f32[8,8] copy(x), sharding={replicated}
})");
  EXPECT_EQ(S("n"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(S("x"), "none");
  EXPECT_EQ(S("b"), "missing");
}

// Batch on 'data' (2) for activations, FSDP x TP weights on a (2,4) mesh, as in JAX's
// host-offload MLP (tests/testdata/jax/host_offload).
constexpr char kBatchOnData[] = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}";

// Two layers read w2 alike: the partitioner gathers it once for both, so each dot is charged
// half of that gather, and keeping the batch split beats gathering the activations per layer
// (charged the whole gather, d2 took w2's column split: 56 us against 40 us estimated).
TEST_F(PropagationTest, DotsReadingAWeightAlikeShareItsReshardCost) {
  Propagate(R"(HloModule m, num_partitions=8
ENTRY e {
  x = f32[16,64] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  w1 = f32[64,128] parameter(1), sharding={devices=[2,4]<=[8]}
  w2 = f32[128,64] parameter(2), sharding={devices=[4,2]<=[2,4]T(1,0)}
  d1 = f32[16,128] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t1 = f32[16,128] tanh(d1)
  d2 = f32[16,64] dot(t1, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t2 = f32[16,64] tanh(d2)
  a = f32[16,64] add(t2, x)
  d3 = f32[16,128] dot(a, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t3 = f32[16,128] tanh(d3)
  d4 = f32[16,64] dot(t3, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[16,64] tanh(d4)
})");
  EXPECT_EQ(S("d2"), kBatchOnData) << LogLine("d2");
  EXPECT_EQ(S("a"), kBatchOnData) << LogLine("a");
  EXPECT_EQ(S("d4"), kBatchOnData) << LogLine("d4");
}

// t is reached with x's and y's batch split; the dot dw proposes the column split, a little
// cheaper for dw alone (15.19 us against 15.32) but costing a and the annotated x and y a
// reshard each. A sideways move is costed over the class's whole neighbourhood.
TEST_F(PropagationTest, SidewaysMoveCountsTheIndependentNeighbours) {
  Propagate(R"(HloModule m, num_partitions=8
ENTRY e {
  x = f32[16,64] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  y = f32[16,64] parameter(1), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  g = f32[16,128] parameter(2), sharding={devices=[2,4]<=[8]}
  a = f32[16,64] add(x, y)
  t = f32[16,64] tanh(a)
  dw = f32[128,64] dot(g, t), lhs_contracting_dims={0}, rhs_contracting_dims={0},
    sharding={devices=[4,2]<=[2,4]T(1,0)}
  ROOT r = f32[128,64] add(dw, dw)
})");
  EXPECT_EQ(S("a"), kBatchOnData) << LogLine("a");
  EXPECT_EQ(S("t"), kBatchOnData) << LogLine("t");
}

// d first takes w's column split (t has no sharding yet); at s, t's batch split moves d
// sideways. s, visited before its operands, must then see d's new sharding and follow it
// rather than keep the column split that neither operand has any more.
TEST_F(PropagationTest, ResultSeesAnOperandMovedInTheSameVisit) {
  Propagate(R"(HloModule m, num_partitions=8
ENTRY e {
  u = f32[32,8] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  w = f32[8,64] parameter(1), sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}
  t0 = f32[32,64] parameter(2), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  d = f32[32,64] dot(u, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[32,64] negate(t0)
  s = f32[32,64] subtract(d, t)
  ROOT r = f32[32,64] multiply(s, s)
})");
  EXPECT_EQ(S("d"), kBatchOnData) << LogLine("d");
  EXPECT_EQ(S("s"), kBatchOnData) << LogLine("s");
}

TEST_F(PropagationTest, ManualValuesStayManualThroughOpsAndTuples) {
  Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[4,8] parameter(0), sharding={replicated}
  m = f32[4,8] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={manual}
  n = f32[4,8] negate(m)
  t = (f32[4,8], f32[4,8]) tuple(n, m)
  g = f32[4,8] get-tuple-element(t), index=0
  ROOT r = f32[4,8] custom-call(g), custom_call_target="SPMDShardToFullShape",
    sharding={replicated}
})");
  EXPECT_EQ(S("n"), "{manual}");
  EXPECT_EQ(S("t"), "{{manual}, {manual}}");
  EXPECT_EQ(S("g"), "{manual}");
}

TEST_F(PropagationTest, ParameterFlagLetsPropagationShardAParameter) {
  const char* text = R"(HloModule m, num_partitions=2%s
ENTRY e {
  p = f32[8,8] parameter(0)
  q = f32[8,8] parameter(1), sharding={devices=[1,2]<=[2]}
  ROOT a = f32[8,8] add(p, q), sharding={devices=[1,2]<=[2]}
})";
  Propagate(WithHeader(text, ", allow_spmd_sharding_propagation_to_parameters={true,false}"));
  EXPECT_EQ(S("p"), "{devices=[1,2]<=[2]}");
  Propagate(WithHeader(text, ""));
  EXPECT_EQ(S("p"), "none");
}

TEST_F(PropagationTest, OutputFlagsApplyLeafByLeaf) {
  Propagate(R"(HloModule m, num_partitions=2, allow_spmd_sharding_propagation_to_output={false,true}
ENTRY e {
  p = f32[8,8] parameter(0), sharding={devices=[2,1]<=[2]}
  a = f32[8,8] negate(p)
  b = f32[8,8] exponential(p)
  ROOT t = (f32[8,8], f32[8,8]) tuple(a, b), sharding={{replicated}, {replicated}}
})");
  EXPECT_EQ(S("t"), "{{replicated}, {devices=[2,1]<=[2]}}");
  EXPECT_EQ(S("a"), "none");
}

TEST_F(PropagationTest, ScanSlicesCarriesAndBlocks) {
  // The input's row split reaches the body's slices, the body's sum and the carry (one value
  // class with the init and the final carry), and the stacked output; its column (scan dim)
  // split reaches the output's blocks but no slice.
  Propagate(R"(HloModule m, num_partitions=4
add {
  x = f32[8] parameter(0)
  c = f32[8] parameter(1)
  s = f32[8] add(x, c)
  ROOT t = (f32[8], f32[8]) tuple(s, s)
}
ENTRY e {
  p = f32[8,64] parameter(0), sharding={devices=[2,2]<=[4]}
  i = f32[8] parameter(1), sharding={devices=[2,2]<=[4] last_tile_dim_replicate}
  scan = (f32[8,64], f32[8]) scan(p, i), dimensions={1}, num_carries=1, is_associative=true, to_apply=add
  g = f32[8,64] get-tuple-element(scan), index=0
  ROOT r = f32[8,64] copy(g)
})");
  EXPECT_EQ(S("x"), "{devices=[2,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(S("s"), "{devices=[2,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(S("scan"), "{{devices=[2,2]<=[4]}, {devices=[2,2]<=[4] last_tile_dim_replicate}}");
  EXPECT_EQ(S("g"), "{devices=[2,2]<=[4]}");
}

TEST(PropagationErrorTest, WhileOnTwoDevicesIsRejected) {
  auto m = hlo::ParseHloModule(R"(HloModule m, num_partitions=2
cond {
  c = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(c), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  b = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(b), index=0, sharding={maximal device=1}
  v = f32[] get-tuple-element(b), index=1
  ROOT t = (s32[], f32[]) tuple(i, v)
}
ENTRY e {
  z = s32[] constant(0)
  p = f32[] parameter(0)
  init = (s32[], f32[]) tuple(z, p)
  w = (s32[], f32[]) while(init), condition=cond, body=body,
    sharding={{maximal device=0}, {maximal device=0}}
  ROOT r = f32[] get-tuple-element(w), index=1
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ShardingPropagation pass;
  absl::StatusOr<bool> result = pass.Run(m->get());
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("%w is on device 0 but %i.1 is on device 1"));
}

}  // namespace
}  // namespace spmd

namespace spmd {
// A slice to fewer elements than a dim has tiles (reflect padding's edge columns: 3 of 64 on
// 4 devices) keeps the other dims' tiles, the small dim whole; the value was left without a
// sharding, so it and all it fed were computed replicated.
TEST_F(PropagationTest, DimSmallerThanItsTilesIsMadeWholeNotDropped) {
  Propagate(R"(HloModule m, num_partitions=8
ENTRY e {
  x = f32[16,64] parameter(0), sharding={devices=[2,4]<=[8]}
  s = f32[16,3] slice(x), slice={[0:16], [1:4]}
  r = f32[16,3] reverse(s), dimensions={1}
  ROOT c = f32[16,67] concatenate(r, x), dimensions={1}, sharding={devices=[2,4]<=[8]}
})");
  EXPECT_EQ(S("s"), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(S("r"), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
}

// Through a reverse the tiles along the reversed dims take their devices in reverse order
// (XLA's ReverseSharding), forward and backward, so the reverse runs locally; a flip, an op that
// reads the dim whole and a flip back (JAX's reverse cumsum) move nothing for the flips.
TEST_F(PropagationTest, ReverseMirrorsTheTilesOfItsReversedDims) {
  Propagate(R"(HloModule m, num_partitions=8
ENTRY e {
  x = f32[16,64] parameter(0), sharding={devices=[2,4]<=[8]}
  r = f32[16,64] reverse(x), dimensions={1}
  n = f32[16,64] negate(r)
  b = f32[16,64] reverse(n), dimensions={1}
  ROOT o = f32[16,64] copy(b), sharding={devices=[2,4]<=[8]}
})");
  EXPECT_EQ(S("r"), "{devices=[2,4]3,2,1,0,7,6,5,4}");
  EXPECT_EQ(S("n"), "{devices=[2,4]3,2,1,0,7,6,5,4}");
  EXPECT_EQ(S("b"), "{devices=[2,4]<=[8]}");
}

// jnp.flip(jnp.negative(jnp.flip(x))) as JAX exports it: one jitted `flip` called at both sites.
// Each site lays the function's values out as its own neighbours want (mirrored at the first,
// restored at the second), not both alike: each site gets its own copy, inlined.
TEST_F(PropagationTest, EachCallSiteOfASharedFunctionHoldsItsOwnShardings) {
  Propagate(R"(HloModule m, num_partitions=8
flip {
  a = f32[16,64] parameter(0)
  ROOT rev = f32[16,64] reverse(a), dimensions={1}
}
ENTRY e {
  x = f32[16,64] parameter(0), sharding={devices=[2,4]<=[8]}
  f1 = f32[16,64] call(x), to_apply=flip
  n = f32[16,64] negate(f1)
  f2 = f32[16,64] call(n), to_apply=flip
  ROOT o = f32[16,64] copy(f2), sharding={devices=[2,4]<=[8]}
})");
  EXPECT_TRUE(changed_);
  EXPECT_EQ(S("rev"), "{devices=[2,4]3,2,1,0,7,6,5,4}");
  EXPECT_EQ(S("n"), "{devices=[2,4]3,2,1,0,7,6,5,4}");
  EXPECT_EQ(S("rev.clone"), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(pass_.log().clones.OriginalComputation("flip.clone"), "flip");
  // Each site's copy is inlined (hlo/transforms/call_inliner.h): no call is left.
  EXPECT_EQ(pass_.log().inlined_calls, 2);
  EXPECT_EQ(module_->computations().size(), 1u);
}

namespace {

class ManualSubgroupPropagationTest : public PropagationTest {};

TEST_F(ManualSubgroupPropagationTest, ManualSubgroupsFlowToUsersAndClaimAnUnannotatedRoot) {
  Propagate(R"(HloModule m, num_partitions=4
ENTRY e {
  p = f32[6,4] parameter(0), sharding={devices=[1,2,2]<=[4] last_tile_dims={manual}}
  c = f32[6,4] copy(p)
  t = f32[4,6] transpose(c), dimensions={1,0}
  ROOT n = f32[4,6] negate(t)
})");
  EXPECT_EQ(S("c"), "{devices=[1,2,2]<=[4] last_tile_dims={manual}}");
  // Through the transpose the manual subgroup stays a manual subgroup.
  EXPECT_EQ(S("t"), "{devices=[2,1,2]<=[4] last_tile_dims={manual}}");
  // A manual value cannot become the replicated default of an unannotated root.
  EXPECT_EQ(S("n"), "{devices=[2,1,2]<=[4] last_tile_dims={manual}}");
}

TEST_F(ManualSubgroupPropagationTest, UnannotatedRootStaysReplicatedOutsideManualRegions) {
  Propagate(R"(HloModule m, num_partitions=4
ENTRY e {
  p = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT n = f32[8,4] negate(p)
})");
  EXPECT_EQ(S("n"), "none");
}

}  // namespace
}  // namespace spmd

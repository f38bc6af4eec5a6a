// Each rule read in both directions through ProjectSharding, on instructions from parsed HLO.
#include "spmd/propagation/factor_rule.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/parser/hlo_parser.h"
#include "spmd/propagation/factor_projection.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;

class RuleTest : public ::testing::Test {
 protected:
  // Parses a module whose entry root is the instruction under test.
  const HloInstruction* Root(const std::string& text) {
    auto m = hlo::ParseHloModule(text);
    EXPECT_TRUE(m.ok()) << m.status().message();
    module_ = *std::move(m);
    return module_->entry_computation()->root_instruction();
  }

  // Projects `sharding` (text) from side `from` to side `to` of `instr`; "error" on failure.
  // Also through the test's ProjectionCache (shared by its calls), twice: same answers.
  std::string Project(const HloInstruction& instr, int64_t from, int64_t to,
                      const std::string& sharding) {
    std::optional<FactorRule> rule = FactorRuleFor(instr);
    if (!rule) return "no rule";
    auto side_shape = [&](int64_t side) -> const hlo::Shape& {
      return side == rule->result_side() ? instr.shape() : instr.operand(side)->shape();
    };
    absl::StatusOr<HloSharding> s = HloSharding::Parse(sharding);
    EXPECT_TRUE(s.ok());
    absl::StatusOr<HloSharding> p =
        ProjectSharding(*rule, from, to, *s, side_shape(from), side_shape(to));
    const std::string direct = p.ok() ? p->ToString() : "error";
    for (int pass = 0; pass < 2; ++pass) {
      absl::StatusOr<HloSharding> c =
          cache_.Project(*rule, from, to, *s, side_shape(from), side_shape(to));
      EXPECT_EQ(c.ok() ? c->ToString() : "error", direct) << "cached, pass " << pass;
    }
    return direct;
  }

  std::unique_ptr<hlo::HloModule> module_;
  ProjectionCache cache_;
};

TEST_F(RuleTest, ConvolutionPassesBatchSpatialAndOutputFeatures) {
  const HloInstruction* conv = Root(R"(HloModule m
ENTRY e {
  x = f32[8,16,16,3] parameter(0)
  k = f32[3,3,3,32] parameter(1)
  ROOT c = f32[8,16,16,32] convolution(x, k), window={size=3x3 pad=1_1x1_1},
    dim_labels=b01f_01io->b01f
})");
  // Batch and spatial tiles of the input reach the result; input features contract.
  EXPECT_EQ(Project(*conv, 0, 2, "{devices=[2,2,1,1]<=[4]}"), "{devices=[2,2,1,1]<=[4]}");
  EXPECT_EQ(Project(*conv, 0, 2, "{devices=[1,1,1,2]<=[2]}"), "{replicated}");
  EXPECT_EQ(Project(*conv, 0, 1, "{devices=[1,1,1,2]<=[2]}"), "{devices=[1,1,2,1]<=[2]}");
  // Output features come from the kernel's; the kernel's spatial dims stay whole.
  EXPECT_EQ(Project(*conv, 2, 1, "{devices=[1,1,1,2]<=[2]}"), "{devices=[1,1,1,2]<=[2]}");
  EXPECT_EQ(Project(*conv, 1, 2, "{devices=[2,1,1,1]<=[2]}"), "{replicated}");
}

TEST_F(RuleTest, GatherPassesWholeOperandDimsAndIndexBatchDims) {
  // An embedding lookup: rows gathered (dim 0 sliced and collapsed), columns taken whole.
  const HloInstruction* g = Root(R"(HloModule m
ENTRY e {
  t = f32[64,16] parameter(0)
  i = s32[8,1] parameter(1)
  ROOT g = f32[8,16] gather(t, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
})");
  EXPECT_EQ(Project(*g, 0, 2, "{devices=[1,4]<=[4]}"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(Project(*g, 2, 0, "{devices=[1,4]<=[4]}"), "{devices=[1,4]<=[4]}");
  // The gathered (vocabulary) dim stays whole; index batch dims pass to the result's batch.
  EXPECT_EQ(Project(*g, 0, 2, "{devices=[4,1]<=[4]}"), "{replicated}");
  EXPECT_EQ(Project(*g, 1, 2, "{devices=[4,1]<=[4]}"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(Project(*g, 2, 1, "{devices=[4,1]<=[4]}"), "{devices=[4,1]<=[4]}");
}

TEST_F(RuleTest, ScatterResultIsItsOperandUpdatedWindowDimsReachTheUpdates) {
  const HloInstruction* sc = Root(R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  t = f32[64,16] parameter(0)
  i = s32[8,1] parameter(1)
  u = f32[8,16] parameter(2)
  ROOT s = f32[64,16] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})");
  EXPECT_EQ(Project(*sc, 0, 3, "{devices=[1,4]<=[4]}"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(Project(*sc, 3, 2, "{devices=[1,4]<=[4]}"), "{devices=[1,4]<=[4]}");
  // The result is the operand updated: split rows stay split (XLA's propagation gives a
  // scatter its operand's sharding; the partitioner masks the updates outside each shard). The
  // updates' scatter dim is an index batch dim: it does not reach the result's rows.
  EXPECT_EQ(Project(*sc, 0, 3, "{devices=[4,1]<=[4]}"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(Project(*sc, 3, 0, "{devices=[4,1]<=[4]}"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(Project(*sc, 2, 3, "{devices=[4,1]<=[4]}"), "{replicated}");
  EXPECT_EQ(Project(*sc, 3, 2, "{devices=[4,1]<=[4]}"), "{replicated}");
}

TEST_F(RuleTest, DepthwiseConvolutionSplitsFeaturesOnBothSides) {
  const HloInstruction* conv = Root(R"(HloModule m
ENTRY e {
  x = f32[2,8,10] parameter(0)
  k = f32[8,1,3] parameter(1)
  ROOT c = f32[2,8,8] convolution(x, k), window={size=3}, dim_labels=bf0_oi0->bf0,
    feature_group_count=8
})");
  EXPECT_EQ(Project(*conv, 0, 2, "{devices=[1,4,1]<=[4]}"), "{devices=[1,4,1]<=[4]}");
  EXPECT_EQ(Project(*conv, 2, 0, "{devices=[1,4,1]<=[4]}"), "{devices=[1,4,1]<=[4]}");
}

TEST_F(RuleTest, ReduceWindowPassesEveryDimExceptBaseDilated) {
  const HloInstruction* rw = Root(R"(HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[16,8] parameter(0)
  i = f32[] constant(0)
  ROOT r = f32[8,15] reduce-window(x, i), window={size=3x1 stride=2x1 pad=1_0x0_0 lhs_dilate=1x2},
    to_apply=max
})");
  EXPECT_EQ(Project(*rw, 0, 2, "{devices=[2,1]<=[2]}"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(Project(*rw, 0, 2, "{devices=[1,2]<=[2]}"), "{replicated}");
}

TEST_F(RuleTest, DimensionMapsOfBroadcastAndTransposeReadBackwards) {
  // The map the partitioner's broadcast and transpose handlers read: for each operand dim, the
  // result dim with the same factor.
  const HloInstruction* bcast = Root(R"(HloModule m
ENTRY e {
  x = f32[6,4] parameter(0)
  ROOT b = f32[6,8,4] broadcast(x), dimensions={0,2}
})");
  std::optional<FactorRule> rule = FactorRuleFor(*bcast);
  ASSERT_TRUE(rule.has_value());
  EXPECT_EQ(FactorDimMap(*rule, rule->result_side(), 0, 2), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(FactorDimMap(*rule, 0, rule->result_side(), 3), (std::vector<int64_t>{0, -1, 1}));
  const HloInstruction* transpose = Root(R"(HloModule m
ENTRY e {
  x = f32[4,6,8] parameter(0)
  ROOT t = f32[8,4,6] transpose(x), dimensions={2,0,1}
})");
  rule = FactorRuleFor(*transpose);
  ASSERT_TRUE(rule.has_value());
  EXPECT_EQ(FactorDimMap(*rule, rule->result_side(), 0, 3), (std::vector<int64_t>{1, 2, 0}));
  // Dims that must stay whole map nowhere: pad's interior-padded dim.
  const HloInstruction* pad = Root(R"(HloModule m
ENTRY e {
  x = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[7,6] pad(x, z), padding=0_0_1x0_0
})");
  rule = FactorRuleFor(*pad);
  ASSERT_TRUE(rule.has_value());
  EXPECT_EQ(FactorDimMap(*rule, rule->result_side(), 0, 2), (std::vector<int64_t>{-1, 1}));
}

TEST_F(RuleTest, DotMapsBatchFreeAndContractingFactorsBothWays) {
  const HloInstruction* dot = Root(R"(HloModule m
ENTRY e {
  a = f32[4,8,16] parameter(0)
  b = f32[4,16,6] parameter(1)
  ROOT d = f32[4,8,6] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0},
    lhs_contracting_dims={2}, rhs_contracting_dims={1}
})");
  std::optional<FactorRule> rule = FactorRuleFor(*dot);
  ASSERT_TRUE(rule.has_value());
  EXPECT_EQ(rule->name, "dot");
  ASSERT_EQ(rule->factors.size(), 4u);  // batch, m, n, k
  // Forward: a free dim reaches the result; a contracting dim does not.
  EXPECT_EQ(Project(*dot, 0, 2, "{devices=[1,2,1]<=[2]}"), "{devices=[1,2,1]<=[2]}");
  EXPECT_EQ(Project(*dot, 0, 2, "{devices=[1,1,2]<=[2]}"), "{replicated}");
  // Sideways: contracting dims line up between operands.
  EXPECT_EQ(Project(*dot, 0, 1, "{devices=[1,1,2]<=[2]}"), "{devices=[1,2,1]<=[2]}");
  // Backward: batch reaches both operands, n only the rhs.
  EXPECT_EQ(Project(*dot, 2, 0, "{devices=[2,1,1]<=[2]}"), "{devices=[2,1,1]<=[2]}");
  EXPECT_EQ(Project(*dot, 2, 1, "{devices=[1,1,2]<=[2]}"), "{devices=[1,1,2]<=[2]}");
  EXPECT_EQ(Project(*dot, 2, 0, "{devices=[1,1,2]<=[2]}"), "{replicated}");
}

TEST_F(RuleTest, ReduceDropsReducedDimsForwardAndReplicatesThemBackward) {
  const HloInstruction* reduce = Root(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(p, z), dimensions={1}, to_apply=add
})");
  EXPECT_EQ(Project(*reduce, 0, 2, "{devices=[2,2]<=[4]}"),
            "{devices=[2,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(Project(*reduce, 2, 0, "{devices=[2]<=[2]}"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(Project(*reduce, 2, 1, "{devices=[2]<=[2]}"), "{replicated}");
}

TEST_F(RuleTest, BroadcastAndTransposeAreInversesOfThemselves) {
  const HloInstruction* bcast = Root(R"(HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  ROOT b = f32[8,16] broadcast(p), dimensions={1}
})");
  EXPECT_EQ(Project(*bcast, 0, 1, "{devices=[2]<=[2]}"), "{devices=[1,2]<=[2]}");
  EXPECT_EQ(Project(*bcast, 1, 0, "{devices=[1,2]<=[2]}"), "{devices=[2]<=[2]}");
  EXPECT_EQ(Project(*bcast, 1, 0, "{devices=[2,1]<=[2]}"), "{replicated}");
  const HloInstruction* transpose = Root(R"(HloModule m
ENTRY e {
  p = f32[4,8] parameter(0)
  ROOT t = f32[8,4] transpose(p), dimensions={1,0}
})");
  EXPECT_EQ(Project(*transpose, 0, 1, "{devices=[2,1]<=[2]}"), "{devices=[1,2]<=[2]}");
  EXPECT_EQ(Project(*transpose, 1, 0, "{devices=[1,2]<=[2]}"), "{devices=[2,1]<=[2]}");
}

TEST_F(RuleTest, ReshapeUsesReshapeShardingInBothDirections) {
  const HloInstruction* reshape = Root(R"(HloModule m
ENTRY e {
  p = f32[4,6] parameter(0)
  ROOT r = f32[24] reshape(p)
})");
  EXPECT_EQ(Project(*reshape, 0, 1, "{devices=[2,1]<=[2]}"), "{devices=[2]<=[2]}");
  EXPECT_EQ(Project(*reshape, 1, 0, "{devices=[2]<=[2]}"), "{devices=[2,1]<=[2]}");
}

// Sliced, edge-padded, concatenated and reversed dims pass (the partitioner exchanges halos
// there); interior padding and dynamic-slice keep their dims whole, and a dynamic-update-slice's
// update does not take the operand's tiling of a dim it covers only in part.
TEST_F(RuleTest, WindowLikeDimsPassButInteriorPaddingAndDynamicSlicesStayWhole) {
  const HloInstruction* slice = Root(R"(HloModule m
ENTRY e {
  p = f32[8,16] parameter(0)
  ROOT s = f32[8,10] slice(p), slice={[0:8], [2:12]}
})");
  EXPECT_EQ(Project(*slice, 0, 1, "{devices=[2,2]<=[4]}"), "{devices=[2,2]<=[4]}");
  EXPECT_EQ(Project(*slice, 1, 0, "{devices=[1,2]<=[2]}"), "{devices=[1,2]<=[2]}");
  const HloInstruction* concat = Root(R"(HloModule m
ENTRY e {
  a = f32[8,4] parameter(0)
  b = f32[8,6] parameter(1)
  ROOT c = f32[8,10] concatenate(a, b), dimensions={1}
})");
  EXPECT_EQ(Project(*concat, 2, 1, "{devices=[2,1]<=[2]}"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(Project(*concat, 0, 2, "{devices=[1,2]<=[2]}"), "{devices=[1,2]<=[2]}");
  const HloInstruction* pad = Root(R"(HloModule m
ENTRY e {
  p = f32[8,6] parameter(0)
  z = f32[] constant(0)
  ROOT q = f32[10,11] pad(p, z), padding=1_1x0_0_1
})");
  EXPECT_EQ(Project(*pad, 0, 2, "{devices=[2,1]<=[2]}"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(Project(*pad, 0, 2, "{devices=[1,2]<=[2]}"), "{replicated}");
  const HloInstruction* ds = Root(R"(HloModule m
ENTRY e {
  p = f32[8,16] parameter(0)
  i = s32[] parameter(1)
  ROOT s = f32[8,4] dynamic-slice(p, i, i), dynamic_slice_sizes={8,4}
})");
  EXPECT_EQ(Project(*ds, 0, 3, "{devices=[1,2]<=[2]}"), "{replicated}");
  const HloInstruction* dus = Root(R"(HloModule m
ENTRY e {
  p = f32[8,16] parameter(0)
  u = f32[8,4] parameter(1)
  i = s32[] parameter(2)
  ROOT s = f32[8,16] dynamic-update-slice(p, u, i, i)
})");
  EXPECT_EQ(Project(*dus, 0, 4, "{devices=[2,2]<=[4]}"), "{devices=[2,2]<=[4]}");
  EXPECT_EQ(Project(*dus, 4, 1, "{devices=[2,2]<=[4]}"),
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
}

TEST_F(RuleTest, ElementwiseSkipsScalarOperandsAndTinyDimsStayWhole) {
  const HloInstruction* clamp = Root(R"(HloModule m
ENTRY e {
  lo = f32[] parameter(0)
  x = f32[1,8] parameter(1)
  hi = f32[] parameter(2)
  ROOT c = f32[1,8] clamp(lo, x, hi)
})");
  EXPECT_EQ(Project(*clamp, 1, 3, "{devices=[1,2]<=[2]}"), "{devices=[1,2]<=[2]}");
  EXPECT_EQ(Project(*clamp, 3, 0, "{devices=[1,2]<=[2]}"), "{replicated}");
  // A dim split into more tiles than it has elements is made whole where the projection
  // rebuilds the tiles (its devices join the replication); the same shape keeps the split its
  // source already holds (a user's padded shards).
  const HloInstruction* transpose = Root(R"(HloModule m
ENTRY e {
  p = f32[8,3] parameter(0)
  ROOT t = f32[3,8] transpose(p), dimensions={1,0}
})");
  EXPECT_EQ(Project(*transpose, 0, 1, "{devices=[2,4]<=[8]}"),
            "{devices=[1,2,4]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(Project(*transpose, 1, 1, "{devices=[4,2]<=[8]}"), "{devices=[4,2]<=[8]}");
}

TEST_F(RuleTest, SelectAndScatterPassesTrivialWindowDimsOnly) {
  const HloInstruction* sas = Root(R"(HloModule m
sum {
  l = f32[] parameter(0)
  r = f32[] parameter(1)
  ROOT s = f32[] add(l, r)
}
gt {
  l = f32[] parameter(0)
  r = f32[] parameter(1)
  ROOT c = pred[] compare(l, r), direction=GT
}
ENTRY e {
  x = f32[8,16,6] parameter(0)
  s = f32[8,8,6] parameter(1)
  i = f32[] constant(0)
  ROOT r = f32[8,16,6] select-and-scatter(x, s, i), window={size=1x2x1 stride=1x2x1},
    select=gt, scatter=sum
})");
  // Operand, source and result share the batch and channel dims; the windowed dim stays whole.
  EXPECT_EQ(Project(*sas, 0, 3, "{devices=[2,1,4]<=[8]}"), "{devices=[2,1,4]<=[8]}");
  EXPECT_EQ(Project(*sas, 3, 1, "{devices=[2,1,4]<=[8]}"), "{devices=[2,1,4]<=[8]}");
  EXPECT_EQ(Project(*sas, 1, 0, "{devices=[1,1,4,2]<=[8] last_tile_dim_replicate}"),
            "{devices=[1,1,4,2]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(Project(*sas, 0, 3, "{devices=[1,2,1]<=[2]}"), "{replicated}");
}

TEST_F(RuleTest, OpsWithoutRulesAreBarriers) {
  const HloInstruction* cc = Root(R"(HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  ROOT c = f32[8] custom-call(p), custom_call_target="ShardBarrierFrom"
})");
  EXPECT_FALSE(FactorRuleFor(*cc).has_value());
}

// The projection cache tells apart what a projection depends on: the target's shape (two
// reshapes of one operand) and the dimension map (two transposes of one shape).
TEST_F(RuleTest, ProjectionCacheKeysOnShapesAndDimensionMaps) {
  struct Case {
    const char* root;  // The entry's root, of parameter x.
    const char* operand;
    const char* projected;  // {devices=[2,1...]<=[2]} on x, projected to the root.
  };
  const Case cases[] = {
      {"f32[32] reshape(x)", "f32[8,4]", "{devices=[2]<=[2]}"},
      {"f32[2,4,4] reshape(x)", "f32[8,4]", "{devices=[2,1,1]<=[2]}"},
      {"f32[4,4,4] transpose(x), dimensions={1,0,2}", "f32[4,4,4]", "{devices=[1,2,1]<=[2]}"},
      {"f32[4,4,4] transpose(x), dimensions={0,2,1}", "f32[4,4,4]", "{devices=[2,1,1]<=[2]}"},
  };
  for (const Case& c : cases) {
    const HloInstruction* root = Root(std::string("HloModule m\nENTRY e {\n  x = ") + c.operand +
                                      " parameter(0)\n  ROOT r = " + c.root + "\n}");
    const std::string tiled =
        root->operand(0)->shape().rank() == 2 ? "{devices=[2,1]<=[2]}" : "{devices=[2,1,1]<=[2]}";
    EXPECT_EQ(Project(*root, 0, 1, tiled), c.projected) << c.root;
  }
}

// A convolution used as an einsum: spatial dim 0 pairs input and kernel positions one to one
// (size = lhs_dilate = 32, stride 31), so it is a batch of input, kernel and result.
TEST_F(RuleTest, ConvolutionSpatialDimPairingPositionsIsABatch) {
  const HloInstruction* conv = Root(R"(HloModule m
ENTRY e {
  x = f32[32,24,64] parameter(0)
  k = f32[32,96,64] parameter(1)
  ROOT c = f32[32,24,96] convolution(x, k), dim_labels=0bf_0oi->0bf,
    window={size=32 stride=31 lhs_dilate=32}
})");
  EXPECT_EQ(Project(*conv, 0, 2, "{devices=[2,1,1]<=[2]}"), "{devices=[2,1,1]<=[2]}");
  EXPECT_EQ(Project(*conv, 0, 1, "{devices=[2,1,1]<=[2]}"), "{devices=[2,1,1]<=[2]}");
  EXPECT_EQ(Project(*conv, 2, 1, "{devices=[2,1,1]<=[2]}"), "{devices=[2,1,1]<=[2]}");
  // An ordinary base-dilated spatial dim stays whole.
  const HloInstruction* dilated = Root(R"(HloModule m
ENTRY e {
  x = f32[32,24,64] parameter(0)
  k = f32[3,96,64] parameter(1)
  ROOT c = f32[94,24,96] convolution(x, k), dim_labels=0bf_0oi->0bf,
    window={size=3 pad=1_1 lhs_dilate=3}
})");
  EXPECT_EQ(Project(*dilated, 0, 2, "{devices=[2,1,1]<=[2]}"), "{replicated}");
}

// The kernel's free dim in disguise: a one-element input padded by N-1 on both sides and a
// reversed kernel of N: the kernel's tiles reach the result and back; the input stays whole.
TEST_F(RuleTest, ConvolutionKernelFreeDimPassesBetweenKernelAndResult) {
  const HloInstruction* conv = Root(R"(HloModule m
ENTRY e {
  x = f32[6,1,8] parameter(0)
  k = f32[8,8,4] parameter(1)
  ROOT c = f32[6,8,4] convolution(x, k), window={size=8 pad=7_7 rhs_reversal=1},
    dim_labels=b0f_0io->b0f
})");
  EXPECT_EQ(Project(*conv, 1, 2, "{devices=[2,1,1]<=[2]}"), "{devices=[1,2,1]<=[2]}");
  EXPECT_EQ(Project(*conv, 2, 1, "{devices=[1,2,1]<=[2]}"), "{devices=[2,1,1]<=[2]}");
  EXPECT_EQ(Project(*conv, 2, 0, "{devices=[1,2,1]<=[2]}"), "{replicated}");
}

}  // namespace
}  // namespace spmd

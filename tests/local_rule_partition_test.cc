// Ops whose factor rule is their whole partitioning (spmd::RuleKind::kLocal: fft, cholesky,
// triangular-solve) go through one handler (local_rule_handler.cc). For each: propagation
// carries a split through its rule, the partitioner runs the op on shards, and the SPMD
// program equals the unpartitioned module on random data on the CPU executor and under the
// point evaluator. A new op of this
// kind must add its module below (EveryLocalRuleOpHasAModuleHere fails until it does).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/hlo_opcode.h"
#include "spmd/propagation/factor_rule.h"
#include "tests/partition_test_util.h"

namespace {

using hlo::HloOpcode;

std::string Name(HloOpcode opcode) { return std::string(hlo::HloOpcodeString(opcode)); }

// The instructions that build `a`, f32[8,16,16] positive definite (x . x^T + 16 I), from the
// parameter x split along the batch dim.
constexpr char kPositiveDefinite[] = R"(
  x = f32[8,16,16] parameter(0), sharding={devices=[4,1,1]<=[4]}
  xt = f32[8,16,16] transpose(x), dimensions={0,2,1}
  xx = f32[8,16,16] dot(x, xt), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  i = s32[16,16] iota(), iota_dimension=0
  j = s32[16,16] iota(), iota_dimension=1
  eq = pred[16,16] compare(i, j), direction=EQ
  s = f32[] constant(16)
  z = f32[] constant(0)
  sb = f32[16,16] broadcast(s), dimensions={}
  zb = f32[16,16] broadcast(z), dimensions={}
  eye = f32[16,16] select(eq, sb, zb)
  eyeb = f32[8,16,16] broadcast(eye), dimensions={1,2}
  a = f32[8,16,16] add(xx, eyeb)
)";

// Each op as `m`, its inputs split by their parameters' shardings only.
const std::map<HloOpcode, std::string>& ModulesByOpcode() {
  static const auto* modules = new std::map<HloOpcode, std::string>{
      {HloOpcode::kFft, R"(HloModule fft, num_partitions=4
ENTRY e {
  p = f32[8,6,16] parameter(0), sharding={devices=[2,2,1]<=[4]}
  m = c64[8,6,9] fft(p), fft_type=RFFT, fft_length={16}
  ROOT n = c64[8,6,9] negate(m)
})"},
      {HloOpcode::kCholesky,
       std::string("HloModule cholesky, num_partitions=4\nENTRY e {") + kPositiveDefinite + R"(
  m = f32[8,16,16] cholesky(a), lower=true
  ROOT n = f32[8,16,16] negate(m)
})"},
      {HloOpcode::kTriangularSolve,
       std::string("HloModule triangular_solve, num_partitions=4\nENTRY e {") + kPositiveDefinite +
           R"(
  b = f32[8,16,6] parameter(1), sharding={devices=[2,1,2]<=[4]}
  m = f32[8,16,6] triangular-solve(a, b), left_side=true, lower=false, transpose_a=ADJOINT
  ROOT n = f32[8,16,6] negate(m)
})"},
  };
  return *modules;
}

TEST(LocalRulePartitionTest, PartitionerRunsEveryLocalRuleOpThroughOneHandler) {
  testing_util::ExpectOneHandler(spmd::OpcodesOfRuleKind(spmd::RuleKind::kLocal), HloOpcode::kSort);
}

TEST(LocalRulePartitionTest, EveryLocalRuleOpHasAModuleHere) {
  for (HloOpcode opcode : spmd::OpcodesOfRuleKind(spmd::RuleKind::kLocal)) {
    EXPECT_EQ(ModulesByOpcode().count(opcode), 1u) << "add a module for " << Name(opcode);
  }
}

TEST(LocalRulePartitionTest, EveryLocalRuleOpPartitionsLikeTheUnpartitionedModule) {
  spmd::PartitionerOptions strict;
  strict.strict = true;  // A replicated fallback is an error.
  for (const auto& [opcode, text] : ModulesByOpcode()) {
    SCOPED_TRACE(Name(opcode));
    testing_util::Partitioned p =
        testing_util::Partition(testing_util::PropagatedText(text), strict);
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_TRUE(testing_util::RunsOnItsShard(p, "m", opcode));
    testing_util::ExpectVerifies(p, 4);
    // The point evaluator (sampled verification) on random data.
    testing_util::ExpectSampledVerifies(p, 4);
  }
}

// Requested tilings that split the dims that must stay whole: their tiles move to a batch dim
// or to b's independent columns or rows, every side and transpose form, all on 8 devices.
TEST(LocalRulePartitionTest, SplitMatricesMoveTheirTilesAndStillMatch) {
  const std::string text =
      std::string("HloModule linalg, num_partitions=8\nENTRY e {") + kPositiveDefinite + R"(
  r = f32[8,16,6] parameter(1), sharding={devices=[2,1,4]<=[8]}
  l = f32[8,16,16] cholesky(a), lower=true, sharding={devices=[2,2,2]<=[8]}
  u = f32[8,16,16] cholesky(a), lower=false, sharding={devices=[1,8,1]<=[8]}
  y = f32[8,16,6] triangular-solve(l, r), left_side=true, lower=true, transpose_a=NO_TRANSPOSE, sharding={devices=[1,8,1]<=[8]}
  w = f32[8,16,6] triangular-solve(l, y), left_side=true, lower=true, transpose_a=TRANSPOSE, sharding={devices=[4,1,2]<=[8]}
  rt = f32[8,6,16] transpose(r), dimensions={0,2,1}
  v = f32[8,6,16] triangular-solve(u, rt), left_side=false, lower=false, unit_diagonal=true, transpose_a=ADJOINT, sharding={devices=[1,2,4]<=[8]}
  ROOT t = (f32[8,16,6], f32[8,6,16], f32[8,16,16]) tuple(w, v, u)
})";
  spmd::PartitionerOptions strict;
  strict.strict = true;
  testing_util::Partitioned p = testing_util::Partition(text, strict);
  ASSERT_NE(p.spmd, nullptr);
  std::map<std::string, hlo::Shape> local;
  for (const auto& instr : p.spmd->entry_computation()->instructions()) {
    if (instr->opcode() == HloOpcode::kCholesky || instr->opcode() == HloOpcode::kTriangularSolve) {
      local.emplace(instr->name().substr(0, instr->name().find('.')), instr->shape());
    }
  }
  // Each runs on an eighth of its result, its matrices whole.
  const std::map<std::string, int64_t> elements = {{"l", 8 * 16 * 16},
                                                   {"u", 8 * 16 * 16},
                                                   {"y", 8 * 16 * 6},
                                                   {"w", 8 * 16 * 6},
                                                   {"v", 8 * 6 * 16}};
  for (const auto& [name, total] : elements) {
    ASSERT_EQ(local.count(name), 1u) << name << "\n" << p.spmd->ToString();
    EXPECT_EQ(local.at(name).num_elements() * 8, total)
        << name << ": " << local.at(name).ToString();
  }
  testing_util::ExpectVerifies(p, 8);
}

// A single matrix (or a 2-D transform) split along the dims that must stay whole has nowhere
// to put its tiles: computed whole, a counted fallback -- and no crash once the first dim made
// the tiling replicated (WholeDimsTiling read the second dim of a replicated sharding).
TEST(LocalRulePartitionTest, NowhereToMoveTheTilesIsACountedFallback) {
  for (const char* text : {R"(HloModule fft2, num_partitions=2
ENTRY e {
  p = c64[8,8] parameter(0), sharding={devices=[2,1]0,1}
  ROOT f = c64[8,8] fft(p), fft_type=FFT, fft_length={8,8}, sharding={devices=[2,1]0,1}
})",
                           R"(HloModule cholesky2, num_partitions=2
ENTRY e {
  x = f32[16,16] parameter(0), sharding={devices=[2,1]0,1}
  xt = f32[16,16] transpose(x), dimensions={1,0}
  xx = f32[16,16] dot(x, xt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[] constant(16)
  sb = f32[16,16] broadcast(s), dimensions={}
  a = f32[16,16] add(xx, sb)
  ROOT f = f32[16,16] cholesky(a), lower=true, sharding={devices=[2,1]0,1}
})"}) {
    SCOPED_TRACE(text);
    testing_util::Partitioned p = testing_util::Partition(text);
    ASSERT_NE(p.spmd, nullptr);
    EXPECT_NE(p.explain.find("must stay whole and no other dim takes their tiles"),
              std::string::npos)
        << p.explain;
    testing_util::ExpectVerifies(p, 2);
  }
}

}  // namespace

// Adding a data-movement op touches 4 files (docs/architecture.md, "What an op means is written
// once"): its opcode line (hlo/ir/hlo_opcode.h), its shape inference (hlo/ir/shape_inference.cc),
// its factor rule (spmd/propagation/factor_rule.cc) and its strided view
// (runtime/common/strided_view.cc). Every other consumer reaches it through one generic path
// driven by those tables. This test checks both halves for every opcode the tables hold today:
//   * each consumer runs every strided-view opcode (runtime::SourceViewOpcodes) through one
//     handler -- the CPU op registry, the point evaluator, the CUDA op registry -- and the
//     partitioner every dimension-map opcode (spmd::RuleKind::kDimensionMap) through
//     HandleDimensionMap;
//   * every opcode on both generic paths goes through the parser and printer, the verifier,
//     propagation and the partitioner, and the partitioned program equals the unpartitioned one
//     on random data on the CPU executor and under the point evaluator (sampled verification).
// A new op of this kind must add its module below (the last test fails until it does).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/hlo_opcode.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/common/strided_view.h"
#include "runtime/cpu/evaluator.h"
#include "runtime/cpu/point_ops.h"
#include "runtime/cuda/op_registry.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/propagation/factor_rule.h"
#include "tests/partition_test_util.h"

namespace {

using hlo::HloOpcode;

std::string Name(HloOpcode opcode) { return std::string(hlo::HloOpcodeString(opcode)); }

// Every opcode on both generic paths, as the op `m` of a module whose parameter is split and
// whose root asks for another split, so propagation and the partitioner both have work to do.
const std::map<HloOpcode, std::string>& ModulesByOpcode() {
  static const auto* modules = new std::map<HloOpcode, std::string>{
      {HloOpcode::kTranspose, R"(
HloModule transpose, num_partitions=4
ENTRY e {
  p = f32[8,6,4] parameter(0), sharding={devices=[2,1,2]<=[4]}
  m = f32[4,8,6] transpose(p), dimensions={2,0,1}
  ROOT n = f32[4,8,6] negate(m), sharding={devices=[2,2,1]<=[4]}
})"},
      {HloOpcode::kBroadcast, R"(
HloModule broadcast, num_partitions=4
ENTRY e {
  p = s32[8,6] parameter(0), sharding={devices=[2,2]<=[4]}
  m = s32[8,5,6] broadcast(p), dimensions={0,2}
  ROOT n = s32[8,5,6] negate(m), sharding={devices=[2,1,2]<=[4]}
})"},
  };
  return *modules;
}

std::vector<HloOpcode> OnBothGenericPaths() {
  std::vector<HloOpcode> both;
  for (HloOpcode opcode : spmd::OpcodesOfRuleKind(spmd::RuleKind::kDimensionMap)) {
    if (runtime::HasSourceView(opcode)) both.push_back(opcode);
  }
  return both;
}

TEST(DataMovementExtensionTest, ExecutorsRunEveryStridedViewOpThroughOneHandler) {
  const std::vector<HloOpcode> opcodes = runtime::SourceViewOpcodes();
  ASSERT_FALSE(opcodes.empty());
  const runtime::OpHandler cpu = runtime::FindOpHandler(opcodes.front());
  const auto points = runtime::PointOps::HandlerOf(opcodes.front());
  const runtime::cuda::CudaOpHandler cuda = runtime::cuda::FindCudaOpHandler(opcodes.front());
  ASSERT_NE(cpu, nullptr);
  ASSERT_NE(points, nullptr);
  ASSERT_NE(cuda, nullptr);
  for (HloOpcode opcode : opcodes) {
    EXPECT_EQ(runtime::FindOpHandler(opcode), cpu) << Name(opcode);
    EXPECT_EQ(runtime::PointOps::HandlerOf(opcode), points) << Name(opcode);
    EXPECT_EQ(runtime::cuda::FindCudaOpHandler(opcode), cuda) << Name(opcode);
  }
  // Ops without a view have their own handlers (the shared one is not everyone's).
  EXPECT_NE(runtime::FindOpHandler(HloOpcode::kPad), cpu);
  EXPECT_NE(runtime::PointOps::HandlerOf(HloOpcode::kDot), points);
  EXPECT_NE(runtime::cuda::FindCudaOpHandler(HloOpcode::kPad), cuda);
}

TEST(DataMovementExtensionTest, PartitionerRunsEveryDimensionMapOpThroughOneHandler) {
  testing_util::ExpectOneHandler(spmd::OpcodesOfRuleKind(spmd::RuleKind::kDimensionMap),
                                 HloOpcode::kReshape);
}

TEST(DataMovementExtensionTest, EveryGenericOpHasAModuleHere) {
  EXPECT_FALSE(OnBothGenericPaths().empty());
  for (HloOpcode opcode : OnBothGenericPaths()) {
    EXPECT_EQ(ModulesByOpcode().count(opcode), 1u) << "add a module for " << Name(opcode);
  }
}

TEST(DataMovementExtensionTest, EveryGenericOpPartitionsLikeTheUnpartitionedModule) {
  for (HloOpcode opcode : OnBothGenericPaths()) {
    SCOPED_TRACE(Name(opcode));
    auto it = ModulesByOpcode().find(opcode);
    if (it == ModulesByOpcode().end()) continue;  // EveryGenericOpHasAModuleHere fails.
    testing_util::Partitioned p = testing_util::Partition(testing_util::PropagatedText(it->second));
    ASSERT_NE(p.spmd, nullptr);
    // Propagation gave the op a split sharding, and the partitioner ran it on its shard.
    EXPECT_TRUE(testing_util::RunsOnItsShard(p, "m", opcode));
    EXPECT_EQ(p.explain.find("replicated"), std::string::npos) << p.explain;
    // The CPU executor on random data, two seeds.
    testing_util::ExpectVerifies(p, 4);
    // The point evaluator (sampled verification) on random data.
    testing_util::ExpectSampledVerifies(p, 4);
  }
}

}  // namespace

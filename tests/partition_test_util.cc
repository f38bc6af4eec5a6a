#include "tests/partition_test_util.h"

#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/transforms/dead_code_elimination.h"
#include "hlo/verifier/hlo_verifier.h"
#include "runtime/cpu/sampled_verify.h"
#include "runtime/cpu/verify.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/propagation/sharding_propagation.h"

namespace testing_util {

Partitioned Partition(const std::string& text, spmd::PartitionerOptions options) {
  Partitioned out;
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> original = hlo::ParseHloModule(text);
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd_module = hlo::ParseHloModule(text);
  EXPECT_TRUE(original.ok() && spmd_module.ok());
  if (!original.ok() || !spmd_module.ok()) return out;
  out.original = *std::move(original);
  spmd::SpmdPartitioner partitioner(std::move(options));
  absl::StatusOr<bool> ran = partitioner.Run(spmd_module->get());
  EXPECT_TRUE(ran.ok()) << ran.status();
  if (!ran.ok()) return out;
  out.spmd = *std::move(spmd_module);
  hlo::DeadCodeElimination cleanup;
  EXPECT_TRUE(cleanup.Run(out.spmd.get()).ok());
  for (const std::string& line : partitioner.log().lines) out.explain += line + "\n";
  out.origins = partitioner.log().origins;
  return out;
}

std::map<hlo::HloOpcode, int> Counts(const hlo::HloModule& module) {
  std::map<hlo::HloOpcode, int> counts;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) ++counts[instr->opcode()];
  }
  return counts;
}

void ExpectVerifies(const Partitioned& p, int64_t devices) {
  ASSERT_NE(p.spmd, nullptr);
  for (uint64_t seed : {1, 2}) {
    runtime::VerifyOptions options;
    options.seed = seed;
    options.num_partitions = devices;
    absl::StatusOr<runtime::VerifyResult> result =
        runtime::VerifyAgainst(*p.original, *p.spmd, options);
    ASSERT_TRUE(result.ok()) << result.status() << "\n" << p.spmd->ToString();
    EXPECT_TRUE(result->ok()) << result->ToString() << "\n" << p.spmd->ToString() << p.explain;
  }
}

void ExpectSampledVerifies(const Partitioned& p, int64_t devices) {
  ASSERT_NE(p.spmd, nullptr);
  runtime::SampledVerifyOptions options;
  options.seed = 3;
  options.num_partitions = devices;
  absl::StatusOr<runtime::VerifyResult> sampled =
      runtime::VerifySampled(*p.original, *p.spmd, options);
  ASSERT_TRUE(sampled.ok()) << sampled.status();
  EXPECT_TRUE(sampled->ok()) << sampled->ToString();
}

void ExpectOneHandler(const std::vector<hlo::HloOpcode>& opcodes, hlo::HloOpcode other) {
  ASSERT_FALSE(opcodes.empty());
  const spmd::PartitionHandler handler = spmd::FindPartitionHandler(opcodes.front());
  EXPECT_NE(handler, &spmd::HandleReplicated);
  for (hlo::HloOpcode opcode : opcodes) {
    EXPECT_EQ(spmd::FindPartitionHandler(opcode), handler) << hlo::HloOpcodeString(opcode);
  }
  EXPECT_NE(spmd::FindPartitionHandler(other), handler) << hlo::HloOpcodeString(other);
}

std::string PropagatedText(const std::string& text) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  const std::string printed = (*module)->ToString();
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> again = hlo::ParseHloModule(printed);
  EXPECT_TRUE(again.ok()) << again.status();
  if (!again.ok()) return "";
  EXPECT_EQ((*again)->ToString(), printed);
  EXPECT_TRUE(hlo::VerifyModule(**again).ok());
  spmd::ShardingPropagation propagation;
  absl::StatusOr<bool> ran = propagation.Run(again->get());
  EXPECT_TRUE(ran.ok()) << ran.status();
  return (*again)->ToString();
}

const hlo::HloInstruction* FindInEntry(const hlo::HloModule& module, std::string_view name) {
  for (const auto& instr : module.entry_computation()->instructions()) {
    if (instr->name() == name) return instr.get();
  }
  return nullptr;
}

::testing::AssertionResult RunsOnItsShard(const Partitioned& p, std::string_view name,
                                          hlo::HloOpcode opcode) {
  if (p.spmd == nullptr) return ::testing::AssertionFailure() << "not partitioned";
  const hlo::HloInstruction* original = FindInEntry(*p.original, name);
  if (original == nullptr) return ::testing::AssertionFailure() << "no %" << name;
  if (!original->has_sharding() || original->sharding().IsReplicated()) {
    return ::testing::AssertionFailure() << "%" << name << " is not split:\n"
                                         << p.original->ToString();
  }
  absl::StatusOr<hlo::Shape> local = hlo::PaddedShardShape(original->sharding(), original->shape());
  if (!local.ok()) return ::testing::AssertionFailure() << local.status();
  for (const auto& instr : p.spmd->entry_computation()->instructions()) {
    if (instr->opcode() == opcode && instr->shape().Compatible(*local)) {
      return ::testing::AssertionSuccess();
    }
  }
  return ::testing::AssertionFailure()
         << "no " << hlo::HloOpcodeString(opcode) << " on " << local->ToString() << ":\n"
         << p.spmd->ToString();
}

}  // namespace testing_util

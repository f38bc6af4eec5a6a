#include "tests/partition_test_util.h"

#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/transforms/dead_code_elimination.h"
#include "runtime/cpu/verify.h"

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

}  // namespace testing_util

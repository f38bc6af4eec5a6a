// Helpers of the manual-sharding tests (manual_partition_test.cc, manual_groups_partition_test.cc):
// parse, partition (then dead-code elimination), verify against the unpartitioned module on
// random data, and the bytes a device receives.
#ifndef TESTS_MANUAL_PARTITION_UTIL_H_
#define TESTS_MANUAL_PARTITION_UTIL_H_

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/transforms/dead_code_elimination.h"
#include "runtime/cpu/verify.h"
#include "spmd/partitioner/spmd_partitioner.h"
#include "spmd/propagation/sharding_propagation.h"

namespace manual_test {

inline std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> m = hlo::ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

inline absl::StatusOr<std::unique_ptr<hlo::HloModule>> Partition(const std::string& text) {
  std::unique_ptr<hlo::HloModule> m = Parse(text);
  if (m == nullptr) return absl::InvalidArgumentError("parse");
  spmd::SpmdPartitioner partitioner;
  absl::StatusOr<bool> ran = partitioner.Run(m.get());
  if (!ran.ok()) return ran.status();
  hlo::DeadCodeElimination cleanup;
  if (absl::StatusOr<bool> c = cleanup.Run(m.get()); !c.ok()) return c.status();
  return m;
}

inline absl::StatusOr<runtime::VerifyResult> Verify(const std::string& original,
                                                    const hlo::HloModule& spmd, int64_t devices) {
  std::unique_ptr<hlo::HloModule> full = Parse(original);
  runtime::VerifyOptions options;
  options.seed = 7;
  options.num_partitions = devices;
  return runtime::VerifyAgainst(*full, spmd, options);
}

// Partitions `text` and verifies the SPMD program against it on `devices` devices; the SPMD
// program's text (empty after a failed expectation).
inline std::string PartitionAndVerify(const std::string& text, int64_t devices) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> spmd = Partition(text);
  EXPECT_TRUE(spmd.ok()) << spmd.status();
  if (!spmd.ok()) return "";
  absl::StatusOr<runtime::VerifyResult> result = Verify(text, **spmd, devices);
  EXPECT_TRUE(result.ok()) << result.status();
  if (result.ok()) EXPECT_TRUE(result->ok()) << result->ToString() << (*spmd)->ToString();
  return (*spmd)->ToString();
}

inline void ExpectPartitionsAndVerifies(const std::string& text, int64_t devices) {
  PartitionAndVerify(text, devices);
}
// Propagates `text`, then partitions and verifies it on `devices` devices; the partitioned
// program's text.
inline std::string PropagatePartitionAndVerify(const std::string& text, int64_t devices) {
  std::unique_ptr<hlo::HloModule> m = Parse(text);
  if (m == nullptr) return "";
  spmd::ShardingPropagation propagation;
  absl::StatusOr<bool> ran = propagation.Run(m.get());
  EXPECT_TRUE(ran.ok()) << ran.status();
  return PartitionAndVerify(m->ToString(), devices);
}

// The bytes a device receives in the SPMD program `spmd` (-1 when it does not parse).
inline int64_t CommBytes(const std::string& spmd) {
  std::unique_ptr<hlo::HloModule> m = Parse(spmd);
  return m == nullptr ? -1 : hlo::ComputeModuleStats(*m).comm_bytes;
}

}  // namespace manual_test

#endif  // TESTS_MANUAL_PARTITION_UTIL_H_

// Helpers shared by the end-to-end partitioner tests: partition a module's text (partition
// pass and dead-code cleanup), count opcodes, and verify the SPMD program on the CPU executor
// against the unpartitioned module on random inputs.
#ifndef TESTS_PARTITION_TEST_UTIL_H_
#define TESTS_PARTITION_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_module.h"
#include "spmd/partitioner/spmd_partitioner.h"

namespace testing_util {

struct Partitioned {
  std::unique_ptr<hlo::HloModule> original;
  std::unique_ptr<hlo::HloModule> spmd;  // Null when partitioning failed (a test failure).
  std::string explain;                   // The partitioner's log, one decision per line.
  // The partitioner's records (with PartitionerOptions::record_origins).
  std::vector<hlo::SpmdOrigin> origins;
};

// Parses `text` twice and partitions one copy; failures are gtest failures.
Partitioned Partition(const std::string& text, spmd::PartitionerOptions options = {});

// Opcode counts over every computation of the module (loop bodies included).
std::map<hlo::HloOpcode, int> Counts(const hlo::HloModule& module);

// Verifies `p.spmd` against `p.original` on `devices` devices with two seeds.
void ExpectVerifies(const Partitioned& p, int64_t devices);
// The same on sampled elements under the point evaluator (one seed).
void ExpectSampledVerifies(const Partitioned& p, int64_t devices);

// That the partitioner runs every opcode of `opcodes` (a generic path's, not empty) through one
// handler other than the replicated fallback, and `other` through another.
void ExpectOneHandler(const std::vector<hlo::HloOpcode>& opcodes, hlo::HloOpcode other);

// Parses `text`, prints it and parses the print again (the printer's text is the parser's
// input), verifies, and propagates shardings; returns the propagated module's text. Failures
// are gtest failures.
std::string PropagatedText(const std::string& text);

// The entry computation's instruction named `name`, or null.
const hlo::HloInstruction* FindInEntry(const hlo::HloModule& module, std::string_view name);

// Whether propagation split `p.original`'s instruction `name` and the SPMD program runs an
// `opcode` instruction on that split's shard shape.
::testing::AssertionResult RunsOnItsShard(const Partitioned& p, std::string_view name,
                                          hlo::HloOpcode opcode);

}  // namespace testing_util

#endif  // TESTS_PARTITION_TEST_UTIL_H_

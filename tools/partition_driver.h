// The work behind `spmd-partition` for one input: read, parse, verify, run the requested
// passes, and render the output bytes. Kept apart from main() so it can be tested and run on
// several inputs in parallel.
#ifndef TOOLS_PARTITION_DRIVER_H_
#define TOOLS_PARTITION_DRIVER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/sharding/spmd_origin.h"

namespace tools {

enum class EmitFormat { kText, kProto };

struct DriverOptions {
  std::vector<std::string> passes;  // Expanded pass names, in order; empty = parse only.
  std::optional<int64_t> num_partitions;
  EmitFormat emit = EmitFormat::kText;
  std::string dump_dir;  // Empty: no dumps.
  // Cost model and dot-strategy controls (issue 6). Empty/negative = the defaults.
  std::string device_model;           // --device-model NAME|FILE.
  std::string dot_strategy;           // --dot-strategy NAME: force one dot strategy (tests).
  bool disable_windowed_einsum = false;        // --no-windowed-einsum.
  int64_t windowed_einsum_threshold_bytes = -1;  // --windowed-einsum-threshold BYTES.
  // --strict: a split instruction computed whole (replicated fallback) fails the input.
  bool strict = false;
  // --wide-partial-sums: narrow float scatter-adds sum their partials across devices in f32.
  bool wide_partial_sums = false;
  // --explain: collect the passes' decision log into DriverResult::explain (also collected when
  // dump_dir is set, for explain.txt). Off, the passes do not build it.
  bool explain = false;
  // Record where each value of the SPMD program comes from (DriverResult::origins).
  bool record_origins = false;
  std::string key;  // The statistics' "key" (batch mode's stable key); empty: none.
};

struct DriverResult {
  std::string output;      // The bytes to write.
  std::string stats_json;  // One-line statistics object (cli-contract schema).
  std::string stats_text;  // Human-readable statistics.
  std::string explain;     // The decision log, when DriverOptions::explain or dump_dir asked.
  // With DriverOptions::record_origins: the partitioner's records (hlo/sharding/spmd_origin.h).
  std::vector<hlo::SpmdOrigin> origins;
};

// The device count for `module`: `flag` (--num-partitions), else the module's num_partitions,
// else 1 + the largest device id in its shardings. A flag that contradicts a num_partitions
// the module declares (> 1) is InvalidArgument: its shardings were written for that count.
absl::StatusOr<int64_t> ResolveNumPartitions(const hlo::HloModule& module,
                                             std::optional<int64_t> flag);

// The pass names `spmd-partition` knows, in pipeline order.
const std::vector<std::string>& KnownPassNames();
// Expands `default`/`none`/a comma list; an unknown name is InvalidArgument naming it.
absl::StatusOr<std::vector<std::string>> ExpandPassList(const std::string& list);

// Checks the options that do not depend on an input: the device model loads and a forced dot
// strategy is one the partitioner knows. InvalidArgument naming the option otherwise.
absl::Status ValidateDriverOptions(const DriverOptions& options);

// Processes one input path ("-" for stdin). Errors are complete `FILE:LINE:COL: error: ...`
// messages, tagged with the stage that failed (FailureKind).
absl::StatusOr<DriverResult> ProcessInput(const std::string& path, const DriverOptions& options);

// The stage an error of ProcessInput came from: "read", "parse", "verify", "partition" (the
// passes) or "output" (serializing, writing dumps); "error" for an untagged status.
std::string FailureKind(const absl::Status& status);
// `status` tagged with `kind` for FailureKind.
absl::Status WithFailureKind(absl::Status status, std::string_view kind);

}  // namespace tools

#endif  // TOOLS_PARTITION_DRIVER_H_

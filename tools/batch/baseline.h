// spmd-partition --baseline OLD.jsonl: this run's per-module metrics (bytes received, FLOPs and
// peak memory per device) against the JSON Lines an earlier run wrote with --stats json, by
// stable key. A metric that grew by more than the tolerance (percent) is a regression; modules
// on one side only are listed.
#ifndef TOOLS_BATCH_BASELINE_H_
#define TOOLS_BATCH_BASELINE_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "spmd/cost/json_value.h"
#include "tools/batch/json_records.h"

namespace tools {

struct Baseline {
  std::string path;
  // By key ("key", else "input" for records written before keys); nullopt: failed there.
  std::map<std::string, std::optional<ModuleMetrics>> modules;
};

// Reads `path`: one JSON object per line (blank lines skipped; summary records ignored).
// Errors are `PATH:LINE:COL: error: ...` (a file that is missing, not JSON, or a record
// without a key or metrics).
absl::StatusOr<Baseline> LoadBaseline(const std::string& path);

struct MetricChange {
  std::string key;
  int metric = 0;  // Index into Metrics().
  double before = 0, after = 0;
  bool regression = false;  // Grew by more than the tolerance.
};

struct BaselineReport {
  std::string path;
  double tolerance_percent = 0;
  size_t compared = 0;
  std::vector<MetricChange> changes;  // In run order, then metric order.
  std::vector<std::string> not_in_baseline, not_in_run, failed_in_baseline;

  size_t regressions() const;
  // One line per change and per module on one side only, then a closing line.
  std::string Text() const;
  // {"file", "tolerance_percent", "compared", "regressions", "changes", "not_in_baseline",
  //  "not_in_run", "failed_in_baseline"}.
  spmd::JsonValue Json() const;
};

// `run`: this run's modules in input order (key, metrics; nullopt for a failed one, which is
// neither compared nor listed as missing).
BaselineReport CompareWithBaseline(
    const Baseline& baseline,
    const std::vector<std::pair<std::string, std::optional<ModuleMetrics>>>& run,
    double tolerance_percent);

}  // namespace tools

#endif  // TOOLS_BATCH_BASELINE_H_

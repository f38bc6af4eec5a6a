// The JSON Lines records of spmd-partition's batch mode besides each module's statistics: a
// failed input's record (the error line, its kind, file, line and column), the per-module
// numbers a baseline compares (ModuleMetrics, read from a statistics record), and the closing
// summary record. Built with spmd::JsonValue and written by spmd::ToJson.
#ifndef TOOLS_BATCH_JSON_RECORDS_H_
#define TOOLS_BATCH_JSON_RECORDS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "spmd/cost/json_value.h"
#include "tools/batch/input_list.h"

namespace tools {

// `FILE:LINE:COL: error: MESSAGE` (or `FILE: error: MESSAGE`) taken apart; line and column
// are 0 when the line names none, file is empty when it names no place.
struct LocatedError {
  std::string file;
  int64_t line = 0;
  int64_t column = 0;
  std::string message;
};
LocatedError ParseErrorLine(const std::string& line);

// {"input", "error": LINE, "key", "kind", "file", "line", "column", "message"}; line and
// column are null when the error names none.
spmd::JsonValue FailureRecord(const BatchInput& input, const std::string& kind,
                              const std::string& error_line);

// The per-device numbers a baseline compares, in the order of Metrics().
struct MetricInfo {
  const char* json_name;  // The member of "per_device".
  const char* text_name;
  bool bytes;  // Printed in HumanBytes, else HumanFlops.
};
constexpr int kNumMetrics = 3;
const std::array<MetricInfo, kNumMetrics>& Metrics();
using ModuleMetrics = std::array<double, kNumMetrics>;
// The metrics of a statistics record; InvalidArgument naming the missing member otherwise.
absl::StatusOr<ModuleMetrics> MetricsOfRecord(const spmd::JsonValue& record);
// `value` of metric `m` in human units.
std::string FormatMetric(int m, double value);

// Counts and totals over a run, written as {"summary": {...}} at the end of the JSON Lines.
class BatchSummary {
 public:
  void AddOk(const ModuleMetrics& metrics);
  void AddFailure(const std::string& kind);
  size_t ok() const { return ok_; }
  size_t failed() const { return failed_; }
  // {"summary": {"modules", "ok", "failed", "failures_by_kind", "totals"}} plus `extra`'s
  // members (e.g. "baseline").
  spmd::JsonValue Record(spmd::JsonValue extra) const;

 private:
  size_t ok_ = 0, failed_ = 0;
  std::map<std::string, int64_t> failures_by_kind_;
  ModuleMetrics totals_{};
};

}  // namespace tools

#endif  // TOOLS_BATCH_JSON_RECORDS_H_

// Failure, metrics and summary records of batch mode (json_records.h).
#include "tools/batch/json_records.h"

#include <cstdlib>

#include "hlo/analysis/module_stats.h"
#include "hlo/strings.h"

namespace tools {
namespace {

// `text` as a positive decimal number, or 0.
int64_t PositiveNumber(const std::string& text) {
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != text.npos) {
    return 0;
  }
  return std::strtoll(text.c_str(), nullptr, 10);
}

spmd::JsonValue NumberOrNull(int64_t v) { return v > 0 ? spmd::JsonValue(v) : spmd::JsonValue(); }

}  // namespace

LocatedError ParseErrorLine(const std::string& line) {
  LocatedError out;
  const size_t marker = line.find(": error: ");
  if (marker == std::string::npos) {
    out.message = line;
    return out;
  }
  out.message = line.substr(marker + 9);
  std::string place = line.substr(0, marker);
  // FILE:LINE:COL, taken from the right (a path may hold colons).
  const size_t col_colon = place.rfind(':');
  const size_t line_colon = col_colon == 0 || col_colon == std::string::npos
                                ? std::string::npos
                                : place.rfind(':', col_colon - 1);
  if (line_colon != std::string::npos) {
    const int64_t l = PositiveNumber(place.substr(line_colon + 1, col_colon - line_colon - 1));
    const int64_t c = PositiveNumber(place.substr(col_colon + 1));
    if (l > 0 && c > 0) {
      out.line = l;
      out.column = c;
      place.resize(line_colon);
    }
  }
  out.file = place;
  return out;
}

spmd::JsonValue FailureRecord(const BatchInput& input, const std::string& kind,
                              const std::string& error_line) {
  const LocatedError located = ParseErrorLine(error_line);
  spmd::JsonValue record = spmd::JsonValue::Object();
  record.Add("input", input.path).Add("error", error_line).Add("key", input.key);
  record.Add("kind", kind).Add("file", located.file);
  record.Add("line", NumberOrNull(located.line)).Add("column", NumberOrNull(located.column));
  record.Add("message", located.message);
  return record;
}

const std::array<MetricInfo, kNumMetrics>& Metrics() {
  static const std::array<MetricInfo, kNumMetrics> metrics = {{
      {"comm_bytes", "bytes received per device", true},
      {"flops", "FLOPs per device", false},
      {"peak_memory_bytes", "peak memory per device", true},
  }};
  return metrics;
}

absl::StatusOr<ModuleMetrics> MetricsOfRecord(const spmd::JsonValue& record) {
  const spmd::JsonValue* per_device = record.Find("per_device");
  if (per_device == nullptr || per_device->type != spmd::JsonValue::Type::kObject) {
    return absl::InvalidArgumentError("the record has no \"per_device\" object");
  }
  ModuleMetrics metrics{};
  for (int m = 0; m < kNumMetrics; ++m) {
    const spmd::JsonValue* v = per_device->Find(Metrics()[m].json_name);
    if (v == nullptr || v->type != spmd::JsonValue::Type::kNumber || !(v->number >= 0)) {
      return absl::InvalidArgumentError(hlo::StrCat("\"per_device\" has no non-negative number \"",
                                                    Metrics()[m].json_name, "\""));
    }
    metrics[m] = v->number;
  }
  return metrics;
}

std::string FormatMetric(int m, double value) {
  return Metrics()[m].bytes ? hlo::HumanBytes(value) : hlo::HumanFlops(value);
}

void BatchSummary::AddOk(const ModuleMetrics& metrics) {
  ++ok_;
  for (int m = 0; m < kNumMetrics; ++m) totals_[m] += metrics[m];
}

void BatchSummary::AddFailure(const std::string& kind) {
  ++failed_;
  ++failures_by_kind_[kind];
}

spmd::JsonValue BatchSummary::Record(spmd::JsonValue extra) const {
  spmd::JsonValue by_kind = spmd::JsonValue::Object();
  for (const auto& [kind, count] : failures_by_kind_) by_kind.Add(kind, count);
  spmd::JsonValue totals = spmd::JsonValue::Object();
  for (int m = 0; m < kNumMetrics; ++m) totals.Add(Metrics()[m].json_name, totals_[m]);
  spmd::JsonValue summary = spmd::JsonValue::Object();
  summary.Add("modules", ok_ + failed_).Add("ok", ok_).Add("failed", failed_);
  summary.Add("failures_by_kind", std::move(by_kind)).Add("totals", std::move(totals));
  for (auto& [key, value] : extra.object) summary.Add(key, std::move(value));
  return spmd::JsonValue::Object().Add("summary", std::move(summary));
}

}  // namespace tools

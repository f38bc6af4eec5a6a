// Baseline comparison of batch mode (baseline.h).
#include "tools/batch/baseline.h"

#include <cmath>
#include <cstdio>
#include <set>

#include "hlo/io/module_io.h"
#include "hlo/strings.h"

namespace tools {
namespace {

absl::Status LineError(const std::string& path, int64_t line, const std::string& where,
                       const std::string& what) {
  return absl::InvalidArgumentError(
      hlo::StrCat(path, ":", line, ":", where.empty() ? "1" : where, ": error: baseline: ", what));
}

// One line of the file into `baseline`.
absl::Status AddRecord(const std::string& path, int64_t line_no, const std::string& line,
                       Baseline* baseline) {
  absl::StatusOr<spmd::JsonValue> record = spmd::ParseJson(line);
  if (!record.ok()) {
    // ParseJson's message starts with `1:COL: `; keep the column.
    const std::string message(hlo::ToStd(record.status().message()));
    const size_t colon = message.find(':'), space = message.find(": ");
    const std::string column =
        colon != std::string::npos && space != std::string::npos && colon < space
            ? message.substr(colon + 1, space - colon - 1)
            : "";
    return LineError(path, line_no, column,
                     space == std::string::npos ? message : message.substr(space + 2));
  }
  if (record->type != spmd::JsonValue::Type::kObject) {
    return LineError(path, line_no, "", "expected a JSON object per line");
  }
  if (record->Find("summary") != nullptr) return absl::OkStatus();
  const spmd::JsonValue* key = record->Find("key");
  if (key == nullptr) key = record->Find("input");
  if (key == nullptr || key->type != spmd::JsonValue::Type::kString) {
    return LineError(path, line_no, "", "the record has no \"key\" or \"input\" string");
  }
  if (record->Find("error") != nullptr) {
    baseline->modules[key->string] = std::nullopt;
    return absl::OkStatus();
  }
  absl::StatusOr<ModuleMetrics> metrics = MetricsOfRecord(*record);
  if (!metrics.ok())
    return LineError(path, line_no, "", std::string(hlo::ToStd(metrics.status().message())));
  baseline->modules[key->string] = *metrics;
  return absl::OkStatus();
}

// The change in percent; +inf when a zero grew.
double PercentChange(double before, double after) {
  if (before == after) return 0;
  if (before == 0) return INFINITY;
  return (after - before) / before * 100.0;
}

std::string FormatPercent(double percent) {
  if (std::isinf(percent)) return "new";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.1f%%", percent);
  return buf;
}

std::string FormatTolerance(double tolerance) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g%%", tolerance);
  return buf;
}

spmd::JsonValue StringArray(const std::vector<std::string>& items) {
  spmd::JsonValue array = spmd::JsonValue::Array();
  for (const std::string& item : items) array.Push(item);
  return array;
}

}  // namespace

absl::StatusOr<Baseline> LoadBaseline(const std::string& path) {
  absl::StatusOr<std::string> text = hlo::ReadInput(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(hlo::StrCat(
        path, ": error: cannot read the baseline: ", hlo::ToStd(text.status().message())));
  }
  Baseline baseline;
  baseline.path = path;
  int64_t line_no = 0;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    const std::string line = text->substr(start, end - start);
    ++line_no;
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (absl::Status s = AddRecord(path, line_no, line, &baseline); !s.ok()) return s;
  }
  return baseline;
}

size_t BaselineReport::regressions() const {
  size_t n = 0;
  for (const MetricChange& c : changes) n += c.regression;
  return n;
}

std::string BaselineReport::Text() const {
  std::string out;
  for (const MetricChange& c : changes) {
    hlo::StrAppend(
        &out, "baseline: ", c.key, ": ", Metrics()[c.metric].text_name,
        c.regression ? " grew " : " ", FormatMetric(c.metric, c.before), " -> ",
        FormatMetric(c.metric, c.after), " (", FormatPercent(PercentChange(c.before, c.after)),
        c.regression ? hlo::StrCat(", over the tolerance of ", FormatTolerance(tolerance_percent))
                     : "",
        ")\n");
  }
  for (const std::string& key : not_in_baseline) {
    hlo::StrAppend(&out, "baseline: ", key, ": not in the baseline\n");
  }
  for (const std::string& key : failed_in_baseline) {
    hlo::StrAppend(&out, "baseline: ", key, ": failed in the baseline, not compared\n");
  }
  for (const std::string& key : not_in_run) {
    hlo::StrAppend(&out, "baseline: ", key, ": in the baseline but not in this run\n");
  }
  std::set<std::string> grown;
  for (const MetricChange& c : changes) {
    if (c.regression) grown.insert(c.key);
  }
  const std::string tolerance = FormatTolerance(tolerance_percent);
  if (grown.empty()) {
    hlo::StrAppend(&out, "baseline ", path, ": ", compared,
                   " modules compared; none grew by more than ", tolerance, "\n");
  } else {
    hlo::StrAppend(&out, "baseline ", path, ": ", compared, " modules compared; ", grown.size(),
                   " grew by more than ", tolerance, " (", regressions(), " metrics)\n");
  }
  return out;
}

spmd::JsonValue BaselineReport::Json() const {
  spmd::JsonValue list = spmd::JsonValue::Array();
  for (const MetricChange& c : changes) {
    list.Push(spmd::JsonValue::Object()
                  .Add("key", c.key)
                  .Add("metric", Metrics()[c.metric].json_name)
                  .Add("baseline", c.before)
                  .Add("current", c.after)
                  .Add("change_percent", PercentChange(c.before, c.after))
                  .Add("regression", c.regression));
  }
  spmd::JsonValue out = spmd::JsonValue::Object();
  out.Add("file", path).Add("tolerance_percent", tolerance_percent).Add("compared", compared);
  out.Add("regressions", regressions()).Add("changes", std::move(list));
  out.Add("not_in_baseline", StringArray(not_in_baseline));
  out.Add("not_in_run", StringArray(not_in_run));
  out.Add("failed_in_baseline", StringArray(failed_in_baseline));
  return out;
}

BaselineReport CompareWithBaseline(
    const Baseline& baseline,
    const std::vector<std::pair<std::string, std::optional<ModuleMetrics>>>& run,
    double tolerance_percent) {
  BaselineReport report;
  report.path = baseline.path;
  report.tolerance_percent = tolerance_percent;
  std::set<std::string> seen;
  for (const auto& [key, metrics] : run) {
    seen.insert(key);
    if (!metrics.has_value()) continue;
    auto it = baseline.modules.find(key);
    if (it == baseline.modules.end()) {
      report.not_in_baseline.push_back(key);
      continue;
    }
    if (!it->second.has_value()) {
      report.failed_in_baseline.push_back(key);
      continue;
    }
    ++report.compared;
    for (int m = 0; m < kNumMetrics; ++m) {
      const double before = (*it->second)[m], after = (*metrics)[m];
      if (before == after) continue;
      report.changes.push_back(
          {key, m, before, after, PercentChange(before, after) > tolerance_percent});
    }
  }
  for (const auto& [key, metrics] : baseline.modules) {
    if (!seen.count(key)) report.not_in_run.push_back(key);
  }
  return report;
}

}  // namespace tools

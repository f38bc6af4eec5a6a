// spmd-partition: parse, verify, propagate, partition and print HLO modules
// (../shared/docs/cli-contract.md). One input, or a batch: several inputs, directories
// (--recursive) and @LIST files. Inputs are processed independently on -j threads; outputs,
// messages and statistics come out in input order, so results do not depend on -j. In a batch,
// every failed input gets one error line, statistics are JSON Lines (one object per input keyed
// by its stable key, a failed input's with the error's kind, file, line and column, and a closing
// summary record), a closing `N ok, N failed` line is printed, and a progress bar is drawn when
// stderr is a terminal. JSON statistics on stderr (no --stats-file) leave stderr to JSON Lines
// alone: the records carry the error lines and the summary. --baseline compares each module's
// bytes received, FLOPs and peak memory per device with an earlier run's JSON Lines.
// Exit codes: 0, 1 an input failed or a metric grew beyond --baseline-tolerance, 2 usage.
#include <atomic>
#include <filesystem>
#include <iostream>
#include <optional>

#include "CLI/CLI.hpp"
#include "hlo/analysis/module_stats.h"
#include "hlo/io/module_io.h"
#include "hlo/large_stack.h"
#include "hlo/strings.h"
#include "tools/batch/baseline.h"
#include "tools/batch/input_list.h"
#include "tools/batch/json_records.h"
#include "tools/batch/ordered_pool.h"
#include "tools/batch/progress_bar.h"
#include "tools/cli_checks.h"
#include "tools/partition_driver.h"
#include "tools/version.h"

namespace {

struct Flags {
  std::vector<std::string> inputs;
  std::string output, passes = "default", emit = "text", dump_dir, stats, stats_file;
  std::string device_model, dot_strategy, baseline;
  double baseline_tolerance = 0;
  int64_t num_partitions = 0;
  int64_t windowed_einsum_threshold = -1;
  int jobs = 1;
  bool explain = false, recursive = false, no_windowed_einsum = false, strict = false;
  bool wide_partial_sums = false;
};

// With --stats json and no --stats-file, stderr carries JSON Lines only.
bool StderrIsJsonOnly(const Flags& f) { return f.stats == "json" && f.stats_file.empty(); }

void AddOptions(CLI::App& app, Flags& f) {
  app.add_option("inputs", f.inputs,
                 "HLO text (.hlo, .txt), HloModuleProto (.pb, .binpb), -, a directory, or @LIST")
      ->required();
  app.add_option("-o,--output", f.output, "output file (one input) or directory (a batch)");
  app.add_flag("-r,--recursive", f.recursive, "also take modules from subdirectories");
  app.add_option("--num-partitions", f.num_partitions, "device count (1 to 65536)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  app.add_option("--passes", f.passes, "default, none, or a comma list of pass names");
  app.add_option("--emit", f.emit, "output format")->check(CLI::IsMember({"text", "proto"}));
  app.add_option("--dump-dir", f.dump_dir, "write the module after every pass, stats, explain");
  app.add_option("--stats", f.stats, "print statistics")->check(CLI::IsMember({"json", "text"}));
  app.add_option("--stats-file", f.stats_file,
                 "write statistics here instead of stderr (- for stdout; needs -o)");
  app.add_option("--baseline", f.baseline,
                 "JSON Lines of an earlier --stats json run: report changes per module and exit 1 "
                 "when a metric grew beyond --baseline-tolerance");
  app.add_option("--baseline-tolerance", f.baseline_tolerance,
                 "growth in percent that --baseline accepts (default 0)")
      ->check(tools::kNonNegative);
  app.add_flag("--explain", f.explain, "print the decision log on stderr");
  app.add_flag("--strict", f.strict,
               "fail an input when a split instruction would be computed whole (a replicated "
               "fallback) instead of counting it");
  app.add_flag("--wide-partial-sums", f.wide_partial_sums,
               "sum the partials of a split bf16/f16 scatter-add across devices in f32, rounded "
               "once (twice the bytes), instead of each device's f32 partial rounded and summed "
               "in the scatter's type");
  app.add_option("--device-model", f.device_model, "cost-model name or JSON file");
  app.add_option("--dot-strategy", f.dot_strategy, "force one dot strategy (by name)");
  app.add_flag("--no-windowed-einsum", f.no_windowed_einsum, "never choose windowed einsum");
  app.add_option("--windowed-einsum-threshold", f.windowed_einsum_threshold,
                 "smallest operand size in bytes for which windowed einsum is considered")
      ->check(tools::kNonNegative);
  app.add_option("-j,--jobs", f.jobs, "inputs processed in parallel")->check(tools::kPositive);
}

absl::StatusOr<tools::DriverOptions> MakeOptions(const Flags& f) {
  tools::DriverOptions options;
  absl::StatusOr<std::vector<std::string>> pass_list = tools::ExpandPassList(f.passes);
  if (!pass_list.ok()) return pass_list.status();
  options.passes = *pass_list;
  if (f.num_partitions > 0) options.num_partitions = f.num_partitions;
  options.emit = f.emit == "proto" ? tools::EmitFormat::kProto : tools::EmitFormat::kText;
  options.device_model = f.device_model;
  options.dot_strategy = f.dot_strategy;
  options.disable_windowed_einsum = f.no_windowed_einsum;
  options.windowed_einsum_threshold_bytes = f.windowed_einsum_threshold;
  options.strict = f.strict;
  options.wide_partial_sums = f.wide_partial_sums;
  options.explain = f.explain;
  if (absl::Status s = tools::ValidateDriverOptions(options); !s.ok()) return s;
  return options;
}

// The message of a failed input as one line that starts with the input's path.
std::string OneLineError(const std::string& input, const absl::Status& status) {
  std::string message(hlo::ToStd(status.message()));
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  // Messages that already name their place (`<stdin>:2:1: error:`, an output path's
  // `out.hlo: error: cannot write`) keep it; others get the input's path.
  const size_t located = message.find(": error: ");
  const bool has_place = message.rfind(input + ":", 0) == 0 ||
                         (located != std::string::npos && located > 0 &&
                          message.substr(0, located).find(' ') == std::string::npos);
  if (!has_place) message = hlo::StrCat(input, ": error: ", message);
  return message;
}

// Writes results in input order and keeps the counts, statistics and exit code.
// Where `input`'s output goes: -o itself for one input, else a file under the -o directory.
std::filesystem::path OutputPath(const Flags& f, const tools::InputList& list,
                                 const tools::BatchInput& input) {
  if (!list.batch) return f.output;
  return std::filesystem::path(f.output) /
         (input.relative_stem + (f.emit == "proto" ? ".pb" : ".hlo"));
}

// An output that is one of the inputs would replace the module it came from.
absl::Status CheckOutputsSpareInputs(const Flags& f, const tools::InputList& list) {
  if (f.output.empty()) return absl::OkStatus();
  for (const tools::BatchInput& input : list.inputs) {
    if (input.path == "-") continue;
    const std::filesystem::path out = OutputPath(f, list, input);
    std::error_code ec;
    if (std::filesystem::equivalent(out, input.path, ec)) {
      return absl::InvalidArgumentError(
          hlo::StrCat(out.string(), ": error: the output would overwrite its input ", input.path));
    }
  }
  return absl::OkStatus();
}

class Emitter {
 public:
  Emitter(const Flags& f, const tools::InputList& list, tools::ProgressBar* bar,
          const std::optional<tools::Baseline>& baseline)
      : f_(f), list_(list), bar_(bar), baseline_(baseline) {}

  void Emit(size_t i, absl::StatusOr<tools::DriverResult>& result) {
    const tools::BatchInput& input = list_.inputs[i];
    if (!result.ok()) {
      return Fail(input, tools::FailureKind(result.status()),
                  OneLineError(input.path, result.status()));
    }
    if (absl::Status s = WriteOutput(input, result->output); !s.ok()) {
      return Fail(input, "output", OneLineError(input.path, s));
    }
    const tools::ModuleMetrics metrics = MetricsOf(result->stats_json);
    summary_.AddOk(metrics);
    run_.emplace_back(input.key, metrics);
    if (f_.explain) Message(hlo::StrCat("explain ", input.path, ":\n", result->explain));
    if (f_.stats == "json") Stats(result->stats_json + "\n");
    if (f_.stats == "text") Stats(result->stats_text);
  }

  // Compares with the baseline, writes the summary and the statistics file; returns the exit
  // code.
  int Finish() {
    bar_->Finish();
    size_t regressions = 0;
    spmd::JsonValue extra = spmd::JsonValue::Object();
    if (baseline_.has_value()) {
      const tools::BaselineReport report =
          tools::CompareWithBaseline(*baseline_, run_, f_.baseline_tolerance);
      regressions = report.regressions();
      if (!JsonOnStderr()) Message(report.Text());
      extra.Add("baseline", report.Json());
    }
    if (f_.stats == "json" && (list_.batch || baseline_.has_value())) {
      Stats(spmd::ToJson(summary_.Record(std::move(extra))) + "\n");
    }
    if (absl::Status s = WriteStats(); !s.ok()) {
      std::cerr << s.message() << "\n";
      return 1;
    }
    if (list_.batch && !JsonOnStderr()) {
      std::cerr << summary_.ok() << " ok, " << summary_.failed() << " failed\n";
    }
    return summary_.failed() > 0 || regressions > 0 ? 1 : 0;
  }

 private:
  // JSON statistics on stderr: stderr then carries JSON Lines only (and --explain's log).
  bool JsonOnStderr() const { return StderrIsJsonOnly(f_); }

  static tools::ModuleMetrics MetricsOf(const std::string& stats_json) {
    absl::StatusOr<spmd::JsonValue> record = spmd::ParseJson(stats_json);
    absl::StatusOr<tools::ModuleMetrics> metrics =
        record.ok() ? tools::MetricsOfRecord(*record) : record.status();
    return metrics.ok() ? *metrics : tools::ModuleMetrics{};  // Our own records always parse.
  }

  void Fail(const tools::BatchInput& input, const std::string& kind, const std::string& line) {
    summary_.AddFailure(kind);
    run_.emplace_back(input.key, std::nullopt);
    if (!JsonOnStderr()) Message(line + "\n");
    if (f_.stats == "json") Stats(spmd::ToJson(tools::FailureRecord(input, kind, line)) + "\n");
  }

  absl::Status WriteOutput(const tools::BatchInput& input, const std::string& bytes) {
    if (f_.output.empty()) {
      bar_->Print(bytes, stdout);
      return absl::OkStatus();
    }
    if (!list_.batch) return hlo::WriteFileAtomically(f_.output, bytes);
    const std::filesystem::path path = OutputPath(f_, list_, input);
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    return hlo::WriteFileAtomically(path.string(), bytes);
  }

  absl::Status WriteStats() {
    if (f_.stats.empty() || f_.stats_file.empty()) return absl::OkStatus();
    if (f_.stats_file == "-") {
      std::cout << stats_ << std::flush;
      return absl::OkStatus();
    }
    return hlo::WriteFileAtomically(f_.stats_file, stats_);
  }

  void Message(const std::string& text) { bar_->Print(text); }
  void Stats(const std::string& text) {
    if (f_.stats_file.empty()) {
      Message(text);
    } else {
      stats_ += text;
    }
  }

  const Flags& f_;
  const tools::InputList& list_;
  tools::ProgressBar* bar_;
  const std::optional<tools::Baseline>& baseline_;
  std::string stats_;
  tools::BatchSummary summary_;
  std::vector<std::pair<std::string, std::optional<tools::ModuleMetrics>>> run_;
};

// Runs every input; returns the exit code.
int RunAll(const Flags& f, const tools::InputList& list, const tools::DriverOptions& options,
           const std::optional<tools::Baseline>& baseline) {
  // Off a terminal, heartbeats unless stderr must carry JSON Lines only.
  tools::ProgressBar bar(list.inputs.size(), list.batch, !StderrIsJsonOnly(f));
  Emitter emitter(f, list, &bar, baseline);
  std::atomic<size_t> failed{0};
  std::function<absl::StatusOr<tools::DriverResult>(size_t)> work = [&](size_t i) {
    bar.Started(list.inputs[i].key);
    tools::DriverOptions mine = options;
    mine.key = list.inputs[i].key;
    if (!f.dump_dir.empty()) {
      mine.dump_dir =
          list.batch ? (std::filesystem::path(f.dump_dir) / list.inputs[i].relative_stem).string()
                     : f.dump_dir;
    }
    absl::StatusOr<tools::DriverResult> r = tools::ProcessInput(list.inputs[i].path, mine);
    if (!r.ok()) ++failed;
    return r;
  };
  std::function<void(size_t, absl::StatusOr<tools::DriverResult>&)> emit =
      [&](size_t i, absl::StatusOr<tools::DriverResult>& r) { emitter.Emit(i, r); };
  std::function<void(size_t)> progress = [&](size_t done) { bar.Update(done, failed.load()); };
  tools::RunInOrder(list.inputs.size(), f.jobs, work, emit, progress);
  return emitter.Finish();
}

int UsageError(std::string_view message) {
  std::cerr << message << "\n";
  return 2;
}

// Checks what the flags need of the inputs and reads the baseline; a usage error otherwise.
absl::StatusOr<std::optional<tools::Baseline>> PrepareBatch(const Flags& f,
                                                            const tools::InputList& list) {
  if (!f.stats.empty() && f.stats_file == "-" && f.output.empty()) {
    return absl::InvalidArgumentError(
        "spmd-partition: --stats-file - writes the statistics to stdout, where the partitioned "
        "modules go without -o; give -o");
  }
  if (list.batch && (!f.output.empty() || !f.dump_dir.empty())) {
    if (absl::Status s = tools::CheckDistinctOutputs(list); !s.ok()) return s;
  }
  if (absl::Status s = CheckOutputsSpareInputs(f, list); !s.ok()) return s;
  if (f.baseline.empty()) return std::optional<tools::Baseline>();
  if (absl::Status s = tools::CheckDistinctKeys(list); !s.ok()) return s;
  absl::StatusOr<tools::Baseline> baseline = tools::LoadBaseline(f.baseline);
  if (!baseline.ok()) return baseline.status();
  return std::optional<tools::Baseline>(*std::move(baseline));
}

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app{"Partition HLO modules into SPMD programs."};
  app.set_version_flag("--version", tools::VersionLine("spmd-partition"));
  Flags f;
  AddOptions(app, f);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  absl::StatusOr<tools::DriverOptions> options = MakeOptions(f);
  if (!options.ok()) {
    std::cerr << "spmd-partition: ";
    return UsageError(hlo::ToStd(options.status().message()));
  }
  absl::StatusOr<tools::InputList> list = tools::ExpandInputs(f.inputs, f.recursive);
  if (!list.ok()) return UsageError(hlo::ToStd(list.status().message()));
  absl::StatusOr<std::optional<tools::Baseline>> baseline = PrepareBatch(f, *list);
  if (!baseline.ok()) return UsageError(hlo::ToStd(baseline.status().message()));
  if (list->batch && !f.output.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(f.output, ec);
    if (ec) {
      std::cerr << f.output << ": error: cannot create output directory: " << ec.message() << "\n";
      return 1;
    }
  }
  return RunAll(f, *list, *options, *baseline);
}

// The work runs on a large stack: deeply nested modules recurse once per level.
int main(int argc, char** argv) {
  return hlo::RunOnLargeStack([&] { return Main(argc, argv); });
}

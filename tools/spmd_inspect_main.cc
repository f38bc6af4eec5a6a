// spmd-inspect: reads an SPMD-partitioned module (ours, or one XLA dumped after partitioning)
// and prints its statistics (../shared/docs/cli-contract.md), every collective and the
// per-device peak memory; writes an HTML page (--html) or Graphviz (--dot); compares two
// partitionings (--diff A B, as text or, with --html, as a page). Exit codes: 0 success, 1 an input
// failed (or, with
// --fail-on-increase, B grew), 2 usage error.
#include <iostream>
#include <optional>

#include "CLI/CLI.hpp"
#include "hlo/io/module_io.h"
#include "hlo/large_stack.h"
#include "tools/cli_checks.h"
#include "tools/inspect/by_source.h"
#include "tools/inspect/dot_writer.h"
#include "tools/inspect/html_diff.h"
#include "tools/inspect/html_report.h"
#include "tools/inspect/inspected_module.h"
#include "tools/inspect/module_diff.h"
#include "tools/version.h"

namespace {

struct Flags {
  std::string input, stats = "text", html, dot, device_model, original;
  std::vector<std::string> diff;
  int64_t num_partitions = 0;
  int64_t by_source = 0;
  bool fail_on_increase = false;
};

// Loads `path`, printing its error; null on failure.
std::unique_ptr<tools::InspectedModule> Load(const std::string& path,
                                             const tools::InspectOptions& options) {
  absl::StatusOr<std::unique_ptr<tools::InspectedModule>> m = tools::InspectModule(path, options);
  if (m.ok()) return *std::move(m);
  std::cerr << m.status().message() << "\n";
  return nullptr;
}

bool Write(const std::string& path, const std::string& bytes) {
  absl::Status s = hlo::WriteFileAtomically(path, bytes);
  if (!s.ok()) std::cerr << s.message() << "\n";
  return s.ok();
}

int RunDiff(const Flags& f, const tools::InspectOptions& options) {
  std::unique_ptr<tools::InspectedModule> a = Load(f.diff[0], options);
  std::unique_ptr<tools::InspectedModule> b = Load(f.diff[1], options);
  if (a == nullptr || b == nullptr) return 1;
  if (f.stats == "json") {
    std::cout << hlo::StatsToJson(a->stats) << "\n" << hlo::StatsToJson(b->stats) << "\n";
  } else {
    std::cout << tools::DiffReportText(*a, *b);
  }
  if (!f.html.empty() && !Write(f.html, tools::DiffReportHtml(*a, *b))) return 1;
  if (!f.fail_on_increase) return 0;
  const std::vector<std::string> grew = tools::DiffGrowth(*a, *b);
  for (const std::string& line : grew) std::cerr << "spmd-inspect: B grew: " << line << "\n";
  return grew.empty() ? 0 : 1;
}

// The module before partitioning (--original), parsed only; prints the error on failure.
std::optional<hlo::ParsedModule> LoadOriginal(const std::string& path) {
  absl::StatusOr<std::string> contents = hlo::ReadInput(path);
  absl::StatusOr<hlo::ParsedModule> parsed =
      contents.ok() ? hlo::ParseModuleFile(path, *contents)
                    : absl::StatusOr<hlo::ParsedModule>(contents.status());
  if (parsed.ok()) return *std::move(parsed);
  std::cerr << parsed.status().message() << "\n";
  return std::nullopt;
}

int RunInspect(const Flags& f, const tools::InspectOptions& options) {
  std::unique_ptr<tools::InspectedModule> m = Load(f.input, options);
  if (m == nullptr) return 1;
  if (f.stats == "json") {
    std::cout << hlo::StatsToJson(m->stats) << "\n";
  } else {
    std::cout << tools::InspectReportText(*m);
    if (f.by_source > 0) std::cout << "\n" << tools::BySourceText(*m, f.by_source);
  }
  bool ok = true;
  if (!f.html.empty()) {
    std::optional<hlo::ParsedModule> original;
    if (!f.original.empty()) {
      original = LoadOriginal(f.original);
      if (!original) return 1;
    }
    ok &= Write(f.html, tools::InspectReportHtml(*m, original ? original->module.get() : nullptr));
  }
  if (!f.dot.empty()) ok &= Write(f.dot, tools::ProgramGraphToDot(*m->parsed.module));
  return ok ? 0 : 1;
}

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app{
      "Inspect SPMD-partitioned HLO modules (ours or XLA's dumps): statistics, every "
      "collective with the bytes it moves, per-device peak memory."};
  app.set_version_flag("--version", tools::VersionLine("spmd-inspect"));
  Flags f;
  CLI::Option* input =
      app.add_option("input", f.input, "partitioned module: HLO text, HloModuleProto, or -");
  app.add_option("--num-partitions", f.num_partitions,
                 "device count, 1 to 65536 (default: the module's num_partitions)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  app.add_option("--stats", f.stats,
                 "text (default): the full report; json: only the statistics object of the "
                 "contract's schema, one line")
      ->check(CLI::IsMember({"json", "text"}));
  app.add_option("--device-model", f.device_model,
                 "cost-model name or JSON file, for estimated_step_time_us (default h100-nvlink)");
  app.add_option("--by-source", f.by_source,
                 "text report: also the N source ops and source lines that receive the most bytes")
      ->check(tools::kPositive);
  CLI::Option* html = app.add_option(
      "--html", f.html,
      "write a self-contained HTML page here (with --diff: the two partitionings side by side)");
  app.add_option("--original", f.original,
                 "with --html: the module before partitioning, whose parameter and result "
                 "shardings the page draws when the partitioned module carries none")
      ->needs(html);
  CLI::Option* dot = app.add_option("--dot", f.dot, "write the program graph as Graphviz here");
  CLI::Option* diff_option =
      app.add_option("--diff", f.diff, "compare two partitionings A B of the same module")
          ->expected(2)
          ->excludes(input)
          ->excludes(dot);
  app.add_flag("--fail-on-increase", f.fail_on_increase,
               "with --diff: exit 1 when B receives more bytes, computes more FLOPs or needs more "
               "peak memory per device than A")
      ->needs(diff_option);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  tools::InspectOptions options;
  if (f.num_partitions > 0) options.num_partitions = f.num_partitions;
  absl::StatusOr<spmd::DeviceModel> model = spmd::LoadDeviceModel(f.device_model);
  if (!model.ok()) {
    std::cerr << "spmd-inspect: error: " << model.status().message() << "\n";
    return 2;
  }
  options.device_model = *std::move(model);
  if (!f.diff.empty()) return RunDiff(f, options);
  if (f.input.empty()) {
    std::cerr << "spmd-inspect: error: expected an input (or --diff A B); see --help\n";
    return 2;
  }
  return RunInspect(f, options);
}

// The work runs on a large stack: deeply nested modules recurse once per level.
int main(int argc, char** argv) {
  return hlo::RunOnLargeStack([&] { return Main(argc, argv); });
}

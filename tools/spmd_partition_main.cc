// spmd-partition: parse, verify, propagate, partition and print HLO modules
// (../shared/docs/cli-contract.md). Inputs are processed independently, in parallel with -j;
// outputs and messages come out in input order, so results do not depend on -j.
#include <atomic>
#include <filesystem>
#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "hlo/io/module_io.h"
#include "hlo/strings.h"
#include "tools/partition_driver.h"

namespace {

std::string OutputPathFor(const std::string& input, const std::string& dir, bool proto) {
  std::filesystem::path base = input == "-" ? std::filesystem::path("stdin")
                                            : std::filesystem::path(input).filename();
  base.replace_extension(proto ? ".pb" : ".hlo");
  return (std::filesystem::path(dir) / base).string();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Partition HLO modules into SPMD programs."};
  std::vector<std::string> inputs;
  std::string output, passes = "default", emit = "text", dump_dir, stats, stats_file;
  std::string device_model;
  int64_t num_partitions = 0;
  int jobs = 1;
  bool explain = false;
  app.add_option("inputs", inputs, "HLO text (.hlo, .txt), HloModuleProto (.pb, .binpb) or -")
      ->required();
  app.add_option("-o,--output", output, "output file (one input) or directory (several)");
  app.add_option("--num-partitions", num_partitions, "device count")->check(CLI::PositiveNumber);
  app.add_option("--passes", passes, "default, none, or a comma list of pass names");
  app.add_option("--emit", emit, "output format")->check(CLI::IsMember({"text", "proto"}));
  app.add_option("--dump-dir", dump_dir, "write the module after every pass, stats, explain");
  app.add_option("--stats", stats, "print statistics")->check(CLI::IsMember({"json", "text"}));
  app.add_option("--stats-file", stats_file, "write statistics here instead of stderr");
  app.add_flag("--explain", explain, "print the decision log on stderr");
  app.add_option("--device-model", device_model, "cost-model name or JSON file");
  app.add_option("-j,--jobs", jobs, "inputs processed in parallel")->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  tools::DriverOptions options;
  absl::StatusOr<std::vector<std::string>> pass_list = tools::ExpandPassList(passes);
  if (!pass_list.ok()) {
    std::cerr << "spmd-partition: " << pass_list.status().message() << "\n";
    return 2;
  }
  options.passes = *pass_list;
  if (num_partitions > 0) options.num_partitions = num_partitions;
  options.emit = emit == "proto" ? tools::EmitFormat::kProto : tools::EmitFormat::kText;
  const bool many = inputs.size() > 1;
  if (many && !output.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(output, ec);
    if (ec) {
      std::cerr << output << ": error: cannot create output directory: " << ec.message() << "\n";
      return 1;
    }
  }

  std::vector<absl::StatusOr<tools::DriverResult>> results(inputs.size(),
                                                           absl::UnknownError("not run"));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < inputs.size(); i = next++) {
      tools::DriverOptions mine = options;
      if (!dump_dir.empty()) {
        mine.dump_dir = many ? (std::filesystem::path(dump_dir) /
                                std::filesystem::path(inputs[i]).stem()).string()
                             : dump_dir;
      }
      results[i] = tools::ProcessInput(inputs[i], mine);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::min<int>(jobs, static_cast<int>(inputs.size())); ++t) {
    threads.emplace_back(worker);
  }
  for (std::thread& t : threads) t.join();

  int exit_code = 0;
  std::string stats_out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!results[i].ok()) {
      std::cerr << results[i].status().message() << "\n";
      exit_code = 1;
      continue;
    }
    const tools::DriverResult& r = *results[i];
    if (output.empty()) {
      std::cout.write(r.output.data(), static_cast<std::streamsize>(r.output.size()));
    } else {
      std::string path = many ? OutputPathFor(inputs[i], output, emit == "proto") : output;
      if (absl::Status s = hlo::WriteFileAtomically(path, r.output); !s.ok()) {
        std::cerr << s.message() << "\n";
        exit_code = 1;
        continue;
      }
    }
    if (stats == "json") stats_out += r.stats_json + "\n";
    if (stats == "text") stats_out += r.stats_text;
  }
  if (explain) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (results[i].ok()) std::cerr << "explain " << inputs[i] << ":\n" << results[i]->explain;
    }
  }
  if (!stats.empty()) {
    if (stats_file.empty()) {
      std::cerr << stats_out;
    } else if (absl::Status s = hlo::WriteFileAtomically(stats_file, stats_out); !s.ok()) {
      std::cerr << s.message() << "\n";
      exit_code = 1;
    }
  }
  return exit_code;
}

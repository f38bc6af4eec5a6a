// spmd-partition's per-input pipeline: ReadInput -> ParseModuleFile -> VerifyModule ->
// passes -> PrintModule / SerializeModule, with timings and statistics. Passes that later
// issues provide (propagate, partition, cleanup) are looked up by name; a requested pass that
// this build does not provide is an error naming it, never a silent no-op.
#include "tools/partition_driver.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_split.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/io/module_io.h"
#include "hlo/ir/hlo_printer.h"
#include "hlo/pass/hlo_pass_pipeline.h"
#include "hlo/proto/hlo_proto_util.h"
#include "hlo/strings.h"
#include "hlo/transforms/common_subexpression_elimination.h"
#include "hlo/transforms/dead_code_elimination.h"
#include "hlo/transforms/flatten_call_graph.h"
#include "hlo/transforms/memory_order.h"
#include "hlo/verifier/hlo_verifier.h"
#include "spmd/cost/step_time.h"
#include "spmd/partitioner/spmd_partitioner.h"
#include "spmd/propagation/sharding_propagation.h"

namespace tools {
namespace {

using Clock = std::chrono::steady_clock;

double Millis(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Maps the verifier's first error to the instruction's source position when known.
absl::Status VerifyWithLocations(const hlo::ParsedModule& parsed) {
  std::vector<hlo::VerifierError> errors;
  absl::Status status = hlo::VerifyModule(*parsed.module, &errors);
  if (status.ok()) return status;
  if (errors.empty()) {
    return absl::InvalidArgumentError(
        parsed.FormatError(nullptr, hlo::ToStd(status.message())));
  }
  const hlo::VerifierError& first = errors.front();
  const hlo::HloInstruction* instr = nullptr;
  if (const hlo::HloComputation* comp = parsed.module->GetComputation(first.computation_name)) {
    for (const auto& candidate : comp->instructions()) {
      if (candidate->name() == first.instruction_name) instr = candidate.get();
    }
  }
  return absl::InvalidArgumentError(parsed.FormatError(instr, first.message));
}

absl::StatusOr<spmd::PartitionerOptions> MakePartitionerOptions(const DriverOptions& options);

// Whether the passes build their decision log: asked for by --explain or a dump directory.
bool KeepsExplain(const DriverOptions& options) {
  return options.explain || !options.dump_dir.empty();
}

}  // namespace

absl::StatusOr<int64_t> ResolveNumPartitions(const hlo::HloModule& module,
                                             std::optional<int64_t> flag) {
  const int64_t declared = module.config().num_partitions;
  if (flag.has_value()) {
    if (declared > 1 && *flag != declared) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "--num-partitions ", *flag, " contradicts the module's num_partitions=", declared,
          " (its shardings were written for ", declared, " devices)"));
    }
    return *flag;
  }
  if (declared > 1) return declared;
  return std::max<int64_t>(1, hlo::MaxDeviceIdInShardings(module) + 1);
}

absl::Status ValidateDriverOptions(const DriverOptions& options) {
  absl::StatusOr<spmd::PartitionerOptions> partitioner = MakePartitionerOptions(options);
  if (!partitioner.ok()) return partitioner.status();
  const std::vector<std::string>& families = spmd::DotStrategyFamilies();
  if (!options.dot_strategy.empty() &&
      std::find(families.begin(), families.end(), options.dot_strategy) == families.end()) {
    std::string known;
    for (const std::string& family : families) hlo::StrAppend(&known, " ", family);
    return absl::InvalidArgumentError(hlo::StrCat("--dot-strategy: unknown strategy \"",
                                                  options.dot_strategy, "\"; known:", known));
  }
  return absl::OkStatus();
}

namespace {

absl::StatusOr<spmd::PartitionerOptions> MakePartitionerOptions(const DriverOptions& options) {
  spmd::PartitionerOptions out;
  absl::StatusOr<spmd::DeviceModel> model = spmd::LoadDeviceModel(options.device_model);
  if (!model.ok()) {
    return absl::InvalidArgumentError(
        hlo::StrCat("--device-model: ", hlo::ToStd(model.status().message())));
  }
  out.device_model = *std::move(model);
  out.dot.forced_family = options.dot_strategy;
  out.dot.enable_windowed_einsum = !options.disable_windowed_einsum;
  out.strict = options.strict;
  out.wide_partial_sums = options.wide_partial_sums;
  out.explain = KeepsExplain(options);
  out.record_origins = options.record_origins;
  if (options.windowed_einsum_threshold_bytes >= 0) {
    out.dot.windowed_threshold_bytes = options.windowed_einsum_threshold_bytes;
  }
  return out;
}

struct PassResults {
  int64_t full_rematerializations = 0;
  int64_t replicated_fallbacks = 0;
  int64_t replicated_fallback_bytes = 0;
  double propagation_ms = 0;  // The propagate pass; the other passes count as partition time.
  double partition_ms = 0;
  std::string explain;
  std::vector<hlo::SpmdOrigin> origins;
  std::optional<spmd::DeviceModel> device_model;  // The partition pass's, when it ran.
};

// Points the records that name an instruction CSE merged away at the one kept in its place,
// when the two held their values in the same layouts (identical instructions on the same
// operands: the same per-device values, so one random value stands in for the originals of
// both). Where the layouts differ (a broadcast of a scalar is the same in every tiling), or
// only one of the two has records (the other an internal value its users evaluate from its
// operands), no cut fits both: every record of the originals recorded at either is dropped (as
// a record naming dead code is), and modular verification evaluates them from their operands,
// on the devices and in the reference alike.
void FollowMerges(const std::vector<hlo::MergedInstruction>& merged, const hlo::HloModule& spmd,
                  std::vector<hlo::SpmdOrigin>& origins) {
  if (merged.empty()) return;
  using Key = std::pair<std::string, std::string>;
  absl::flat_hash_map<Key, std::string> kept;
  for (const hlo::MergedInstruction& m : merged) kept[{m.computation, m.removed}] = m.kept;
  // The layouts each instruction's value records give it.
  absl::flat_hash_map<Key, std::vector<std::string>> records;
  for (const hlo::SpmdOrigin& origin : origins) {
    if (origin.kind != hlo::SpmdOrigin::Kind::kValue) continue;
    records[{origin.computation, origin.instruction}].push_back(origin.sharding.ToString());
  }
  for (auto& [key, texts] : records) {
    std::sort(texts.begin(), texts.end());
    texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  }
  const std::vector<std::string> none;
  const auto layouts = [&](const Key& key) -> const std::vector<std::string>& {
    const auto it = records.find(key);
    return it == records.end() ? none : it->second;
  };
  absl::flat_hash_set<Key> conflicting;
  for (const auto& [removed, to] : kept) {
    const Key target{removed.first, to};
    if (layouts(removed) != layouts(target)) conflicting.insert(target);
  }
  // The originals whose cuts those records gave: every other record of theirs goes too, so that
  // the reference evaluates them from their operands as the devices now do. Records of the SPMD
  // program's parameters stay (every parameter must be cut; they are never merged).
  const auto target = [&](const hlo::SpmdOrigin& origin) {
    const auto it = kept.find({origin.computation, origin.instruction});
    return it == kept.end() ? Key{origin.computation, origin.instruction}
                            : Key{origin.computation, it->second};
  };
  absl::flat_hash_set<Key> uncut;
  for (const hlo::SpmdOrigin& origin : origins) {
    if (origin.kind == hlo::SpmdOrigin::Kind::kValue && conflicting.contains(target(origin))) {
      uncut.insert({origin.original_computation, origin.original_instruction});
    }
  }
  const auto is_parameter = [&](const hlo::SpmdOrigin& origin) {
    const hlo::HloComputation* c = spmd.GetComputation(origin.computation);
    if (c == nullptr) return false;
    for (const auto& instr : c->parameter_instructions()) {
      if (instr->name() == origin.instruction) return true;
    }
    return false;
  };
  std::vector<hlo::SpmdOrigin> followed;
  followed.reserve(origins.size());
  for (hlo::SpmdOrigin& origin : origins) {
    const Key to = target(origin);
    if (origin.kind == hlo::SpmdOrigin::Kind::kValue && !is_parameter(origin) &&
        uncut.contains({origin.original_computation, origin.original_instruction})) {
      continue;
    }
    origin.instruction = to.second;
    followed.push_back(std::move(origin));
  }
  origins = std::move(followed);
}

// Runs the requested passes in order with the verifier after each; dumps each stage when asked.
absl::StatusOr<PassResults> RunPasses(const DriverOptions& options, hlo::ParsedModule& parsed) {
  PassResults results;
  hlo::HloPassPipeline pipeline("spmd-partition");
  pipeline.set_verify_after_each_pass(true);
  spmd::SpmdPartitioner* partitioner = nullptr;
  spmd::ShardingPropagation* propagation = nullptr;
  // The CSE runs after partitioning, whose merges the partitioner's records follow, in order.
  std::vector<const hlo::CommonSubexpressionElimination*> cses;
  std::vector<const hlo::MemoryOrder*> memory_orders;
  for (const std::string& pass : options.passes) {
    if (pass == "propagate") {
      propagation = &pipeline.AddPass<spmd::ShardingPropagation>(KeepsExplain(options));
    } else if (pass == "partition") {
      absl::StatusOr<spmd::PartitionerOptions> partitioner_options =
          MakePartitionerOptions(options);
      if (!partitioner_options.ok()) return partitioner_options.status();
      results.device_model = partitioner_options->device_model;
      partitioner = &pipeline.AddPass<spmd::SpmdPartitioner>(*std::move(partitioner_options));
    } else if (pass == "cleanup") {
      const auto* cse = &pipeline.AddPass<hlo::CommonSubexpressionElimination>();
      if (partitioner != nullptr) cses.push_back(cse);
      pipeline.AddPass<hlo::DeadCodeElimination>();
      memory_orders.push_back(&pipeline.AddPass<hlo::MemoryOrder>());
    } else {
      return absl::UnimplementedError(hlo::StrCat(
          parsed.filename, ": error: pass '", pass, "' is not available in this build"));
    }
  }
  int stage = 0;
  if (!options.dump_dir.empty()) {
    pipeline.set_after_pass_callback([&](std::string_view name, const hlo::HloModule& m) {
      char prefix[16];
      std::snprintf(prefix, sizeof(prefix), "%02d", ++stage);
      // Dumps are best effort; a failed write does not change the result.
      (void)hlo::WriteFileAtomically(
          hlo::StrCat(options.dump_dir, "/", prefix, ".", name, ".hlo"), m.ToString());
    });
  }
  absl::StatusOr<bool> changed = pipeline.Run(parsed.module.get());
  for (const auto& [name, ms] : pipeline.pass_times_ms()) {
    (name == "propagate" ? results.propagation_ms : results.partition_ms) += ms;
  }
  if (propagation != nullptr) {
    // An error naming a copy propagation made is placed where its original is written.
    for (const auto& [copy, original] : propagation->log().clones.instructions) {
      if (auto position = parsed.PositionOf(original)) {
        parsed.instruction_positions.emplace(copy, *position);
      }
    }
  }
  if (!changed.ok()) {
    const std::string message(hlo::ToStd(changed.status().message()));
    // The error names an instruction (`instruction %x: ...`, `while %w: ...`), which the passes
    // may have removed by now: located by name.
    return absl::Status(changed.status().code(), parsed.Locate(message));
  }
  if (propagation != nullptr) {
    for (const std::string& line : propagation->log().lines) results.explain += line + "\n";
  }
  if (partitioner != nullptr) {
    results.full_rematerializations = partitioner->log().full_rematerializations;
    results.replicated_fallbacks = partitioner->log().replicated_fallbacks;
    results.replicated_fallback_bytes = partitioner->log().replicated_fallback_bytes;
    for (const std::string& line : partitioner->log().lines) results.explain += line + "\n";
    results.origins = partitioner->log().origins;
    for (const auto* cse : cses) FollowMerges(cse->merged(), *parsed.module, results.origins);
  }
  if (KeepsExplain(options)) {
    for (const auto* order : memory_orders) {
      for (const hlo::Reordered& r : order->reordered()) {
        results.explain +=
            hlo::StrCat("cleanup: %", r.computation, " reordered (", r.order, "): peak memory ",
                        r.peak_before, " -> ", r.peak_after, " bytes per device\n");
      }
    }
  }
  if (results.explain.empty() && KeepsExplain(options)) {
    results.explain = "no partitioning decisions were made\n";
  }
  return results;
}

}  // namespace

const std::vector<std::string>& KnownPassNames() {
  static const auto* names = new std::vector<std::string>{"propagate", "partition", "cleanup"};
  return *names;
}

absl::StatusOr<std::vector<std::string>> ExpandPassList(const std::string& list) {
  if (list == "none") return std::vector<std::string>{};
  if (list == "default") return KnownPassNames();
  std::vector<std::string> passes;
  for (absl::string_view piece : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    std::string name(piece.data(), piece.size());
    bool known = false;
    for (const std::string& k : KnownPassNames()) known |= k == name;
    if (!known) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "unknown pass '", name, "' (known: propagate, partition, cleanup, default, none)"));
    }
    passes.push_back(std::move(name));
  }
  return passes;
}

namespace {

constexpr char kFailureKindUrl[] = "spmd-partition/failure-kind";

// Creates the dump directory and writes the input stage.
absl::Status StartDumps(const DriverOptions& options, const hlo::HloModule& module) {
  if (options.dump_dir.empty()) return absl::OkStatus();
  std::error_code ec;
  std::filesystem::create_directories(options.dump_dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        hlo::StrCat(options.dump_dir, ": error: cannot create dump directory"));
  }
  return hlo::WriteFileAtomically(options.dump_dir + "/00.input.hlo", module.ToString());
}

absl::Status FinishDumps(const DriverOptions& options, const DriverResult& result) {
  if (options.dump_dir.empty()) return absl::OkStatus();
  if (absl::Status s =
          hlo::WriteFileAtomically(options.dump_dir + "/stats.json", result.stats_json + "\n");
      !s.ok()) {
    return s;
  }
  return hlo::WriteFileAtomically(options.dump_dir + "/explain.txt", result.explain);
}

absl::StatusOr<std::string> Render(const hlo::HloModule& module, EmitFormat emit) {
  if (emit == EmitFormat::kProto) return hlo::SerializeModuleOrError(module);
  std::string text;
  hlo::PrintModule(module, &text);
  return text;
}

// The statistics of the partitioned `module`; the caller sets the times but the total.
hlo::ModuleStats CollectStats(const hlo::HloModule& module, const std::string& path,
                              const DriverOptions& options, const PassResults& passes) {
  hlo::ModuleStats stats = hlo::ComputeModuleStats(module);
  stats.module_name = module.name();
  stats.input = path;
  stats.key = options.key;
  stats.num_partitions = module.config().num_partitions;
  stats.time_ms_propagation = passes.propagation_ms;
  stats.time_ms_partition = passes.partition_ms;
  stats.full_rematerializations = passes.full_rematerializations;
  stats.replicated_fallbacks = passes.replicated_fallbacks;
  stats.replicated_fallback_bytes = passes.replicated_fallback_bytes;
  // The partition pass's device model (read once per input), else the option's.
  absl::StatusOr<spmd::DeviceModel> model = passes.device_model.has_value()
                                                ? *passes.device_model
                                                : spmd::LoadDeviceModel(options.device_model);
  if (model.ok()) stats.estimated_step_time_us = spmd::EstimateStepTimeUs(stats, *model);
  return stats;
}

}  // namespace

absl::Status WithFailureKind(absl::Status status, std::string_view kind) {
  if (!status.ok()) {
    status.SetPayload(kFailureKindUrl, absl::Cord(absl::string_view(kind.data(), kind.size())));
  }
  return status;
}

std::string FailureKind(const absl::Status& status) {
  absl::optional<absl::Cord> kind = status.GetPayload(kFailureKindUrl);
  return kind.has_value() ? std::string(*kind) : "error";
}

absl::StatusOr<DriverResult> ProcessInput(const std::string& path, const DriverOptions& options) {
  const Clock::time_point start = Clock::now();
  absl::StatusOr<std::string> contents = hlo::ReadInput(path);
  if (!contents.ok()) return WithFailureKind(contents.status(), "read");
  absl::StatusOr<hlo::ParsedModule> parsed = hlo::ParseModuleFile(path, *contents);
  if (!parsed.ok()) return WithFailureKind(parsed.status(), "parse");
  hlo::HloModule& module = *parsed->module;
  absl::StatusOr<int64_t> resolved = ResolveNumPartitions(module, options.num_partitions);
  if (!resolved.ok()) {
    return WithFailureKind(absl::InvalidArgumentError(parsed->FormatError(
                               nullptr, hlo::ToStd(resolved.status().message()))),
                           "verify");
  }
  module.mutable_config()->num_partitions = *resolved;
  if (absl::Status s = VerifyWithLocations(*parsed); !s.ok()) return WithFailureKind(s, "verify");
  const double parse_ms = Millis(start);
  const int64_t instructions_before = module.instruction_count();
  if (absl::Status s = StartDumps(options, module); !s.ok()) return WithFailureKind(s, "output");
  absl::StatusOr<PassResults> passes = RunPasses(options, *parsed);
  if (!passes.ok()) return WithFailureKind(passes.status(), "partition");

  DriverResult result;
  absl::StatusOr<std::string> output = Render(module, options.emit);
  if (!output.ok()) return WithFailureKind(output.status(), "output");
  result.output = *std::move(output);
  hlo::ModuleStats stats = CollectStats(module, path, options, *passes);
  stats.instructions_before = instructions_before;
  stats.time_ms_parse = parse_ms;
  result.explain = passes->explain;
  result.origins = std::move(passes->origins);
  stats.time_ms_total = Millis(start);
  result.stats_json = hlo::StatsToJson(stats);
  result.stats_text = hlo::StatsToText(stats);
  if (absl::Status s = FinishDumps(options, result); !s.ok()) return WithFailureKind(s, "output");
  return result;
}

}  // namespace tools

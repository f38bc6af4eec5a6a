// Loading (read -> parse -> verify) and the text report. The report has three parts:
//
//   module jit_step (dump.hlo), 8 partitions          <- StatsToText, the contract's numbers
//   collectives: 5 instructions                        <- one row per collective instruction
//     #  kind  instruction  computation  shape  replica groups  g  times  bytes/time  bytes
//   peak memory per device: 19456 bytes at %fusion     <- the buffers live at the peak
#include "tools/inspect/inspected_module.h"

#include <chrono>

#include "hlo/io/module_io.h"
#include "hlo/strings.h"
#include "spmd/cost/step_time.h"
#include "tools/inspect/program_graph.h"
#include "tools/inspect/text_table.h"
#include "tools/verify_input.h"

namespace tools {
namespace {

using Clock = std::chrono::steady_clock;

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string ComputationName(const hlo::HloInstruction& instr) {
  return instr.parent() != nullptr ? instr.parent()->name() : "";
}

std::string CollectivesTable(const InspectedModule& m) {
  std::vector<std::vector<std::string>> rows = {{"#", "kind", "instruction", "computation", "shape",
                                                 "replica groups", "g", "times", "bytes/time",
                                                 "bytes"}};
  for (size_t i = 0; i < m.collectives.size(); ++i) {
    const hlo::CollectiveRecord& c = m.collectives[i];
    rows.push_back({hlo::StrCat(i + 1), std::string(hlo::CollectiveKindName(c.kind)),
                    c.instr->name(), ComputationName(*c.instr), ShortShape(*c.output_shape),
                    hlo::DescribeGroups(*c.instr), GroupSizeText(c), hlo::StrCat(c.executions),
                    hlo::StrCat(c.bytes), hlo::StrCat(c.bytes * c.executions)});
  }
  return hlo::StrCat("collectives: ", m.collectives.size(), " instructions\n",
                     m.collectives.empty() ? "" : FormatTextTable(rows, "  "));
}

std::string PeakTable(const InspectedModule& m) {
  if (m.peak.at == nullptr) return "peak memory per device: 0 bytes\n";
  std::string out =
      hlo::StrCat("peak memory per device: ", m.peak.bytes, " bytes, at ", m.peak.at->name(), " (",
                  ComputationName(*m.peak.at), "); live buffers there:\n");
  std::vector<std::vector<std::string>> rows = {{"bytes", "instruction", "opcode", "shape"}};
  for (size_t i = 0; i < m.peak.live.size(); ++i) {
    const hlo::HloInstruction* instr = m.peak.live[i];
    rows.push_back({hlo::StrCat(m.peak.live_allocated[i]), instr->name(), OpcodeLabel(*instr),
                    ShortShape(instr->shape())});
  }
  return out + FormatTextTable(rows, "  ");
}

int64_t ResolveDeviceCount(const hlo::HloModule& module, std::optional<int64_t> requested) {
  if (requested) return *requested;
  if (module.config().num_partitions > 1) return module.config().num_partitions;
  return std::max<int64_t>(1, hlo::MaxDeviceIdInShardings(module) + 1);
}

}  // namespace

std::string GroupSizeText(const hlo::CollectiveRecord& c) {
  return c.kind == hlo::CollectiveKind::kCollectivePermute ? "-" : hlo::StrCat(c.group_size);
}

std::string ShortShape(const hlo::Shape& shape) { return shape.ToString(/*print_layout=*/false); }

absl::StatusOr<std::unique_ptr<InspectedModule>> InspectModule(const std::string& path,
                                                               const InspectOptions& options) {
  const Clock::time_point start = Clock::now();
  absl::StatusOr<std::string> contents = hlo::ReadInput(path);
  if (!contents.ok()) return contents.status();
  absl::StatusOr<hlo::ParsedModule> parsed = hlo::ParseModuleFile(path, *contents);
  if (!parsed.ok()) return parsed.status();
  auto m = std::make_unique<InspectedModule>();
  m->parsed = *std::move(parsed);
  hlo::HloModule& module = *m->parsed.module;
  module.mutable_config()->num_partitions = ResolveDeviceCount(module, options.num_partitions);
  if (absl::Status s = VerifyParsedInput(m->parsed); !s.ok()) return s;
  const double parse_ms = MillisSince(start);
  m->stats = hlo::ComputeModuleStats(module);
  m->stats.module_name = module.name();
  m->stats.input = path;
  m->stats.instructions_before = m->stats.instructions_after;
  m->stats.time_ms_parse = parse_ms;
  m->collectives = hlo::ListCollectives(module);
  if (module.entry_computation() != nullptr) {
    m->peak = hlo::ComputePeakMemory(*module.entry_computation());
  }
  m->stats.estimated_step_time_us = spmd::EstimateStepTimeUs(m->stats, options.device_model);
  m->stats.time_ms_total = MillisSince(start);
  return m;
}

std::string NotSpmdWarning(const InspectedModule& m) {
  if (!m.collectives.empty()) return "";
  for (const auto& comp : m.parsed.module->computations()) {
    for (const auto& instr : comp->instructions()) {
      if (instr->opcode() == hlo::HloOpcode::kPartitionId ||
          instr->opcode() == hlo::HloOpcode::kReplicaId) {
        return "";
      }
    }
  }
  if (m.stats.num_partitions <= 1) {
    return "this module is not an SPMD program: num_partitions is 1 and it has no collective and "
           "no partition-id";
  }
  return hlo::StrCat("this module does not look partitioned: ", m.stats.num_partitions,
                     " partitions but no collective and no partition-id, so its shapes may be the "
                     "global ones (to inspect a partitioning, run spmd-partition first)");
}

std::string InspectReportText(const InspectedModule& m) {
  const std::string warning = NotSpmdWarning(m);
  return hlo::StrCat(warning.empty() ? "" : hlo::StrCat("warning: ", warning, "\n"),
                     hlo::StatsToText(m.stats), "\n", CollectivesTable(m), "\n", PeakTable(m));
}

}  // namespace tools

// A partitioned module read for spmd-inspect, with the analyses every report shows: the
// statistics in the contract's schema, the list of collectives and the peak live memory.
#ifndef TOOLS_INSPECT_INSPECTED_MODULE_H_
#define TOOLS_INSPECT_INSPECTED_MODULE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/analysis/collectives.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/analysis/peak_memory.h"
#include "hlo/parser/hlo_parser.h"
#include "spmd/cost/device_model.h"

namespace tools {

struct InspectedModule {
  hlo::ParsedModule parsed;  // Owns the module the records below point into.
  hlo::ModuleStats stats;
  std::vector<hlo::CollectiveRecord> collectives;
  hlo::PeakMemory peak;  // Of the entry computation.
};

struct InspectOptions {
  // The device count; default the module's `num_partitions`, else 1 + the largest device id in
  // its shardings.
  std::optional<int64_t> num_partitions;
  // For `estimated_step_time_us`.
  spmd::DeviceModel device_model = spmd::DefaultDeviceModel();
};

// Reads `path` (HLO text, HloModuleProto, or "-"), parses and verifies it, and analyses it.
// Errors are `PATH:LINE:COL: error: ...` or `PATH: error: ...`.
absl::StatusOr<std::unique_ptr<InspectedModule>> InspectModule(const std::string& path,
                                                               const InspectOptions& options);

// "f32[16,64]" (no layout): the shape a table shows for `instr`'s result.
std::string ShortShape(const hlo::Shape& shape);

// The group-size column of a collectives table: g, or "-" for a collective-permute (which has
// pairs, not groups).
std::string GroupSizeText(const hlo::CollectiveRecord& c);

// Empty for an SPMD program; else one sentence saying why the module does not look like one: it
// has no collective and no partition-id or replica-id (and, when so, num_partitions is 1).
std::string NotSpmdWarning(const InspectedModule& m);

// The text report: the NotSpmdWarning line when there is one, statistics, the table of collectives,
// and the peak memory with the buffers live there.
std::string InspectReportText(const InspectedModule& m);

}  // namespace tools

#endif  // TOOLS_INSPECT_INSPECTED_MODULE_H_

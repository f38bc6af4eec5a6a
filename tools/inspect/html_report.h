// The self-contained HTML page of spmd-inspect (--html), in reading order: a summary in human
// units (with a warning when the module does not look like an SPMD program), where the bytes go
// by source op and source line, the program graph (html_graph.h), the shardings of parameters
// and results (html_sharding.h), memory over the program (html_memory.h), then the detailed
// tables: every collective (`<table id="collectives">`), the buffers live at the peak, the full
// statistics. CSS, script and SVG are inline; the page loads nothing from the network.
#ifndef TOOLS_INSPECT_HTML_REPORT_H_
#define TOOLS_INSPECT_HTML_REPORT_H_

#include <string>

#include "tools/inspect/inspected_module.h"

namespace tools {

// `original`, when given, is the module before partitioning: the sharding view takes the
// parameters' and results' shardings from it when `m` carries none (our partitioner's output
// does not keep them; XLA's dumps do).
std::string InspectReportHtml(const InspectedModule& m, const hlo::HloModule* original = nullptr);

// The summary cards (`<section id="summary">`): bytes received, FLOPs, peak memory per device,
// collectives, partitions, instructions, estimated step time; and the NotSpmdWarning.
std::string SummarySection(const InspectedModule& m);

// `<section id="PREFIXby-source">`: the top `limit` sources of bytes by op_name
// (`<table id="PREFIXby-op-name">`) and by source line (`PREFIXby-line`).
std::string BySourceSection(const InspectedModule& m, int64_t limit,
                            const std::string& id_prefix = "");

// The sharding view of `m`'s parameters and results, or of `original`'s when `m` has none.
std::string ShardingsOf(const InspectedModule& m, const hlo::HloModule* original,
                        const std::string& id = "shardings");

}  // namespace tools

#endif  // TOOLS_INSPECT_HTML_REPORT_H_

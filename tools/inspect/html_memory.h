// The memory-over-program view of spmd-inspect's HTML page: the bytes live on each device at
// every instruction of the entry computation, in program order (hlo::PeakMemory::live_bytes),
// with the peak and the collectives marked; hovering names the instruction.
#ifndef TOOLS_INSPECT_HTML_MEMORY_H_
#define TOOLS_INSPECT_HTML_MEMORY_H_

#include <string>

#include "tools/inspect/inspected_module.h"

namespace tools {

// `<section id="memory">` with an SVG chart `<svg id="memory-chart">`; `id` names the chart when
// a page has several ("memory-chart-a").
std::string MemorySection(const InspectedModule& m, const std::string& id = "memory-chart");

// Shows the instruction under the pointer on every memory chart; sets nothing else.
const char* MemoryScript();

}  // namespace tools

#endif  // TOOLS_INSPECT_HTML_MEMORY_H_

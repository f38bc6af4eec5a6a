// The self-contained HTML page of spmd-inspect (--html): the statistics, the collectives table
// (`<table id="collectives">`), the buffers live at peak memory, and an SVG of the program graph
// with collectives highlighted and each instruction's shape and sharding shown on hover. CSS,
// script and SVG are inline; the page loads nothing from the network.
#ifndef TOOLS_INSPECT_HTML_REPORT_H_
#define TOOLS_INSPECT_HTML_REPORT_H_

#include <string>

#include "tools/inspect/inspected_module.h"

namespace tools {

std::string InspectReportHtml(const InspectedModule& m);

}  // namespace tools

#endif  // TOOLS_INSPECT_HTML_REPORT_H_

// spmd-inspect --diff A B --html OUT: two partitionings of the same module (ours and XLA's, or
// before and after a change) on one self-contained page: the statistics side by side with their
// difference, the collectives paired as the text diff pairs them (module_diff.h) with how each
// pair compares, where the bytes go on each side, both sides' shardings and memory over the
// program.
#ifndef TOOLS_INSPECT_HTML_DIFF_H_
#define TOOLS_INSPECT_HTML_DIFF_H_

#include <string>

#include "tools/inspect/inspected_module.h"

namespace tools {

std::string DiffReportHtml(const InspectedModule& a, const InspectedModule& b);

}  // namespace tools

#endif  // TOOLS_INSPECT_HTML_DIFF_H_

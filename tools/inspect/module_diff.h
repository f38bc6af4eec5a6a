// spmd-inspect --diff A B: two partitionings of the same module side by side (for example ours
// against the one XLA dumped): the statistics with their differences, the collectives of each
// in program order, and the instructions both have by name whose per-device shapes differ.
#ifndef TOOLS_INSPECT_MODULE_DIFF_H_
#define TOOLS_INSPECT_MODULE_DIFF_H_

#include <string>

#include "tools/inspect/inspected_module.h"

namespace tools {

std::string DiffReportText(const InspectedModule& a, const InspectedModule& b);

}  // namespace tools

#endif  // TOOLS_INSPECT_MODULE_DIFF_H_

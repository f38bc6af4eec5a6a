// spmd-inspect --diff A B: two partitionings of the same module side by side (for example ours
// against the one XLA dumped): the statistics with their differences, the collectives of each
// paired by source op, shape and replica groups, and the instructions both have by name whose
// per-device shapes differ.
#ifndef TOOLS_INSPECT_MODULE_DIFF_H_
#define TOOLS_INSPECT_MODULE_DIFF_H_

#include <string>
#include <vector>

#include "tools/inspect/inspected_module.h"

namespace tools {

// partner[i]: the index in `b` of the collective paired with a[i], or -1. Pairs by what the
// collectives serve and do (see module_diff.cc), never by name or position.
std::vector<int64_t> PairCollectives(const std::vector<hlo::CollectiveRecord>& a,
                                     const std::vector<hlo::CollectiveRecord>& b);

// How paired collectives compare: "same", "same groups, bytes +N", "other groups", or, with one
// of them null, "A only" / "B only".
std::string CompareCollectives(const hlo::CollectiveRecord* a, const hlo::CollectiveRecord* b);

std::string DiffReportText(const InspectedModule& a, const InspectedModule& b);

// What B has more of than A, one line each ("bytes received per device 10 -> 12"): bytes
// received, FLOPs and peak memory per device. Empty when nothing grew.
std::vector<std::string> DiffGrowth(const InspectedModule& a, const InspectedModule& b);

}  // namespace tools

#endif  // TOOLS_INSPECT_MODULE_DIFF_H_

// Where the bytes go: a partitioned module's collectives grouped by the source op they serve
// (the `op_name` of their metadata, which our partitioner and XLA's copy from the instruction
// each collective was made for) and by source line (the innermost frame of `stack_frame_id`,
// or `source_file:source_line`).
#ifndef TOOLS_INSPECT_BY_SOURCE_H_
#define TOOLS_INSPECT_BY_SOURCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tools/inspect/inspected_module.h"

namespace tools {

struct SourceBytes {
  std::string source;  // The op_name, a source line, or "(no source)".
  int64_t collectives = 0;
  int64_t bytes = 0;  // Per device, executions included.
};

enum class SourceKey { kOpName, kLine };

// The groups, most bytes first (ties by name).
std::vector<SourceBytes> BytesBySource(const InspectedModule& m, SourceKey key);

// Both groupings as text tables, each with its top `limit` rows and each row's share of all
// bytes received.
std::string BySourceText(const InspectedModule& m, int64_t limit);

}  // namespace tools

#endif  // TOOLS_INSPECT_BY_SOURCE_H_

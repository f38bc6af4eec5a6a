#include "tools/inspect/by_source.h"

#include <algorithm>
#include <map>

#include "hlo/ir/stack_frame_index.h"
#include "hlo/strings.h"
#include "tools/inspect/text_table.h"

namespace tools {
namespace {

constexpr char kNoSource[] = "(no source)";

std::string SourceLine(const hlo::HloModule& module, const hlo::OpMetadata& metadata) {
  std::vector<hlo::ResolvedFrame> frames =
      hlo::ResolveStackFrame(module.stack_frame_index(), metadata.stack_frame_id);
  if (!frames.empty()) return frames.front().Location();
  if (!metadata.source_file.empty()) {
    return hlo::StrCat(metadata.source_file, ":", metadata.source_line);
  }
  return kNoSource;
}

std::string KeyOf(const hlo::HloModule& module, const hlo::HloInstruction& instr, SourceKey key) {
  const hlo::OpMetadata& metadata = instr.attrs().metadata;
  if (key == SourceKey::kLine) return SourceLine(module, metadata);
  return metadata.op_name.empty() ? kNoSource : metadata.op_name;
}

std::string Share(int64_t part, int64_t total) {
  if (total <= 0) return "-";
  return hlo::StrCat(static_cast<int64_t>(100.0 * static_cast<double>(part) /
                                              static_cast<double>(total) +
                                          0.5),
                     "%");
}

std::string Table(const std::vector<SourceBytes>& groups, const std::string& header,
                  int64_t limit, int64_t total) {
  std::vector<std::vector<std::string>> rows = {{"bytes", "share", "collectives", header}};
  for (size_t i = 0; i < groups.size() && static_cast<int64_t>(i) < limit; ++i) {
    rows.push_back({hlo::StrCat(groups[i].bytes), Share(groups[i].bytes, total),
                    hlo::StrCat(groups[i].collectives), groups[i].source});
  }
  std::string more;
  if (static_cast<int64_t>(groups.size()) > limit) {
    more = hlo::StrCat("  (", static_cast<int64_t>(groups.size()) - limit, " more)\n");
  }
  return FormatTextTable(rows, "  ") + more;
}

}  // namespace

std::vector<SourceBytes> BytesBySource(const InspectedModule& m, SourceKey key) {
  std::map<std::string, SourceBytes> groups;
  for (const hlo::CollectiveRecord& c : m.collectives) {
    const std::string source = KeyOf(*m.parsed.module, *c.instr, key);
    SourceBytes& g = groups[source];
    g.source = source;
    g.collectives += 1;
    g.bytes += c.bytes * c.executions;
  }
  std::vector<SourceBytes> out;
  for (auto& [name, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const SourceBytes& a, const SourceBytes& b) {
    return a.bytes > b.bytes;
  });
  return out;
}

std::string BySourceText(const InspectedModule& m, int64_t limit) {
  int64_t total = 0;
  for (const hlo::CollectiveRecord& c : m.collectives) total += c.bytes * c.executions;
  return hlo::StrCat("bytes received per device by source op (", total, " bytes)\n",
                     Table(BytesBySource(m, SourceKey::kOpName), "op_name", limit, total),
                     "bytes received per device by source line\n",
                     Table(BytesBySource(m, SourceKey::kLine), "line", limit, total));
}

}  // namespace tools

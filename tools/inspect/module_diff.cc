// Three text tables. The collectives are paired by position (the i-th collective of A beside
// the i-th of B), since two partitioners name and order their collectives differently; the
// instruction table pairs by name, which both sides usually keep for the original module's
// instructions (parameters, dots, the root).
#include "tools/inspect/module_diff.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "hlo/strings.h"
#include "tools/inspect/text_table.h"

namespace tools {
namespace {

using Rows = std::vector<std::vector<std::string>>;

void AddMetric(const std::string& name, int64_t a, int64_t b, Rows* rows) {
  const int64_t delta = b - a;
  rows->push_back({name, hlo::StrCat(a), hlo::StrCat(b), hlo::StrCat(delta > 0 ? "+" : "", delta)});
}

std::string SummaryTable(const hlo::ModuleStats& a, const hlo::ModuleStats& b) {
  Rows rows = {{"", "A", "B", "B-A"}};
  AddMetric("partitions", a.num_partitions, b.num_partitions, &rows);
  AddMetric("instructions", a.instructions_after, b.instructions_after, &rows);
  AddMetric("flops per device", a.flops, b.flops, &rows);
  AddMetric("bytes received per device", a.comm_bytes, b.comm_bytes, &rows);
  AddMetric("peak memory per device", a.peak_memory_bytes, b.peak_memory_bytes, &rows);
  for (int k = 0; k < hlo::kNumCollectiveKinds; ++k) {
    const std::string kind(hlo::CollectiveKindName(static_cast<hlo::CollectiveKind>(k)));
    AddMetric(kind + " count", a.collectives[k].count, b.collectives[k].count, &rows);
    AddMetric(kind + " bytes", a.collectives[k].bytes, b.collectives[k].bytes, &rows);
  }
  return FormatTextTable(rows, "  ");
}

std::vector<std::string> CollectiveCells(const std::vector<hlo::CollectiveRecord>& list, size_t i) {
  if (i >= list.size()) return {"", "", "", "", "", ""};
  const hlo::CollectiveRecord& c = list[i];
  return {std::string(hlo::CollectiveKindName(c.kind)),
          c.instr->name(),
          ShortShape(*c.output_shape),
          hlo::DescribeGroups(*c.instr),
          hlo::StrCat(c.executions),
          hlo::StrCat(c.bytes * c.executions)};
}

std::string CollectivesSideBySide(const InspectedModule& a, const InspectedModule& b) {
  Rows rows = {{"#", "A kind", "A instruction", "A shape", "A groups", "A times", "A bytes", "|",
                "B kind", "B instruction", "B shape", "B groups", "B times", "B bytes"}};
  const size_t n = std::max(a.collectives.size(), b.collectives.size());
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> row = {hlo::StrCat(i + 1)};
    for (std::string& cell : CollectiveCells(a.collectives, i)) row.push_back(std::move(cell));
    row.push_back("|");
    for (std::string& cell : CollectiveCells(b.collectives, i)) row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  return n == 0 ? "  (none on either side)\n" : FormatTextTable(rows, "  ");
}

std::string ShapeDifferences(const hlo::HloModule& a, const hlo::HloModule& b) {
  if (a.entry_computation() == nullptr || b.entry_computation() == nullptr) return "  (none)\n";
  absl::flat_hash_map<std::string, const hlo::HloInstruction*> by_name;
  for (const auto& instr : b.entry_computation()->instructions())
    by_name[instr->name()] = instr.get();
  Rows rows = {{"instruction", "opcode", "A shape", "B shape"}};
  for (const auto& instr : a.entry_computation()->instructions()) {
    auto it = by_name.find(instr->name());
    if (it == by_name.end()) continue;
    const std::string shape_a = ShortShape(instr->shape());
    const std::string shape_b = ShortShape(it->second->shape());
    if (shape_a == shape_b) continue;
    rows.push_back(
        {instr->name(), std::string(hlo::HloOpcodeString(instr->opcode())), shape_a, shape_b});
  }
  return rows.size() == 1 ? "  (none)\n" : FormatTextTable(rows, "  ");
}

}  // namespace

std::string DiffReportText(const InspectedModule& a, const InspectedModule& b) {
  return hlo::StrCat("A: ", a.stats.input, " (module ", a.stats.module_name,
                     ")\nB: ", b.stats.input, " (module ", b.stats.module_name, ")\n\nstatistics\n",
                     SummaryTable(a.stats, b.stats), "\ncollectives in program order\n",
                     CollectivesSideBySide(a, b),
                     "\nentry instructions in both whose per-device shapes differ\n",
                     ShapeDifferences(*a.parsed.module, *b.parsed.module));
}

}  // namespace tools

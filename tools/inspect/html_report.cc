// The page is one string: PageStart, the sections in reading order, PageEnd with the scripts of
// the graph and the memory chart. Numbers are shown in human units with the exact count as a
// tooltip; the detailed tables at the end keep exact integers.
#include "tools/inspect/html_report.h"

#include <algorithm>

#include "hlo/analysis/module_stats.h"
#include "hlo/strings.h"
#include "tools/inspect/by_source.h"
#include "tools/inspect/html_graph.h"
#include "tools/inspect/html_memory.h"
#include "tools/inspect/html_sharding.h"
#include "tools/inspect/html_util.h"
#include "tools/inspect/program_graph.h"

namespace tools {
namespace {

constexpr int64_t kBySourceRows = 15;

std::string Card(const std::string& id, const std::string& value, const std::string& label,
                 const std::string& exact) {
  return hlo::StrCat("<div class=\"card\" id=\"", id, "\" title=\"", Escape(exact),
                     "\"><div class=\"value\">", Escape(value), "</div><div class=\"label\">",
                     Escape(label), "</div></div>\n");
}

std::string CollectiveCounts(const hlo::ModuleStats& s) {
  std::string out;
  for (int k = 0; k < hlo::kNumCollectiveKinds; ++k) {
    if (s.collectives[k].count == 0) continue;
    hlo::StrAppend(&out, out.empty() ? "" : ", ", s.collectives[k].count, " ",
                   hlo::CollectiveKindName(static_cast<hlo::CollectiveKind>(k)));
  }
  return out.empty() ? "none" : out;
}

std::string SourceTable(const std::vector<SourceBytes>& groups, const std::string& id,
                        const std::string& header, int64_t total, int64_t limit) {
  std::string out = hlo::StrCat("<table id=\"", id,
                                "\">\n<tr><th>bytes</th><th>share</th>"
                                "<th>collectives</th><th>",
                                header, "</th></tr>\n");
  for (size_t i = 0; i < groups.size() && static_cast<int64_t>(i) < limit; ++i) {
    const double share = total > 0 ? 100.0 * static_cast<double>(groups[i].bytes) / total : 0;
    hlo::StrAppend(&out, "<tr>", BytesCell(groups[i].bytes),
                   "<td><span class=\"share\" style=\"width:", static_cast<int>(share),
                   "px\"></span> ", static_cast<int>(share + 0.5), "%</td>",
                   NumCell(groups[i].collectives), Cell(groups[i].source), "</tr>\n");
  }
  if (static_cast<int64_t>(groups.size()) > limit) {
    hlo::StrAppend(&out, "<tr><td colspan=\"4\">(", static_cast<int64_t>(groups.size()) - limit,
                   " more)</td></tr>\n");
  }
  return out + "</table>\n";
}

std::string CollectivesTable(const InspectedModule& m) {
  std::string out =
      "<h2>Collectives</h2>\n<p>Click a row to find it in the graph.</p>\n<table "
      "id=\"collectives\">"
      "\n<thead><tr><th>#</th><th>kind</th><th>instruction</th><th>source op</th>"
      "<th>computation</th><th>shape</th><th>replica groups</th><th>g</th><th>times</th>"
      "<th>bytes/time</th><th>bytes</th></tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < m.collectives.size(); ++i) {
    const hlo::CollectiveRecord& c = m.collectives[i];
    hlo::StrAppend(&out, "<tr data-node=\"", NodeId(*c.instr), "\">", NumCell(i + 1),
                   Cell(hlo::CollectiveKindName(c.kind)), Cell(c.instr->name()),
                   Cell(c.instr->attrs().metadata.op_name), Cell(c.instr->parent()->name()),
                   Cell(ShortShape(*c.output_shape)), Cell(hlo::DescribeGroups(*c.instr)),
                   Cell(GroupSizeText(c)), NumCell(c.executions), BytesCell(c.bytes),
                   BytesCell(c.bytes * c.executions), "</tr>\n");
  }
  return out + "</tbody>\n</table>\n";
}

std::string PeakTable(const InspectedModule& m) {
  std::string out = hlo::StrCat("<h2>Buffers live at the peak</h2>\n");
  if (m.peak.at == nullptr) return out + "<p>(none)</p>\n";
  hlo::StrAppend(&out, "<p>", Escape(hlo::HumanBytes(static_cast<double>(m.peak.bytes))),
                 " per device, reached at <code>", Escape(m.peak.at->name()),
                 "</code>:</p>\n<table id=\"peak-memory\">\n<tr><th>bytes</th><th>instruction</th>"
                 "<th>opcode</th><th>shape</th></tr>\n");
  for (size_t i = 0; i < m.peak.live.size(); ++i) {
    const hlo::HloInstruction* instr = m.peak.live[i];
    hlo::StrAppend(&out, "<tr>", BytesCell(m.peak.live_allocated[i]), Cell(instr->name()),
                   Cell(OpcodeLabel(*instr)), Cell(ShortShape(instr->shape())), "</tr>\n");
  }
  return out + "</table>\n";
}

std::string StatsTable(const InspectedModule& m) {
  const hlo::ModuleStats& s = m.stats;
  std::string out = hlo::StrCat(
      "<h2>Statistics</h2>\n<table id=\"stats\">\n<tr><th>partitions</th>",
      NumCell(s.num_partitions), "</tr>\n<tr><th>instructions</th>", NumCell(s.instructions_after),
      "</tr>\n<tr><th>FLOPs per device</th>", NumCell(s.flops),
      "</tr>\n<tr><th>bytes received per device</th>", NumCell(s.comm_bytes),
      "</tr>\n<tr><th>peak memory per device (bytes)</th>", NumCell(s.peak_memory_bytes),
      "</tr>\n</table>\n<table id=\"collective-kinds\">\n<tr><th>collective</th><th>count</th>"
      "<th>bytes</th></tr>\n");
  for (int k = 0; k < hlo::kNumCollectiveKinds; ++k) {
    hlo::StrAppend(&out, "<tr>", Cell(hlo::CollectiveKindName(static_cast<hlo::CollectiveKind>(k))),
                   NumCell(s.collectives[k].count), BytesCell(s.collectives[k].bytes), "</tr>\n");
  }
  return out + "</table>\n";
}

}  // namespace

std::string SummarySection(const InspectedModule& m) {
  const hlo::ModuleStats& s = m.stats;
  const std::string warning = NotSpmdWarning(m);
  int64_t collectives = 0;
  for (int k = 0; k < hlo::kNumCollectiveKinds; ++k) collectives += s.collectives[k].count;
  return hlo::StrCat(
      "<section id=\"summary\">\n<h2>Summary</h2>\n",
      warning.empty()
          ? ""
          : hlo::StrCat("<p class=\"warning\" id=\"not-spmd\">Warning: ", Escape(warning),
                        "</p>\n"),
      "<div class=\"cards\">\n",
      Card("summary-bytes", hlo::HumanBytes(static_cast<double>(s.comm_bytes)),
           "bytes received per device", hlo::StrCat(s.comm_bytes, " bytes")),
      Card("summary-flops", hlo::HumanFlops(static_cast<double>(s.flops)), "FLOPs per device",
           hlo::StrCat(s.flops, " FLOP")),
      Card("summary-peak", hlo::HumanBytes(static_cast<double>(s.peak_memory_bytes)),
           "peak memory per device", hlo::StrCat(s.peak_memory_bytes, " bytes")),
      Card("summary-collectives", hlo::StrCat(collectives), "collectives: " + CollectiveCounts(s),
           CollectiveCounts(s)),
      Card("summary-partitions", hlo::StrCat(s.num_partitions), "partitions (devices)", ""),
      Card("summary-instructions", hlo::StrCat(s.instructions_after), "instructions", ""),
      Card("summary-step", hlo::StrCat(static_cast<int64_t>(s.estimated_step_time_us + 0.5), " us"),
           "estimated step time", "from the device model"),
      "</div>\n</section>\n");
}

std::string BySourceSection(const InspectedModule& m, int64_t limit, const std::string& id_prefix) {
  int64_t total = 0;
  for (const hlo::CollectiveRecord& c : m.collectives) total += c.bytes * c.executions;
  return hlo::StrCat(
      "<section id=\"", id_prefix, "by-source\">\n<h2>Where the bytes go</h2>\n<p>",
      Escape(hlo::HumanBytes(static_cast<double>(total))),
      " received per device, grouped by the source op each collective serves (its op_name) and "
      "by source line.</p>\n<div class=\"by-source\"><h3>by source op</h3>\n",
      SourceTable(BytesBySource(m, SourceKey::kOpName), id_prefix + "by-op-name", "source op",
                  total, limit),
      "<h3>by source line</h3>\n",
      SourceTable(BytesBySource(m, SourceKey::kLine), id_prefix + "by-line", "source line", total,
                  limit),
      "</div>\n</section>\n");
}

std::string ShardingsOf(const InspectedModule& m, const hlo::HloModule* original,
                        const std::string& id) {
  std::vector<ShardedValue> values = EntryShardings(*m.parsed.module);
  std::string source = "From the partitioned module's annotations; shapes are per device.";
  if (values.empty() && original != nullptr) {
    values = EntryShardings(*original);
    source = hlo::StrCat("From the module before partitioning (", original->name(),
                         "); shapes are global.");
  }
  return ShardingSection(values, m.stats.num_partitions, source, id);
}

std::string InspectReportHtml(const InspectedModule& m, const hlo::HloModule* original) {
  const hlo::HloModule& module = *m.parsed.module;
  return hlo::StrCat(PageStart("spmd-inspect: " + module.name()), "<h1>", Escape(module.name()),
                     "</h1>\n<p>", Escape(m.stats.input), ", ", m.stats.num_partitions,
                     " partitions</p>\n", SummarySection(m), BySourceSection(m, kBySourceRows),
                     GraphSection(m), ShardingsOf(m, original), MemorySection(m),
                     CollectivesTable(m), PeakTable(m), StatsTable(m),
                     PageEnd(hlo::StrCat(MemoryScript(), GraphScript(),
                                         "document.body.setAttribute('data-ready', 'true');\n")));
}

}  // namespace tools

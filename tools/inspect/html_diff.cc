// Sections: `<table id="diff-summary">` (rows whose B grew are class "grew", shrank "shrank"),
// `<table id="diff-collectives">` (one row per pair, then B's unpaired), then A's and B's
// by-source tables, shardings and memory charts in two columns (ids prefixed "a-" / "b-").
#include "tools/inspect/html_diff.h"

#include "hlo/analysis/module_stats.h"
#include "hlo/strings.h"
#include "tools/inspect/html_memory.h"
#include "tools/inspect/html_report.h"
#include "tools/inspect/html_util.h"
#include "tools/inspect/module_diff.h"

namespace tools {
namespace {

constexpr int64_t kBySourceRows = 10;

using Human = std::string (*)(double);

// `v` in human units, or the plain integer without `human`.
std::string Shown(int64_t v, Human human) {
  return human != nullptr ? human(static_cast<double>(v)) : hlo::StrCat(v);
}

std::string MetricRow(const std::string& name, int64_t a, int64_t b, Human human) {
  const char* cls = b > a ? " class=\"grew\"" : b < a ? " class=\"shrank\"" : "";
  const std::string delta =
      a == b ? "0" : hlo::StrCat(b > a ? "+" : "-", Shown(b > a ? b - a : a - b, human));
  auto value = [&](int64_t v) {
    return hlo::StrCat("<td class=\"num\" title=\"", v, "\">", Escape(Shown(v, human)), "</td>");
  };
  return hlo::StrCat("<tr", cls, ">", Cell(name), value(a), value(b), "<td class=\"num\">",
                     Escape(delta), "</td></tr>\n");
}

int64_t CollectiveCount(const hlo::ModuleStats& s) {
  int64_t n = 0;
  for (int k = 0; k < hlo::kNumCollectiveKinds; ++k) n += s.collectives[k].count;
  return n;
}

std::string SummaryTable(const InspectedModule& a, const InspectedModule& b) {
  const hlo::ModuleStats& x = a.stats;
  const hlo::ModuleStats& y = b.stats;
  std::string out =
      "<table id=\"diff-summary\">\n<tr><th></th><th>A</th><th>B</th><th>B &minus; A</th></tr>\n";
  out += MetricRow("bytes received per device", x.comm_bytes, y.comm_bytes, hlo::HumanBytes);
  out += MetricRow("FLOPs per device", x.flops, y.flops, hlo::HumanFlops);
  out += MetricRow("peak memory per device", x.peak_memory_bytes, y.peak_memory_bytes,
                   hlo::HumanBytes);
  out += MetricRow("collectives", CollectiveCount(x), CollectiveCount(y), nullptr);
  out += MetricRow("instructions", x.instructions_after, y.instructions_after, nullptr);
  out += MetricRow("partitions", x.num_partitions, y.num_partitions, nullptr);
  return out + "</table>\n";
}

std::string Side(const hlo::CollectiveRecord* c) {
  if (c == nullptr) return "<td></td><td></td><td></td><td></td><td></td>";
  return hlo::StrCat(Cell(hlo::CollectiveKindName(c->kind)), Cell(c->instr->name()),
                     Cell(ShortShape(*c->output_shape)), Cell(hlo::DescribeGroups(*c->instr)),
                     BytesCell(c->bytes * c->executions));
}

std::string PairRow(size_t n, const hlo::CollectiveRecord* a, const hlo::CollectiveRecord* b) {
  const std::string how = CompareCollectives(a, b);
  const std::string op = (a != nullptr ? a : b)->instr->attrs().metadata.op_name;
  return hlo::StrCat("<tr class=\"pair\" data-compare=\"", Escape(how), "\">", NumCell(n), Cell(op),
                     Side(a), Side(b), Cell(how), "</tr>\n");
}

std::string CollectivePairs(const InspectedModule& a, const InspectedModule& b) {
  std::string out =
      "<h2>Collectives, paired</h2>\n<p>Paired by source op and shape, then shape and replica "
      "groups (compared as sets of devices, whatever their notation), then shape, then source "
      "op; A in program order, then what only B has.</p>\n<table id=\"diff-collectives\">\n"
      "<tr><th>#</th><th>source op</th><th>A kind</th><th>A instruction</th><th>A shape</th>"
      "<th>A groups</th><th>A bytes</th><th>B kind</th><th>B instruction</th><th>B shape</th>"
      "<th>B groups</th><th>B bytes</th><th>B vs A</th></tr>\n";
  const std::vector<int64_t> partner = PairCollectives(a.collectives, b.collectives);
  std::vector<bool> paired(b.collectives.size(), false);
  size_t n = 0;
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    const hlo::CollectiveRecord* other = partner[i] >= 0 ? &b.collectives[partner[i]] : nullptr;
    if (other != nullptr) paired[partner[i]] = true;
    out += PairRow(++n, &a.collectives[i], other);
  }
  for (size_t j = 0; j < b.collectives.size(); ++j) {
    if (!paired[j]) out += PairRow(++n, nullptr, &b.collectives[j]);
  }
  return out + "</table>\n";
}

std::string Warnings(const InspectedModule& a, const InspectedModule& b) {
  std::string out;
  for (const auto& [label, m] :
       {std::pair<const char*, const InspectedModule*>{"A", &a}, {"B", &b}}) {
    const std::string w = NotSpmdWarning(*m);
    if (!w.empty())
      hlo::StrAppend(&out, "<p class=\"warning\">Warning (", label, "): ", Escape(w), "</p>\n");
  }
  return out;
}

std::string Columns(const std::string& left, const std::string& right) {
  return hlo::StrCat("<div class=\"side\"><div>", left, "</div><div>", right, "</div></div>\n");
}

}  // namespace

std::string DiffReportHtml(const InspectedModule& a, const InspectedModule& b) {
  return hlo::StrCat(
      PageStart("spmd-inspect --diff: " + a.stats.module_name), "<h1>Two partitionings of ",
      Escape(a.stats.module_name), "</h1>\n<p>A: <code>", Escape(a.stats.input), "</code> (module ",
      Escape(a.stats.module_name), ")<br>B: <code>", Escape(b.stats.input), "</code> (module ",
      Escape(b.stats.module_name), ")</p>\n<section id=\"diff\">\n<h2>Summary</h2>\n",
      Warnings(a, b), SummaryTable(a, b), CollectivePairs(a, b), "</section>\n",
      Columns("<h2>A</h2>" + BySourceSection(a, kBySourceRows, "a-"),
              "<h2>B</h2>" + BySourceSection(b, kBySourceRows, "b-")),
      Columns(ShardingsOf(a, nullptr, "a-shardings"), ShardingsOf(b, nullptr, "b-shardings")),
      Columns(MemorySection(a, "a-memory"), MemorySection(b, "b-memory")),
      PageEnd(hlo::StrCat(MemoryScript(), "document.body.setAttribute('data-ready', 'true');\n")));
}

}  // namespace tools

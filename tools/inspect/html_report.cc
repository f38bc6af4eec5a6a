// The page is built as one string: <head> with the style sheet, tables, then one SVG whose
// panels (one per computation, stacked) place node (layer, slot) at
// (slot * (kNodeW + kGapX), layer * (kNodeH + kGapY)) below the panel's title. Edges are drawn
// before nodes so nodes cover them. Hover details come from each node's <title> (native
// tooltip) and, through the script, a fixed detail box; clicking a collectives-table row
// highlights and scrolls to its node. The script ends by setting body[data-ready], which tests
// use to tell that it ran to the end without an exception.
#include "tools/inspect/html_report.h"

#include <algorithm>

#include "hlo/strings.h"
#include "tools/inspect/program_graph.h"

namespace tools {
namespace {

constexpr int kNodeW = 180, kNodeH = 36, kGapX = 16, kGapY = 34, kTitleH = 28, kMargin = 10;

constexpr char kStyle[] = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left; font-family: monospace; }
th { background: #eee; }
td.num { text-align: right; }
#collectives tbody tr { cursor: pointer; }
#collectives tbody tr:hover { background: #fff3dc; }
#detail { position: sticky; top: 0; background: #fffbe6; border: 1px solid #e0c060;
          padding: 4px 8px; font-family: monospace; white-space: pre; min-height: 2.8em; }
.graph { overflow: auto; border: 1px solid #ccc; max-height: 80vh; }
g.node rect { fill: #fff; stroke: #666; rx: 5; }
g.node.collective rect { fill: #f5a623; stroke: #a05a00; stroke-width: 2; }
g.node.selected rect { stroke: #d00; stroke-width: 4; }
g.node:hover rect { stroke: #06c; stroke-width: 3; }
g.node text { font: 11px monospace; pointer-events: none; }
line.edge { stroke: #999; stroke-width: 1; marker-end: url(#arrow); }
text.panel-title { font: bold 13px sans-serif; }
)";

constexpr char kScript[] = R"(
(function () {
  'use strict';
  var detail = document.getElementById('detail');
  var nodes = document.querySelectorAll('g.node');
  for (var i = 0; i < nodes.length; ++i) {
    nodes[i].addEventListener('mouseenter', function (e) {
      detail.textContent = e.currentTarget.getAttribute('data-details');
    });
  }
  var rows = document.querySelectorAll('#collectives tbody tr');
  for (var j = 0; j < rows.length; ++j) {
    rows[j].addEventListener('click', function (e) {
      var node = document.getElementById(e.currentTarget.getAttribute('data-node'));
      if (!node) return;
      var old = document.querySelectorAll('g.node.selected');
      for (var k = 0; k < old.length; ++k) old[k].classList.remove('selected');
      node.classList.add('selected');
      detail.textContent = node.getAttribute('data-details');
      node.scrollIntoView({block: 'center', inline: 'center'});
    });
  }
  document.body.setAttribute('data-ready', 'true');
})();
)";

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string Cell(std::string_view s) { return hlo::StrCat("<td>", Escape(s), "</td>"); }
std::string NumCell(int64_t v) { return hlo::StrCat("<td class=\"num\">", v, "</td>"); }

std::string Truncated(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 1) + "~";
}

std::string NodeId(const hlo::HloInstruction& instr) { return hlo::StrCat("n", instr.unique_id()); }

std::string StatsTables(const InspectedModule& m) {
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
                   NumCell(s.collectives[k].count), NumCell(s.collectives[k].bytes), "</tr>\n");
  }
  return out + "</table>\n";
}

std::string CollectivesTable(const InspectedModule& m) {
  std::string out =
      "<h2>Collectives</h2>\n<table id=\"collectives\">\n<thead><tr><th>#</th><th>kind</th>"
      "<th>instruction</th><th>computation</th><th>shape</th><th>replica groups</th><th>g</th>"
      "<th>times</th><th>bytes/time</th><th>bytes</th></tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < m.collectives.size(); ++i) {
    const hlo::CollectiveRecord& c = m.collectives[i];
    hlo::StrAppend(&out, "<tr data-node=\"", NodeId(*c.instr), "\">", NumCell(i + 1),
                   Cell(hlo::CollectiveKindName(c.kind)), Cell(c.instr->name()),
                   Cell(c.instr->parent()->name()), Cell(ShortShape(*c.output_shape)),
                   Cell(hlo::DescribeGroups(*c.instr)), Cell(GroupSizeText(c)),
                   NumCell(c.executions), NumCell(c.bytes), NumCell(c.bytes * c.executions),
                   "</tr>\n");
  }
  return out + "</tbody>\n</table>\n";
}

std::string PeakTable(const InspectedModule& m) {
  std::string out = hlo::StrCat("<h2>Peak memory per device: ", m.peak.bytes, " bytes</h2>\n");
  if (m.peak.at == nullptr) return out;
  hlo::StrAppend(&out, "<p>Reached at <code>", Escape(m.peak.at->name()),
                 "</code>; the buffers live there:</p>\n<table id=\"peak-memory\">\n<tr>"
                 "<th>bytes</th><th>instruction</th><th>opcode</th><th>shape</th></tr>\n");
  for (const hlo::HloInstruction* instr : m.peak.live) {
    hlo::StrAppend(&out, "<tr>", NumCell(hlo::AllocatedBytes(*instr)), Cell(instr->name()),
                   Cell(OpcodeLabel(*instr)), Cell(ShortShape(instr->shape())), "</tr>\n");
  }
  return out + "</table>\n";
}

int PanelHeight(const ComputationGraph& g) { return kTitleH + g.num_layers * (kNodeH + kGapY); }

int NodeX(const GraphNode& n) { return kMargin + n.slot * (kNodeW + kGapX); }
int NodeY(const GraphNode& n, int top) { return top + kTitleH + n.layer * (kNodeH + kGapY); }

void AppendNode(const GraphNode& n, int top, std::string* out) {
  const hlo::HloInstruction& instr = *n.instr;
  const std::string details = Escape(NodeDetails(instr));
  const int x = NodeX(n), y = NodeY(n, top);
  hlo::StrAppend(out, "<g class=\"node", n.collective ? " collective" : "", "\" id=\"",
                 NodeId(instr), "\" data-details=\"", details, "\"><title>", details,
                 "</title><rect x=\"", x, "\" y=\"", y, "\" width=\"", kNodeW, "\" height=\"",
                 kNodeH, "\"/><text x=\"", x + 6, "\" y=\"", y + 14, "\">",
                 Escape(Truncated(instr.name(), 26)), "</text><text x=\"", x + 6, "\" y=\"", y + 29,
                 "\">", Escape(Truncated(OpcodeLabel(instr), 26)), "</text></g>\n");
}

void AppendPanel(const ComputationGraph& g, int top, std::string* out) {
  hlo::StrAppend(out, "<text class=\"panel-title\" x=\"", kMargin, "\" y=\"", top + 18, "\">",
                 Escape(g.computation->name()), "</text>\n");
  for (const auto& [from, to] : g.edges) {
    const GraphNode& a = g.nodes[from];
    const GraphNode& b = g.nodes[to];
    hlo::StrAppend(out, "<line class=\"edge\" x1=\"", NodeX(a) + kNodeW / 2, "\" y1=\"",
                   NodeY(a, top) + kNodeH, "\" x2=\"", NodeX(b) + kNodeW / 2, "\" y2=\"",
                   NodeY(b, top) - 2, "\"/>\n");
  }
  for (const GraphNode& n : g.nodes) AppendNode(n, top, out);
}

std::string GraphSvg(const hlo::HloModule& module) {
  const std::vector<ComputationGraph> graphs = BuildProgramGraph(module);
  int width = 0, height = kMargin;
  for (const ComputationGraph& g : graphs) {
    width = std::max(width, 2 * kMargin + g.max_slots * (kNodeW + kGapX));
    height += PanelHeight(g);
  }
  std::string body;
  int top = kMargin;
  for (const ComputationGraph& g : graphs) {
    AppendPanel(g, top, &body);
    top += PanelHeight(g);
  }
  return hlo::StrCat(
      "<h2>Program graph</h2>\n<p>Collectives are orange. Hover over an instruction for its "
      "shape and sharding; click a row of the collectives table to find it.</p>\n"
      "<div id=\"detail\">(hover over an instruction)</div>\n<div class=\"graph\">\n"
      "<svg id=\"program-graph\" xmlns=\"http://www.w3.org/2000/svg\" width=\"",
      width, "\" height=\"", height, "\" viewBox=\"0 0 ", width, " ", height,
      "\">\n<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
      "markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" "
      "fill=\"#999\"/></marker></defs>\n",
      body, "</svg>\n</div>\n");
}

}  // namespace

std::string InspectReportHtml(const InspectedModule& m) {
  const hlo::HloModule& module = *m.parsed.module;
  return hlo::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
      "spmd-inspect: ", Escape(module.name()), "</title>\n<style>", kStyle,
      "</style>\n</head>\n<body>\n<h1>", Escape(module.name()), "</h1>\n<p>", Escape(m.stats.input),
      ", ", m.stats.num_partitions, " partitions</p>\n", StatsTables(m), CollectivesTable(m),
      PeakTable(m), GraphSvg(module), "<script>", kScript, "</script>\n</body>\n</html>\n");
}

}  // namespace tools

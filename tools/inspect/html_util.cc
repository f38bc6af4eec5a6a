#include "tools/inspect/html_util.h"

#include "hlo/analysis/module_stats.h"
#include "hlo/strings.h"

namespace tools {
namespace {

constexpr char kStyle[] = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1800px; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left; font-family: monospace; }
th { background: #eee; }
td.num { text-align: right; white-space: nowrap; }
.by-source td:last-child { word-break: break-all; max-width: 60em; }
.warning { background: #fde8e8; border: 1px solid #d33; padding: 6px 10px; font-weight: bold; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 0.5em 0 1em; }
.card { border: 1px solid #ccc; border-radius: 6px; padding: 8px 14px; min-width: 170px; }
.card .value { font-size: 22px; font-weight: bold; }
.card .label { color: #555; font-size: 12px; }
.share { display: inline-block; height: 10px; background: #f5a623; vertical-align: middle; }
#collectives tbody tr { cursor: pointer; }
#collectives tbody tr:hover { background: #fff3dc; }
#detail { position: sticky; top: 0; z-index: 2; background: #fffbe6; border: 1px solid #e0c060;
          padding: 4px 8px; font-family: monospace; white-space: pre; min-height: 2.8em; }
.toolbar { margin: 6px 0; }
.toolbar input { width: 24em; }
.graph { border: 1px solid #ccc; height: 70vh; min-height: 300px; overflow: hidden;
         cursor: grab; background: #fcfcfc; }
.graph svg { width: 100%; height: 100%; display: block; }
g.node rect { fill: #fff; stroke: #666; rx: 5; }
g.node.collective rect { fill: #f5a623; stroke: #a05a00; stroke-width: 2; }
g.node.calls rect { fill: #e6f0ff; stroke: #36c; }
g.node.match rect { fill: #b8f0b8; stroke: #080; stroke-width: 3; }
g.node.selected rect { stroke: #d00; stroke-width: 4; }
g.node:hover rect { stroke: #06c; stroke-width: 3; }
g.node text { font: 11px monospace; pointer-events: none; }
g.node text.folded { fill: #777; font-size: 10px; }
line.edge { stroke: #999; stroke-width: 1; marker-end: url(#arrow); }
line.edge.bytes { stroke: #d98200; }
text.edge-bytes { font: bold 10px monospace; fill: #a05a00; }
details.called { margin: 0.5em 0; }
details.called summary { cursor: pointer; font-family: monospace; }
.shardings { display: flex; flex-wrap: wrap; gap: 18px; }
.sharding { border: 1px solid #ddd; padding: 6px; max-width: 420px; }
.sharding .name { font-family: monospace; font-weight: bold; word-break: break-all; }
.sharding .spec { font-family: monospace; font-size: 11px; color: #555; word-break: break-all; }
.grid { display: grid; gap: 1px; background: #444; border: 1px solid #444; margin-top: 4px; }
.block { display: flex; align-items: center; justify-content: center; text-align: center;
         font: 11px monospace; min-height: 26px; padding: 1px; color: #000; }
svg.memory-chart { border: 1px solid #ccc; background: #fff; }
svg.memory-chart path.area { fill: #9cc3f5; stroke: #2a6fc9; stroke-width: 1; }
svg.memory-chart line.peak { stroke: #d00; stroke-dasharray: 4 3; }
svg.memory-chart line.collective { stroke: #f5a623; stroke-width: 1; }
svg.memory-chart text { font: 11px monospace; }
.memory-detail { font-family: monospace; min-height: 1.4em; }
.side { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
tr.grew td { background: #fde8e8; }
tr.shrank td { background: #e6f6e6; }
)";

}  // namespace

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

std::string BytesCell(int64_t bytes) {
  return hlo::StrCat("<td class=\"num\" title=\"", bytes, " bytes\">",
                     hlo::HumanBytes(static_cast<double>(bytes)), "</td>");
}

std::string Truncated(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 1) + "~";
}

std::string NodeId(const hlo::HloInstruction& instr) { return hlo::StrCat("n", instr.unique_id()); }

std::string PageStart(std::string_view title) {
  return hlo::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
      Escape(title), "</title>\n<style>", kStyle, "</style>\n</head>\n<body>\n");
}

std::string PageEnd(std::string_view script) {
  return hlo::StrCat("<script>", script, "</script>\n</body>\n</html>\n");
}

}  // namespace tools

// Node (layer, slot) sits at x = kMargin + (slot + (widest - layer size) / 2) * (kNodeW + kGapX),
// y = kMargin + layer * (kNodeH + kGapY): each layer centred under the widest one. Edges are
// drawn before nodes so nodes cover them. Each `<g class="node">` carries its centre
// (data-cx, data-cy), its search text and its details; the script reads only those.
#include "tools/inspect/html_graph.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/strings.h"
#include "tools/inspect/html_util.h"
#include "tools/inspect/program_graph.h"

namespace tools {
namespace {

constexpr int kNodeW = 200, kNodeH = 50, kGapX = 18, kGapY = 40, kMargin = 12;

using BytesByInstr = absl::flat_hash_map<const hlo::HloInstruction*, int64_t>;
using ComputationIds = absl::flat_hash_map<const hlo::HloComputation*, std::string>;

struct Placement {
  std::vector<int> layer_size;
  int widest = 0;
};

Placement Place(const ComputationGraph& g) {
  Placement p;
  p.layer_size.assign(g.num_layers, 0);
  for (const GraphNode& n : g.nodes) {
    if (!n.folded) ++p.layer_size[n.layer];
  }
  p.widest = g.max_slots;
  return p;
}

double NodeX(const GraphNode& n, const Placement& p) {
  return kMargin + (n.slot + (p.widest - p.layer_size[n.layer]) / 2.0) * (kNodeW + kGapX);
}
double NodeY(const GraphNode& n) { return kMargin + n.layer * (kNodeH + kGapY); }

std::string FoldedText(const GraphNode& n) {
  std::string names;
  for (const hlo::HloInstruction* f : n.folded_inputs) hlo::StrAppend(&names, " ", f->name());
  return names;
}

std::string ThirdLine(const GraphNode& n, const BytesByInstr& bytes) {
  if (auto it = bytes.find(n.instr); it != bytes.end()) {
    return hlo::StrCat("receives ", hlo::HumanBytes(static_cast<double>(it->second)));
  }
  if (!n.folded_inputs.empty()) return hlo::StrCat("+", n.folded_inputs.size(), " index ops");
  return "";
}

std::string CalledIds(const hlo::HloInstruction& instr, const ComputationIds& ids) {
  std::string out;
  for (const hlo::HloComputation* c : instr.called_computations()) {
    if (auto it = ids.find(c); it != ids.end())
      hlo::StrAppend(&out, out.empty() ? "" : " ", it->second);
  }
  return out;
}

void AppendNode(const GraphNode& n, const Placement& p, const BytesByInstr& bytes,
                const ComputationIds& ids, std::string* out) {
  const hlo::HloInstruction& instr = *n.instr;
  std::string details = NodeDetails(instr);
  if (!n.folded_inputs.empty())
    hlo::StrAppend(&details, "\nfolded index arithmetic:", FoldedText(n));
  const std::string calls = n.collective ? "" : CalledIds(instr, ids);
  const double x = NodeX(n, p), y = NodeY(n);
  const std::string third = ThirdLine(n, bytes);
  hlo::StrAppend(out, "<g class=\"node", n.collective ? " collective" : "",
                 calls.empty() ? "" : " calls", "\" id=\"", NodeId(instr), "\" data-cx=\"",
                 x + kNodeW / 2.0, "\" data-cy=\"", y + kNodeH / 2.0, "\" data-search=\"",
                 Escape(hlo::StrCat(instr.name(), " ", OpcodeLabel(instr))), "\"");
  if (!calls.empty()) hlo::StrAppend(out, " data-calls=\"", calls, "\"");
  if (auto it = bytes.find(n.instr); it != bytes.end()) {
    hlo::StrAppend(out, " data-bytes=\"", it->second, "\"");
  }
  hlo::StrAppend(
      out, " data-details=\"", Escape(details), "\"><title>", Escape(details), "</title><rect x=\"",
      x, "\" y=\"", y, "\" width=\"", kNodeW, "\" height=\"", kNodeH, "\"/><text x=\"", x + 6,
      "\" y=\"", y + 14, "\">", Escape(Truncated(instr.name(), 29)), "</text><text x=\"", x + 6,
      "\" y=\"", y + 28, "\">",
      Escape(Truncated(hlo::StrCat(OpcodeLabel(instr), " ", ShortShape(instr.shape())), 29)),
      "</text>");
  if (!third.empty()) {
    hlo::StrAppend(out, "<text", n.collective ? "" : " class=\"folded\"", " x=\"", x + 6, "\" y=\"",
                   y + 43, "\">", Escape(third), "</text>");
  }
  *out += "</g>\n";
}

void AppendEdges(const ComputationGraph& g, const Placement& p, const BytesByInstr& bytes,
                 std::string* out) {
  std::vector<bool> labelled(g.nodes.size(), false);
  for (const auto& [from, to] : g.edges) {
    const GraphNode& a = g.nodes[from];
    const GraphNode& b = g.nodes[to];
    const double x1 = NodeX(a, p) + kNodeW / 2.0, y1 = NodeY(a) + kNodeH;
    const double x2 = NodeX(b, p) + kNodeW / 2.0, y2 = NodeY(b) - 2;
    auto it = bytes.find(a.instr);
    hlo::StrAppend(out, "<line class=\"edge", it != bytes.end() ? " bytes" : "", "\" x1=\"", x1,
                   "\" y1=\"", y1, "\" x2=\"", x2, "\" y2=\"", y2, "\"");
    if (it != bytes.end()) hlo::StrAppend(out, " style=\"stroke-width:3\"");
    *out += "/>\n";
    if (it == bytes.end() || labelled[from]) continue;
    labelled[from] = true;
    hlo::StrAppend(out, "<text class=\"edge-bytes\" x=\"", (x1 + x2) / 2 + 4, "\" y=\"",
                   (y1 + y2) / 2, "\">", Escape(hlo::HumanBytes(static_cast<double>(it->second))),
                   "</text>\n");
  }
}

std::string GraphSvg(const ComputationGraph& g, const BytesByInstr& bytes,
                     const ComputationIds& ids) {
  const Placement p = Place(g);
  const int width = 2 * kMargin + std::max(1, p.widest) * (kNodeW + kGapX);
  const int height = 2 * kMargin + std::max(1, g.num_layers) * (kNodeH + kGapY);
  std::string body;
  AppendEdges(g, p, bytes, &body);
  for (const GraphNode& n : g.nodes) {
    if (!n.folded) AppendNode(n, p, bytes, ids, &body);
  }
  return hlo::StrCat("<div class=\"graph\" data-w=\"", width, "\" data-h=\"", height,
                     "\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ", width, " ",
                     height, "\">\n", body, "</svg>\n</div>\n");
}

BytesByInstr CollectiveBytes(const InspectedModule& m) {
  BytesByInstr bytes;
  for (const hlo::CollectiveRecord& c : m.collectives) bytes[c.instr] += c.bytes * c.executions;
  return bytes;
}

constexpr char kArrowDefs[] =
    "<svg width=\"0\" height=\"0\" style=\"position:absolute\"><defs><marker id=\"arrow\" "
    "viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
    "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#999\"/></marker></defs></svg>\n";

}  // namespace

std::string GraphSection(const InspectedModule& m) {
  GraphOptions options;
  options.fold_index_arithmetic = true;
  const std::vector<ComputationGraph> graphs = BuildProgramGraph(*m.parsed.module, options);
  ComputationIds ids;
  for (size_t i = 0; i < graphs.size(); ++i) ids[graphs[i].computation] = hlo::StrCat("comp", i);
  const BytesByInstr bytes = CollectiveBytes(m);
  int folded = 0, shown = 0;
  for (const ComputationGraph& g : graphs) {
    folded += g.num_folded;
    shown += static_cast<int>(g.nodes.size()) - g.num_folded;
  }
  std::string out = hlo::StrCat(
      "<section id=\"graph-section\">\n<h2>Program graph</h2>\n<p>", shown, " instructions drawn; ",
      folded,
      " instructions of index arithmetic (constants, partition-id, offset tables) folded into "
      "the instructions they feed. Collectives are orange, with the bytes each receives per "
      "device; blue instructions call a computation (click to open it). Wheel or +/- zoom, drag "
      "pans, the search box finds instructions by name or opcode; a graph too large to read "
      "whole opens on the collective that receives the most bytes ('fit' shows all of it).</p>"
      "\n<div class=\"toolbar\">"
      "<input id=\"graph-search\" type=\"search\" placeholder=\"search instructions\"> "
      "<span id=\"search-count\"></span> <button id=\"zoom-in\">+</button> "
      "<button id=\"zoom-out\">&minus;</button> <button id=\"zoom-fit\">fit</button></div>\n"
      "<div id=\"detail\">(hover over an instruction)</div>\n",
      kArrowDefs);
  for (size_t i = 0; i < graphs.size(); ++i) {
    const std::string svg = GraphSvg(graphs[i], bytes, ids);
    const std::string name = Escape(graphs[i].computation->name());
    if (i == 0) {
      hlo::StrAppend(&out, "<div id=\"", ids[graphs[i].computation], "\" class=\"entry\">", svg,
                     "</div>\n");
      continue;
    }
    hlo::StrAppend(&out, "<details class=\"called\" id=\"", ids[graphs[i].computation],
                   "\"><summary>", name, " (", graphs[i].nodes.size(), " instructions, ",
                   graphs[i].num_folded, " folded)</summary>\n", svg, "</details>\n");
  }
  return out + "</section>\n";
}

const char* GraphScript() {
  return R"(
(function () {
  'use strict';
  var detail = document.getElementById('detail');
  var views = [];
  function View(div) {
    var svg = div.querySelector('svg');
    var w = +div.getAttribute('data-w'), h = +div.getAttribute('data-h');
    var v = {div: div, svg: svg, x: 0, y: 0, s: 1, ready: false};
    v.apply = function () {
      var cw = div.clientWidth || 1, ch = div.clientHeight || 1;
      svg.setAttribute('viewBox', v.x + ' ' + v.y + ' ' + cw / v.s + ' ' + ch / v.s);
    };
    v.fit = function () {
      var cw = div.clientWidth, ch = div.clientHeight;
      if (!cw || !ch) return;
      v.s = Math.min(cw / w, ch / h, 1.5);
      if (v.s < 0.35) v.s = 0.35;
      v.x = Math.min(0, (w - cw / v.s) / 2);
      v.y = Math.min(0, (h - ch / v.s) / 2);
      v.ready = true;
      v.apply();
    };
    // A graph too large to read whole opens at a readable scale on the collective that
    // receives the most bytes ('fit' shows all of it).
    v.open = function () {
      v.fit();
      var top = null, most = -1, all = div.querySelectorAll('g.node[data-bytes]');
      for (var k = 0; k < all.length; ++k) {
        var b = +all[k].getAttribute('data-bytes');
        if (b > most) { most = b; top = all[k]; }
      }
      if (v.s >= 0.6 || !top) return;
      v.s = 0.9;
      v.center(+top.getAttribute('data-cx'), +top.getAttribute('data-cy'));
      div.setAttribute('data-opened-on', top.id);
    };
    v.zoom = function (f, px, py) {
      var cw = div.clientWidth, ch = div.clientHeight;
      if (px === undefined) { px = cw / 2; py = ch / 2; }
      var gx = v.x + px / v.s, gy = v.y + py / v.s;
      v.s = Math.max(0.02, Math.min(8, v.s * f));
      v.x = gx - px / v.s; v.y = gy - py / v.s;
      v.apply();
    };
    v.center = function (cx, cy) {
      if (!v.ready) v.fit();
      if (v.s < 0.8) v.s = 0.8;
      v.x = cx - div.clientWidth / 2 / v.s; v.y = cy - div.clientHeight / 2 / v.s;
      v.apply();
    };
    div.addEventListener('wheel', function (e) {
      e.preventDefault();
      var r = div.getBoundingClientRect();
      v.zoom(e.deltaY < 0 ? 1.2 : 1 / 1.2, e.clientX - r.left, e.clientY - r.top);
    }, {passive: false});
    var drag = null;
    div.addEventListener('mousedown', function (e) { drag = {x: e.clientX, y: e.clientY}; });
    window.addEventListener('mouseup', function () { drag = null; });
    window.addEventListener('mousemove', function (e) {
      if (!drag) return;
      v.x -= (e.clientX - drag.x) / v.s; v.y -= (e.clientY - drag.y) / v.s;
      drag = {x: e.clientX, y: e.clientY};
      v.apply();
    });
    div.view = v;
    v.open();
    return v;
  }
  var divs = document.querySelectorAll('div.graph');
  for (var i = 0; i < divs.length; ++i) views.push(View(divs[i]));
  var opened = document.querySelectorAll('details.called');
  for (var d = 0; d < opened.length; ++d) {
    opened[d].addEventListener('toggle', function (e) {
      var g = e.currentTarget.querySelector('div.graph');
      if (e.currentTarget.open && g && !g.view.ready) g.view.open();
    });
  }
  var active = views.length ? views[0] : null;
  function show(node) {
    var old = document.querySelectorAll('g.node.selected');
    for (var k = 0; k < old.length; ++k) old[k].classList.remove('selected');
    node.classList.add('selected');
    detail.textContent = node.getAttribute('data-details');
    var box = node.closest('details');
    if (box && !box.open) box.open = true;
    var div = node.closest('div.graph');
    div.view.center(+node.getAttribute('data-cx'), +node.getAttribute('data-cy'));
    div.scrollIntoView({block: 'nearest'});
    active = div.view;
  }
  var nodes = document.querySelectorAll('g.node');
  for (var n = 0; n < nodes.length; ++n) {
    nodes[n].addEventListener('mouseenter', function (e) {
      detail.textContent = e.currentTarget.getAttribute('data-details');
    });
    nodes[n].addEventListener('click', function (e) {
      var calls = (e.currentTarget.getAttribute('data-calls') || '').split(' ');
      for (var c = 0; c < calls.length; ++c) {
        var box = calls[c] && document.getElementById(calls[c]);
        if (!box) continue;
        box.open = true;
        box.scrollIntoView({block: 'start'});
      }
    });
  }
  var rows = document.querySelectorAll('#collectives tbody tr');
  for (var j = 0; j < rows.length; ++j) {
    rows[j].addEventListener('click', function (e) {
      var node = document.getElementById(e.currentTarget.getAttribute('data-node'));
      if (node) show(node);
    });
  }
  var search = document.getElementById('graph-search');
  var count = document.getElementById('search-count');
  var matches = [], at = -1;
  if (search) {
    search.addEventListener('input', function () {
      var q = search.value.trim().toLowerCase();
      matches = []; at = -1;
      for (var m = 0; m < nodes.length; ++m) {
        var hit = q !== '' && nodes[m].getAttribute('data-search').toLowerCase().indexOf(q) >= 0;
        nodes[m].classList.toggle('match', hit);
        if (hit) matches.push(nodes[m]);
      }
      count.textContent = q === '' ? '' : matches.length + ' found (Enter: next)';
    });
    search.addEventListener('keydown', function (e) {
      if (e.key !== 'Enter' || !matches.length) return;
      at = (at + 1) % matches.length;
      show(matches[at]);
      count.textContent = (at + 1) + ' of ' + matches.length;
    });
  }
  function button(id, f) {
    var b = document.getElementById(id);
    if (b) b.addEventListener('click', function () { if (active) f(active); });
  }
  button('zoom-in', function (v) { v.zoom(1.25); });
  button('zoom-out', function (v) { v.zoom(0.8); });
  button('zoom-fit', function (v) { v.fit(); });
  window.addEventListener('resize', function () {
    for (var r = 0; r < views.length; ++r) views[r].apply();
  });
})();
)";
}

}  // namespace tools

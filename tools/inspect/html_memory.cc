// The chart is a step area in a kW x kH viewBox: x = instruction position scaled to the plot
// width, y = live bytes scaled to the peak. The instruction names and byte counts travel in
// data attributes of the chart so the script can label the point under the pointer.
#include "tools/inspect/html_memory.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/strings.h"
#include "tools/inspect/html_util.h"

namespace tools {
namespace {

constexpr double kW = 1300, kH = 260, kLeft = 80, kTop = 16, kBottom = 28;

double X(size_t i, size_t n) { return kLeft + (kW - kLeft - 10) * static_cast<double>(i) / n; }
double Y(int64_t bytes, int64_t peak) {
  return kH - kBottom -
         (kH - kTop - kBottom) * static_cast<double>(bytes) / std::max<int64_t>(1, peak);
}

std::string AreaPath(const std::vector<int64_t>& live, int64_t peak) {
  const size_t n = live.size();
  std::string d = hlo::StrCat("M", X(0, n), ",", Y(0, peak));
  for (size_t i = 0; i < n; ++i) {
    hlo::StrAppend(&d, " L", X(i, n), ",", Y(live[i], peak), " L", X(i + 1, n), ",",
                   Y(live[i], peak));
  }
  hlo::StrAppend(&d, " L", X(n, n), ",", Y(0, peak), " Z");
  return d;
}

std::string Axis(int64_t peak, size_t n) {
  std::string out;
  for (int k = 0; k <= 2; ++k) {
    const int64_t v = peak * k / 2;
    hlo::StrAppend(&out, "<text x=\"4\" y=\"", Y(v, peak) + 4, "\">",
                   Escape(hlo::HumanBytes(static_cast<double>(v))), "</text><line x1=\"", kLeft,
                   "\" x2=\"", kW - 10, "\" y1=\"", Y(v, peak), "\" y2=\"", Y(v, peak),
                   "\" stroke=\"#eee\"/>");
  }
  hlo::StrAppend(&out, "<text x=\"", kLeft, "\" y=\"", kH - 8, "\">instruction 1</text><text x=\"",
                 kW - 140, "\" y=\"", kH - 8, "\">instruction ", n, "</text>");
  return out;
}

}  // namespace

std::string MemorySection(const InspectedModule& m, const std::string& id) {
  const hlo::HloComputation* entry = m.parsed.module->entry_computation();
  const std::vector<int64_t>& live = m.peak.live_bytes;
  std::string out = hlo::StrCat(
      "<section class=\"memory\" id=\"", Escape(id),
      "-section\">\n<h2>Memory over the program "
      "(per device)</h2>\n<p>Bytes live on each device at every instruction of the entry "
      "computation, in program order (every device runs the same program). Peak ",
      Escape(hlo::HumanBytes(static_cast<double>(m.peak.bytes))));
  if (m.peak.at != nullptr)
    hlo::StrAppend(&out, " at <code>", Escape(m.peak.at->name()), "</code>");
  out += "; collectives are orange ticks.</p>\n";
  if (entry == nullptr || live.empty()) return out + "<p>(no instructions)</p>\n</section>\n";
  absl::flat_hash_set<const hlo::HloInstruction*> collectives;
  for (const hlo::CollectiveRecord& c : m.collectives) collectives.insert(c.instr);
  std::string names, ticks;
  const auto& instrs = entry->instructions();
  size_t peak_index = 0;
  for (size_t i = 0; i < instrs.size() && i < live.size(); ++i) {
    hlo::StrAppend(&names, i ? " " : "", instrs[i]->name());
    if (instrs[i].get() == m.peak.at) peak_index = i;
    if (!collectives.contains(instrs[i].get())) continue;
    hlo::StrAppend(&ticks, "<line class=\"collective\" x1=\"", X(i, live.size()), "\" x2=\"",
                   X(i, live.size()), "\" y1=\"", kH - kBottom, "\" y2=\"", kH - kBottom + 8,
                   "\"/>");
  }
  std::string bytes;
  for (size_t i = 0; i < live.size(); ++i) hlo::StrAppend(&bytes, i ? " " : "", live[i]);
  const double px = X(peak_index, live.size());
  return hlo::StrCat(out, "<div id=\"", Escape(id),
                     "-detail\" class=\"memory-detail\">(point at the chart)</div>\n", "<svg id=\"",
                     Escape(id), "\" class=\"memory-chart\" viewBox=\"0 0 ", kW, " ", kH,
                     "\" width=\"100%\" data-names=\"", Escape(names), "\" data-bytes=\"", bytes,
                     "\" data-left=\"", kLeft, "\" data-right=\"", kW - 10, "\" data-w=\"", kW,
                     "\">", Axis(m.peak.bytes, live.size()), "<path class=\"area\" d=\"",
                     AreaPath(live, m.peak.bytes), "\"/>", ticks, "<line class=\"peak\" x1=\"", px,
                     "\" x2=\"", px, "\" y1=\"", kTop, "\" y2=\"", kH - kBottom,
                     "\"/></svg>\n</section>\n");
}

const char* MemoryScript() {
  return R"(
(function () {
  'use strict';
  var charts = document.querySelectorAll('svg.memory-chart');
  function human(b) {
    var u = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; ++i; }
    return i ? b.toFixed(1) + ' ' + u[i] : b + ' bytes';
  }
  for (var c = 0; c < charts.length; ++c) {
    (function (svg) {
      var names = svg.getAttribute('data-names').split(' ');
      var bytes = svg.getAttribute('data-bytes').split(' ').map(Number);
      var left = +svg.getAttribute('data-left'), right = +svg.getAttribute('data-right');
      var w = +svg.getAttribute('data-w');
      var out = document.getElementById(svg.id + '-detail');
      svg.addEventListener('mousemove', function (e) {
        var r = svg.getBoundingClientRect();
        var x = (e.clientX - r.left) * w / r.width;
        var i = Math.floor((x - left) / (right - left) * bytes.length);
        if (i < 0 || i >= bytes.length) return;
        out.textContent = 'instruction ' + (i + 1) + ': ' + names[i] + ', live ' + human(bytes[i]);
      });
    })(charts[c]);
  }
})();
)";
}

}  // namespace tools

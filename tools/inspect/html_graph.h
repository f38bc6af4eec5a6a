// The program graph of spmd-inspect's HTML page: the entry computation drawn as SVG with index
// arithmetic folded (counted on the instructions it feeds), every other executed computation in
// a collapsed section of its own (opened by clicking the instruction that calls it), the bytes
// each collective receives written on it and on its outgoing edges, and a script that zooms
// (wheel, buttons), pans (drag) and searches (instruction name or opcode) all of them.
#ifndef TOOLS_INSPECT_HTML_GRAPH_H_
#define TOOLS_INSPECT_HTML_GRAPH_H_

#include <string>

#include "tools/inspect/inspected_module.h"

namespace tools {

// `<h2>Program graph</h2>` and what follows it; needs GraphScript() on the page.
std::string GraphSection(const InspectedModule& m);

// Installs zoom, pan and search on every `div.graph`, and the clicks of the collectives table.
const char* GraphScript();

}  // namespace tools

#endif  // TOOLS_INSPECT_HTML_GRAPH_H_

// Example output:
//
//   digraph "jit_step" {
//     node [shape=box, style="rounded,filled", fillcolor=white, fontname="monospace"];
//     subgraph cluster_0 { label="main.5_spmd";
//       n3 [label="all-gather-start\nall-gather-start", fillcolor="#f5a623", tooltip="..."];
//     }
//     n0 -> n3;
//   }
//
// Node ids are the instructions' module-unique ids, so edges need no lookup.
#include "tools/inspect/dot_writer.h"

#include "hlo/strings.h"
#include "tools/inspect/program_graph.h"

namespace tools {
namespace {

std::string DotQuoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

std::string NodeId(const hlo::HloInstruction& instr) { return hlo::StrCat("n", instr.unique_id()); }

void AppendCluster(const ComputationGraph& graph, int index, std::string* out) {
  hlo::StrAppend(out, "  subgraph cluster_", index,
                 " {\n    label=", DotQuoted(graph.computation->name()), ";\n");
  for (const GraphNode& node : graph.nodes) {
    const hlo::HloInstruction& instr = *node.instr;
    hlo::StrAppend(out, "    ", NodeId(instr),
                   " [label=", DotQuoted(hlo::StrCat(instr.name(), "\n", OpcodeLabel(instr))),
                   node.collective ? ", fillcolor=\"#f5a623\"" : "",
                   ", tooltip=", DotQuoted(NodeDetails(instr)), "];\n");
  }
  out->append("  }\n");
  for (const auto& [from, to] : graph.edges) {
    hlo::StrAppend(out, "  ", NodeId(*graph.nodes[from].instr), " -> ",
                   NodeId(*graph.nodes[to].instr), ";\n");
  }
}

}  // namespace

std::string ProgramGraphToDot(const hlo::HloModule& module) {
  std::string out = hlo::StrCat("digraph ", DotQuoted(module.name()),
                                " {\n  node [shape=box, style=\"rounded,filled\", fillcolor=white, "
                                "fontname=\"monospace\"];\n");
  const std::vector<ComputationGraph> graphs = BuildProgramGraph(module);
  for (size_t i = 0; i < graphs.size(); ++i) AppendCluster(graphs[i], static_cast<int>(i), &out);
  return out + "}\n";
}

}  // namespace tools

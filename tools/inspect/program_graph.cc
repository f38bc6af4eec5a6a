// Layered layout in one pass over the instruction order (operands come before users in parsed
// modules): layer = 1 + the largest operand layer, slot = how many nodes the layer already has.
// Good enough to read programs of a few hundred instructions; no crossing minimisation.
#include "tools/inspect/program_graph.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/analysis/collectives.h"
#include "hlo/analysis/executed_instructions.h"
#include "hlo/strings.h"

namespace tools {
namespace {

bool IsCollectiveNode(const hlo::HloInstruction& instr) {
  if (hlo::GetHloOpcodeFamily(instr.opcode()) == hlo::HloOpcodeFamily::kCollective) return true;
  const auto& wrapped = instr.attrs().async_wrapped_opcode;
  return wrapped && hlo::GetHloOpcodeFamily(*wrapped) == hlo::HloOpcodeFamily::kCollective;
}

ComputationGraph LayOut(const hlo::HloComputation& comp) {
  ComputationGraph graph;
  graph.computation = &comp;
  absl::flat_hash_map<const hlo::HloInstruction*, int> index;
  std::vector<int> layer_sizes;
  for (const auto& instr : comp.instructions()) {
    GraphNode node;
    node.instr = instr.get();
    node.collective = IsCollectiveNode(*instr);
    const int self = static_cast<int>(graph.nodes.size());
    for (const hlo::HloInstruction* op : instr->operands()) {
      auto it = index.find(op);
      if (it == index.end()) continue;
      node.layer = std::max(node.layer, graph.nodes[it->second].layer + 1);
      graph.edges.emplace_back(it->second, self);
    }
    if (static_cast<int>(layer_sizes.size()) <= node.layer) layer_sizes.resize(node.layer + 1, 0);
    node.slot = layer_sizes[node.layer]++;
    index[instr.get()] = self;
    graph.nodes.push_back(node);
  }
  graph.num_layers = static_cast<int>(layer_sizes.size());
  for (int size : layer_sizes) graph.max_slots = std::max(graph.max_slots, size);
  return graph;
}

}  // namespace

std::vector<ComputationGraph> BuildProgramGraph(const hlo::HloModule& module) {
  std::vector<const hlo::HloComputation*> order;
  absl::flat_hash_set<const hlo::HloComputation*> seen;
  hlo::ForEachExecutedInstruction(module, [&](const hlo::HloInstruction& instr, int64_t) {
    const hlo::HloComputation* comp = instr.parent();
    if (comp == nullptr || comp->is_fusion_computation() || !seen.insert(comp).second) return;
    order.push_back(comp);
  });
  std::vector<ComputationGraph> graphs;
  for (const hlo::HloComputation* comp : order) graphs.push_back(LayOut(*comp));
  return graphs;
}

std::string OpcodeLabel(const hlo::HloInstruction& instr) {
  const auto& wrapped = instr.attrs().async_wrapped_opcode;
  if (!wrapped) return std::string(hlo::HloOpcodeString(instr.opcode()));
  std::string_view suffix = instr.opcode() == hlo::HloOpcode::kAsyncStart    ? "-start"
                            : instr.opcode() == hlo::HloOpcode::kAsyncUpdate ? "-update"
                                                                             : "-done";
  return hlo::StrCat(hlo::HloOpcodeString(*wrapped), suffix);
}

std::string NodeDetails(const hlo::HloInstruction& instr) {
  std::string out = hlo::StrCat(instr.name(), " = ", OpcodeLabel(instr), " ",
                                instr.shape().ToString(/*print_layout=*/false));
  if (instr.has_sharding()) {
    hlo::StrAppend(&out, "\nsharding=", instr.sharding().ToStringWithoutMetadata());
  }
  return out;
}

}  // namespace tools

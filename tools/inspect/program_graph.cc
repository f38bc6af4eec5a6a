// Layered layout in one pass over the instruction order (operands come before users in parsed
// modules): layer = 1 + the largest operand layer; then nodes without operands move down to just
// above their first user. Within a layer, nodes are ordered by the mean
// slot of their operands (one barycentre sweep, which removes most crossings of the chains a
// partitioner emits), else in instruction order.
//
// Index arithmetic, folded on request: not a parameter or collective, calls no computation, its
// result a scalar or an integer/pred array of at most kMaxIndexElements elements, and every
// operand index arithmetic too (constants, partition-id, dynamic-slice of an offset table,
// reshape, compare, ...).
#include "tools/inspect/program_graph.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/analysis/collectives.h"
#include "hlo/analysis/executed_instructions.h"
#include "hlo/strings.h"

namespace tools {
namespace {

constexpr int64_t kMaxIndexElements = 64;

bool IsCollectiveNode(const hlo::HloInstruction& instr) {
  if (hlo::GetHloOpcodeFamily(instr.opcode()) == hlo::HloOpcodeFamily::kCollective) return true;
  const auto& wrapped = instr.attrs().async_wrapped_opcode;
  return wrapped && hlo::GetHloOpcodeFamily(*wrapped) == hlo::HloOpcodeFamily::kCollective;
}

bool SmallIndexShape(const hlo::Shape& shape) {
  if (!shape.IsArray()) return false;
  if (shape.rank() == 0) return true;
  const hlo::PrimitiveType t = shape.element_type();
  return (hlo::IsIntegralType(t) || t == hlo::PrimitiveType::kPred) &&
         shape.num_elements() <= kMaxIndexElements;
}

using Index = absl::flat_hash_map<const hlo::HloInstruction*, int>;

bool IsIndexArithmetic(const hlo::HloInstruction& instr, const ComputationGraph& graph,
                       const Index& index) {
  if (instr.opcode() == hlo::HloOpcode::kParameter || IsCollectiveNode(instr) ||
      !instr.called_computations().empty() || !SmallIndexShape(instr.shape())) {
    return false;
  }
  for (const hlo::HloInstruction* op : instr.operands()) {
    auto it = index.find(op);
    if (it == index.end() || !graph.nodes[it->second].folded) return false;
  }
  return true;
}

// The folded instructions feeding `instr` through folded operands, in instruction order.
std::vector<const hlo::HloInstruction*> FoldedChain(const hlo::HloInstruction& instr,
                                                    const ComputationGraph& graph,
                                                    const Index& index) {
  std::vector<const hlo::HloInstruction*> chain;
  absl::flat_hash_set<const hlo::HloInstruction*> seen;
  std::vector<const hlo::HloInstruction*> stack(instr.operands().begin(), instr.operands().end());
  while (!stack.empty()) {
    const hlo::HloInstruction* op = stack.back();
    stack.pop_back();
    auto it = index.find(op);
    if (it == index.end() || !graph.nodes[it->second].folded || !seen.insert(op).second) continue;
    chain.push_back(op);
    stack.insert(stack.end(), op->operands().begin(), op->operands().end());
  }
  std::sort(chain.begin(), chain.end(),
            [&](const auto* a, const auto* b) { return index.at(a) < index.at(b); });
  return chain;
}

// Moves each node without drawn operands (parameters, constants) down to just above its first
// user, so that a program's many parameters do not all sit in layer 0 with edges across the page.
void SinkSources(ComputationGraph& graph) {
  std::vector<bool> has_operand(graph.nodes.size(), false);
  std::vector<int> first_user(graph.nodes.size(), -1);
  for (const auto& [from, to] : graph.edges) {
    has_operand[to] = true;
    const int layer = graph.nodes[to].layer;
    if (first_user[from] < 0 || layer < first_user[from]) first_user[from] = layer;
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!has_operand[i] && first_user[i] > 0) graph.nodes[i].layer = first_user[i] - 1;
  }
}

// Orders each layer by the mean slot of the node's operands and numbers the slots.
void AssignSlots(ComputationGraph& graph) {
  std::vector<std::vector<int>> layers(graph.num_layers);
  std::vector<std::vector<int>> operands(graph.nodes.size());
  for (const auto& [from, to] : graph.edges) operands[to].push_back(from);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!graph.nodes[i].folded) layers[graph.nodes[i].layer].push_back(static_cast<int>(i));
  }
  for (std::vector<int>& layer : layers) {
    std::vector<double> key(layer.size());
    for (size_t k = 0; k < layer.size(); ++k) {
      const std::vector<int>& ops = operands[layer[k]];
      double sum = 0;
      for (int op : ops) sum += graph.nodes[op].slot;
      key[k] = ops.empty() ? static_cast<double>(k) : sum / static_cast<double>(ops.size());
    }
    std::vector<size_t> order(layer.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return key[a] < key[b]; });
    for (size_t k = 0; k < order.size(); ++k)
      graph.nodes[layer[order[k]]].slot = static_cast<int>(k);
    graph.max_slots = std::max(graph.max_slots, static_cast<int>(layer.size()));
  }
}

ComputationGraph LayOut(const hlo::HloComputation& comp, const GraphOptions& options) {
  ComputationGraph graph;
  graph.computation = &comp;
  Index index;
  for (const auto& instr : comp.instructions()) {
    GraphNode node;
    node.instr = instr.get();
    node.collective = IsCollectiveNode(*instr);
    node.folded = options.fold_index_arithmetic && IsIndexArithmetic(*instr, graph, index);
    const int self = static_cast<int>(graph.nodes.size());
    if (node.folded) {
      ++graph.num_folded;
    } else {
      if (options.fold_index_arithmetic) node.folded_inputs = FoldedChain(*instr, graph, index);
      for (const hlo::HloInstruction* op : instr->operands()) {
        auto it = index.find(op);
        if (it == index.end() || graph.nodes[it->second].folded) continue;
        node.layer = std::max(node.layer, graph.nodes[it->second].layer + 1);
        graph.edges.emplace_back(it->second, self);
      }
      graph.num_layers = std::max(graph.num_layers, node.layer + 1);
    }
    index[instr.get()] = self;
    graph.nodes.push_back(std::move(node));
  }
  SinkSources(graph);
  AssignSlots(graph);
  return graph;
}

}  // namespace

std::vector<ComputationGraph> BuildProgramGraph(const hlo::HloModule& module,
                                                const GraphOptions& options) {
  std::vector<const hlo::HloComputation*> order;
  absl::flat_hash_set<const hlo::HloComputation*> seen;
  hlo::ForEachExecutedInstruction(module, [&](const hlo::HloInstruction& instr, int64_t) {
    const hlo::HloComputation* comp = instr.parent();
    if (comp == nullptr || comp->is_fusion_computation() || !seen.insert(comp).second) return;
    order.push_back(comp);
  });
  std::vector<ComputationGraph> graphs;
  for (const hlo::HloComputation* comp : order) graphs.push_back(LayOut(*comp, options));
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

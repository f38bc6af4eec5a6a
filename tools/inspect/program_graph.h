// The program graph that spmd-inspect draws (--html as SVG, --dot as Graphviz): one panel per
// executed computation except fusion bodies (a fusion is one node), nodes in layers by their
// longest operand chain, collectives marked. The HTML page folds index arithmetic: the small
// integer (or scalar) chains of constants, partition-id, table lookups and reshapes that compute
// offsets are hidden and counted on the instructions they feed.
#ifndef TOOLS_INSPECT_PROGRAM_GRAPH_H_
#define TOOLS_INSPECT_PROGRAM_GRAPH_H_

#include <string>
#include <utility>
#include <vector>

#include "hlo/ir/hlo_module.h"

namespace tools {

struct GraphNode {
  const hlo::HloInstruction* instr = nullptr;
  int layer = 0;            // 0 for instructions without operands; else 1 + the deepest operand's.
  int slot = 0;             // Position within the layer, in instruction order.
  bool collective = false;  // A collective, or either half of an async collective pair.
  bool folded = false;      // Index arithmetic hidden by GraphOptions::fold_index_arithmetic.
  std::vector<const hlo::HloInstruction*> folded_inputs;  // The folded chain feeding this node.
};

struct GraphOptions {
  bool fold_index_arithmetic = false;
};

struct ComputationGraph {
  const hlo::HloComputation* computation = nullptr;
  std::vector<GraphNode> nodes;            // In the computation's instruction order.
  std::vector<std::pair<int, int>> edges;  // (operand node, user node) indices, unfolded only.
  int num_layers = 0;
  int max_slots = 0;  // The widest layer's node count.
  int num_folded = 0;
};

// The entry computation first, then the other executed computations in call order.
std::vector<ComputationGraph> BuildProgramGraph(const hlo::HloModule& module,
                                                const GraphOptions& options = {});

// The opcode as the text form writes it, including XLA's async sugar (`reduce-scatter-start`
// for an async-start wrapping a reduce-scatter).
std::string OpcodeLabel(const hlo::HloInstruction& instr);

// What hovering over a node shows: `name = opcode shape`, then the sharding when present.
std::string NodeDetails(const hlo::HloInstruction& instr);

}  // namespace tools

#endif  // TOOLS_INSPECT_PROGRAM_GRAPH_H_

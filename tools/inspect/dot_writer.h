// Graphviz output of spmd-inspect (--dot): the program graph, one cluster per computation,
// collectives filled in orange, each node's shape and sharding in its tooltip.
#ifndef TOOLS_INSPECT_DOT_WRITER_H_
#define TOOLS_INSPECT_DOT_WRITER_H_

#include <string>

#include "hlo/ir/hlo_module.h"

namespace tools {

// A complete `digraph` for `module` (BuildProgramGraph's computations and edges).
std::string ProgramGraphToDot(const hlo::HloModule& module);

}  // namespace tools

#endif  // TOOLS_INSPECT_DOT_WRITER_H_

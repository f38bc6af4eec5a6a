// Flattening the call graph: every site that runs a computation in sequence -- a call, a while's
// condition and body, a conditional's branches, a scan's body -- gets a computation of its own.
// The first site in caller-first order keeps the original; each other site gets a copy (and
// the computations that copy runs in sequence are flattened the same way, so a computation
// reached along two call paths is copied per path). Computations applied elementwise
// (reducers, comparators, fusions' bodies) stay shared: they hold no values that carry
// shardings.
//
// Sharding propagation runs it first (spmd/propagation): JAX exports a helper it jits once
// (`jnp.flip`, `_where`, ...) as one private function called at every site, and one function
// has one sharding per value, so a flip before a cumsum and the flip after it would be laid
// out alike where each wants its own. XLA's partitioner sees such programs inlined.
//
//   %f { ... }   %a = call(%x), to_apply=%f   %b = call(%a), to_apply=%f
//   -> %b = call(%a), to_apply=%f.clone, %f.clone a copy of %f
//
// Copies are named after the originals with the suffix `.clone` (numbered when taken), and
// `CloneNames` maps each copied computation and instruction back to the original's name, so
// that an error naming a copy is placed where the original is written.
#ifndef HLO_TRANSFORMS_FLATTEN_CALL_GRAPH_H_
#define HLO_TRANSFORMS_FLATTEN_CALL_GRAPH_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "hlo/ir/hlo_module.h"

namespace hlo {

struct CloneNames {
  // Copy's name -> the original's name (never itself a copy's).
  absl::flat_hash_map<std::string, std::string> computations;
  absl::flat_hash_map<std::string, std::string> instructions;
  // The original's name for `name` (a copy's), else `name`.
  const std::string& OriginalComputation(const std::string& name) const;
  const std::string& OriginalInstruction(const std::string& name) const;
};

// Whether `opcode` runs its called computations in sequence on values that carry shardings
// (call, while, conditional, scan), as opposed to applying them elementwise (reducers,
// comparators, fusions).
bool RunsCalleesInSequence(HloOpcode opcode);

// Flattens `module`'s call graph (see the file comment); returns the copies' names. Sites are
// visited from the entry computation; computations no site reaches are left alone.
CloneNames FlattenCallGraph(HloModule& module);

}  // namespace hlo

#endif  // HLO_TRANSFORMS_FLATTEN_CALL_GRAPH_H_

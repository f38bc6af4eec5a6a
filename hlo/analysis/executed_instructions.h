// Which instructions a module executes, and how often: the entry computation and every
// computation it calls for real work (call, while, conditional, fusion, generic async-start),
// with while bodies multiplied by their static trip count when one is known. Reduction
// combiners and comparators (`to_apply` of reduce, sort, scatter, ...) are per-element
// functions, not separate work, and are not visited.
#ifndef HLO_ANALYSIS_EXECUTED_INSTRUCTIONS_H_
#define HLO_ANALYSIS_EXECUTED_INSTRUCTIONS_H_

#include <cstdint>
#include <functional>
#include <optional>

#include "hlo/ir/hlo_module.h"

namespace hlo {

// Calls `visit(instr, executions)` once per call site of every executed instruction, callers
// before callees. `executions` is the product of the trip counts of the enclosing while loops
// (1 outside loops; a loop whose trip count is unknown counts 1).
using ExecutedInstructionVisitor =
    std::function<void(const HloInstruction& instr, int64_t executions)>;
void ForEachExecutedInstruction(const HloModule& module, const ExecutedInstructionVisitor& visit);

// The number of iterations of `while_instr` when it is known statically: from XLA's
// `backend_config={"known_trip_count":{"n":"N"}}`, else from the counted-loop pattern
// `i = constant(c0)` in the init tuple, `compare(gte(p, k), constant(C)), direction=LT` as the
// condition and `add(gte(p, k), constant(1))` as element k of the body's root tuple (C - c0
// iterations). std::nullopt when neither applies. REQUIRES: `while_instr` is a while.
std::optional<int64_t> StaticTripCount(const HloInstruction& while_instr);

}  // namespace hlo

#endif  // HLO_ANALYSIS_EXECUTED_INSTRUCTIONS_H_

// Manual regions before the fixed point. A value computed from a {manual} value is manual
// (XLA's rule: {manual} flows to every user but SPMDShardToFullShape), whatever the op. The
// factor rules carry {manual} only through ops whose sides are arrays; this closure covers every
// op: async calls and scan, custom-calls and shard barriers without a rule, tuple-shaped results
// (variadic sort, TopK). Tuples, get-tuple-element, while, call and optimization barriers pass
// values through (their classes are joined); a conditional joins its branch operands, and its
// results are manual when any operand is, its index or a branch argument
// (hlo/sharding/implied_sharding.h, the rule the partitioner applies too).
//
//   %p = f32[8] parameter(0), sharding={manual}
//   %s = ((f32[8]), f32[8], u32[]) call-start(%p), to_apply=%c   -> every leaf {manual}
//   ROOT %d = f32[8] call-done(%s)                               -> {manual} (claims the root)
#ifndef SPMD_PROPAGATION_MANUAL_REGIONS_H_
#define SPMD_PROPAGATION_MANUAL_REGIONS_H_

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/ir/hlo_module.h"
#include "spmd/propagation/propagation_engine.h"
#include "spmd/propagation/value_classes.h"

namespace spmd {

// Gives {manual} to every class of a result leaf of an instruction that consumes a manual leaf,
// transitively, unless the class holds a user sharding (the unannotated root's replicated
// default yields, as a manual value cannot become replicated). Returns the instructions whose
// results it made manual.
absl::flat_hash_set<const hlo::HloInstruction*> ClaimManualRegions(const hlo::HloModule& module,
                                                                   const ValueClasses& classes,
                                                                   std::vector<ClassState>& states);

}  // namespace spmd

#endif  // SPMD_PROPAGATION_MANUAL_REGIONS_H_

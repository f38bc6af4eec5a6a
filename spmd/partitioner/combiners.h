// Scalar combiners of reduce, scatter and all-reduce: their identity elements (the one-op
// commutative, associative bodies are recognised by hlo::MatchCombiner) (partial results start from
// the identity, so a reduce's or scatter's own init value counts once, not once per device).
#ifndef SPMD_PARTITIONER_COMBINERS_H_
#define SPMD_PARTITIONER_COMBINERS_H_

#include <optional>

#include "hlo/analysis/combiner.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/literal.h"

namespace spmd {

// The identity element of `op` on `type` (0 for add and or, 1 for multiply, the lowest/highest
// value for maximum/minimum, all bits set for and), or nullopt for a type it is not known for
// (complex, 8-bit floats without an infinity, and on floats).
std::optional<hlo::Literal> CombinerIdentity(hlo::HloOpcode op, hlo::PrimitiveType type);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_COMBINERS_H_

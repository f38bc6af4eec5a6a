// Recognising the combiner computations that reduce, all-reduce, scatter, reduce-window and
// select-and-scatter apply, and the comparators of sort and select-and-scatter: one place for
// the partitioner and both executors.
#ifndef HLO_ANALYSIS_COMBINER_H_
#define HLO_ANALYSIS_COMBINER_H_

#include <optional>

#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/primitive_type.h"

namespace hlo {

// The opcode of a combiner `op(parameter(i), parameter(j))` over the two distinct parameters of
// `computation` (in either order), when `op` is a reducer of the opcode table
// (op_traits::kReducer: add, multiply, maximum, minimum, and, or); nullopt otherwise. Types are
// not checked: callers that need scalars of one type check them.
std::optional<HloOpcode> MatchCombiner(const HloComputation& computation);

// Whether the combiner `computation` of n-tuples (2n scalar parameters: lhs 0..n-1, rhs
// n..2n-1) always returns one of its two inputs whole: maximum, minimum, and, or of the two
// parameters, or a tuple of `select(p, lhs_i, rhs_i)` with one predicate p and one orientation
// for every element (argmax, argmin), where an element's predicate may also pick the lhs on a
// tie of another element's values, or(p, and(lhs_k == rhs_k, ...)) (JAX's argmax: ties to the
// lower index). Such a combiner is idempotent (f(x, x) = x), so a reduction may apply its init
// value more than once: partial reductions each started from the init and then reduced again
// give the same result.
bool IsSelectingCombiner(const HloComputation& computation);

// A comparator `compare(parameter(lhs), parameter(rhs))` (sort's, select-and-scatter's select),
// as a direction from lhs to rhs and a comparison type.
struct ParameterComparison {
  ComparisonDirection direction = ComparisonDirection::kLt;
  ComparisonType type = ComparisonType::kDefault;
};

// Matches a comparator whose root compares parameters `lhs` and `rhs` (in either order) of
// scalar `type`, with the comparison type natural for `type` (or TOTALORDER for floats) and no
// ordering of complex values; nullopt for any other body.
std::optional<ParameterComparison> MatchParameterComparison(const HloComputation& computation,
                                                            int64_t lhs, int64_t rhs,
                                                            PrimitiveType type);

// Whether the sort comparator `computation` (2n scalar parameters: element x's operands at
// 2i, element y's at 2i+1) is recognisably a strict weak order, so that sorting any subset of
// the elements orders it as the whole sort orders it (a blockwise sort and a merge equal one
// sort). Recognised, recursively:
//   - a strict comparison `compare(K(x), K(y))`, LT or GT, of one key function K of the
//     parameters (deterministic elementwise ops, constants) on x's and y's parameters;
//   - a lexicographic tie-break of such an order S by another order T:
//     `select(E, T, S)`, `or(S, and(E, T))` (operands in either order), where E says that S
//     ties x and y: `compare(K(x), K(y)), EQ` or `compare(S(x, y), S(y, x)), EQ`.
// Float keys are orders on values that are not NaN, as XLA's comparators are (a NaN in a
// sort with such a comparator leaves the order unspecified for the whole sort too).
bool IsStrictWeakOrder(const HloComputation& computation);

}  // namespace hlo

#endif  // HLO_ANALYSIS_COMBINER_H_

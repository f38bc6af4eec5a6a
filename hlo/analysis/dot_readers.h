// Dots that read one operand alike: the partitioner reshards a value once per target sharding
// and reuses it, so dots that pose the same problem about a shared operand (the layers of a
// model reading one weight) share that operand's reshard. Propagation and the dot handler both
// count such readers, so that each charges a candidate its share of the reshard.
#ifndef HLO_ANALYSIS_DOT_READERS_H_
#define HLO_ANALYSIS_DOT_READERS_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "hlo/ir/hlo_instruction.h"

namespace hlo {

// Whether the two-operand dots `a` and `b` read the same value as operand `i` alike: with the
// same dimension numbers and result shape, and another operand of the same shape. Shardings
// are the caller's business (propagation runs before they are known).
bool DotsReadAlike(const HloInstruction& a, const HloInstruction& b, int64_t i);

// How many dots read `dot`'s operand `i` alike, `dot` included, among the users of that operand
// for which `also` holds (`dot` itself always counts). 1 when `dot` is not a two-operand dot.
int64_t CountDotsReadingAlike(const HloInstruction& dot, int64_t i,
                              absl::FunctionRef<bool(const HloInstruction&)> also);

}  // namespace hlo

#endif  // HLO_ANALYSIS_DOT_READERS_H_

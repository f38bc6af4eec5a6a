// Values provably alike on every device of an SPMD program: computed through pure data-flow
// ops from constants and iotas alone. Never uniform: parameters (each device's own data once
// partitioned or manual), partition-id and replica-id, collectives, random numbers, manual
// conversions and other custom-calls (the `Sharding` marker passes its operand's). A while
// loop's state element is uniform when its initial value is and the body keeps it so (a loop
// counter: 0, then +1), found as a fixed point over the state.
//
// The partitioner asks it of a loop inside manual subgroups: a condition that decides alike on
// every device is not each group's own decision, so the loop's collectives may cross groups
// (JAX's scan with a ppermute ring inside a shard_map).
#ifndef HLO_ANALYSIS_UNIFORM_VALUES_H_
#define HLO_ANALYSIS_UNIFORM_VALUES_H_

#include "hlo/ir/hlo_instruction.h"

namespace hlo {

// Whether while loop `loop`'s condition gives every device the same decision on every trip.
// REQUIRES: `loop` is a while.
bool LoopDecidesUniformly(const HloInstruction& loop);

}  // namespace hlo

#endif  // HLO_ANALYSIS_UNIFORM_VALUES_H_

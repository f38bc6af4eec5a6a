// Emission of windowed-einsum loops (spmd/dot/dot_windowed.h explains the schedule). Each loop
// is a while loop of g-1 steps with a statically known trip count, followed by the last step
// outside the loop (so exactly g-1 blocks travel, as in the collective it replaces):
//
//   all-gather loop, state (k, r, block, other, acc):
//     i = (r + k) mod g;  acc = update(acc, dot(block, slice_i(other)), i)   (or acc + dot)
//     block = collective-permute(block)            (member j+1 -> member j of each ring)
//   reduce-scatter loop, state (k, r, lhs, rhs, acc):
//     i = (r - k - 1) mod g;  acc = acc + dot(slice_i(lhs), slice_i(rhs))
//     acc = collective-permute(acc)                (member j -> member j+1)
//
// r is the device's position in its ring, read from a table by partition-id.
#ifndef SPMD_PARTITIONER_WINDOWED_EINSUM_H_
#define SPMD_PARTITIONER_WINDOWED_EINSUM_H_

#include "absl/status/statusor.h"
#include "spmd/dot/dot_strategy.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {

// The local dot result of `c` (sharded as c.local, sums still pending), computed by an
// all-gather loop from `block` (the circulated operand in its current sharding) and `other`
// (the other operand in the candidate's sharding).
absl::StatusOr<hlo::HloInstruction*> EmitAllGatherLoop(const hlo::HloInstruction& dot,
                                                       const DotProblem& problem,
                                                       const DotCandidate& c,
                                                       hlo::HloInstruction* block,
                                                       hlo::HloInstruction* other,
                                                       PartitionContext& ctx);

// The finished result of `c` (sharded as c.produced) from `lhs` and `rhs` in the candidate's
// shardings, computed by a reduce-scatter loop.
absl::StatusOr<hlo::HloInstruction*> EmitReduceScatterLoop(const hlo::HloInstruction& dot,
                                                           const DotProblem& problem,
                                                           const DotCandidate& c,
                                                           hlo::HloInstruction* lhs,
                                                           hlo::HloInstruction* rhs,
                                                           PartitionContext& ctx);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_WINDOWED_EINSUM_H_

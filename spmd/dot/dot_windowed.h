// Windowed-einsum variants of a dot candidate, costed (dot_strategy.h (f)).
//
// All-gather loop: when a candidate needs operand X all-gathered along one dim over groups of
// g devices, each device instead keeps its block and passes blocks around the ring of its
// group: g steps, each computing the dot of the block it holds (writing that block's part of
// the result, or accumulating when the gathered dim is contracting) while the next block
// arrives by collective-permute. g-1 transfers of one block each: the all-gather's bytes.
//
// Reduce-scatter loop: when a candidate finishes partial sums by a reduce-scatter along result
// dim d over groups of g devices, each device instead computes the partial result of one block
// of d per step, adds it to the accumulator received from its ring predecessor and passes the
// sum on; after g steps each device holds its block fully summed.
//
// Per step the loop takes the larger of the block's compute and the block's transfer, so the
// loop costs (g-1)·max(compute/g, transfer) + compute/g instead of transfer·(g-1) + compute.
// The bidirectional all-gather loop (g >= 3) sends blocks both ways round the ring at once
// (links are full duplex): floor((g-1)/2) steps each compute two blocks while one block moves
// each way, plus for even g one last one-way step: about half the latency-bound steps.
// Both need evenly divided blocks; they are not offered otherwise.
#ifndef SPMD_DOT_DOT_WINDOWED_H_
#define SPMD_DOT_DOT_WINDOWED_H_

#include "absl/status/statusor.h"
#include "spmd/dot/dot_strategy.h"

namespace spmd {

struct WindowedCostInputs {
  const DotProblem& problem;
  const DeviceModel& model;
  ReshardPlanner& planner;
  int64_t threshold_bytes;
};

// The all-gather-loop form of `base` for operand 0 (lhs) or 1 (rhs); FailedPrecondition when
// the operand's reshard is not a single all-gather of one dim, blocks are uneven, or the
// operand is under the threshold.
absl::StatusOr<DotCandidate> AllGatherLoopVariant(const DotCandidate& base, int64_t operand,
                                                  bool bidirectional,
                                                  const WindowedCostInputs& in);
// The reduce-scatter-loop form of `base` (which must finish by reduce-scatter). Bidirectional:
// each result block is split in halves whose partial sums travel opposite ways round the ring
// (needs g >= 3 and even blocks).
absl::StatusOr<DotCandidate> ReduceScatterLoopVariant(const DotCandidate& base,
                                                      bool bidirectional,
                                                      const WindowedCostInputs& in);

}  // namespace spmd

#endif  // SPMD_DOT_DOT_WINDOWED_H_

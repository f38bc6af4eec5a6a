// Window compositions merged before partitioning (XLA's SpmdPartitioner::PreprocessHlos).
//
// A slice of an edge pad, through copies, is one pad of the pad's operand with the slice folded
// into its edge padding (negative where the slice cuts into the operand). Partitioned apart,
// each op moves its own halo (the pad shifts the shards, then the slice shifts them back); the
// merged pad moves only what its result's blocks read:
//
//   %p = f32[5] pad(f32[4] %x, %v), padding=1_0
//   %c = f32[5] copy(%p)
//   %s = f32[4] slice(%c), slice={[0:4]}              (each split 4 ways)
//   => %s = f32[4] pad(%x, %v), padding=1_-1          (one collective-permute, not three)
//
// Merged only where the pad and the copies have no other user (they vanish with it) and the
// slice has unit strides and the pad no interior padding. The merged pad keeps the slice's
// name, sharding and metadata, so statistics, --explain and the verifiers' origin records name
// the same instruction.
#ifndef SPMD_PARTITIONER_MERGE_WINDOWS_H_
#define SPMD_PARTITIONER_MERGE_WINDOWS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_computation.h"

namespace spmd {

// Merges every such slice-of-pad of `computation`; returns the merged slices' names.
absl::StatusOr<std::vector<std::string>> MergeSlicesOfPads(hlo::HloComputation& computation);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_MERGE_WINDOWS_H_

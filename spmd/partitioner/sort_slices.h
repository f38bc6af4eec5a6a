// Sorts read only through slices, narrowed before partitioning (XLA's PartitionSortInTopK,
// generalized): top-k written as a sort and a slice.
//
// A sort along d whose every result is read only by slices (through get-tuple-elements) needs,
// along each other dim, only the hull of positions its slices read -- rows sort independently --
// and along d only its first K positions, K the slices' largest limit there. So:
//   - along other dims the operands are sliced to that hull before the sort;
//   - when the first operand's sharding splits d into t tiles (N / t positions each, N % t == 0),
//     K < N / t and the comparator is recognisably a strict weak order (hlo::IsStrictWeakOrder:
//     for any other, a block's first K need not hold the whole's), each device sorts its own block
//     and keeps its first K (a sort along the inner dim of [..., t, N/t, ...]), and the t*K
//     candidates are sorted again with d whole. Every position among the first K of the whole is
//     among the first K of its block (the block's order is the whole order restricted to it), and
//     both sorts are stable with the blocks in position order, so ties keep position order as in
//     one stable sort of the whole (a valid result of an unstable sort too). Only the candidates
//     move: t*K per row instead of N. Taken when K*(t-1) < N/t as well: then the candidates'
//     all-gather also moves less than turning the split into another dim's (the sort handler's
//     all-to-all) and gathering the sliced results after it.
//
//   %s = (f32[2,8192], s32[2,8192]) sort(%x {devices=[1,4]}, %iota), dimensions={1}
//   %v = f32[2,100] slice(gte(%s, 0)), slice={[0:2], [0:100]}
//   => %s.blocks = sort(f32[2,4,2048] reshape(%x), ...), dimensions={2}   (local)
//      %s.merge = sort(f32[2,400] reshape(slice(gte(%s.blocks, 0)) [0:100] of dim 2), ...)
//      %v = f32[2,100] slice(gte(%s.merge, 0)), slice={[0:2], [0:100]}
//   (an all-gather of 4 x 100 candidates per row instead of the 8192 values)
//
// The slices keep their names, shardings and metadata (statistics, --explain and the verifiers'
// origin records name them); the new instructions are named after the sort, carry shardings
// derived from the first operand's (the merge sort: d replicated) and are listed in `added`.
// A sort that orders or is ordered by others, or whose results something other than a slice
// reads, is left alone, as is one the rewrite would not narrow.
#ifndef SPMD_PARTITIONER_SORT_SLICES_H_
#define SPMD_PARTITIONER_SORT_SLICES_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "hlo/ir/hlo_computation.h"

namespace spmd {

// One narrowed sort: its name, and how (for --explain).
struct NarrowedSort {
  std::string name;
  std::string how;
};

// Narrows every such sort of `computation`; adds the instructions the rewrites introduce, other
// than the re-created slices, to `added`.
absl::StatusOr<std::vector<NarrowedSort>> NarrowSlicedSorts(
    hlo::HloComputation& computation, absl::flat_hash_set<const hlo::HloInstruction*>& added);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_SORT_SLICES_H_

// Rebuilding a value where it is wanted instead of moving it there.
//
// A value computed by cheap, pure ops from values that are already available in the layout a
// user wants (replicated, resharded there before, or reached by local slices alone) is computed
// again in that layout: no byte moves, and the work is the local shard's. This is XLA's habit of
// re-emitting a broadcast of a replicated scalar, or a reshape of a replicated parameter, rather
// than gathering it. The ops, and the layout each takes its operands in (a table in rebuild.cc):
//   - elementwise ops (hlo::IsElementwise): operands in the wanted layout, scalars
//   replicated;
//   - broadcast and transpose: the operand in the wanted layout seen through the op's dims;
//   - iota: rebuilt from nothing (PartitionContext::LocalIota);
//   - constant (up to 1 KiB): cloned whole, then sliced locally;
//   - reshape, gather, slice, dynamic-slice and pad: computed whole from whole operands, then
//   sliced locally.
// Operands that are neither available nor rebuildable stop the rebuild; so does a chain deeper
// than a few ops, and an elementwise op that would do more work per device than its own layout
// gave it (a split computation made whole), unless the whole is tiny (128 elements). The cost is
// the local work, timed by the device model (compute or memory, whichever bounds it);
// PartitionContext::GetInSharding rebuilds when that beats the reshard's estimated time, and the
// handlers' candidate costs (candidate_cost.h, and the dot's DotProblem::rebuild_us) count it
// the same way.
//
//   %b = f32[1024] broadcast(f32[] %p), sharding={devices=[4]<=[4]}
//   %a = f32[1024] add(%b, %b), sharding={devices=[4]<=[4]}
//   a user of %a wanting {devices=[4]3,2,1,0}: %b and %a are computed again in that order
//   (no collective-permute).
#ifndef SPMD_PARTITIONER_REBUILD_H_
#define SPMD_PARTITIONER_REBUILD_H_

#include <optional>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {

// The estimated time (us) to rebuild the partitioned `original` in `to` with no communication,
// or nullopt when it cannot be (see the file comment). 0 when it is available there already.
std::optional<double> RebuildUs(const hlo::HloInstruction* original, const hlo::HloSharding& to,
                                PartitionContext& ctx);

// The estimated time (us) to compute `original` again in `to` by its rule even where it is
// available there (a local slice of a whole value), or nullopt when it has no rule or its
// operands are neither available nor rebuildable. GetInSharding rebuilds rather than slices
// when this is no more than the slice's own memory traffic: the whole value then need not be
// held (it dies unless another user reads it whole). A broadcast of a replicated scalar or
// vector, an iota, a small constant.
std::optional<double> RebuildAgainUs(const hlo::HloInstruction* original,
                                     const hlo::HloSharding& to, PartitionContext& ctx);

// Whether `original`, not replicated, is computed from values available replicated (a copy of
// a replicated parameter): then it can be rebuilt, moving nothing, in any layout that does no
// more work per device than its own (RebuildUs prices each).
bool RebuildsAnywhere(const hlo::HloInstruction* original, PartitionContext& ctx);

// Whether `original` is rebuilt as its operand's value (a marking custom-call): what it
// returns is the operand's home, not a home of its own.
bool RebuiltAsOperand(const hlo::HloInstruction& original);

// Emits the rebuild of `original` in `to`, taking its operands through ctx.GetInSharding.
// REQUIRES: RebuildUs(original, to, ctx) has a value and `original` is not available in `to`.
absl::StatusOr<hlo::HloInstruction*> Rebuild(const hlo::HloInstruction* original,
                                             const hlo::HloSharding& to, PartitionContext& ctx);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_REBUILD_H_

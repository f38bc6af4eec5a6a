// Gather and scatter on an operand split along the dimensions the indices pick from (XLA's
// "index dims sharded" strategies). Each device reads or writes its own shard with the indices
// shifted by the shard's offset:
//   gather:  indices clamped as the whole gather clamps them, shifted, the rows that fall
//            outside the shard zeroed, and the partial results summed by an all-reduce over
//            the devices that split those dims (every row comes from exactly one device);
//   scatter: indices shifted, those outside the shard moved out of bounds so the local
//            scatter drops their updates; no collective for the operand's split dims.
// The handlers in gather_scatter_handlers.cc cost these plans beside their others.
#ifndef SPMD_PARTITIONER_GATHER_SCATTER_MASKED_H_
#define SPMD_PARTITIONER_GATHER_SCATTER_MASKED_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/sharding/hlo_sharding.h"
#include "hlo/sharding/tile_assignment.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {

// An operand dimension the op reads or writes at one position per index: component
// `component` of the index vector is its start, and the slice (window) is 1 wide there.
struct IndexedDim {
  int64_t operand_dim;
  int64_t component;
};

// An indexed operand dim that the indices address as an iota: component `component` of the
// index vector is the position along indices dim `indices_dim` everywhere (an iota, or a 1-D
// iota broadcast along it, alone or as one piece of a concatenate along index_vector_dim), and
// the operand dim is as long as that indices dim. Split alike, every index stays inside its
// device's shard (XLA's index-parallel dims found from iotas), so the pair splits like an
// explicit batching pair.
struct IotaDim {
  int64_t operand_dim;
  int64_t indices_dim;
  int64_t component;
};

// The iota-addressed dims among `indexed`, at most one per indices dim and never an explicit
// batching dim (`batching_dims` of the indices).
std::vector<IotaDim> IotaIndexedDims(const hlo::HloInstruction& indices, int64_t index_vector_dim,
                                     const std::vector<IndexedDim>& indexed,
                                     const std::vector<int64_t>& batching_dims,
                                     const hlo::Shape& operand_shape);

// The local `indices` with each component of `dims` whose operand dim `operand` splits (and that
// is not among `masked_dims`, shifted by the masked plan instead) replaced by a local iota: the
// device's positions less its shard offset, which is what the shifted global iota holds, and on
// an uneven last shard's padding a position in the operand's padding too.
// Fails when such an operand dim and its indices dim (in `indices_sharding`) are split unlike.
absl::StatusOr<hlo::HloInstruction*> LocalIotaComponents(
    hlo::HloInstruction* indices, int64_t index_vector_dim, const std::vector<IotaDim>& dims,
    const hlo::HloSharding& operand, const hlo::HloSharding& indices_sharding,
    const std::vector<int64_t>& masked_dims, PartitionContext& ctx);

// The operand's sharding in a masked plan and the indexed dims it splits.
struct MaskedOperand {
  hlo::HloSharding sharding = hlo::HloSharding::Replicate();
  std::vector<int64_t> dims;  // Operand dims split and indexed: shifted and masked.
};

// `current` (a tiling over every device, no subgroups) keeping its tiles along the `indexed`
// dims and the dims with `operand_to_other[d] >= 0` (passthrough and batching dims), the
// others replicated. Fails when `current` splits none of the indexed dims.
absl::StatusOr<MaskedOperand> MaskedOperandSharding(const hlo::HloSharding& current,
                                                    const std::vector<IndexedDim>& indexed,
                                                    const std::vector<int64_t>& operand_to_other,
                                                    int64_t num_devices);

// Whether every device holds matching tiles of `a` and `b`: its tile along each dim k of `a`
// with `a_to_b[k] >= 0` is its tile along dim `a_to_b[k]` of `b` (equal tile counts), and the
// devices of each group along `group_dims` of `a` hold the same tile of `b`.
bool TilesAgree(const hlo::HloSharding& a, const std::vector<int64_t>& a_to_b,
                const std::vector<int64_t>& group_dims, const hlo::HloSharding& b,
                int64_t num_devices);

// What happens to an index outside the device's shard.
enum class OutsideShard {
  kClamp,        // Gather: clamped as the whole op clamps, then masked by `in_shard`.
  kOutOfBounds,  // Scatter: moved out of bounds, so the local scatter drops the update.
};

// Local indices and, over their batch dims (index_vector_dim removed), whether the index
// falls inside this device's shard along every one of `dims` (null when no mask is needed:
// a scatter along evenly split dims).
struct ShardIndices {
  hlo::HloInstruction* indices;
  hlo::HloInstruction* in_shard;
};

// Shifts the components of `indices` that start `dims` of an operand of `operand_shape`
// (sharded as `operand`) by this device's shard offset along them.
ShardIndices ShiftIndicesIntoShard(hlo::HloInstruction* indices, int64_t index_vector_dim,
                                   const std::vector<IndexedDim>& dims,
                                   const MaskedOperand& operand, const hlo::Shape& operand_shape,
                                   OutsideShard outside, PartitionContext& ctx);

// `value` with its elements outside the shard (`in_shard` broadcast along `batch_dims` of
// `value`) zeroed, summed over the devices that split `operand.dims`: all-reduced, or with
// `scatter_dim` >= 0 reduce-scattered along that dim (each device keeps the block of its
// index in its group).
absl::StatusOr<hlo::HloInstruction*> SumMaskedShards(hlo::HloInstruction* value,
                                                     hlo::HloInstruction* in_shard,
                                                     const std::vector<int64_t>& batch_dims,
                                                     const MaskedOperand& operand,
                                                     int64_t scatter_dim, PartitionContext& ctx);

// An all-reduce of `value` by `reducer` (the scatter's combiner) within the rows of `groups`
// ([num_groups, size]).
hlo::HloInstruction* AllReduceInGroups(hlo::HloInstruction* value,
                                       const hlo::TileAssignment& groups,
                                       hlo::HloComputation* reducer, PartitionContext& ctx);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_GATHER_SCATTER_MASKED_H_

// A window sliced out of an operand split along the sliced dims, without gathering the operand:
// each device slices the window from its own shard, padded with zeros so that any start lands
// inside, keeps the positions that fall inside its shard and zeroes the rest; an all-reduce
// (sum) over the devices of those split dims then assembles the window, every position coming
// from exactly one device. It moves the window's size instead of the operand's, so it wins when
// the window is small: a dynamic-slice of a few rows, or a static slice of a few columns wanted
// whole (the reflected edges of a reflect pad). On 4 devices:
//
//   %s = f32[2,8] dynamic-slice(f32[64,8] %x, %i, %j), dynamic_slice_sizes={2,8}
//        (%x sharded {devices=[4,1]<=[4]}, the result replicated)
//   -> gather: all-gather of f32[64,8] (1536 bytes received per device);
//      masked: dynamic-slice of the zero-padded f32[20,8] shard at %i - offset + 2, select by
//              position, all-reduce of f32[2,8] (96 bytes).
//
// dynamic_slice_handler.cc and the slice handler (window_handlers.cc) build it here.
#ifndef SPMD_PARTITIONER_MASKED_SLICE_H_
#define SPMD_PARTITIONER_MASKED_SLICE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {

// Where a masked slice applies: `split`, the dims among `moving` that `sharding` (the operand's,
// tiled over every device) splits, and the devices of each all-reduce group (their product).
struct MaskedSliceDims {
  std::vector<int64_t> split;
  int64_t group = 1;
};

// The split moved dims of an operand in `sharding`, or nullopt when a masked slice does not
// apply there: no moved dim split, a sharding with partial sums or over some devices only, or
// elements the all-reduce cannot sum (pred).
std::optional<MaskedSliceDims> MaskedSliceApplies(const hlo::HloSharding& sharding,
                                                  const std::vector<int64_t>& moving,
                                                  hlo::PrimitiveType type,
                                                  const PartitionContext& ctx);

// What a device receives for the masked slice's all-reduce of its `local` result over `group`
// devices, and its estimated time.
Received MaskedSliceReceived(const hlo::Shape& local, int64_t group, PartitionContext& ctx);

// Each device's window of `sizes` elements per dim from `starts` (per dim: an s32 scalar alike
// on every device, already clamped into the operand, or null for a dim taken whole from 0) of
// `shard`, its shard of an operand of `operand_shape` split as `sharding`, the positions outside
// its shard zeroed along `dims.split`. Summing over MaskedSliceGroups assembles the window.
absl::StatusOr<hlo::HloInstruction*> MaskedLocalWindow(
    PartitionContext& ctx, hlo::HloInstruction* shard, const hlo::HloSharding& sharding,
    const hlo::Shape& operand_shape, const std::vector<hlo::HloInstruction*>& starts,
    const std::vector<int64_t>& sizes, const MaskedSliceDims& dims);

// The all-reduce (sum) of each device's masked `window` over the devices of `dims.split`.
absl::StatusOr<hlo::HloInstruction*> SumMaskedWindows(PartitionContext& ctx,
                                                      hlo::HloInstruction* window,
                                                      const hlo::HloSharding& sharding,
                                                      const MaskedSliceDims& dims);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_MASKED_SLICE_H_

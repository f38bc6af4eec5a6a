// See masked_slice.h.
#include "spmd/partitioner/masked_slice.h"

#include <utility>

#include "hlo/sharding/device_groups.h"
#include "hlo/status_macros.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::PrimitiveType;
using hlo::Shape;

std::optional<MaskedSliceDims> MaskedSliceApplies(const HloSharding& sharding,
                                                  const std::vector<int64_t>& moving,
                                                  PrimitiveType type, const PartitionContext& ctx) {
  if (!MovesDataInTiling(sharding) || type == PrimitiveType::kPred || !hlo::IsArrayType(type)) {
    return std::nullopt;
  }
  // Every device must take part in the all-reduce (a sharding over some devices only leaves
  // the others without a group and without the result).
  if (sharding.tile_assignment().num_devices() != ctx.num_devices()) return std::nullopt;
  MaskedSliceDims dims;
  for (int64_t d : moving) {
    const int64_t tiles = sharding.tile_assignment().dim(d);
    if (tiles == 1) continue;
    dims.split.push_back(d);
    dims.group *= tiles;
  }
  if (dims.split.empty()) return std::nullopt;
  return dims;
}

Received MaskedSliceReceived(const Shape& local, int64_t group, PartitionContext& ctx) {
  return Received::Of(EstimateCollective(CollectiveKind::kAllReduce, local.byte_size(), group,
                                         CollectiveLink(ctx)));
}

absl::StatusOr<HloInstruction*> MaskedLocalWindow(PartitionContext& ctx, HloInstruction* shard,
                                                  const HloSharding& sharding,
                                                  const Shape& operand_shape,
                                                  const std::vector<HloInstruction*>& starts,
                                                  const std::vector<int64_t>& sizes,
                                                  const MaskedSliceDims& dims) {
  const PrimitiveType type = shard->shape().element_type();
  const Shape s32 = Shape::Array(PrimitiveType::kS32, {});
  const int64_t rank = operand_shape.rank();
  RET_CHECK(static_cast<int64_t>(starts.size()) == rank &&
            static_cast<int64_t>(sizes.size()) == rank);
  auto add = [&](HloInstruction* a, HloInstruction* b) {
    return ctx.Add(HloOpcode::kAdd, s32, {a, b});
  };
  auto constant = [&](int64_t v) {
    return ctx.ScalarConstant(PrimitiveType::kS32, static_cast<double>(v));
  };
  // Along each split dim, first the window-sized piece of the shard nearest the window (the
  // whole shard when the window is longer), so that only that piece is padded and moved.
  std::vector<int64_t> piece_dims = shard->shape().dimensions();
  std::vector<HloInstruction*> piece_starts(rank, nullptr), shifts(rank, nullptr);
  std::vector<PartitionContext::PositionRange> ranges;
  bool cut = false;
  for (int64_t d = 0; d < rank; ++d) {
    piece_starts[d] = constant(0);
    if (starts[d] == nullptr || sharding.tile_assignment().dim(d) == 1) continue;
    HloInstruction* lo = ctx.PerDeviceScalar(ctx.ShardBounds(sharding, operand_shape, d));
    HloInstruction* hi =
        ctx.PerDeviceScalar(ctx.ShardBounds(sharding, operand_shape, d, /*limits=*/true));
    ranges.push_back({d, starts[d], lo, hi});
    // The window's start relative to this device's shard.
    HloInstruction* relative = ctx.Add(HloOpcode::kSubtract, s32, {starts[d], lo});
    shifts[d] = relative;
    if (sizes[d] < piece_dims[d]) {
      piece_starts[d] = ctx.ClampedIndex(relative, piece_dims[d] - sizes[d]);
      shifts[d] = ctx.Add(HloOpcode::kSubtract, s32, {relative, piece_starts[d]});
      piece_dims[d] = sizes[d];
      cut = true;
    }
  }
  HloInstruction* piece = shard;
  if (cut) {
    std::vector<HloInstruction*> operands = {shard};
    operands.insert(operands.end(), piece_starts.begin(), piece_starts.end());
    piece = ctx.Add(HloOpcode::kDynamicSlice, WithDims(shard->shape(), piece_dims), operands);
    piece->mutable_attrs()->dynamic_slice_sizes = piece_dims;
  }
  // Zero padding of the window size on both sides of each split dim: any shift lands inside.
  HloInstruction* zero = ctx.ScalarConstant(type, 0);
  hlo::PaddingConfig padding;
  padding.dimensions.resize(rank);
  std::vector<int64_t> padded_dims = piece_dims;
  for (int64_t d : dims.split) {
    padding.dimensions[d].edge_padding_low = sizes[d];
    padding.dimensions[d].edge_padding_high = sizes[d];
    padded_dims[d] += 2 * sizes[d];
  }
  HloInstruction* padded = ctx.Add(HloOpcode::kPad, Shape::Array(type, padded_dims), {piece, zero});
  padded->mutable_attrs()->padding_config = padding;
  std::vector<HloInstruction*> local_starts(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (starts[d] == nullptr) {
      local_starts[d] = constant(0);
    } else if (shifts[d] == nullptr) {
      local_starts[d] = starts[d];  // Whole along d: the window from its own start.
    } else {
      local_starts[d] = add(shifts[d], constant(sizes[d]));
    }
  }
  const Shape local = WithDims(shard->shape(), sizes);
  std::vector<HloInstruction*> operands = {padded};
  operands.insert(operands.end(), local_starts.begin(), local_starts.end());
  HloInstruction* window = ctx.Add(HloOpcode::kDynamicSlice, local, operands);
  window->mutable_attrs()->dynamic_slice_sizes = local.dimensions();
  // Keep the positions inside this device's shard (the padding of an uneven last shard is
  // outside it too).
  HloInstruction* mask = ctx.PositionsInRanges(local, std::move(ranges));
  HloInstruction* zeros = ctx.Add(HloOpcode::kBroadcast, local, {zero});
  return ctx.Add(HloOpcode::kSelect, local, {mask, window, zeros});
}

absl::StatusOr<HloInstruction*> SumMaskedWindows(PartitionContext& ctx, HloInstruction* window,
                                                 const HloSharding& sharding,
                                                 const MaskedSliceDims& dims) {
  ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                   hlo::DeviceGroupsAlongDims(sharding.tile_assignment(), dims.split));
  return ctx.AllReduceSum(window, hlo::GroupLists(groups));
}

}  // namespace spmd

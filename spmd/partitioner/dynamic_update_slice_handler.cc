// Dynamic-update-slice on split dimensions: the operand keeps the result's tiling; the update
// is taken whole along the split dimensions it moves along (it is usually much smaller than the
// operand), and each device writes the part of it that falls into its own shard.
//
// Along a split dimension d with start s (clamped to [0, N-U] as the op does), the device whose
// shard starts at o needs update[p - s] at its local position p - o. Each device writes a
// window of W = min(U, Is) positions of its shard (Is: the shard size), starting at local
// l = clamp(s - o, 0, Is - W), which holds the shard's overlap with [s, s+U) whenever there is
// one. Padding the update by W - 1 on both sides and dynamic-slicing it at o + l - s + W - 1 gives
// exactly that alignment; where the shard does not overlap, the slice start is clamped, but the
// mask (s <= p < s+U) keeps the operand's own values there (selected within the window the
// local dynamic-update-slice writes). So the temporaries along d are update-sized (the padded
// copy under 3U), not shard-sized: a decode step's one-position write into a sequence-split KV
// cache holds nothing cache-sized but the cache. Unsplit dimensions are updated by the local
// dynamic-update-slice itself. On 4 devices (U = 3 < Is = 4):
//
//   %r = f32[16,8] dynamic-update-slice(f32[16,8] %x, f32[3,8] %u, %i, %j),
//        sharding={devices=[4,1]<=[4]}
//   -> %u whole along dim 0; l = clamp(s - o, 0, 1);
//      aligned = dynamic-slice(pad(%u, 2_2), o + l - s + 2) (f32[3,5]);
//      kept = dynamic-slice(%x.shard, l, %j) (f32[3,5]);
//      %r.spmd = dynamic-update-slice(%x.shard, select(s <= o + l + iota < s + 3, aligned,
//      kept), l, %j)
#include <algorithm>

#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/sharding/unreduced.h"
#include "hlo/status_macros.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::PrimitiveType;
using hlo::Shape;

// The part of `update` (whole along d) that lands in each device's window of `window` positions
// along d starting at global position `offset`: dynamic-slice(pad(update, (window-1)_(window-1)),
// offset - start + window - 1). A window overlapping [start, start+U) begins at most window-1
// positions before it and ends at most window-1 after it, so that padding keeps the slice
// unclamped wherever the window is written.
HloInstruction* AlignToWindow(PartitionContext& ctx, HloInstruction* update, int64_t d,
                              int64_t window, HloInstruction* offset, HloInstruction* start) {
  const PrimitiveType type = update->shape().element_type();
  const Shape s32 = Shape::Array(PrimitiveType::kS32, {});
  const int64_t margin = window - 1;
  HloInstruction* padded = update;
  if (margin > 0) {
    std::vector<int64_t> padded_dims = update->shape().dimensions();
    padded_dims[d] += 2 * margin;
    hlo::PaddingConfig config;
    config.dimensions.resize(padded_dims.size());
    config.dimensions[d] = {margin, margin, 0};
    padded = ctx.Add(HloOpcode::kPad, Shape::Array(type, padded_dims),
                     {update, ctx.ScalarConstant(type, 0)});
    padded->mutable_attrs()->padding_config = std::move(config);
  }
  HloInstruction* at =
      ctx.Add(HloOpcode::kAdd, s32,
              {ctx.Add(HloOpcode::kSubtract, s32, {offset, start}),
               ctx.ScalarConstant(PrimitiveType::kS32, static_cast<double>(margin))});
  std::vector<int64_t> dims = update->shape().dimensions();
  dims[d] = window;
  std::vector<HloInstruction*> operands = {padded};
  for (int64_t k = 0; k < static_cast<int64_t>(dims.size()); ++k) {
    operands.push_back(k == d ? at : ctx.ScalarConstant(PrimitiveType::kS32, 0));
  }
  HloInstruction* slice = ctx.Add(HloOpcode::kDynamicSlice, Shape::Array(type, dims), operands);
  slice->mutable_attrs()->dynamic_slice_sizes = dims;
  return slice;
}

absl::Status HandleDynamicUpdateSlice(const HloInstruction& original, const HloSharding& sharding,
                                      PartitionContext& ctx) {
  const Shape& shape = original.shape();
  // Manual subgroups write alike inside each group (their starts whole there).
  const bool plain = shape.IsArray() && shape.rank() > 0 && sharding.IsTiled() &&
                     !hlo::HasUnreduced(sharding) && original.operand_count() == 2 + shape.rank();
  if (!plain)
    return FallBackToReplicated(
        original, sharding, ctx,
        "a sharding with subgroups, or starts that are not one scalar per dim");
  const Shape& update_shape = original.operand(1)->shape();
  std::vector<int64_t> moving_split;  // Split dims the update does not cover whole.
  std::vector<int64_t> update_map(shape.rank());
  for (int64_t d = 0; d < shape.rank(); ++d) {
    update_map[d] = d;
    if (sharding.tile_assignment().dim(d) > 1 && update_shape.dimensions(d) != shape.dimensions(d)) {
      moving_split.push_back(d);
      update_map[d] = -1;
    }
  }
  ASSIGN_OR_RETURN(HloSharding update_sharding,
                   hlo::OperandShardingFromResult(sharding, shape.rank(), update_map));
  ASSIGN_OR_RETURN(HloInstruction * operand, ctx.GetInSharding(original.operand(0), sharding));
  ASSIGN_OR_RETURN(HloInstruction * update, ctx.GetInSharding(original.operand(1), update_sharding));
  std::vector<HloInstruction*> indices;
  HloSharding whole = HloSharding::Replicate();
  if (sharding.HasManualSubgroup()) {
    ASSIGN_OR_RETURN(whole, WholeInManualGroups(sharding, Shape::Array(PrimitiveType::kS32, {})));
  }
  for (int64_t d = 0; d < shape.rank(); ++d) {
    ASSIGN_OR_RETURN(HloInstruction * index, ctx.GetInSharding(original.operand(2 + d), whole));
    indices.push_back(index);
  }
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, shape));
  std::vector<HloInstruction*> offsets(shape.rank(), nullptr), starts(shape.rank(), nullptr);
  const Shape s32 = Shape::Array(PrimitiveType::kS32, {});
  for (int64_t d : moving_split) {
    const int64_t size = update_shape.dimensions(d);
    const int64_t shard = local.dimensions(d);
    const int64_t window = std::min(size, shard);
    starts[d] = ctx.ClampedIndex(indices[d], shape.dimensions(d) - size);
    const std::vector<int64_t> table = ctx.ShardBounds(sharding, shape, d);
    offsets[d] = ctx.PerDeviceScalar(table);
    const PrimitiveType index_type = indices[d]->shape().element_type();
    if (window == shard) {
      indices[d] = ctx.ScalarConstant(index_type, 0);
    } else {
      // The window holds the shard's overlap with [s, s+U) when there is one.
      HloInstruction* local_start = ctx.ClampedIndex(
          ctx.Add(HloOpcode::kSubtract, s32, {starts[d], offsets[d]}), shard - window);
      offsets[d] = ctx.Add(HloOpcode::kAdd, s32, {offsets[d], local_start});
      indices[d] = index_type == PrimitiveType::kS32
                       ? local_start
                       : ctx.Add(HloOpcode::kConvert, Shape::Array(index_type, {}), {local_start});
    }
    update = AlignToWindow(ctx, update, d, window, offsets[d], starts[d]);
  }
  if (!moving_split.empty()) {
    // Outside [s, s+U) along a split dim the device keeps its operand: select within the
    // region the local dynamic-update-slice writes.
    std::vector<HloInstruction*> region_operands = {operand};
    region_operands.insert(region_operands.end(), indices.begin(), indices.end());
    HloInstruction* region = ctx.Add(HloOpcode::kDynamicSlice, update->shape(), region_operands);
    region->mutable_attrs()->dynamic_slice_sizes = update->shape().dimensions();
    std::vector<PartitionContext::PositionRange> ranges;
    for (int64_t d : moving_split) {
      HloInstruction* end = ctx.Add(
          HloOpcode::kAdd, starts[d]->shape(),
          {starts[d], ctx.ScalarConstant(PrimitiveType::kS32,
                                         static_cast<double>(update_shape.dimensions(d)))});
      ranges.push_back({d, offsets[d], starts[d], end});
    }
    HloInstruction* mask = ctx.PositionsInRanges(update->shape(), std::move(ranges));
    update = ctx.Add(HloOpcode::kSelect, update->shape(), {mask, update, region});
  }
  std::vector<HloInstruction*> operands = {operand, update};
  operands.insert(operands.end(), indices.begin(), indices.end());
  HloInstruction* result = CloneWithOperands(original, std::move(local), std::move(operands), ctx);
  ctx.Set(&original, {result, sharding, shape});
  return absl::OkStatus();
}

}  // namespace

void RegisterDynamicUpdateSliceHandler(HandlerTable& table) {
  table[HloOpcode::kDynamicUpdateSlice] = &HandleDynamicUpdateSlice;
}

}  // namespace spmd

// Dynamic-slice. The dims the slice moves data along (slice size below the operand's) are
// taken whole in the result; the other dims keep their tiling. Two ways to get there when the
// operand is split along moved dims, costed by the bytes each device receives:
//   gather:  the operand takes the result's sharding with the moved dims whole (an all-gather
//            along them), and the op runs locally (what XLA does);
//   masked:  each device slices its own shard at the (clamped) start, keeps the positions that
//            fall inside its shard, zeroes the rest, and an all-reduce (sum) over the devices
//            of the split moved dims assembles the result: every position comes from exactly
//            one device. It moves the result's size instead of the operand's along those
//            dims, so it wins when the slice is small. On 4 devices:
//
//   %s = f32[2,8] dynamic-slice(f32[64,8] %x, %i, %j), dynamic_slice_sizes={2,8}
//        (%x sharded {devices=[4,1]<=[4]}, the result replicated)
//   -> gather: all-gather of f32[64,8] (1536 bytes received per device);
//      masked: dynamic-slice of the zero-padded f32[20,8] shard at %i - offset + 2, select by
//              position, all-reduce of f32[2,8] (96 bytes).
#include <algorithm>
#include <vector>

#include "hlo/sharding/device_groups.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::PrimitiveType;
using hlo::Shape;

// The dimensions along which a dynamic-slice moves data.
std::vector<int64_t> MovingDims(const HloInstruction& original) {
  const Shape& shape = original.shape();
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dimensions(d) != original.operand(0)->shape().dimensions(d)) dims.push_back(d);
  }
  return dims;
}

// The masked local slice; false (nothing emitted) when it does not apply or gathering the
// operand moves fewer bytes.
absl::StatusOr<bool> TryMaskedSlice(const HloInstruction& original,
                                    const HloSharding& local_sharding, PartitionContext& ctx) {
  const HloInstruction* operand = original.operand(0);
  ASSIGN_OR_RETURN(const PartitionedValue* in, ctx.Get(operand));
  const HloSharding& s = in->sharding;
  const PrimitiveType type = original.shape().element_type();
  if (!MovesDataInTiling(s) || type == PrimitiveType::kPred || !hlo::IsArrayType(type) ||
      !operand->shape().IsArray()) {
    return false;
  }
  // Every device must take part in the all-reduce (a sharding over some devices only leaves
  // the others without a group and without the result).
  if (s.tile_assignment().num_devices() != ctx.num_devices()) return false;
  // One scalar start per dim (not the old packed form, one s32[rank] operand).
  if (original.operand_count() != original.shape().rank() + 1) return false;
  for (int64_t i = 1; i < original.operand_count(); ++i) {
    if (!original.operand(i)->shape().IsArray() || original.operand(i)->shape().rank() != 0) {
      return false;
    }
  }
  const std::vector<int64_t> moving = MovingDims(original);
  std::vector<int64_t> split;
  int64_t group = 1;
  for (int64_t d : moving) {
    if (s.tile_assignment().dim(d) > 1) {
      split.push_back(d);
      group *= s.tile_assignment().dim(d);
    }
  }
  if (split.empty()) return false;
  ASSIGN_OR_RETURN(HloSharding result_sharding, hlo::PartiallyReplicate(s, moving));
  if (!(result_sharding == local_sharding)) return false;
  // Bytes each device receives: a ring all-reduce of its result block vs an all-gather of the
  // operand along the split moved dims.
  ASSIGN_OR_RETURN(Shape local, LocalShape(result_sharding, original.shape()));
  const Shape& shard = in->value->shape();
  const int64_t width = hlo::ByteWidth(type);
  const double reduce_bytes =
      2.0 * static_cast<double>(group - 1) / group * local.num_elements() * width;
  const double gather_bytes = static_cast<double>(group - 1) * shard.num_elements() * width;
  const std::string why = hlo::StrCat("dynamic-slice %", original.name(), ": operand split along "
                                      "sliced dims; masked local slice + all-reduce receives ",
                                      static_cast<int64_t>(reduce_bytes), " bytes, gathering "
                                      "the operand ", static_cast<int64_t>(gather_bytes));
  if (reduce_bytes >= gather_bytes) {
    ctx.log().lines.push_back(why + ": gather");
    return false;
  }
  ctx.log().lines.push_back(why + ": masked");

  const Shape s32 = Shape::Array(PrimitiveType::kS32, {});
  const int64_t rank = original.shape().rank();
  // Zero padding of the slice size on both sides of each split dim: any start lands inside.
  HloInstruction* zero = ctx.ScalarConstant(type, 0);
  hlo::PaddingConfig padding;
  padding.dimensions.resize(rank);
  std::vector<int64_t> padded_dims = shard.dimensions();
  for (int64_t d : split) {
    padding.dimensions[d].edge_padding_low = original.shape().dimensions(d);
    padding.dimensions[d].edge_padding_high = original.shape().dimensions(d);
    padded_dims[d] += 2 * original.shape().dimensions(d);
  }
  HloInstruction* padded = ctx.Add(HloOpcode::kPad, Shape::Array(type, padded_dims),
                                   {in->value, zero});
  padded->mutable_attrs()->padding_config = padding;
  std::vector<HloInstruction*> starts(rank);
  std::vector<HloInstruction*> clamped(rank, nullptr), lo(rank, nullptr), hi(rank, nullptr);
  for (int64_t d = 0; d < rank; ++d) {
    const bool moved = std::find(moving.begin(), moving.end(), d) != moving.end();
    if (!moved) {
      starts[d] = ctx.ScalarConstant(PrimitiveType::kS32, 0);
      continue;
    }
    ASSIGN_OR_RETURN(HloSharding whole, ReplicatedIn(s, original.operand(d + 1)->shape()));
    ASSIGN_OR_RETURN(HloInstruction * index, ctx.GetInSharding(original.operand(d + 1), whole));
    const int64_t size = original.shape().dimensions(d);
    const int64_t full = operand->shape().dimensions(d);
    // The start as the original clamps it (whole along d: the local slice takes it as is).
    clamped[d] = ctx.ClampedIndex(index, full - size);
    if (s.tile_assignment().dim(d) == 1) {
      starts[d] = clamped[d];
      continue;
    }
    // This device's offset into its padded shard.
    lo[d] = ctx.PerDeviceScalar(ctx.ShardBounds(s, operand->shape(), d));
    hi[d] = ctx.PerDeviceScalar(ctx.ShardBounds(s, operand->shape(), d, /*limits=*/true));
    HloInstruction* local_start = ctx.Add(HloOpcode::kSubtract, s32, {clamped[d], lo[d]});
    starts[d] = ctx.Add(HloOpcode::kAdd, s32,
                        {local_start, ctx.ScalarConstant(PrimitiveType::kS32, size)});
  }
  std::vector<HloInstruction*> operands = {padded};
  operands.insert(operands.end(), starts.begin(), starts.end());
  HloInstruction* window = ctx.Add(HloOpcode::kDynamicSlice, local, operands);
  window->mutable_attrs()->dynamic_slice_sizes = local.dimensions();
  // Keep the positions inside this device's shard (the padding of an uneven last shard is
  // outside it too).
  std::vector<PartitionContext::PositionRange> ranges;
  for (int64_t d : split) ranges.push_back({d, clamped[d], lo[d], hi[d]});
  HloInstruction* mask = ctx.PositionsInRanges(local, std::move(ranges));
  HloInstruction* zeros = ctx.Add(HloOpcode::kBroadcast, local, {zero});
  HloInstruction* mine = ctx.Add(HloOpcode::kSelect, local, {mask, window, zeros});
  ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                   hlo::DeviceGroupsAlongDims(s.tile_assignment(), split));
  ASSIGN_OR_RETURN(HloInstruction * sum, ctx.AllReduceSum(mine, hlo::GroupLists(groups)));
  ctx.Set(&original, {sum, result_sharding, original.shape()});
  return true;
}

// Dynamic-slice: the result in `sharding` with the moved dims whole; index scalars stay
// replicated.
absl::Status HandleDynamicSlice(const HloInstruction& original, const HloSharding& sharding,
                                PartitionContext& ctx) {
  const bool tiled = MovesDataInTiling(sharding);
  if (!original.shape().IsArray() || !(tiled || sharding.IsReplicated())) {
    return FallBackToReplicated(original, sharding, ctx,
                                "a sharding with partial sums on a dynamic-slice");
  }
  ASSIGN_OR_RETURN(HloSharding local_sharding,
                   tiled ? hlo::PartiallyReplicate(sharding, MovingDims(original))
                         : absl::StatusOr<HloSharding>(HloSharding::Replicate()));
  ASSIGN_OR_RETURN(bool masked, TryMaskedSlice(original, local_sharding, ctx));
  if (masked) return absl::OkStatus();
  if (!tiled)
    return FallBackToReplicated(original, sharding, ctx,
                                "the sliced dims are split and no masked slice applies");
  std::vector<HloInstruction*> operands;
  for (const HloInstruction* operand : original.operands()) {
    const bool same_rank = operand->shape().IsArray() &&
                           operand->shape().rank() == original.shape().rank() &&
                           operand->shape().rank() > 0;
    ASSIGN_OR_RETURN(HloSharding whole, ReplicatedIn(local_sharding, operand->shape()));
    ASSIGN_OR_RETURN(HloInstruction * value,
                     ctx.GetInSharding(operand, same_rank ? local_sharding : whole));
    operands.push_back(value);
  }
  ASSIGN_OR_RETURN(Shape local, LocalShape(local_sharding, original.shape()));
  HloInstruction* result = CloneWithOperands(original, local, operands, ctx);
  result->mutable_attrs()->dynamic_slice_sizes = local.dimensions();
  ctx.Set(&original, {result, local_sharding, original.shape()});
  return absl::OkStatus();
}

}  // namespace

void RegisterDynamicSliceHandler(HandlerTable& table) {
  table[HloOpcode::kDynamicSlice] = &HandleDynamicSlice;
}

}  // namespace spmd

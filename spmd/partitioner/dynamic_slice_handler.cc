// Dynamic-slice. The dims the slice moves data along (slice size below the operand's) are
// taken whole in the result; the other dims keep their tiling. Two ways to get there when the
// operand is split along moved dims, costed by the bytes each device receives:
//   gather:  the operand takes the result's sharding with the moved dims whole (an all-gather
//            along them), and the op runs locally (what XLA does);
//   masked:  each device slices the result's window from its own shard and one all-reduce
//            assembles it (masked_slice.h): it moves the result's size instead of the
//            operand's along those dims, so it wins when the slice is small.
#include <algorithm>
#include <vector>

#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/partitioner/masked_slice.h"

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

// The masked local slice (masked_slice.h); false (nothing emitted) when it does not apply or
// gathering the operand moves fewer bytes.
absl::StatusOr<bool> TryMaskedSlice(const HloInstruction& original,
                                    const HloSharding& local_sharding, PartitionContext& ctx) {
  const HloInstruction* operand = original.operand(0);
  ASSIGN_OR_RETURN(const PartitionedValue* in, ctx.Get(operand));
  const HloSharding& s = in->sharding;
  const PrimitiveType type = original.shape().element_type();
  if (!operand->shape().IsArray()) return false;
  // One scalar start per dim (not the old packed form, one s32[rank] operand).
  if (original.operand_count() != original.shape().rank() + 1) return false;
  for (int64_t i = 1; i < original.operand_count(); ++i) {
    if (!original.operand(i)->shape().IsArray() || original.operand(i)->shape().rank() != 0) {
      return false;
    }
  }
  const std::vector<int64_t> moving = MovingDims(original);
  const std::optional<MaskedSliceDims> dims = MaskedSliceApplies(s, moving, type, ctx);
  if (!dims.has_value()) return false;
  ASSIGN_OR_RETURN(HloSharding result_sharding, hlo::PartiallyReplicate(s, moving));
  if (!(result_sharding == local_sharding)) return false;
  // Bytes each device receives: a ring all-reduce of its result block vs an all-gather of the
  // operand along the split moved dims.
  ASSIGN_OR_RETURN(Shape local, LocalShape(result_sharding, original.shape()));
  const Shape& shard = in->value->shape();
  const double reduce_bytes =
      static_cast<double>(MaskedSliceReceived(local, dims->group, ctx).bytes);
  const double gather_bytes = static_cast<double>(dims->group - 1) * shard.byte_size();
  const std::string why = hlo::StrCat("dynamic-slice %", original.name(), ": operand split along "
                                      "sliced dims; masked local slice + all-reduce receives ",
                                      static_cast<int64_t>(reduce_bytes), " bytes, gathering "
                                      "the operand ", static_cast<int64_t>(gather_bytes));
  if (reduce_bytes >= gather_bytes) {
    ctx.log().lines.push_back(why + ": gather");
    return false;
  }
  ctx.log().lines.push_back(why + ": masked");
  const int64_t rank = original.shape().rank();
  std::vector<HloInstruction*> starts(rank, nullptr);
  for (int64_t d : moving) {
    ASSIGN_OR_RETURN(HloSharding whole, ReplicatedIn(s, original.operand(d + 1)->shape()));
    ASSIGN_OR_RETURN(HloInstruction * index, ctx.GetInSharding(original.operand(d + 1), whole));
    // The start as the original clamps it.
    starts[d] = ctx.ClampedIndex(index, operand->shape().dimensions(d) - local.dimensions(d));
  }
  ASSIGN_OR_RETURN(HloInstruction * mine, MaskedLocalWindow(ctx, in->value, s, operand->shape(),
                                                            starts, local.dimensions(), *dims));
  ASSIGN_OR_RETURN(HloInstruction * sum, SumMaskedWindows(ctx, mine, s, *dims));
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

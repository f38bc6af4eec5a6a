// Manual sharding: values the user has already partitioned by hand.
//
// An instruction whose sharding is `{manual}` (or a tuple of them) is left alone: each device
// runs it as written on its own per-device values (its shape is already the per-device
// shape). A value enters a manual region only through SPMDFullToShardShape (the device's
// shard of a value sharded as the custom-call's operand is, which becomes its manual value)
// or as a replicated value (every device's copy is its manual value), and leaves it only
// through SPMDShardToFullShape (the manual values become the shards of the result's
// sharding). On 2 devices:
//
//   %s = f32[4,2] custom-call(f32[8,2] %x), custom_call_target="SPMDFullToShardShape",
//        sharding={manual}                        (%x sharded {devices=[2,1]<=[2]})
//   %n = f32[4,2] negate(%s), sharding={manual}
//   %f = f32[8,2] custom-call(%n), custom_call_target="SPMDShardToFullShape",
//        sharding={devices=[2,1]<=[2]}
//   -> %n.spmd = f32[4,2] negate(%x), and %f's per-device value is %n.spmd, sharded [2,1].
//
// Manual subgroups (`last_tile_dims={manual}`: manual along some mesh axes, tiled along the
// others) are not supported and fail with an error naming the sharding.
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

HloSharding ManualFor(const Shape& shape) {
  return shape.IsTuple() ? HloSharding::SingleTuple(shape, HloSharding::Manual())
                         : HloSharding::Manual();
}

// The sharding `operand` was annotated with (replicated when it has none).
HloSharding AnnotatedSharding(const HloInstruction& operand) {
  if (!operand.has_sharding()) return HloSharding::Replicate();
  return operand.sharding();
}

absl::Status CheckNoManualSubgroups(const HloSharding& sharding, std::string_view what) {
  if (sharding.IsTiled() && sharding.SubgroupManualDim() >= 0) {
    return absl::UnimplementedError(
        hlo::StrCat(what, " sharding ", sharding.ToString(),
                    " is manual along some mesh axes only (manual subgroups), which the "
                    "partitioner does not support"));
  }
  return absl::OkStatus();
}

absl::Status CheckShapesMatch(const HloInstruction& original, const Shape& local,
                              const Shape& want, std::string_view what) {
  if (local.Compatible(want)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      hlo::StrCat("custom-call \"", original.attrs().custom_call_target, "\": ", what, " is ",
                  local.ToString(false), " per device, but the custom-call's ",
                  original.attrs().custom_call_target == "SPMDFullToShardShape" ? "result"
                                                                                 : "operand",
                  " is ", want.ToString(false)));
}

}  // namespace

absl::Status HandleManual(const HloInstruction& original, const HloSharding& sharding,
                          PartitionContext& ctx) {
  std::vector<HloInstruction*> operands;
  for (const HloInstruction* operand : original.operands()) {
    ASSIGN_OR_RETURN(HloInstruction * value,
                     ctx.GetInSharding(operand, ManualFor(operand->shape())));
    operands.push_back(value);
  }
  HloInstruction* clone = CloneWithOperands(original, original.shape(), operands, ctx);
  ctx.Set(&original, {clone, sharding, original.shape()});
  return absl::OkStatus();
}

absl::Status HandleFullToShardShape(const HloInstruction& original, const HloSharding& sharding,
                                    PartitionContext& ctx) {
  if (original.operand_count() != 1 || !original.shape().IsArray() || !sharding.IsManual()) {
    return absl::InvalidArgumentError(
        "SPMDFullToShardShape takes one array operand and must be sharded {manual}");
  }
  const HloInstruction* operand = original.operand(0);
  const HloSharding from = AnnotatedSharding(*operand);
  RETURN_IF_ERROR(CheckNoManualSubgroups(from, "the operand's"));
  ASSIGN_OR_RETURN(HloInstruction * shard, ctx.GetInSharding(operand, from));
  RETURN_IF_ERROR(CheckShapesMatch(original, shard->shape(), original.shape(),
                                   hlo::StrCat("the operand's shard under ", from.ToString())));
  ctx.Set(&original, {shard, sharding, original.shape()});
  return absl::OkStatus();
}

absl::Status HandleShardToFullShape(const HloInstruction& original, const HloSharding& sharding,
                                    PartitionContext& ctx) {
  if (original.operand_count() != 1 || !original.shape().IsArray() || sharding.IsTuple()) {
    return absl::InvalidArgumentError("SPMDShardToFullShape takes one array operand");
  }
  RETURN_IF_ERROR(CheckNoManualSubgroups(sharding, "the result's"));
  if (sharding.IsManual()) {
    return absl::InvalidArgumentError(
        "SPMDShardToFullShape's result must not be manual: it leaves the manual region");
  }
  const HloInstruction* operand = original.operand(0);
  ASSIGN_OR_RETURN(HloInstruction * manual, ctx.GetInSharding(operand, HloSharding::Manual()));
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, original.shape()));
  RETURN_IF_ERROR(CheckShapesMatch(original, local, operand->shape(),
                                   hlo::StrCat("the result's shard under ", sharding.ToString())));
  ctx.Set(&original, {manual, sharding, original.shape()});
  return absl::OkStatus();
}

}  // namespace spmd

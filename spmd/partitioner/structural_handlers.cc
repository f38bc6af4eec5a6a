// Parameters, tuples, get-tuple-element, and the Sharding custom-call.
//
// A parameter becomes a parameter of its padded shard shape; a tuple collects its elements'
// per-device values (with a tuple sharding of theirs); get-tuple-element picks one; the
// Sharding custom-call (JAX's with_sharding_constraint) is its operand in the requested
// sharding; memory-placement custom-calls (MoveToHost, ...) run on the shard in theirs.
#include <string_view>
#include <utility>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

absl::Status HandleParameter(const HloInstruction& original, const HloSharding& sharding,
                             PartitionContext& ctx) {
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, original.shape()));
  HloInstruction* param = CloneWithOperands(original, std::move(local), {}, ctx);
  param->set_name(original.name());
  ctx.Set(&original, {param, sharding, original.shape()});
  return absl::OkStatus();
}

// Each operand takes its own leaves of the tuple's sharding (an operand that is itself a tuple
// takes its run of leaves, as a tuple sharding of its shape).
absl::Status HandleTuple(const HloInstruction& original, const HloSharding& sharding,
                         PartitionContext& ctx) {
  const HloSharding leaves = sharding.NormalizeTupleSharding(original.shape());
  if (!leaves.IsTuple() ||
      static_cast<int64_t>(leaves.tuple_elements().size()) != original.shape().leaf_count()) {
    return FallBackToReplicated(original, sharding, ctx, "an empty tuple among its operands");
  }
  std::vector<HloInstruction*> elements;
  std::vector<Shape> local_shapes;
  size_t first = 0;
  for (const HloInstruction* operand : original.operands()) {
    const size_t count = operand->shape().leaf_count();
    std::vector<HloSharding> own(leaves.tuple_elements().begin() + first,
                                 leaves.tuple_elements().begin() + first + count);
    first += count;
    HloSharding want = own.empty() ? HloSharding::Replicate() : own.front();
    if (operand->shape().IsTuple()) {
      ASSIGN_OR_RETURN(want, HloSharding::Tuple(operand->shape(), std::move(own)));
    }
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(operand, want));
    elements.push_back(value);
    local_shapes.push_back(value->shape());
  }
  HloInstruction* tuple = ctx.Add(HloOpcode::kTuple, Shape::Tuple(local_shapes), elements);
  ctx.Set(&original, {tuple, leaves, original.shape()});
  return absl::OkStatus();
}

// Picks element `index`: its run of the tuple's leaf shardings (one leaf, or a tuple sharding
// of a nested tuple's leaves).
absl::Status HandleGetTupleElement(const HloInstruction& original, const HloSharding& sharding,
                                   PartitionContext& ctx) {
  ASSIGN_OR_RETURN(const PartitionedValue* tuple, ctx.Get(original.operand(0)));
  const int64_t index = original.tuple_index();
  const Shape& full = original.operand(0)->shape();
  const HloSharding leaves = tuple->sharding.NormalizeTupleSharding(full);
  if (!leaves.IsTuple() ||
      static_cast<int64_t>(leaves.tuple_elements().size()) != full.leaf_count()) {
    return FallBackToReplicated(original, sharding, ctx,
                                "a get-tuple-element of a value without a tuple sharding");
  }
  size_t first = 0;
  for (int64_t i = 0; i < index; ++i) first += full.tuple_shapes()[i].leaf_count();
  std::vector<HloSharding> own(
      leaves.tuple_elements().begin() + first,
      leaves.tuple_elements().begin() + first + original.shape().leaf_count());
  HloSharding picked = own.empty() ? HloSharding::Replicate() : own.front();
  if (original.shape().IsTuple()) {
    ASSIGN_OR_RETURN(picked, HloSharding::Tuple(original.shape(), std::move(own)));
  }
  HloInstruction* gte = ctx.Add(HloOpcode::kGetTupleElement,
                                tuple->value->shape().tuple_shapes(index), {tuple->value});
  gte->mutable_attrs()->tuple_index = index;
  ctx.Set(&original, {gte, std::move(picked), original.shape()});
  return absl::OkStatus();
}

// Custom-calls with a meaning of their own, by target.
constexpr std::pair<std::string_view, PartitionHandler> kCustomCallHandlers[] = {
    {"__op$block_scaled_dot", &HandleBlockScaledDot},
    {"TopK", &HandleTopK},
    {"_SPMDInternalOp_MultiSlice", &HandleMultiSliceCustomCall},
    {"_SPMDInternalOp_RotateRight", &HandleWindowCustomCall},
    {"_SPMDInternalOp_MultiRotate", &HandleWindowCustomCall},
    {"_SPMDInternalOp_Wrap", &HandleWindowCustomCall},
    {"_SPMDInternalOp_MultiPad", &HandleWindowCustomCall},
};

absl::Status HandleCustomCall(const HloInstruction& original, const HloSharding& sharding,
                              PartitionContext& ctx) {
  const std::string& target = original.attrs().custom_call_target;
  if (target == "Sharding" && original.operand_count() == 1 && original.shape().IsArray()) {
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(original.operand(0), sharding));
    ctx.Set(&original, {value, sharding, original.shape()});
    return absl::OkStatus();
  }
  if ((hlo::IsPlacementCustomCall(original) || target == "LayoutConstraint") &&
      !sharding.IsTuple()) {
    // Placement and layout annotations keep the value: they run on the shard, in the result's
    // sharding (partial sums stay partial: the value is not changed, only where it lives).
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(original.operand(0), sharding));
    ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, original.shape()));
    ctx.Set(&original, {CloneWithOperands(original, std::move(local), {value}, ctx), sharding,
                        original.shape()});
    return absl::OkStatus();
  }
  if (target == "SPMDFullToShardShape") return HandleFullToShardShape(original, sharding, ctx);
  if (target == "SPMDShardToFullShape") return HandleShardToFullShape(original, sharding, ctx);
  if (sharding.IsManual()) return HandleManualAsWritten(original, sharding, ctx);
  for (const auto& [name, handler] : kCustomCallHandlers) {
    if (name == target) return handler(original, sharding, ctx);
  }
  bool handled = false;
  RETURN_IF_ERROR(HandleShardingRuleCustomCall(original, sharding, ctx, &handled));
  if (handled) return absl::OkStatus();
  return FallBackToReplicated(
      original, sharding, ctx,
      target == "CustomSPMDPartitioning"
          ? "a jax custom_partitioning call without a sharding rule (a GSPMD-mode export): its "
            "partitioner is a Python callback that the module does not contain"
          : "a custom-call the partitioner does not know");
}

// An optimization barrier passes its operand through (propagation joins the two as one value):
// it runs on the per-device value in its own sharding, moving nothing.
absl::Status HandleOptimizationBarrier(const HloInstruction& original, const HloSharding& sharding,
                                       PartitionContext& ctx) {
  const HloSharding wanted = sharding.NormalizeTupleSharding(original.shape());
  ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(original.operand(0), wanted));
  ctx.Set(&original,
          {CloneWithOperands(original, value->shape(), {value}, ctx), wanted, original.shape()});
  return absl::OkStatus();
}

}  // namespace

// partition-id outside a manual region (a manual one runs as written): each device's value
// differs, so no sharding but {manual} describes it. Refused, as XLA's partitioner does, rather
// than computed once and called replicated.
absl::Status HandlePartitionId(const HloInstruction& /*original*/, const HloSharding& sharding,
                               PartitionContext& /*ctx*/) {
  return absl::InvalidArgumentError(hlo::StrCat(
      "partition-id has sharding ", sharding.ToString(),
      ", but its value differs on every device: it only has a meaning in a manual region "
      "(sharding={manual})"));
}

void RegisterStructuralHandlers(HandlerTable& table) {
  table[HloOpcode::kParameter] = &HandleParameter;
  table[HloOpcode::kTuple] = &HandleTuple;
  table[HloOpcode::kGetTupleElement] = &HandleGetTupleElement;
  table[HloOpcode::kCustomCall] = &HandleCustomCall;
  table[HloOpcode::kOptimizationBarrier] = &HandleOptimizationBarrier;
  table[HloOpcode::kPartitionId] = &HandlePartitionId;
}

}  // namespace spmd

// Parameters, tuples, get-tuple-element, and the Sharding custom-call.
//
// A parameter becomes a parameter of its padded shard shape; a tuple collects its elements'
// per-device values (with a tuple sharding of theirs); get-tuple-element picks one; the
// Sharding custom-call (JAX's with_sharding_constraint) is its operand in the requested
// sharding; memory-placement custom-calls (MoveToHost, ...) run on the shard in theirs.
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
  HloInstruction* param = CloneWithOperands(original, local, {}, ctx);
  param->set_name(original.name());
  ctx.Set(&original, {param, sharding, original.shape()});
  return absl::OkStatus();
}

absl::Status HandleTuple(const HloInstruction& original, const HloSharding& sharding,
                         PartitionContext& ctx) {
  std::vector<HloInstruction*> elements;
  std::vector<Shape> local_shapes;
  std::vector<HloSharding> leaf_shardings;
  for (int64_t i = 0; i < original.operand_count(); ++i) {
    const HloInstruction* operand = original.operand(i);
    if (operand->shape().IsTuple()) return HandleReplicated(original, sharding, ctx);
    const HloSharding& want =
        sharding.IsTuple() ? sharding.tuple_elements()[i] : sharding;
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(operand, want));
    elements.push_back(value);
    local_shapes.push_back(value->shape());
    leaf_shardings.push_back(want);
  }
  HloInstruction* tuple = ctx.Add(HloOpcode::kTuple, Shape::Tuple(local_shapes), elements);
  ASSIGN_OR_RETURN(HloSharding tuple_sharding, HloSharding::Tuple(std::move(leaf_shardings)));
  ctx.Set(&original, {tuple, tuple_sharding, original.shape()});
  return absl::OkStatus();
}

absl::Status HandleGetTupleElement(const HloInstruction& original, const HloSharding& sharding,
                                   PartitionContext& ctx) {
  ASSIGN_OR_RETURN(const PartitionedValue* tuple, ctx.Get(original.operand(0)));
  const int64_t index = original.tuple_index();
  if (!tuple->sharding.IsTuple() || original.shape().IsTuple()) {
    return HandleReplicated(original, sharding, ctx);
  }
  HloInstruction* gte = ctx.Add(HloOpcode::kGetTupleElement,
                                tuple->value->shape().tuple_shapes(index), {tuple->value});
  gte->mutable_attrs()->tuple_index = index;
  ctx.Set(&original, {gte, tuple->sharding.tuple_elements()[index], original.shape()});
  return absl::OkStatus();
}

absl::Status HandleCustomCall(const HloInstruction& original, const HloSharding& sharding,
                              PartitionContext& ctx) {
  const std::string& target = original.attrs().custom_call_target;
  if (target == "Sharding" && original.operand_count() == 1 && original.shape().IsArray()) {
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(original.operand(0), sharding));
    ctx.Set(&original, {value, sharding, original.shape()});
    return absl::OkStatus();
  }
  if (hlo::IsPlacementCustomCall(original) && !sharding.IsTuple()) {
    // Placement annotations keep the value: they run on the shard, in the result's sharding.
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(original.operand(0), sharding));
    ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, original.shape()));
    ctx.Set(&original, {CloneWithOperands(original, local, {value}, ctx), sharding,
                        original.shape()});
    return absl::OkStatus();
  }
  if (target == "SPMDFullToShardShape") return HandleFullToShardShape(original, sharding, ctx);
  if (target == "SPMDShardToFullShape") return HandleShardToFullShape(original, sharding, ctx);
  if (sharding.IsManual()) return HandleManual(original, sharding, ctx);
  if (target == "__op$block_scaled_dot") return HandleBlockScaledDot(original, sharding, ctx);
  return HandleReplicated(original, sharding, ctx);
}

}  // namespace

void RegisterStructuralHandlers(HandlerTable& table) {
  table[HloOpcode::kParameter] = &HandleParameter;
  table[HloOpcode::kTuple] = &HandleTuple;
  table[HloOpcode::kGetTupleElement] = &HandleGetTupleElement;
  table[HloOpcode::kCustomCall] = &HandleCustomCall;
}

}  // namespace spmd

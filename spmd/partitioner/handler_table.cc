// The opcode -> partitioning handler table, and the helpers every family shares.
#include "hlo/sharding/shard_geometry.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

PartitionHandler FindPartitionHandler(hlo::HloOpcode opcode) {
  static const HandlerTable* table = [] {
    auto* t = new HandlerTable();
    RegisterElementwiseHandlers(*t);
    RegisterDataMovementHandlers(*t);
    RegisterReduceHandlers(*t);
    RegisterDotHandlers(*t);
    RegisterStructuralHandlers(*t);
    RegisterSortHandler(*t);
    RegisterTopKHandler(*t);
    RegisterConvolutionHandler(*t);
    RegisterWindowHandlers(*t);
    RegisterDynamicSliceHandler(*t);
    RegisterDynamicUpdateSliceHandler(*t);
    RegisterRaggedDotHandler(*t);
    RegisterGatherScatterHandlers(*t);
    RegisterControlFlowHandlers(*t);
    return t;
  }();
  auto it = table->find(opcode);
  return it == table->end() ? &HandleReplicated : it->second;
}

HloInstruction* CloneWithOperands(const HloInstruction& original, Shape shape,
                                  std::vector<HloInstruction*> operands, PartitionContext& ctx) {
  return ctx.AddClone(original, std::move(shape), std::move(operands));
}

absl::StatusOr<Shape> LocalShape(const HloSharding& sharding, const Shape& base) {
  ASSIGN_OR_RETURN(Shape local, hlo::PaddedShardShape(sharding, base));
  local.clear_layout();
  return local;
}

absl::StatusOr<HloInstruction*> GetReplicated(const HloInstruction* original,
                                              PartitionContext& ctx) {
  const HloSharding replicated =
      original->shape().IsTuple() ? HloSharding::SingleTuple(original->shape(),
                                                             HloSharding::Replicate())
                                  : HloSharding::Replicate();
  return ctx.GetInSharding(original, replicated);
}

absl::Status HandleReplicated(const HloInstruction& original, const HloSharding& sharding,
                              PartitionContext& ctx) {
  return FallBackToReplicated(
      original, sharding, ctx,
      hlo::StrCat("no partitioning strategy for ", hlo::HloOpcodeString(original.opcode())));
}

absl::Status FallBackToReplicated(const HloInstruction& original, const HloSharding& sharding,
                                  PartitionContext& ctx, std::string_view reason) {
  // Inside manual subgroups "replicated" means whole within each group. (Asked only of a
  // sharding that has them: the refusal's message is not free.)
  if (ManualSubgroupLeaf(sharding) != nullptr) {
    if (absl::StatusOr<HloSharding> whole = WholeInManualGroups(sharding, original.shape());
        whole.ok()) {
      return HandleManual(original, *whole, ctx);
    }
  }
  // A split sharding computed whole is a fallback: counted, explained, an error under --strict.
  if (!sharding.IsTileMaximal()) {
    RETURN_IF_ERROR(ctx.RecordFallback(original, sharding, reason));
  }
  std::vector<HloInstruction*> operands;
  for (const HloInstruction* operand : original.operands()) {
    ASSIGN_OR_RETURN(HloInstruction * replicated, GetReplicated(operand, ctx));
    operands.push_back(replicated);
  }
  HloInstruction* clone = CloneWithOperands(original, original.shape(), std::move(operands), ctx);
  HloSharding result = original.shape().IsTuple()
                           ? HloSharding::SingleTuple(original.shape(), HloSharding::Replicate())
                           : HloSharding::Replicate();
  ctx.Set(&original, {clone, std::move(result), original.shape()});
  return absl::OkStatus();
}

}  // namespace spmd

// The opcode -> partitioning handler table, and the helpers every family shares.
#include <algorithm>
#include <optional>

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
    RegisterSortAndFftHandlers(*t);
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

namespace {

// Whether `op` may run on one device while the others run it on garbage: it neither talks to
// other devices nor has effects, and its callees (a comparator, a reducer) are pure.
bool RunsAloneOnOneDevice(const HloInstruction& op) {
  const hlo::HloOpcode opcode = op.opcode();
  if (hlo::GetHloOpcodeFamily(opcode) == hlo::HloOpcodeFamily::kCollective ||
      hlo::HasOpcodeFlag(opcode, hlo::op_traits::kSideEffect) ||
      hlo::HasOpcodeFlag(opcode, hlo::op_traits::kRunsCallees) ||
      opcode == hlo::HloOpcode::kCustomCall) {
    return false;
  }
  return std::all_of(op.operands().begin(), op.operands().end(),
                     [](const HloInstruction* operand) { return operand->shape().IsArray(); });
}

// A value wanted on one device is computed there, from operands fetched there, as XLA does:
// every device runs the op and only `device`'s result counts, so nothing is made whole first.
absl::Status ComputeOnDevice(const HloInstruction& original, const HloSharding& sharding,
                             int64_t device, PartitionContext& ctx) {
  ASSIGN_OR_RETURN(const HloSharding on_device, HloSharding::Maximal(device));
  std::vector<HloInstruction*> operands;
  for (const HloInstruction* operand : original.operands()) {
    ASSIGN_OR_RETURN(HloInstruction * local, ctx.GetInSharding(operand, on_device));
    operands.push_back(local);
  }
  HloInstruction* clone = CloneWithOperands(original, original.shape(), std::move(operands), ctx);
  ctx.Set(&original, {clone, sharding.WithoutMetadata(), original.shape()});
  return absl::OkStatus();
}

}  // namespace

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
  if (std::optional<int64_t> device = sharding.UniqueDevice();
      device.has_value() && RunsAloneOnOneDevice(original)) {
    return ComputeOnDevice(original, sharding, *device, ctx);
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

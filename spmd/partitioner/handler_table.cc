// The opcode -> partitioning handler table, and the helpers every family shares.
#include <algorithm>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/unreduced.h"
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
    RegisterLocalRuleHandler(*t);
    RegisterTopKHandler(*t);
    RegisterConvolutionHandler(*t);
    RegisterWindowHandlers(*t);
    RegisterSelectAndScatterHandler(*t);
    RegisterDynamicSliceHandler(*t);
    RegisterDynamicUpdateSliceHandler(*t);
    RegisterRaggedDotHandler(*t);
    RegisterGatherScatterHandlers(*t);
    RegisterControlFlowHandlers(*t);
    RegisterScanHandler(*t);
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
  // Inside manual subgroups a replicated operand is whole on each device of its group.
  ASSIGN_OR_RETURN(const PartitionedValue* now, ctx.Get(original));
  if (ManualSubgroupLeaf(now->sharding) != nullptr) {
    ASSIGN_OR_RETURN(HloSharding whole, WholeInManualGroups(now->sharding, original->shape()));
    return ctx.GetInSharding(original, whole);
  }
  const HloSharding replicated =
      original->shape().IsTuple() ? HloSharding::SingleTuple(original->shape(),
                                                             HloSharding::Replicate())
                                  : HloSharding::Replicate();
  return ctx.GetInSharding(original, replicated);
}

bool MarksItsOperand(const HloInstruction& instr) {
  return instr.opcode() == hlo::HloOpcode::kCustomCall && hlo::ForwardsOperand(instr) &&
         !hlo::IsPlacementCustomCall(instr) && instr.operand_count() == 1 &&
         instr.operand(0)->shape().element_type() == instr.shape().element_type() &&
         instr.operand(0)->shape().dimensions() == instr.shape().dimensions();
}

bool MovesDataInTiling(const HloSharding& sharding) {
  return sharding.IsTiled() && !hlo::HasUnreduced(sharding);
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

// Whether `op` acts on the world outside the program (a host transfer, a host callback): run
// on every device, the effect would happen once per device.
bool HasExternalEffect(const HloInstruction& op) {
  static constexpr hlo::HloOpcode kTransfers[] = {hlo::HloOpcode::kInfeed,
                                                  hlo::HloOpcode::kOutfeed};
  return std::find(std::begin(kTransfers), std::end(kTransfers), op.opcode()) !=
             std::end(kTransfers) ||
         (op.opcode() == hlo::HloOpcode::kCustomCall && op.attrs().custom_call_has_side_effect);
}

// `shape`'s value where an op did not run: zeros, and fresh tokens.
HloInstruction* Neutral(SpmdBuilder& b, const hlo::Shape& shape) {
  if (shape.IsArray()) return b.Zeros(shape);
  if (!shape.IsTuple()) return b.Add(hlo::HloOpcode::kAfterAll, shape, {});
  std::vector<HloInstruction*> parts;
  for (const hlo::Shape& element : shape.tuple_shapes()) parts.push_back(Neutral(b, element));
  return b.Add(hlo::HloOpcode::kTuple, shape, parts);
}

// An op with an external effect wanted on one device runs there alone, as XLA does: a
// conditional on partition-id whose other branch yields zeros (and fresh tokens) of its shape.
// Its operands are fetched to that device.
absl::Status RunOnOneDevice(const HloInstruction& original, const HloSharding& sharding,
                            int64_t device, PartitionContext& ctx) {
  ASSIGN_OR_RETURN(const HloSharding on_device, HloSharding::Maximal(device));
  std::vector<HloInstruction*> operands;
  std::vector<hlo::Shape> shapes;
  for (const HloInstruction* operand : original.operands()) {
    HloInstruction* local = nullptr;
    if (operand->shape().IsArray() || operand->shape().IsTuple()) {
      const HloSharding want = operand->shape().IsTuple()
                                   ? HloSharding::SingleTuple(operand->shape(), on_device)
                                   : on_device;
      ASSIGN_OR_RETURN(local, ctx.GetInSharding(operand, want));
    } else {
      ASSIGN_OR_RETURN(const PartitionedValue* value, ctx.Get(operand));
      local = value->value;
    }
    operands.push_back(local);
    shapes.push_back(local->shape());
  }
  SpmdBuilder& b = ctx.builder();
  const hlo::Shape args_shape = hlo::Shape::Tuple(shapes);
  HloInstruction* args = b.Add(hlo::HloOpcode::kTuple, args_shape, operands);
  hlo::HloModule* module = ctx.output()->parent();
  const std::string name = ctx.UniqueName(original.name() + ".on_device");
  std::vector<hlo::HloComputation*> branches;
  for (const bool runs : {true, false}) {
    hlo::HloComputation* branch = module->AddComputation(
        std::make_unique<hlo::HloComputation>(name + (runs ? ".true" : ".false")));
    SpmdBuilder in(branch, &ctx.channel_ids(), NameScheme{".", false, branch->name()});
    HloInstruction* param = in.Add(hlo::HloOpcode::kParameter, args_shape, {});
    HloInstruction* result = nullptr;
    if (runs) {
      std::vector<HloInstruction*> parts;
      for (int64_t i = 0; i < static_cast<int64_t>(shapes.size()); ++i) {
        parts.push_back(in.GetTupleElement(param, i));
      }
      result = in.Add(original.opcode(), original.shape(), parts);
      result->ShareAttributes(original);
      for (hlo::HloComputation* callee : original.called_computations()) {
        result->AppendCalledComputation(callee);
      }
    } else {
      result = Neutral(in, original.shape());
    }
    branch->set_root_instruction(result);
    branches.push_back(branch);
  }
  HloInstruction* is_device = b.Add(
      hlo::HloOpcode::kCompare, hlo::Shape::Array(hlo::PrimitiveType::kPred, {}),
      {b.PartitionId(), b.ScalarConstant(hlo::PrimitiveType::kU32, static_cast<double>(device))});
  is_device->mutable_attrs()->comparison_direction = hlo::ComparisonDirection::kEq;
  HloInstruction* once =
      b.Add(hlo::HloOpcode::kConditional, original.shape(), {is_device, args, args});
  for (hlo::HloComputation* branch : branches) once->AppendCalledComputation(branch);
  if (ctx.log().keep_lines) {
    ctx.log().lines.push_back(
        hlo::StrCat("%", original.name(), ": ", hlo::HloOpcodeString(original.opcode()),
                    " runs on device ", device, " alone (a conditional on partition-id)"));
  }
  ctx.Set(&original, {once, sharding.WithoutMetadata(), original.shape()});
  return absl::OkStatus();
}

}  // namespace

absl::Status FallBackToReplicated(const HloInstruction& original, const HloSharding& sharding,
                                  PartitionContext& ctx, std::string_view reason) {
  // Inside manual subgroups "replicated" means whole within each group (asked only of a
  // sharding that has them: the refusal's message is not free); a leaf split inside the
  // groups computed whole there is a fallback as well.
  if (ManualSubgroupLeaf(sharding) != nullptr) {
    if (absl::StatusOr<HloSharding> whole = WholeInManualGroups(sharding, original.shape());
        whole.ok()) {
      const absl::Span<const HloSharding> leaves = sharding.Leaves();
      if (std::any_of(leaves.begin(), leaves.end(), [](const HloSharding& leaf) {
            return leaf.HasManualSubgroup() && !IsWholeOnEveryDevice(leaf);
          })) {
        RETURN_IF_ERROR(ctx.RecordFallback(original, sharding, reason));
      }
      return HandleManualAsWritten(original, *whole, ctx);
    }
  }
  if (std::optional<int64_t> device = sharding.UniqueDevice(); device.has_value()) {
    if (RunsAloneOnOneDevice(original)) return ComputeOnDevice(original, sharding, *device, ctx);
    // Every leaf the op was annotated with on that device (an outfeed's data as well as its
    // token), not only the leaf that stands for it.
    const bool wholly_there =
        !original.has_sharding() || original.sharding().UniqueDevice() == device;
    if (HasExternalEffect(original) && wholly_there) {
      return RunOnOneDevice(original, sharding, *device, ctx);
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

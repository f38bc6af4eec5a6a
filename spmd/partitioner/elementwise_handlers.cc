// Elementwise ops (unary, binary, compare, select, clamp, convert, copy, ...): every array
// operand of the result's rank is asked for in the result's sharding; scalars stay replicated;
// the op runs locally on the padded shards (padding stays in the padding).
//
//   %r = f32[16] add(%a, %b), sharding={devices=[4]<=[4]}
//   -> %r.spmd = f32[4] add(%a.shard, %b.shard)
#include "hlo/status_macros.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

absl::Status HandleElementwise(const HloInstruction& original, const HloSharding& sharding,
                               PartitionContext& ctx) {
  if (!original.shape().IsArray() || sharding.IsTuple()) {
    return FallBackToReplicated(original, sharding, ctx, "an elementwise op with a tuple result");
  }
  std::vector<HloInstruction*> operands;
  for (const HloInstruction* operand : original.operands()) {
    const bool scalar_operand = operand->shape().IsArray() && operand->shape().rank() == 0 &&
                                original.shape().rank() > 0;
    ASSIGN_OR_RETURN(HloInstruction * value,
                     ctx.GetInSharding(operand, scalar_operand ? HloSharding::Replicate()
                                                               : sharding));
    operands.push_back(value);
  }
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, original.shape()));
  HloInstruction* result = CloneWithOperands(original, local, operands, ctx);
  ctx.Set(&original, {result, sharding, original.shape()});
  return absl::OkStatus();
}

}  // namespace

void RegisterElementwiseHandlers(HandlerTable& table) {
  for (int op = 0; op <= static_cast<int>(HloOpcode::kXor); ++op) {
    HloOpcode opcode = static_cast<HloOpcode>(op);
    if (hlo::IsElementwiseUnary(opcode) || hlo::IsElementwiseBinary(opcode)) {
      table[opcode] = &HandleElementwise;
    }
  }
  for (HloOpcode opcode : {HloOpcode::kCompare, HloOpcode::kSelect, HloOpcode::kClamp,
                           HloOpcode::kConvert, HloOpcode::kReducePrecision}) {
    table[opcode] = &HandleElementwise;
  }
}

}  // namespace spmd

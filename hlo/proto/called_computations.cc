// XLA's order and counts of HloInstructionProto.called_computation_ids, from
// HloInstruction::CreateFromProto: a while lists [body, condition] (kBodyComputationIndex = 0,
// kConditionComputationIndex = 1) where the IR keeps [condition, body]; every other opcode lists
// its computations in the IR's order. CreateFromProto refuses other counts for the opcodes of
// kExactCounts, a conditional without one operand per branch after the index, and a pred-indexed
// conditional without exactly two branches. Async ops are not counted: the IR keeps an
// async-update/-done without the computation XLA gives it, and a sugared async-start
// (`call-start`) with the wrapped op's computations.
#include <algorithm>

#include "hlo/proto/proto_internal.h"
#include "hlo/strings.h"

namespace hlo {
namespace proto_internal {
namespace {

struct CallCount {
  HloOpcode opcode;
  int64_t count;
};

constexpr CallCount kExactCounts[] = {
    {HloOpcode::kCall, 1},          {HloOpcode::kMap, 1},
    {HloOpcode::kReduce, 1},        {HloOpcode::kReduceWindow, 1},
    {HloOpcode::kSort, 1},          {HloOpcode::kScatter, 1},
    {HloOpcode::kAllReduce, 1},     {HloOpcode::kAllReduceStart, 1},
    {HloOpcode::kReduceScatter, 1}, {HloOpcode::kFusion, 1},
    {HloOpcode::kWhile, 2},         {HloOpcode::kSelectAndScatter, 2},
};

absl::Status CheckConditional(const HloInstruction& instr, int64_t count) {
  if (count < 1) return absl::InvalidArgumentError("conditional must call at least 1 computation");
  if (instr.operand_count() > 0 &&
      instr.operand(0)->shape().element_type() == PrimitiveType::kPred && count != 2) {
    return absl::InvalidArgumentError(
        StrCat("conditional with a pred index must call 2 computations, calls ", count));
  }
  if (instr.operand_count() != count + 1) {
    return absl::InvalidArgumentError(StrCat("conditional with ", count,
                                             " branch computations needs ", count + 1,
                                             " operands, has ", instr.operand_count()));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<int64_t> ProtoCalledOrder(HloOpcode opcode, int64_t count) {
  std::vector<int64_t> order(count);
  for (int64_t i = 0; i < count; ++i) order[i] = i;
  if (opcode == HloOpcode::kWhile && count == 2) std::swap(order[0], order[1]);
  return order;
}

absl::Status CheckCalledCount(const HloInstruction& instr, int64_t count) {
  if (instr.opcode() == HloOpcode::kConditional) return CheckConditional(instr, count);
  const HloOpcode opcode = instr.opcode();
  const CallCount* rule = std::find_if(std::begin(kExactCounts), std::end(kExactCounts),
                                       [&](const CallCount& c) { return c.opcode == opcode; });
  if (rule == std::end(kExactCounts) || rule->count == count) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat(HloOpcodeString(opcode), " must call ", rule->count,
                                           rule->count == 1 ? " computation" : " computations",
                                           ", calls ", count));
}

}  // namespace proto_internal
}  // namespace hlo

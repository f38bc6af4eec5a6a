// A combiner is recognised by its root alone: a reducer opcode whose two operands are the
// computation's two parameters, each used once.
#include "hlo/analysis/combiner.h"

namespace hlo {

std::optional<HloOpcode> MatchCombiner(const HloComputation& computation) {
  const HloInstruction* root = computation.root_instruction();
  if (computation.num_parameters() != 2 || root == nullptr || root->operand_count() != 2 ||
      !HasOpcodeFlag(root->opcode(), op_traits::kReducer)) {
    return std::nullopt;
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter ||
      a->parameter_number() == b->parameter_number()) {
    return std::nullopt;
  }
  return root->opcode();
}

bool IsSelectingCombiner(const HloComputation& computation) {
  if (std::optional<HloOpcode> op = MatchCombiner(computation)) {
    return *op == HloOpcode::kMaximum || *op == HloOpcode::kMinimum || *op == HloOpcode::kAnd ||
           *op == HloOpcode::kOr;
  }
  const HloInstruction* root = computation.root_instruction();
  const int64_t n = root == nullptr ? 0 : root->operand_count();
  if (n == 0 || root->opcode() != HloOpcode::kTuple || computation.num_parameters() != 2 * n) {
    return false;
  }
  auto parameter = [](const HloInstruction* instr) -> int64_t {
    return instr->opcode() == HloOpcode::kParameter ? instr->parameter_number() : -1;
  };
  const HloInstruction* predicate = nullptr;
  int64_t lhs_first = -1;  // 1: select(p, lhs, rhs); 0: select(p, rhs, lhs).
  for (int64_t i = 0; i < n; ++i) {
    const HloInstruction* select = root->operand(i);
    if (select->opcode() != HloOpcode::kSelect) return false;
    const int64_t a = parameter(select->operand(1)), b = parameter(select->operand(2));
    const int64_t orientation = a == i && b == n + i ? 1 : (a == n + i && b == i ? 0 : -1);
    if (orientation < 0 ||
        (predicate != nullptr && (select->operand(0) != predicate || orientation != lhs_first))) {
      return false;
    }
    predicate = select->operand(0);
    lhs_first = orientation;
  }
  return true;
}

}  // namespace hlo

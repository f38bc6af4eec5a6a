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

}  // namespace hlo

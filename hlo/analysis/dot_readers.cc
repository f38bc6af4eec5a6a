#include "hlo/analysis/dot_readers.h"

namespace hlo {
namespace {

bool IsTwoOperandDot(const HloInstruction& instr) {
  return instr.opcode() == HloOpcode::kDot && instr.operand_count() == 2 &&
         instr.attrs().dot_dimension_numbers.has_value();
}

}  // namespace

bool DotsReadAlike(const HloInstruction& a, const HloInstruction& b, int64_t i) {
  if (!IsTwoOperandDot(a) || !IsTwoOperandDot(b) || i < 0 || i > 1) return false;
  return a.operand(i) == b.operand(i) &&
         a.attrs().dot_dimension_numbers == b.attrs().dot_dimension_numbers &&
         a.shape() == b.shape() && a.operand(1 - i)->shape() == b.operand(1 - i)->shape();
}

int64_t CountDotsReadingAlike(const HloInstruction& dot, int64_t i,
                              absl::FunctionRef<bool(const HloInstruction&)> also) {
  if (!IsTwoOperandDot(dot) || i < 0 || i > 1) return 1;
  int64_t count = 1;
  for (const HloInstruction* user : dot.operand(i)->users()) {
    if (user != &dot && DotsReadAlike(dot, *user, i) && also(*user)) ++count;
  }
  return count;
}

}  // namespace hlo

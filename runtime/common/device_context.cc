// The identity custom-calls: the custom-call half of hlo::ForwardsOperand.
#include "runtime/common/device_context.h"

namespace runtime {

bool IsIdentityCustomCall(const hlo::HloInstruction& instr) {
  return instr.opcode() == hlo::HloOpcode::kCustomCall && hlo::ForwardsOperand(instr);
}

}  // namespace runtime

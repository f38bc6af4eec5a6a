// The identity custom-calls, by target name.
#include "runtime/common/device_context.h"

#include <string>

namespace runtime {

bool IsIdentityCustomCall(const hlo::HloInstruction& instr) {
  const std::string& target = instr.attrs().custom_call_target;
  return target == "Sharding" || target == "SPMDFullToShardShape" ||
         target == "SPMDShardToFullShape" || target == "ShardBarrierFrom" ||
         target == "ShardBarrierTo" || target == "LayoutConstraint" ||
         hlo::IsPlacementCustomCall(instr);
}

}  // namespace runtime

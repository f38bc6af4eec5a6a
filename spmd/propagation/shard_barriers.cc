// Barriers are collected first and removed afterwards, so removal never invalidates the
// iteration over a computation's instruction list.
#include "spmd/propagation/shard_barriers.h"

#include <vector>

#include "hlo/ir/hlo_computation.h"
#include "hlo/status_macros.h"

namespace spmd {
namespace {

bool IsBarrier(const hlo::HloInstruction& instr) {
  if (instr.opcode() != hlo::HloOpcode::kCustomCall || instr.operand_count() != 1) return false;
  const std::string& target = instr.attrs().custom_call_target;
  return (target == "ShardBarrierFrom" || target == "ShardBarrierTo") &&
         instr.shape() == instr.operand(0)->shape() && instr.control_predecessors().empty();
}

}  // namespace

absl::StatusOr<int64_t> RemoveShardBarriers(hlo::HloModule* module) {
  int64_t removed = 0;
  for (hlo::HloComputation* comp : module->MakeComputationPostOrder()) {
    std::vector<hlo::HloInstruction*> barriers;
    for (const auto& instr : comp->instructions()) {
      if (IsBarrier(*instr)) barriers.push_back(instr.get());
    }
    for (hlo::HloInstruction* barrier : barriers) {
      hlo::HloInstruction* operand = barrier->operand(0);
      barrier->ReplaceAllUsesWith(operand);
      if (comp->root_instruction() == barrier) comp->set_root_instruction(operand);
      RETURN_IF_ERROR(comp->RemoveInstruction(barrier));
      ++removed;
    }
  }
  return removed;
}

}  // namespace spmd

// Marks live instructions backwards from each computation's root and side-effecting
// instructions (operands and control predecessors of live ones are live), removes the rest in
// reverse order, then removes computations unreachable from the entry.
#include "hlo/transforms/dead_code_elimination.h"

#include "absl/container/flat_hash_set.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/status_macros.h"

namespace hlo {
namespace {

bool HasSideEffect(const HloInstruction& instr) {
  return HasOpcodeFlag(instr.opcode(), op_traits::kSideEffect) ||
         (instr.opcode() == HloOpcode::kCustomCall && instr.attrs().custom_call_has_side_effect);
}

absl::StatusOr<bool> RemoveDeadInstructions(HloComputation* computation) {
  absl::flat_hash_set<const HloInstruction*> live;
  std::vector<const HloInstruction*> stack;
  auto mark = [&](const HloInstruction* instr) {
    if (live.insert(instr).second) stack.push_back(instr);
  };
  mark(computation->root_instruction());
  for (const auto& instr : computation->instructions()) {
    if (HasSideEffect(*instr)) mark(instr.get());
  }
  while (!stack.empty()) {
    const HloInstruction* instr = stack.back();
    stack.pop_back();
    for (const HloInstruction* operand : instr->operands()) mark(operand);
    for (const HloInstruction* pred : instr->control_predecessors()) mark(pred);
  }
  std::vector<HloInstruction*> dead;
  for (const auto& instr : computation->instructions()) {
    if (!live.contains(instr.get())) dead.push_back(instr.get());
  }
  // Users before operands, so each removed instruction has no users left.
  for (auto it = dead.rbegin(); it != dead.rend(); ++it) {
    (*it)->DetachFromOperands();
  }
  for (HloInstruction* instr : dead) RETURN_IF_ERROR(computation->RemoveInstruction(instr));
  return !dead.empty();
}

}  // namespace

absl::StatusOr<bool> DeadCodeElimination::RunImpl(HloModule* module) {
  bool changed = false;
  for (const auto& computation : module->computations()) {
    ASSIGN_OR_RETURN(bool removed, RemoveDeadInstructions(computation.get()));
    changed |= removed;
  }
  // Computations reachable from the entry (MakeComputationPostOrder lists all; walk calls).
  absl::flat_hash_set<const HloComputation*> reachable;
  std::vector<const HloComputation*> stack = {module->entry_computation()};
  reachable.insert(module->entry_computation());
  while (!stack.empty()) {
    const HloComputation* c = stack.back();
    stack.pop_back();
    for (const auto& instr : c->instructions()) {
      for (const HloComputation* callee : instr->called_computations()) {
        if (reachable.insert(callee).second) stack.push_back(callee);
      }
    }
  }
  std::vector<HloComputation*> unreachable;
  for (const auto& c : module->computations()) {
    if (!reachable.contains(c.get())) unreachable.push_back(c.get());
  }
  // Callers before callees: removing in reverse post order keeps RemoveComputation's check happy.
  std::vector<HloComputation*> order = module->MakeComputationPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (!reachable.contains(*it)) RETURN_IF_ERROR(module->RemoveComputation(*it));
  }
  return changed || !unreachable.empty();
}

}  // namespace hlo

// Marks live instructions backwards from each computation's root and side-effecting
// instructions (operands and control predecessors of live ones are live), starting at the
// entry and following the calls of live instructions only; removes the dead instructions of the
// computations so reached, users first, and every other computation whole.
#include "hlo/transforms/dead_code_elimination.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/status_macros.h"

namespace hlo {
namespace {

// The instructions of `computation` that its root or a side effect needs.
absl::flat_hash_set<const HloInstruction*> LiveInstructions(const HloComputation& computation) {
  absl::flat_hash_set<const HloInstruction*> live;
  std::vector<const HloInstruction*> stack;
  auto mark = [&](const HloInstruction* instr) {
    if (live.insert(instr).second) stack.push_back(instr);
  };
  mark(computation.root_instruction());
  for (const auto& instr : computation.instructions()) {
    if (HasSideEffect(*instr)) mark(instr.get());
  }
  while (!stack.empty()) {
    const HloInstruction* instr = stack.back();
    stack.pop_back();
    for (const HloInstruction* operand : instr->operands()) mark(operand);
    for (const HloInstruction* pred : instr->control_predecessors()) mark(pred);
  }
  return live;
}

absl::StatusOr<bool> RemoveDeadInstructions(HloComputation* computation,
                                            const absl::flat_hash_set<const HloInstruction*>& live) {
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
  // Computations reachable from the entry through live instructions, each with its live set;
  // the others are removed whole, without marking their instructions first.
  absl::flat_hash_map<HloComputation*, absl::flat_hash_set<const HloInstruction*>> reachable;
  std::vector<HloComputation*> stack = {module->entry_computation()};
  reachable[module->entry_computation()] = LiveInstructions(*module->entry_computation());
  while (!stack.empty()) {
    HloComputation* c = stack.back();
    stack.pop_back();
    for (const auto& instr : c->instructions()) {
      if (!reachable.at(c).contains(instr.get())) continue;
      for (HloComputation* callee : instr->called_computations()) {
        if (reachable.contains(callee)) continue;
        reachable[callee] = LiveInstructions(*callee);
        stack.push_back(callee);
      }
    }
  }
  bool changed = false;
  for (const auto& [computation, live] : reachable) {
    ASSIGN_OR_RETURN(bool removed, RemoveDeadInstructions(computation, live));
    changed |= removed;
  }
  absl::flat_hash_set<const HloComputation*> dead;
  for (const auto& computation : module->computations()) {
    if (!reachable.contains(computation.get())) dead.insert(computation.get());
  }
  if (dead.empty()) return changed;
  RETURN_IF_ERROR(module->RemoveComputations(dead));
  return true;
}

}  // namespace hlo

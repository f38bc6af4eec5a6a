// A worklist over classes: each class that becomes manual visits the instructions consuming one
// of its leaves, so every instruction is claimed at most once, in O(operand leaves) in all.
#include "spmd/propagation/manual_regions.h"

#include <string>

#include "hlo/ir/hlo_computation.h"
#include "hlo/sharding/implied_sharding.h"
#include "hlo/strings.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsManual(const ClassState& state) { return state.sharding && state.sharding->IsManual(); }

// How many leading operands of `instr` make its results manual: those the manual region flows
// through (hlo::ManualFlowsToResults, shared with the partitioner: all, but none for
// SPMDShardToFullShape), except that the value classes already carry each leaf of the ops that
// join their results to their operands (tuple, get-tuple-element, while, call, barriers). A
// conditional's results join its branch roots, so any manual operand (index or branch argument)
// claims them.
int64_t ManualInputs(const HloInstruction& instr) {
  if (!hlo::ManualFlowsToResults(instr)) return 0;
  if (instr.opcode() == HloOpcode::kConditional) return instr.operand_count();
  if (instr.opcode() == HloOpcode::kParameter || JoinsResultsToOperands(instr.opcode())) return 0;
  return instr.operand_count();
}

// Makes class `cls` manual, claimed through `instr` from its operand `from` (of class
// `source`); false when it holds a user sharding or is manual already.
bool Claim(int64_t cls, const HloInstruction& instr, int64_t from, int64_t source,
           std::vector<ClassState>& states) {
  ClassState& state = states[cls];
  if (IsManual(state) || (state.sharding && !state.default_root)) return false;
  state.annotations = states[source].annotations;
  state.sharding = hlo::HloSharding::Manual();
  state.via = &instr;
  state.from = {instr.operand(from)};
  state.how = state.default_root
                  ? "a manual region claims the unannotated root"
                  : hlo::StrCat("inside a manual region: operand ", from, " is manual");
  state.default_root = false;
  return true;
}

}  // namespace

absl::flat_hash_set<const HloInstruction*> ClaimManualRegions(const hlo::HloModule& module,
                                                              const ValueClasses& classes,
                                                              std::vector<ClassState>& states) {
  // (instruction, operand) pairs by the class of one of the operand's leaves.
  std::vector<std::vector<std::pair<const HloInstruction*, int64_t>>> users(states.size());
  std::vector<int64_t> queue;
  for (int64_t c = 0; c < static_cast<int64_t>(states.size()); ++c) {
    if (IsManual(states[c])) queue.push_back(c);
  }
  for (const hlo::HloComputation* comp : module.MakeComputationPostOrder()) {
    for (const auto& instr : comp->instructions()) {
      for (int64_t i = 0; i < ManualInputs(*instr); ++i) {
        for (int64_t k = 0; k < instr->operand(i)->shape().leaf_count(); ++k) {
          const int64_t c = classes.ClassOf(instr->operand(i), k);
          if (c >= 0) users[c].push_back({instr.get(), i});
        }
      }
    }
  }
  absl::flat_hash_set<const HloInstruction*> visited;
  absl::flat_hash_set<const HloInstruction*> claimed;
  while (!queue.empty()) {
    const int64_t c = queue.back();
    queue.pop_back();
    for (const auto& [instr, operand] : users[c]) {
      if (!visited.insert(instr).second) continue;
      for (int64_t k = 0; k < instr->shape().leaf_count(); ++k) {
        const int64_t result = classes.ClassOf(instr, k);
        if (result < 0 || !Claim(result, *instr, operand, c, states)) continue;
        claimed.insert(instr);
        queue.push_back(result);
      }
    }
  }
  return claimed;
}

}  // namespace spmd

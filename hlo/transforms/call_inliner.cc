// See call_inliner.h.
#include "hlo/transforms/call_inliner.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/sharding/implied_sharding.h"
#include "hlo/status_macros.h"
#include "hlo/transforms/flatten_call_graph.h"

namespace hlo {
namespace {

// How many instructions of the module name each computation.
absl::flat_hash_map<const HloComputation*, int64_t> CallerCounts(const HloModule& module) {
  absl::flat_hash_map<const HloComputation*, int64_t> counts;
  for (const auto& c : module.computations()) {
    for (const auto& instr : c->instructions()) {
      for (const HloComputation* callee : instr->called_computations()) ++counts[callee];
    }
  }
  return counts;
}

bool HasRawAttribute(const HloInstruction& instr, std::string_view name) {
  for (const RawAttribute& a : instr.attrs().raw_attributes) {
    if (a.name == name) return true;
  }
  return false;
}

bool MarkedNotInlineable(const HloInstruction& instr) {
  for (const auto& [key, value] : instr.attrs().frontend_attributes) {
    if (key == "inlineable" && value == "false") return true;
  }
  return false;
}

// Whether `call` may be inlined (see the file comment); `ordered_after` holds the instructions
// some instruction must run after (control predecessors).
bool Inlineable(const HloInstruction& call,
                const absl::flat_hash_map<const HloComputation*, int64_t>& callers,
                const absl::flat_hash_set<const HloInstruction*>& ordered_after) {
  if (call.opcode() != HloOpcode::kCall || call.called_computations().size() != 1) return false;
  const HloComputation* callee = call.to_apply();
  const auto it = callers.find(callee);
  if (it == callers.end() || it->second != 1) return false;
  if (call.has_sharding() || !call.control_predecessors().empty() ||
      ordered_after.contains(&call) || HasRawAttribute(call, "is_composite") ||
      MarkedNotInlineable(call)) {
    return false;
  }
  if (callee->num_parameters() != call.operand_count() || callee->root_instruction() == nullptr) {
    return false;
  }
  // A shard_map body: run as written on each device's values (its partition-ids and
  // collectives mean that only inside the region), its operands or results manual.
  const auto manual = [](const HloInstruction* instr) {
    return IsManualConversion(*instr) || (instr->has_sharding() && instr->sharding().IsManual());
  };
  if (std::any_of(call.operands().begin(), call.operands().end(), manual) ||
      std::any_of(call.users().begin(), call.users().end(), manual)) {
    return false;
  }
  for (const auto& instr : callee->instructions()) {
    // A parameter's sharding annotates the callee's view of an operand: kept with the call.
    if (instr->opcode() == HloOpcode::kParameter && instr->has_sharding()) return false;
    for (const HloInstruction* pred : instr->control_predecessors()) {
      if (pred->opcode() == HloOpcode::kParameter) return false;
    }
  }
  return true;
}

// Copies `call`'s callee into the caller (same names; `ordered_after` learns their control
// predecessors) and gives the call's users the copy of its root; the caller removes the call.
// Returns the copies, in the callee's stored order.
absl::StatusOr<std::vector<HloInstruction*>> Inline(
    HloInstruction* call, absl::flat_hash_set<const HloInstruction*>& ordered_after) {
  HloComputation* caller = call->parent();
  const HloComputation& callee = *call->to_apply();
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> copies;
  for (int64_t i = 0; i < callee.num_parameters(); ++i) {
    copies[callee.parameter_instruction(i)] = call->operand(i);
  }
  std::vector<HloInstruction*> added;
  for (const HloInstruction* instr : callee.MakeInstructionPostOrder()) {
    if (instr->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> operands;
    operands.reserve(instr->operand_count());
    for (const HloInstruction* operand : instr->operands()) operands.push_back(copies.at(operand));
    std::unique_ptr<HloInstruction> copy = instr->CloneWithOperands(operands);
    HloInstruction* in_caller = caller->AddInstruction(std::move(copy));
    copies[instr] = in_caller;
    added.push_back(in_caller);
  }
  for (const auto& instr : callee.instructions()) {
    if (instr->opcode() == HloOpcode::kParameter) continue;
    for (const HloInstruction* pred : instr->control_predecessors()) {
      copies.at(instr.get())->AddControlPredecessor(copies.at(pred));
      ordered_after.insert(copies.at(pred));
    }
  }
  HloInstruction* result = copies.at(callee.root_instruction());
  call->ReplaceAllUsesWith(result);
  if (caller->root_instruction() == call) caller->set_root_instruction(result);
  std::vector<HloInstruction*> in_callee_order;
  for (const auto& instr : callee.instructions()) {
    if (instr->opcode() != HloOpcode::kParameter) in_callee_order.push_back(copies.at(instr.get()));
  }
  return in_callee_order;
}

}  // namespace

absl::StatusOr<int64_t> InlineCalls(HloModule& module) {
  HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return 0;
  const absl::flat_hash_map<const HloComputation*, int64_t> callers = CallerCounts(module);
  absl::flat_hash_set<const HloInstruction*> ordered_after;
  for (const auto& c : module.computations()) {
    for (const auto& instr : c->instructions()) {
      for (const HloInstruction* pred : instr->control_predecessors()) ordered_after.insert(pred);
    }
  }
  absl::flat_hash_set<const HloComputation*> inlined;
  absl::flat_hash_set<const HloComputation*> seen = {entry};
  std::deque<HloComputation*> queue = {entry};
  while (!queue.empty()) {
    HloComputation* computation = queue.front();
    queue.pop_front();
    // Calls first, newly inlined ones included; then the computations the rest run.
    std::vector<HloInstruction*> stored;
    for (const auto& instr : computation->instructions()) stored.push_back(instr.get());
    std::vector<HloInstruction*> pending(stored.rbegin(), stored.rend());
    absl::flat_hash_map<HloInstruction*, std::vector<HloInstruction*>> expanded;
    std::vector<HloInstruction*> kept;
    while (!pending.empty()) {
      HloInstruction* instr = pending.back();
      pending.pop_back();
      if (!Inlineable(*instr, callers, ordered_after)) {
        kept.push_back(instr);
        continue;
      }
      inlined.insert(instr->to_apply());
      ASSIGN_OR_RETURN(std::vector<HloInstruction*> added, Inline(instr, ordered_after));
      pending.insert(pending.end(), added.rbegin(), added.rend());
      expanded[instr] = std::move(added);
    }
    if (!expanded.empty()) {
      // Each inlined call's instructions where it stood (recursively, for calls it made).
      std::vector<HloInstruction*> order;
      order.reserve(computation->instructions().size());
      std::vector<HloInstruction*> stack(stored.rbegin(), stored.rend());
      while (!stack.empty()) {
        HloInstruction* next = stack.back();
        stack.pop_back();
        const auto it = expanded.find(next);
        order.push_back(next);  // An inlined call stays, unused, until removed below.
        if (it != expanded.end()) stack.insert(stack.end(), it->second.rbegin(), it->second.rend());
      }
      RETURN_IF_ERROR(computation->ReorderInstructions(order));
      for (const auto& [call, copies] : expanded) {
        RETURN_IF_ERROR(computation->RemoveInstruction(call));
      }
    }
    for (const HloInstruction* instr : kept) {
      if (!RunsCalleesInSequence(instr->opcode())) continue;
      for (HloComputation* callee : instr->called_computations()) {
        if (seen.insert(callee).second) queue.push_back(callee);
      }
    }
  }
  if (!inlined.empty()) RETURN_IF_ERROR(module.RemoveComputations(inlined));
  return static_cast<int64_t>(inlined.size());
}

}  // namespace hlo

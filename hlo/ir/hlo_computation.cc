// HloComputation and HloModule bookkeeping: ownership, ids, traversal orders.
#include "hlo/ir/hlo_computation.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/strings.h"

namespace hlo {

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instr) {
  HloInstruction* raw = instr.get();
  raw->set_parent(this);
  if (parent_ != nullptr && raw->unique_id() < 0) raw->set_unique_id(parent_->NextUniqueId());
  if (raw->opcode() == HloOpcode::kParameter) {
    int64_t n = raw->parameter_number();
    if (n >= 0 && n < (1 << 20)) {
      if (n >= num_parameters()) parameters_.resize(n + 1, nullptr);
      parameters_[n] = raw;
    }
  }
  instructions_.push_back(std::move(instr));
  return raw;
}

absl::Status HloComputation::RemoveInstruction(HloInstruction* instr) {
  if (!instr->users().empty() || instr == root_) {
    return absl::FailedPreconditionError(
        StrCat("cannot remove ", instr->name(), ": it is still used"));
  }
  auto it = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const auto& p) { return p.get() == instr; });
  if (it == instructions_.end()) {
    return absl::NotFoundError(StrCat(instr->name(), " is not in ", name_));
  }
  if (instr->opcode() == HloOpcode::kParameter) {
    return absl::FailedPreconditionError("parameters cannot be removed");
  }
  instr->DetachFromOperands();
  instructions_.erase(it);
  return absl::OkStatus();
}

absl::Status HloComputation::ReorderInstructions(const std::vector<HloInstruction*>& order) {
  if (order.size() != instructions_.size()) {
    return absl::InvalidArgumentError(StrCat("reordering ", name_, ": ", order.size(),
                                             " instructions given for ", instructions_.size()));
  }
  absl::flat_hash_map<const HloInstruction*, size_t> slot;
  for (size_t i = 0; i < instructions_.size(); ++i) slot[instructions_[i].get()] = i;
  std::vector<std::unique_ptr<HloInstruction>> reordered(instructions_.size());
  for (size_t i = 0; i < order.size(); ++i) {
    auto it = slot.find(order[i]);
    if (it == slot.end() || instructions_[it->second] == nullptr) {
      // Put back what was already moved before failing.
      for (size_t j = 0; j < i; ++j) instructions_[slot.at(order[j])] = std::move(reordered[j]);
      return absl::InvalidArgumentError(
          StrCat("reordering ", name_, ": ", order[i] == nullptr ? "null" : order[i]->name(),
                 it == slot.end() ? " is not one of its instructions" : " is given twice"));
    }
    reordered[i] = std::move(instructions_[it->second]);
  }
  instructions_ = std::move(reordered);
  return absl::OkStatus();
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  std::vector<HloInstruction*> order;
  order.reserve(instructions_.size());
  absl::flat_hash_set<const HloInstruction*> visited;
  // Iterative DFS; a node is emitted after all its operands and control predecessors.
  std::vector<std::pair<HloInstruction*, size_t>> stack;
  auto visit = [&](HloInstruction* start) {
    if (!visited.insert(start).second) return;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const size_t n_ops = node->operands().size();
      const size_t n_all = n_ops + node->control_predecessors().size();
      if (next < n_all) {
        HloInstruction* dep = next < n_ops ? node->operand(next)
                                           : node->control_predecessors()[next - n_ops];
        ++next;
        if (visited.insert(dep).second) stack.push_back({dep, 0});
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  };
  for (const auto& instr : instructions_) visit(instr.get());
  return order;
}

ProgramShape HloComputation::ComputeProgramShape() const {
  ProgramShape ps;
  for (HloInstruction* p : parameters_) {
    ps.parameters.push_back(p ? p->shape() : Shape());
    ps.parameter_names.push_back(p ? p->name() : "");
  }
  if (root_) ps.result = root_->shape();
  return ps;
}

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> computation) {
  HloComputation* raw = computation.get();
  raw->set_parent(this);
  raw->set_unique_id(NextUniqueId());
  for (const auto& instr : raw->instructions()) {
    if (instr->unique_id() < 0) instr->set_unique_id(NextUniqueId());
  }
  computations_.push_back(std::move(computation));
  IndexName(raw);
  return raw;
}

void HloModule::IndexName(HloComputation* computation) {
  by_name_[computation->name()].push_back(computation);
}

void HloModule::UnindexName(HloComputation* computation) {
  auto it = by_name_.find(computation->name());
  if (it == by_name_.end()) return;
  std::vector<HloComputation*>& named = it->second;
  named.erase(std::remove(named.begin(), named.end(), computation), named.end());
  if (named.empty()) by_name_.erase(it);
}

void HloComputation::set_name(std::string name) {
  if (parent_ != nullptr) parent_->UnindexName(this);
  name_ = std::move(name);
  if (parent_ != nullptr) parent_->IndexName(this);
}

absl::Status HloModule::RemoveComputations(const absl::flat_hash_set<const HloComputation*>& dead) {
  if (dead.contains(entry_))
    return absl::FailedPreconditionError("cannot remove the entry computation");
  for (const auto& c : computations_) {
    if (dead.contains(c.get())) continue;
    for (const auto& instr : c->instructions()) {
      for (const HloComputation* callee : instr->called_computations()) {
        if (dead.contains(callee)) {
          return absl::FailedPreconditionError(
              StrCat("computation ", callee->name(), " is still called by %", instr->name()));
        }
      }
    }
  }
  for (const auto& c : computations_) {
    if (dead.contains(c.get())) UnindexName(c.get());
  }
  computations_.erase(std::remove_if(computations_.begin(), computations_.end(),
                                     [&](const auto& c) { return dead.contains(c.get()); }),
                      computations_.end());
  return absl::OkStatus();
}

absl::Status HloModule::RemoveComputation(HloComputation* computation) {
  if (computation == entry_) {
    // The caller installs a new entry first; removing the current one is only allowed then.
    return absl::FailedPreconditionError("cannot remove the entry computation");
  }
  for (const auto& c : computations_) {
    if (c.get() == computation) continue;
    for (const auto& instr : c->instructions()) {
      for (const HloComputation* callee : instr->called_computations()) {
        if (callee == computation) {
          return absl::FailedPreconditionError(StrCat("computation ", computation->name(),
                                                      " is still called by %", instr->name()));
        }
      }
    }
  }
  auto it = std::find_if(computations_.begin(), computations_.end(),
                         [&](const auto& c) { return c.get() == computation; });
  if (it == computations_.end()) {
    return absl::NotFoundError(StrCat("computation ", computation->name(), " is not in the module"));
  }
  UnindexName(computation);
  computations_.erase(it);
  return absl::OkStatus();
}

std::vector<HloComputation*> HloModule::MakeComputationPostOrder() const {
  std::vector<HloComputation*> order;
  absl::flat_hash_set<const HloComputation*> visited;
  // Recursive on call depth only, which is small.
  std::function<void(HloComputation*)> visit = [&](HloComputation* c) {
    if (!visited.insert(c).second) return;
    for (const auto& instr : c->instructions()) {
      for (HloComputation* callee : instr->called_computations()) visit(callee);
    }
    order.push_back(c);
  };
  for (const auto& c : computations_) {
    if (c.get() != entry_) visit(c.get());
  }
  if (entry_) visit(entry_);
  return order;
}

HloComputation* HloModule::GetComputation(std::string_view name) const {
  auto it = by_name_.find(absl::string_view(name.data(), name.size()));
  return it == by_name_.end() ? nullptr : it->second.front();
}

int64_t HloModule::instruction_count() const {
  int64_t n = 0;
  for (const auto& c : computations_) n += c->instruction_count();
  return n;
}

absl::Status CheckNoElidedConstants(const HloModule& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->attrs().literal_elided) {
        return absl::InvalidArgumentError(
            StrCat("constant %", instr->name(),
                   " was elided in the input ({...}): its values are unknown (dump it again with "
                   "--xla_dump_large_constants=true)"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace hlo

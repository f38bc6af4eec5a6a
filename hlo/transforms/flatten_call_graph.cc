// See flatten_call_graph.h.
#include "hlo/transforms/flatten_call_graph.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

// Names in use in the module, computations' and instructions' apart.
class Names {
 public:
  explicit Names(const HloModule& module) {
    for (const auto& c : module.computations()) {
      computations_.insert(c->name());
      for (const auto& instr : c->instructions()) instructions_.insert(instr->name());
    }
  }
  std::string NewComputation(const std::string& base) {
    return Take(base, computations_, next_computation_);
  }
  std::string NewInstruction(const std::string& base) {
    return Take(base, instructions_, next_instruction_);
  }

 private:
  // `base`.clone, else `base`.clone.K for the first K free; `next` remembers where each base's
  // search stopped, so copying one computation a thousand times stays linear.
  static std::string Take(const std::string& base, absl::flat_hash_set<std::string>& taken,
                          absl::flat_hash_map<std::string, int64_t>& next) {
    int64_t& k = next[base];
    std::string name;
    do {
      name = k == 0 ? StrCat(base, ".clone") : StrCat(base, ".clone.", k);
      ++k;
    } while (taken.contains(name));
    taken.insert(name);
    return name;
  }

  absl::flat_hash_set<std::string> computations_;
  absl::flat_hash_set<std::string> instructions_;
  absl::flat_hash_map<std::string, int64_t> next_computation_;
  absl::flat_hash_map<std::string, int64_t> next_instruction_;
};

// A copy of `original` added to `module`: the same instructions (attributes, shardings, called
// computations, control predecessors) in the same stored order.
HloComputation* Copy(const HloComputation& original, HloModule& module, Names& taken,
                     CloneNames& names) {
  const std::string& base = names.OriginalComputation(original.name());
  HloComputation* out =
      module.AddComputation(std::make_unique<HloComputation>(taken.NewComputation(base)));
  names.computations[out->name()] = base;
  out->set_is_fusion_computation(original.is_fusion_computation());
  out->set_execution_thread(original.execution_thread());
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> copies;
  for (const HloInstruction* instr : original.MakeInstructionPostOrder()) {
    std::vector<HloInstruction*> operands;
    operands.reserve(instr->operand_count());
    for (const HloInstruction* operand : instr->operands()) operands.push_back(copies[operand]);
    std::unique_ptr<HloInstruction> copy = instr->CloneWithOperands(operands);
    const std::string& instr_base = names.OriginalInstruction(instr->name());
    copy->set_name(taken.NewInstruction(instr_base));
    names.instructions[copy->name()] = instr_base;
    copies[instr] = out->AddInstruction(std::move(copy));
  }
  std::vector<HloInstruction*> order;
  order.reserve(original.instructions().size());
  for (const auto& instr : original.instructions()) {
    HloInstruction* copy = copies[instr.get()];
    for (const HloInstruction* pred : instr->control_predecessors()) {
      copy->AddControlPredecessor(copies[pred]);
    }
    order.push_back(copy);
  }
  // The same instructions in another order: cannot fail.
  (void)out->ReorderInstructions(order);
  out->set_root_instruction(copies[original.root_instruction()]);
  return out;
}

}  // namespace

bool RunsCalleesInSequence(HloOpcode opcode) {
  static constexpr HloOpcode kSequentialCallers[] = {HloOpcode::kCall, HloOpcode::kWhile,
                                                     HloOpcode::kConditional, HloOpcode::kScan};
  return std::find(std::begin(kSequentialCallers), std::end(kSequentialCallers), opcode) !=
         std::end(kSequentialCallers);
}

const std::string& CloneNames::OriginalComputation(const std::string& name) const {
  const auto it = computations.find(name);
  return it == computations.end() ? name : it->second;
}

const std::string& CloneNames::OriginalInstruction(const std::string& name) const {
  const auto it = instructions.find(name);
  return it == instructions.end() ? name : it->second;
}

CloneNames FlattenCallGraph(HloModule& module) {
  CloneNames names;
  HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return names;
  std::optional<Names> taken;  // Indexed at the first copy: most modules need none.
  absl::flat_hash_set<const HloComputation*> claimed = {entry};
  std::deque<HloComputation*> queue = {entry};
  while (!queue.empty()) {
    HloComputation* computation = queue.front();
    queue.pop_front();
    for (const auto& instr : computation->instructions()) {
      if (!RunsCalleesInSequence(instr->opcode())) continue;
      for (size_t c = 0; c < instr->called_computations().size(); ++c) {
        HloComputation* callee = instr->called_computations()[c];
        if (!claimed.insert(callee).second) {
          if (!taken.has_value()) taken.emplace(module);
          callee = Copy(*callee, module, *taken, names);
          instr->set_called_computation(c, callee);
          claimed.insert(callee);
        }
        queue.push_back(callee);
      }
    }
  }
  return names;
}

}  // namespace hlo

// Each computation is walked in instruction order (operands before users); an instruction's key
// is its printed form without its name, metadata and channel id value (operands print as names,
// and every earlier merge has already pointed them at the kept instruction, so chains of
// duplicates collapse in one walk). The first instruction with a key is kept; a later one with
// the same key hands its users to it.
#include "hlo/transforms/common_subexpression_elimination.h"

#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/hlo_printer.h"

namespace hlo {
namespace {

// Opcodes that start, continue or finish an asynchronous operation: merging one of a pair could
// leave the other with two partners.
bool IsAsyncPart(HloOpcode opcode) {
  return IsAsyncStartOpcode(opcode) || IsAsyncDoneOpcode(opcode) ||
         GetHloOpcodeFamily(opcode) == HloOpcodeFamily::kAsync;
}

// A fill (a broadcast of a scalar) that an op updates in place (op_traits::kUpdatesInPlace:
// dynamic-update-slice, scatter, sort) is that op's own buffer: shared with another user, the
// writer could not update it in place and would need a copy, which costs more than the fill.
bool IsUpdatedFill(const HloInstruction& instr) {
  if (instr.opcode() != HloOpcode::kBroadcast || instr.operand(0)->shape().rank() != 0) {
    return false;
  }
  for (const HloInstruction* user : instr.users()) {
    if (HasOpcodeFlag(user->opcode(), op_traits::kUpdatesInPlace) && user->operand(0) == &instr) {
      return true;
    }
  }
  return false;
}

bool MayMerge(const HloInstruction& instr) {
  const HloOpcode op = instr.opcode();
  if (IsUpdatedFill(instr)) return false;
  if (HasSideEffect(instr) || op == HloOpcode::kParameter || op == HloOpcode::kCustomCall ||
      HasOpcodeFlag(op, op_traits::kRunsCallees) || IsAsyncPart(op)) {
    return false;
  }
  if (!instr.control_predecessors().empty()) return false;
  if (op == HloOpcode::kConstant) {
    return IsMergeableConstant(instr);
  }
  return true;
}

// Where the value of the top-level field `, <attribute>=` of the printed instruction `text`
// starts and ends (outside quotes, brackets, braces and the operand list: the same words inside
// a backend_config string or a frontend attribute are not the field); npos when absent.
std::pair<size_t, size_t> FindAttributeValue(const std::string& text, std::string_view attribute) {
  const std::string field = std::string(", ") + std::string(attribute) + "=";
  int depth = 0;
  bool quoted = false;
  size_t value = std::string::npos;
  for (size_t at = 0; at < text.size(); ++at) {
    const char c = text[at];
    if (quoted) {
      if (c == '\\') {
        ++at;
      } else if (c == '"') {
        quoted = false;
      }
      continue;
    }
    if (depth == 0 && value == std::string::npos && text.compare(at, field.size(), field) == 0) {
      value = at + field.size();
      at = value - 1;
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == '{' || c == '(' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ')' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 0 && value != std::string::npos) {
      return {value, at};
    }
  }
  return {value, text.size()};
}

// Replaces the value of the top-level field `, <attribute>=` of `text` by `replacement`.
void ReplaceAttributeValue(std::string& text, std::string_view attribute,
                           std::string_view replacement) {
  const auto [start, end] = FindAttributeValue(text, attribute);
  if (start != std::string::npos) text.replace(start, end - start, replacement);
}

// A literal's bits, leaf by leaf: the printed form does not tell NaN payloads apart.
void AppendLiteralBits(const Literal& literal, std::string* key) {
  key->append(literal.data().begin(), literal.data().end());
  for (const Literal& element : literal.tuple_elements()) AppendLiteralBits(element, key);
}

// What `instr` computes: its printed form without name and metadata, and with any channel id's
// value blanked (whether there is one matters: an all-reduce without one reduces across
// replicas, with one across partitions); a constant's bits follow it.
std::string KeyOf(const HloInstruction& instr) {
  std::string text;
  PrintInstruction(instr, &text);
  const size_t eq = text.find(" = ");
  if (eq != std::string::npos) text.erase(0, eq + 3);
  ReplaceAttributeValue(text, "metadata", "");
  ReplaceAttributeValue(text, "channel_id", "_");
  if (instr.opcode() == HloOpcode::kConstant && instr.attrs().literal.has_value()) {
    text.push_back('\0');
    AppendLiteralBits(*instr.attrs().literal, &text);
  }
  return text;
}

// The computations the entry runs or calls, transitively (what dead-code elimination keeps): the
// partitioner leaves the original computations in the module for it to remove.
std::vector<HloComputation*> ReachableComputations(const HloModule& module) {
  std::vector<HloComputation*> order;
  if (module.entry_computation() == nullptr) return order;
  absl::flat_hash_set<const HloComputation*> seen = {module.entry_computation()};
  order.push_back(module.entry_computation());
  for (size_t i = 0; i < order.size(); ++i) {
    for (const auto& instr : order[i]->instructions()) {
      for (HloComputation* callee : instr->called_computations()) {
        if (seen.insert(callee).second) order.push_back(callee);
      }
    }
  }
  return order;
}

}  // namespace

absl::StatusOr<bool> CommonSubexpressionElimination::RunImpl(HloModule* module) {
  merged_.clear();
  for (HloComputation* computation : ReachableComputations(*module)) {
    absl::flat_hash_map<std::string, HloInstruction*> first;
    for (const auto& owned : computation->instructions()) {
      HloInstruction* instr = owned.get();
      if (!MayMerge(*instr)) continue;
      auto [it, inserted] = first.try_emplace(KeyOf(*instr), instr);
      if (inserted || instr == computation->root_instruction() ||
          it->second->shape() != instr->shape()) {
        continue;
      }
      instr->ReplaceAllUsesWith(it->second);
      merged_.push_back({computation->name(), instr->name(), it->second->name()});
    }
  }
  return !merged_.empty();
}

}  // namespace hlo

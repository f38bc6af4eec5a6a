// Each computation is walked in instruction order (operands before users); an instruction's key
// is its printed form without its name, metadata and channel id value (operands print as names,
// and every earlier merge has already pointed them at the kept instruction, so chains of
// duplicates collapse in one walk). The first instruction with a key is kept; a later one with
// the same key hands its users to it.
#include "hlo/transforms/common_subexpression_elimination.h"

#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/hlo_printer.h"

namespace hlo {
namespace {

// Opcodes that start, continue or finish an asynchronous operation: merging one of a pair could
// leave the other with two partners.
bool IsAsyncPart(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
      return true;
    default:
      return GetHloOpcodeFamily(opcode) == HloOpcodeFamily::kAsync;
  }
}

bool MayMerge(const HloInstruction& instr) {
  const HloOpcode op = instr.opcode();
  if (HasSideEffect(instr) || op == HloOpcode::kParameter || op == HloOpcode::kCustomCall ||
      HasOpcodeFlag(op, op_traits::kRunsCallees) || IsAsyncPart(op)) {
    return false;
  }
  if (!instr.control_predecessors().empty()) return false;
  if (op == HloOpcode::kConstant) {
    return !instr.attrs().literal_elided && instr.shape().byte_size() <= kMaxMergedConstantBytes;
  }
  return true;
}

// Replaces the value of the first `, <attribute>=` field of `text` by `value`; the field's value
// ends at the next top-level `, ` (braces and quoted strings skipped).
void ReplaceAttributeValue(std::string& text, std::string_view attribute, std::string_view value) {
  const std::string field = std::string(", ") + std::string(attribute) + "=";
  const size_t start = text.find(field);
  if (start == std::string::npos) return;
  size_t at = start + field.size();
  int depth = 0;
  bool quoted = false;
  for (; at < text.size(); ++at) {
    const char c = text[at];
    if (quoted) {
      if (c == '\\') {
        ++at;
      } else if (c == '"') {
        quoted = false;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == '{' || c == '(' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ')' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      break;
    }
  }
  const size_t value_start = start + field.size();
  text.replace(value_start, at - value_start, value);
}

// What `instr` computes: its printed form without name and metadata, and with any channel id's
// value blanked (whether there is one matters: an all-reduce without one reduces across
// replicas, with one across partitions).
std::string KeyOf(const HloInstruction& instr) {
  std::string text;
  PrintInstruction(instr, &text);
  const size_t eq = text.find(" = ");
  if (eq != std::string::npos) text.erase(0, eq + 3);
  ReplaceAttributeValue(text, "metadata", "");
  ReplaceAttributeValue(text, "channel_id", "_");
  return text;
}

}  // namespace

absl::StatusOr<bool> CommonSubexpressionElimination::RunImpl(HloModule* module) {
  merged_.clear();
  for (const auto& computation : module->computations()) {
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

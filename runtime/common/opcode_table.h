// Small opcode tables for the executors: which opcodes belong to a set, and what an opcode maps
// to, written as data instead of `switch` statements (docs/style.md: a table entry rather than
// a new switch).
#ifndef RUNTIME_COMMON_OPCODE_TABLE_H_
#define RUNTIME_COMMON_OPCODE_TABLE_H_

#include <initializer_list>
#include <utility>

#include "absl/types/span.h"
#include "hlo/ir/hlo_opcode.h"

namespace runtime {

// Whether `opcode` is one of `set`.
inline bool IsOneOf(hlo::HloOpcode opcode, std::initializer_list<hlo::HloOpcode> set) {
  for (hlo::HloOpcode member : set) {
    if (member == opcode) return true;
  }
  return false;
}

// The value `table` gives `opcode`, or null when it has no entry.
template <typename T>
const T* FindInTable(absl::Span<const std::pair<hlo::HloOpcode, T>> table, hlo::HloOpcode opcode) {
  for (const auto& entry : table) {
    if (entry.first == opcode) return &entry.second;
  }
  return nullptr;
}

}  // namespace runtime

#endif  // RUNTIME_COMMON_OPCODE_TABLE_H_

// Peak memory by a linear scan: every instruction owns the buffer it allocates
// (AllocatedBytes) and aliases the buffers of its operands when it only forwards them
// (get-tuple-element, tuple, bitcast, async -done, ...). Each buffer dies after the last
// instruction that uses a value aliasing it. A first pass finds the last uses, a second the
// running sum and its maximum, a third the set of buffers live at the maximum.
#include "hlo/analysis/peak_memory.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace hlo {
namespace {

bool OnlyAliases(HloOpcode op) {
  switch (op) {
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kTuple:
    case HloOpcode::kBitcast:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kCopyDone:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAddDependency:
      return true;
    default:
      return false;
  }
}

bool IsAsyncStart(HloOpcode op) {
  return op == HloOpcode::kAllGatherStart || op == HloOpcode::kCollectivePermuteStart ||
         op == HloOpcode::kAsyncStart || op == HloOpcode::kCopyStart;
}

using Index = absl::flat_hash_map<const HloInstruction*, size_t>;

Index Positions(const HloComputation& comp) {
  Index position;
  const auto& instrs = comp.instructions();
  for (size_t i = 0; i < instrs.size(); ++i) position[instrs[i].get()] = i;
  return position;
}

std::vector<std::vector<size_t>> BufferSets(const HloComputation& comp, const Index& position) {
  const auto& instrs = comp.instructions();
  std::vector<std::vector<size_t>> sets(instrs.size());
  for (size_t i = 0; i < instrs.size(); ++i) {
    const HloInstruction& instr = *instrs[i];
    if (AllocatedBytes(instr) > 0) sets[i].push_back(i);
    if (!OnlyAliases(instr.opcode()) && !IsAsyncStart(instr.opcode())) continue;
    for (const HloInstruction* op : instr.operands()) {
      auto it = position.find(op);
      if (it == position.end()) continue;
      sets[i].insert(sets[i].end(), sets[it->second].begin(), sets[it->second].end());
    }
    std::sort(sets[i].begin(), sets[i].end());
    sets[i].erase(std::unique(sets[i].begin(), sets[i].end()), sets[i].end());
  }
  return sets;
}

// The position after which each buffer dies (instrs.size() for buffers live to the end).
std::vector<size_t> DeathPositions(const HloComputation& comp, const Index& position,
                                   const std::vector<std::vector<size_t>>& sets) {
  const auto& instrs = comp.instructions();
  std::vector<size_t> death(instrs.size());
  for (size_t i = 0; i < instrs.size(); ++i) death[i] = i;
  for (size_t i = 0; i < instrs.size(); ++i) {
    for (const HloInstruction* op : instrs[i]->operands()) {
      auto it = position.find(op);
      if (it == position.end()) continue;
      for (size_t buffer : sets[it->second]) death[buffer] = std::max(death[buffer], i);
    }
  }
  for (size_t i = 0; i < instrs.size(); ++i) {
    if (instrs[i]->opcode() == HloOpcode::kParameter) death[i] = instrs.size();
  }
  if (auto it = position.find(comp.root_instruction()); it != position.end()) {
    for (size_t buffer : sets[it->second]) death[buffer] = instrs.size();
  }
  return death;
}

}  // namespace

int64_t AllocatedBytes(const HloInstruction& instr) {
  if (OnlyAliases(instr.opcode())) return 0;
  const Shape& shape = instr.shape();
  if (IsAsyncStart(instr.opcode()) && shape.IsTuple() && shape.tuple_shapes_size() > 0) {
    return shape.byte_size() - shape.tuple_shapes(0).byte_size();
  }
  return shape.byte_size();
}

std::vector<std::vector<size_t>> AliasedBuffers(const HloComputation& comp) {
  return BufferSets(comp, Positions(comp));
}

PeakMemory ComputePeakMemory(const HloComputation& comp) {
  const auto& instrs = comp.instructions();
  const Index position = Positions(comp);
  const std::vector<std::vector<size_t>> sets = BufferSets(comp, position);
  const std::vector<size_t> death = DeathPositions(comp, position, sets);
  std::vector<std::vector<size_t>> dies_after(instrs.size() + 1);
  for (size_t i = 0; i < instrs.size(); ++i) dies_after[death[i]].push_back(i);
  auto is_parameter = [&](size_t i) { return instrs[i]->opcode() == HloOpcode::kParameter; };

  PeakMemory peak;
  size_t peak_index = 0;
  int64_t live = 0;  // The arguments are there from the start.
  for (size_t i = 0; i < instrs.size(); ++i) {
    if (is_parameter(i)) live += AllocatedBytes(*instrs[i]);
  }
  for (size_t i = 0; i < instrs.size(); ++i) {
    if (!is_parameter(i)) live += AllocatedBytes(*instrs[i]);
    peak.live_bytes.push_back(live);
    if (live > peak.bytes) {
      peak.bytes = live;
      peak.at = instrs[i].get();
      peak_index = i;
    }
    for (size_t dead : dies_after[i]) live -= AllocatedBytes(*instrs[dead]);
  }
  if (peak.at == nullptr) return peak;
  for (size_t i = 0; i < instrs.size(); ++i) {
    if ((i <= peak_index || is_parameter(i)) && death[i] >= peak_index &&
        AllocatedBytes(*instrs[i]) > 0)
      peak.live.push_back(instrs[i].get());
  }
  std::stable_sort(peak.live.begin(), peak.live.end(),
                   [](const HloInstruction* a, const HloInstruction* b) {
                     return AllocatedBytes(*a) > AllocatedBytes(*b);
                   });
  return peak;
}

}  // namespace hlo

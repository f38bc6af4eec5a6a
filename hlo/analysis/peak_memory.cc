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

// The opcode table says which ops allocate nothing and which async starts hold their operands.
// Also a copy of a tuple: XLA copies only its top-level table; the elements stay its operand's.
bool OnlyAliases(const HloInstruction& instr) {
  return HasOpcodeFlag(instr.opcode(), op_traits::kAliasesOperands) ||
         (instr.opcode() == HloOpcode::kCopy && instr.shape().IsTuple());
}
bool IsAsyncStart(HloOpcode op) { return HasOpcodeFlag(op, op_traits::kStartHoldsOperands); }

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
    if (!OnlyAliases(instr) && !IsAsyncStart(instr.opcode())) continue;
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

// Buffers and allocations once in-place instructions write into operand buffers that they
// read last (XLA's buffer assignment does the same): the instruction allocates only what
// those buffers lack, and its value aliases them. Argument and constant buffers are never
// written.
struct Placement {
  std::vector<std::vector<size_t>> sets;
  std::vector<int64_t> allocated;
};

Placement PlaceInPlace(const HloComputation& comp, const Index& position) {
  const auto& instrs = comp.instructions();
  const std::vector<size_t> last_reader = LastReaders(comp);
  Placement p{std::vector<std::vector<size_t>>(instrs.size()),
              std::vector<int64_t>(instrs.size(), 0)};
  std::vector<size_t> buffer_last(instrs.size(), 0);  // The last reader of any alias so far.
  auto set_of = [&](const HloInstruction* op) -> const std::vector<size_t>* {
    auto it = position.find(op);
    return it == position.end() ? nullptr : &p.sets[it->second];
  };
  for (size_t i = 0; i < instrs.size(); ++i) {
    const HloInstruction& instr = *instrs[i];
    const std::vector<int64_t> in_place = InPlaceOperands(instr);
    std::vector<size_t> blocked;  // Buffers the instruction also reads by another operand.
    for (int64_t k = 0; k < instr.operand_count(); ++k) {
      if (std::find(in_place.begin(), in_place.end(), k) != in_place.end()) continue;
      if (const auto* set = set_of(instr.operand(k))) {
        blocked.insert(blocked.end(), set->begin(), set->end());
      }
    }
    std::vector<size_t> reused;
    int64_t reused_bytes = 0;
    if (instr.opcode() == HloOpcode::kWhile && instr.operand(0)->opcode() == HloOpcode::kTuple) {
      // Elements the loop never writes stay where the initial tuple has them.
      const HloInstruction& init = *instr.operand(0);
      for (int64_t k = 0; k < init.operand_count(); ++k) {
        const auto* set = set_of(init.operand(k));
        if (set == nullptr || !WhileBodyForwards(instr, k)) continue;
        reused.insert(reused.end(), set->begin(), set->end());
        reused_bytes += instr.shape().tuple_shapes(k).byte_size();
      }
    }
    const int64_t wanted = AllocatedBytes(instr);
    for (int64_t k : in_place) {
      const auto* set = set_of(instr.operand(k));
      if (set == nullptr || reused_bytes >= wanted) continue;
      for (size_t b : *set) {
        const HloOpcode def = instrs[b]->opcode();
        if (buffer_last[b] != i || def == HloOpcode::kParameter || def == HloOpcode::kConstant ||
            std::count(blocked.begin(), blocked.end(), b) > 0 ||
            std::count(reused.begin(), reused.end(), b) > 0)
          continue;
        reused.push_back(b);
        reused_bytes += p.allocated[b];
      }
    }
    p.allocated[i] = std::max<int64_t>(0, wanted - reused_bytes);
    std::vector<size_t>& set = p.sets[i];
    if (p.allocated[i] > 0) set.push_back(i);
    set.insert(set.end(), reused.begin(), reused.end());
    if (OnlyAliases(instr) || IsAsyncStart(instr.opcode())) {
      for (const HloInstruction* op : instr.operands()) {
        if (const auto* s = set_of(op)) set.insert(set.end(), s->begin(), s->end());
      }
    }
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    for (size_t b : set) buffer_last[b] = std::max(buffer_last[b], last_reader[i]);
  }
  return p;
}

}  // namespace

std::vector<size_t> LastReaders(const HloComputation& comp) {
  const auto& instrs = comp.instructions();
  absl::flat_hash_map<const HloInstruction*, size_t> position;
  std::vector<size_t> last(instrs.size());
  for (size_t i = 0; i < instrs.size(); ++i) {
    position[instrs[i].get()] = i;
    last[i] = i;
    for (const HloInstruction* op : instrs[i]->operands()) {
      if (auto it = position.find(op); it != position.end()) last[it->second] = i;
    }
  }
  if (auto it = position.find(comp.root_instruction()); it != position.end()) {
    last[it->second] = instrs.size();
  }
  return last;
}

bool WhileBodyForwards(const HloInstruction& while_instr, int64_t element) {
  if (while_instr.opcode() != HloOpcode::kWhile || while_instr.while_body() == nullptr)
    return false;
  const HloInstruction* root = while_instr.while_body()->root_instruction();
  if (root == nullptr || root->opcode() != HloOpcode::kTuple || element >= root->operand_count())
    return false;
  const HloInstruction* gte = root->operand(element);
  return gte->opcode() == HloOpcode::kGetTupleElement && gte->tuple_index() == element &&
         gte->operand(0)->opcode() == HloOpcode::kParameter;
}

std::vector<int64_t> InPlaceOperands(const HloInstruction& instr) {
  if (HasOpcodeFlag(instr.opcode(), op_traits::kUpdatesInPlace)) {
    // The updated values lead the operands: one, a scatter's inputs (then indices, updates), or
    // all of a sort's.
    int64_t updated = 1;
    if (instr.opcode() == HloOpcode::kScatter) updated = (instr.operand_count() - 1) / 2;
    if (instr.opcode() == HloOpcode::kSort) updated = instr.operand_count();
    std::vector<int64_t> inputs(updated);
    for (int64_t k = 0; k < updated; ++k) inputs[k] = k;
    return inputs;
  }
  std::vector<int64_t> operands;  // Elementwise: each result element overwrites its own inputs.
  if (!IsElementwiseOpcode(instr.opcode()) || !instr.shape().IsArray()) return operands;
  for (int64_t k = 0; k < instr.operand_count(); ++k) {
    const Shape& s = instr.operand(k)->shape();
    if (s.IsArray() && s.dimensions() == instr.shape().dimensions() &&
        ByteWidth(s.element_type()) == ByteWidth(instr.shape().element_type()))
      operands.push_back(k);
  }
  return operands;
}

int64_t AllocatedBytes(const HloInstruction& instr) {
  if (OnlyAliases(instr)) return 0;
  const Shape& shape = instr.shape();
  if (IsAsyncStart(instr.opcode()) && shape.IsTuple() && shape.tuple_shapes_size() > 0) {
    return shape.byte_size() - shape.tuple_shapes(0).byte_size();
  }
  return shape.byte_size();
}

std::vector<std::vector<size_t>> AliasedBuffers(const HloComputation& comp) {
  return BufferSets(comp, Positions(comp));
}

namespace {

using TransientMemo = absl::flat_hash_map<const HloComputation*, int64_t>;

PeakMemory PeakOf(const HloComputation& comp, TransientMemo& memo);

// The bytes a computation that `instr` runs whole once (a call, a conditional's branches) adds
// while it runs: its own peak less its parameters, which are the caller's operands. The largest
// over `instr`'s callees. Not a loop's body: its state is updated in place, which this model
// of separate parameter buffers cannot say (the loop is its result's buffers, as before).
int64_t CalleeTransient(const HloInstruction& instr, TransientMemo& memo) {
  if (instr.opcode() != HloOpcode::kCall && instr.opcode() != HloOpcode::kConditional) return 0;
  int64_t most = 0;
  for (const HloComputation* callee : instr.called_computations()) {
    auto it = memo.find(callee);
    if (it == memo.end()) {
      memo[callee] = 0;  // A computation that reaches itself adds nothing the second time.
      int64_t bytes = PeakOf(*callee, memo).bytes;
      for (const HloInstruction* param : callee->parameter_instructions()) {
        bytes -= AllocatedBytes(*param);
      }
      it = memo.insert_or_assign(callee, std::max<int64_t>(bytes, 0)).first;
    }
    most = std::max(most, it->second);
  }
  return most;
}

PeakMemory PeakOf(const HloComputation& comp, TransientMemo& memo) {
  const auto& instrs = comp.instructions();
  const Index position = Positions(comp);
  const Placement placement = PlaceInPlace(comp, position);
  const std::vector<int64_t>& allocated = placement.allocated;
  const std::vector<size_t> death = DeathPositions(comp, position, placement.sets);
  std::vector<std::vector<size_t>> dies_after(instrs.size() + 1);
  for (size_t i = 0; i < instrs.size(); ++i) dies_after[death[i]].push_back(i);
  auto is_parameter = [&](size_t i) { return instrs[i]->opcode() == HloOpcode::kParameter; };

  PeakMemory peak;
  size_t peak_index = 0;
  int64_t live = 0;  // The arguments are there from the start.
  for (size_t i = 0; i < instrs.size(); ++i) {
    if (is_parameter(i)) live += allocated[i];
  }
  for (size_t i = 0; i < instrs.size(); ++i) {
    // While it runs, an instruction that runs callees holds their temporaries besides what is
    // live; its result is there when they are done.
    const int64_t running = live + CalleeTransient(*instrs[i], memo);
    if (!is_parameter(i)) live += allocated[i];
    const int64_t here = std::max(live, running);
    peak.live_bytes.push_back(here);
    if (here > peak.bytes) {
      peak.bytes = here;
      peak.at = instrs[i].get();
      peak_index = i;
    }
    for (size_t dead : dies_after[i]) live -= allocated[dead];
  }
  if (peak.at == nullptr) return peak;
  for (size_t i = 0; i < instrs.size(); ++i) {
    if ((i <= peak_index || is_parameter(i)) && death[i] >= peak_index && allocated[i] > 0)
      peak.live.push_back(instrs[i].get());
  }
  absl::flat_hash_map<const HloInstruction*, int64_t> bytes;
  for (size_t i = 0; i < instrs.size(); ++i) bytes[instrs[i].get()] = allocated[i];
  std::stable_sort(
      peak.live.begin(), peak.live.end(),
      [&](const HloInstruction* a, const HloInstruction* b) { return bytes.at(a) > bytes.at(b); });
  for (const HloInstruction* instr : peak.live) peak.live_allocated.push_back(bytes.at(instr));
  return peak;
}

}  // namespace

PeakMemory ComputePeakMemory(const HloComputation& comp) {
  TransientMemo memo;
  return PeakOf(comp, memo);
}

}  // namespace hlo

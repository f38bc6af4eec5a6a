// Buffer planning: leaves by aliasing, live ranges over instruction order, then greedy
// placement (largest first, lowest free aligned offset) -- the classic interval packing.
#include "runtime/cuda/buffer_plan.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "hlo/analysis/peak_memory.h"
#include "hlo/strings.h"
#include "runtime/common/device_context.h"
#include "runtime/common/opcode_table.h"

namespace runtime {
namespace cuda {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

constexpr int64_t kAlignment = 256;

int64_t Align(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// The leaves of an aliasing instruction, from its operands' leaves.
std::vector<int64_t> AliasedLeaves(const HloInstruction& instr,
                                   const std::vector<std::vector<int64_t>>& operand_leaves) {
  if (instr.opcode() == HloOpcode::kTuple) {
    std::vector<int64_t> out;
    for (const auto& l : operand_leaves) out.insert(out.end(), l.begin(), l.end());
    return out;
  }
  if (instr.opcode() == HloOpcode::kGetTupleElement) {
    const hlo::Shape& tuple = instr.operand(0)->shape();
    int64_t start = 0;
    for (int64_t k = 0; k < instr.tuple_index(); ++k) start += tuple.tuple_shapes(k).leaf_count();
    const int64_t count = instr.shape().leaf_count();
    return std::vector<int64_t>(operand_leaves[0].begin() + start,
                                operand_leaves[0].begin() + start + count);
  }
  return operand_leaves[0];
}

// Places the arena buffers of `plan` and sets its arena size.
void Place(BufferPlan& plan) {
  std::vector<int64_t> order;
  for (int64_t b = 0; b < static_cast<int64_t>(plan.buffers.size()); ++b) {
    if (plan.buffers[b].kind == BufferKind::kArena && plan.buffers[b].bytes > 0) order.push_back(b);
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return plan.buffers[x].bytes > plan.buffers[y].bytes;
  });
  std::vector<int64_t> placed;
  for (int64_t b : order) {
    PlannedBuffer& buf = plan.buffers[b];
    std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of overlapping buffers.
    for (int64_t p : placed) {
      const PlannedBuffer& o = plan.buffers[p];
      if (o.first <= buf.last && buf.first <= o.last) busy.push_back({o.offset, o.offset + Align(o.bytes)});
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [start, end] : busy) {
      if (offset + Align(buf.bytes) <= start) break;
      offset = std::max(offset, end);
    }
    buf.offset = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + Align(buf.bytes));
    plan.unshared_bytes += Align(buf.bytes);
    placed.push_back(b);
  }
}

// For each leaf of instruction `i`, the arena buffer of an in-place operand
// (hlo::InPlaceOperands: dynamic-update-slice, scatter, while, sort, elementwise) that it may write
// into, or -1:
// the operand's leaf at the same position, when nothing after `i` reads that buffer under any
// name, no other operand of `i` reads it, and it has the leaf's size; and a while's state leaf
// that its body returns unchanged (hlo::WhileBodyForwards), wherever the initial leaf lives.
std::vector<int64_t> InPlaceLeaves(const HloInstruction& instr, int64_t i, const BufferPlan& plan,
                                   const std::vector<std::vector<int64_t>>& operand_leaves) {
  const std::vector<hlo::Shape> shapes = instr.shape().leaf_shapes();
  std::vector<int64_t> reuse(shapes.size(), -1);
  const std::vector<int64_t> in_place = hlo::InPlaceOperands(instr);
  if (in_place.empty()) return reuse;
  std::vector<int64_t> candidates;  // One per output leaf, in order.
  for (int64_t k : in_place) {
    candidates.insert(candidates.end(), operand_leaves[k].begin(), operand_leaves[k].end());
  }
  std::vector<int64_t> read_elsewhere;
  for (int64_t k = 0; k < static_cast<int64_t>(operand_leaves.size()); ++k) {
    if (std::find(in_place.begin(), in_place.end(), k) != in_place.end()) continue;
    read_elsewhere.insert(read_elsewhere.end(), operand_leaves[k].begin(), operand_leaves[k].end());
  }
  if (hlo::IsElementwiseOpcode(instr.opcode())) {
    // Any one operand that qualifies: each thread reads its index, then writes it.
    for (int64_t b : candidates) {
      const PlannedBuffer& buf = plan.buffers[b];
      if (buf.kind == BufferKind::kArena && buf.last == i && buf.bytes == shapes[0].byte_size() &&
          shapes[0].byte_size() > 0 &&
          std::count(read_elsewhere.begin(), read_elsewhere.end(), b) == 0) {
        reuse[0] = b;
        break;
      }
    }
    return reuse;
  }
  if (candidates.size() != shapes.size()) return reuse;
  const bool flat_while = instr.opcode() == HloOpcode::kWhile &&
                          instr.shape().tuple_shapes_size() == static_cast<int64_t>(shapes.size());
  for (size_t leaf = 0; leaf < shapes.size(); ++leaf) {
    const int64_t b = candidates[leaf];
    const PlannedBuffer& buf = plan.buffers[b];
    if (flat_while && hlo::WhileBodyForwards(instr, static_cast<int64_t>(leaf))) {
      reuse[leaf] = b;  // Never written by the loop: read where it is, any kind of buffer.
      continue;
    }
    const auto count = [b](const std::vector<int64_t>& v) {
      return std::count(v.begin(), v.end(), b);
    };
    if (buf.kind == BufferKind::kArena && buf.last == i && shapes[leaf].IsArray() &&
        buf.bytes == shapes[leaf].byte_size() && count(read_elsewhere) == 0 &&
        count(candidates) == 1)
      reuse[leaf] = b;
  }
  return reuse;
}

// Gives instruction `i` its leaves: the buffers `reuse` names, new ones for the rest.
void DefineLeaves(const HloInstruction& instr, int64_t i, const std::vector<int64_t>& reuse,
                  BufferPlan& plan) {
  const std::vector<hlo::Shape> shapes = instr.shape().leaf_shapes();
  const BufferKind kind = instr.opcode() == HloOpcode::kParameter  ? BufferKind::kParameter
                          : instr.opcode() == HloOpcode::kConstant ? BufferKind::kConstant
                                                                   : BufferKind::kArena;
  for (int64_t leaf = 0; leaf < static_cast<int64_t>(shapes.size()); ++leaf) {
    if (reuse[leaf] >= 0) {
      plan.leaves[i].push_back(reuse[leaf]);
      continue;
    }
    PlannedBuffer buf;
    buf.kind = kind;
    buf.instruction = i;
    buf.leaf = leaf;
    buf.bytes = shapes[leaf].IsArray() ? shapes[leaf].byte_size() : 0;
    buf.first = buf.last = i;
    plan.leaves[i].push_back(static_cast<int64_t>(plan.buffers.size()));
    plan.buffers.push_back(buf);
  }
}

}  // namespace

bool IsAliasingInstruction(const HloInstruction& instr) {
  if (instr.opcode() == HloOpcode::kCustomCall) {
    return instr.operand_count() == 1 && instr.operand(0)->shape().Compatible(instr.shape()) &&
           runtime::IsIdentityCustomCall(instr);
  }
  return runtime::IsOneOf(instr.opcode(),
                          {HloOpcode::kTuple, HloOpcode::kGetTupleElement, HloOpcode::kBitcast,
                           HloOpcode::kBitcastConvert, HloOpcode::kReshape, HloOpcode::kCopy,
                           HloOpcode::kOptimizationBarrier, HloOpcode::kAddDependency});
}

absl::StatusOr<BufferPlan> PlanBuffers(const hlo::HloComputation& computation) {
  const auto& instrs = computation.instructions();
  const int64_t n = static_cast<int64_t>(instrs.size());
  absl::flat_hash_map<const HloInstruction*, int64_t> index;
  BufferPlan plan;
  plan.leaves.resize(n);
  for (int64_t i = 0; i < n; ++i) index[instrs[i].get()] = i;
  const std::vector<size_t> last_reader = hlo::LastReaders(computation);
  for (int64_t i = 0; i < n; ++i) {
    const HloInstruction& instr = *instrs[i];
    std::vector<std::vector<int64_t>> operand_leaves;
    for (const HloInstruction* op : instr.operands()) {
      auto it = index.find(op);
      if (it == index.end() || it->second >= i) {
        return absl::InvalidArgumentError(hlo::StrCat("instruction %", instr.name(), ": operand %",
                                                      op->name(), " is not defined before it"));
      }
      operand_leaves.push_back(plan.leaves[it->second]);
    }
    if (IsAliasingInstruction(instr) && !operand_leaves.empty()) {
      plan.leaves[i] = AliasedLeaves(instr, operand_leaves);
    } else {
      DefineLeaves(instr, i, InPlaceLeaves(instr, i, plan, operand_leaves), plan);
    }
    // Every buffer this value names lives until the value's last reader.
    for (int64_t b : plan.leaves[i]) {
      plan.buffers[b].last = std::max(plan.buffers[b].last, static_cast<int64_t>(last_reader[i]));
    }
  }
  const HloInstruction* root = computation.root_instruction();
  if (root == nullptr || !index.contains(root)) {
    return absl::InvalidArgumentError(hlo::StrCat("computation ", computation.name(), " has no root"));
  }
  for (int64_t b : plan.leaves[index.at(root)]) {
    plan.buffers[b].last = n;
    if (plan.buffers[b].kind == BufferKind::kArena) plan.buffers[b].kind = BufferKind::kOutput;
  }
  Place(plan);
  return plan;
}

}  // namespace cuda
}  // namespace runtime

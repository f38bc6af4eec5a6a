// Union-find over instruction leaves. Nodes are numbered per instruction in module order
// (computations callees-first, instructions in stored order); joins follow the table in the
// header; classes are then renumbered densely in node order, so the numbering (and therefore
// propagation order) is deterministic.
#include "spmd/propagation/value_classes.h"

#include <algorithm>
#include <array>
#include <map>

#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/scan_attributes.h"
#include "hlo/sharding/implied_sharding.h"

namespace spmd {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool JoinsResultsToOperands(HloOpcode opcode) { return ValueClasses::JoinerFor(opcode) != nullptr; }

ValueClasses::ValueClasses(const hlo::HloModule& module) {
  std::vector<std::pair<const HloInstruction*, int64_t>> node_owner;
  const std::vector<hlo::HloComputation*> computations = module.MakeComputationPostOrder();
  int64_t max_id = -1;
  for (const hlo::HloComputation* comp : computations) {
    for (const auto& instr : comp->instructions()) max_id = std::max(max_id, instr->unique_id());
  }
  base_.assign(max_id + 1, {0, -1});
  for (const hlo::HloComputation* comp : computations) {
    for (const auto& instr : comp->instructions()) {
      const int64_t leaves = instr->shape().leaf_count();
      if (instr->unique_id() < 0) continue;
      base_[instr->unique_id()] = {static_cast<int64_t>(parent_.size()), leaves};
      for (int64_t k = 0; k < leaves; ++k) {
        parent_.push_back(static_cast<int64_t>(parent_.size()));
        node_owner.push_back({instr.get(), k});
      }
    }
  }
  for (const hlo::HloComputation* comp : computations) {
    for (const auto& instr : comp->instructions()) JoinInstruction(*instr);
  }
  JoinShardGroups(module);
  class_of_node_.assign(parent_.size(), -1);
  std::vector<int64_t> class_of_root(parent_.size(), -1);
  for (int64_t n = 0; n < static_cast<int64_t>(parent_.size()); ++n) {
    const int64_t root = Find(n);
    if (class_of_root[root] < 0) {
      class_of_root[root] = num_classes_++;
      representative_.push_back(node_owner[n]);
    }
    class_of_node_[n] = class_of_root[root];
  }
}

int64_t ValueClasses::Node(const HloInstruction* instr, int64_t leaf) const {
  const int64_t id = instr == nullptr ? -1 : instr->unique_id();
  if (id < 0 || id >= static_cast<int64_t>(base_.size())) return -1;
  const auto [first, count] = base_[id];
  if (leaf < 0 || leaf >= count) return -1;
  return first + leaf;
}

int64_t ValueClasses::ClassOf(const HloInstruction* instr, int64_t leaf) const {
  const int64_t node = Node(instr, leaf);
  return node < 0 ? -1 : class_of_node_[node];
}

int64_t ValueClasses::Find(int64_t node) {
  while (parent_[node] != node) {
    parent_[node] = parent_[parent_[node]];
    node = parent_[node];
  }
  return node;
}

void ValueClasses::Join(const HloInstruction* a, int64_t a_leaf, const HloInstruction* b,
                        int64_t b_leaf, int64_t count) {
  for (int64_t k = 0; k < count; ++k) {
    const int64_t na = Node(a, a_leaf + k);
    const int64_t nb = Node(b, b_leaf + k);
    if (na < 0 || nb < 0) return;
    const int64_t ra = Find(na);
    const int64_t rb = Find(nb);
    if (ra != rb) parent_[std::max(ra, rb)] = std::min(ra, rb);
  }
}

void ValueClasses::JoinWhole(const HloInstruction* a, const HloInstruction* b) {
  if (a == nullptr || b == nullptr || !a->shape().Compatible(b->shape())) return;
  Join(a, 0, b, 0, a->shape().leaf_count());
}

ValueClasses::Joiner ValueClasses::JoinerFor(HloOpcode opcode) {
  static const auto* table = [] {
    auto* t = new std::array<Joiner, hlo::kNumHloOpcodes>{};
    (*t)[static_cast<int>(HloOpcode::kTuple)] = &ValueClasses::JoinTuple;
    (*t)[static_cast<int>(HloOpcode::kGetTupleElement)] = &ValueClasses::JoinGetTupleElement;
    (*t)[static_cast<int>(HloOpcode::kOptimizationBarrier)] = &ValueClasses::JoinBarrier;
    (*t)[static_cast<int>(HloOpcode::kWhile)] = &ValueClasses::JoinWhile;
    (*t)[static_cast<int>(HloOpcode::kCall)] = &ValueClasses::JoinCall;
    (*t)[static_cast<int>(HloOpcode::kConditional)] = &ValueClasses::JoinConditional;
    return t;
  }();
  return (*table)[static_cast<int>(opcode)];
}

void ValueClasses::JoinInstruction(const HloInstruction& instr) {
  if (Joiner join = JoinerFor(instr.opcode())) (this->*join)(instr);
  if (instr.opcode() == HloOpcode::kScan) JoinScanCarries(instr);
}

void ValueClasses::JoinScanCarries(const HloInstruction& instr) {
  absl::StatusOr<hlo::ScanAttributes> scan = hlo::ReadScanAttributes(instr);
  if (!scan.ok() || instr.called_computations().size() != 1) return;
  const hlo::HloComputation& body = *instr.to_apply();
  const HloInstruction* root = body.root_instruction();
  const int64_t carries = scan->num_carries;
  const int64_t inputs = instr.operand_count() - carries;
  const int64_t steps = root->shape().leaf_count();
  if (!instr.shape().IsTuple() || !root->shape().IsTuple() ||
      body.num_parameters() != inputs + carries || steps != instr.shape().leaf_count()) {
    return;
  }
  for (int64_t k = 0; k < carries; ++k) {
    const HloInstruction* param = body.parameter_instruction(inputs + k);
    const int64_t leaf = steps - carries + k;
    if (param == nullptr || !param->shape().IsArray()) continue;
    Join(param, 0, root, leaf, 1);
    Join(param, 0, &instr, leaf, 1);
  }
}

void ValueClasses::JoinTuple(const HloInstruction& instr) {
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    Join(instr.operand(i), 0, &instr, hlo::ElementLeafOffset(instr.shape(), i),
         instr.operand(i)->shape().leaf_count());
  }
}

void ValueClasses::JoinGetTupleElement(const HloInstruction& instr) {
  Join(instr.operand(0), hlo::ElementLeafOffset(instr.operand(0)->shape(), instr.tuple_index()),
       &instr, 0, instr.shape().leaf_count());
}

void ValueClasses::JoinBarrier(const HloInstruction& instr) { JoinWhole(instr.operand(0), &instr); }

void ValueClasses::JoinWhile(const HloInstruction& instr) {
  const auto& called = instr.called_computations();
  if (called.size() != 2 || instr.operand_count() != 1) return;
  JoinWhole(instr.operand(0), &instr);
  for (const hlo::HloComputation* c : called) {
    if (c->num_parameters() == 1) JoinWhole(&instr, c->parameter_instruction(0));
  }
  JoinWhole(&instr, instr.while_body()->root_instruction());
}

void ValueClasses::JoinCall(const HloInstruction& instr) {
  const auto& called = instr.called_computations();
  if (called.size() != 1) return;
  for (int64_t i = 0; i < instr.operand_count() && i < called[0]->num_parameters(); ++i) {
    JoinWhole(instr.operand(i), called[0]->parameter_instruction(i));
  }
  JoinWhole(&instr, called[0]->root_instruction());
}

void ValueClasses::JoinConditional(const HloInstruction& instr) {
  const auto& called = instr.called_computations();
  if (instr.operand_count() != static_cast<int64_t>(called.size()) + 1) return;
  for (size_t b = 0; b < called.size(); ++b) {
    if (called[b]->num_parameters() == 1) {
      JoinWhole(instr.operand(b + 1), called[b]->parameter_instruction(0));
    }
    JoinWhole(&instr, called[b]->root_instruction());
  }
}

void ValueClasses::JoinShardGroups(const hlo::HloModule& module) {
  std::map<std::pair<int, int64_t>, const HloInstruction*> first_of_group;
  for (const hlo::HloComputation* comp : module.MakeComputationPostOrder()) {
    for (const auto& instr : comp->instructions()) {
      if (!instr->has_sharding() || instr->sharding().IsTuple()) continue;
      const hlo::ShardGroup& group = instr->sharding().shard_group();
      if (!group.is_set()) continue;
      auto [it, inserted] =
          first_of_group.insert({{static_cast<int>(group.kind), group.id}, instr.get()});
      if (!inserted) JoinWhole(it->second, instr.get());
    }
  }
}

}  // namespace spmd

// Which values must share one sharding because an instruction passes them through unchanged.
//
// Every leaf of every instruction's shape (arrays, tokens; a tuple contributes its flattened
// leaves) is a node. Nodes are joined into classes by:
//   tuple                 operand i  ==  the tuple's leaves of element i
//   get-tuple-element     the operand's leaves of element `index`  ==  the result
//   while                 init == while == body parameter == body root == condition parameter
//   call                  operand i == callee parameter i;  callee root == call
//   conditional           operand i+1 == branch i's parameter;  each branch root == result
//   optimization-barrier  operand == result
//   shard_as / shard_like instructions of one group with equal shapes
//   scan                  body parameter (inputs + k) == body root's carry k == the scan's
//                         carry k (its init is only where the carry starts, and it may enter a
//                         manual region there: an edge, like its inputs and outputs, which
//                         relate to the body's slices by a dimension: CalleeRules in
//                         factor_rule.h)
// Propagation then gives each class one sharding, which keeps while loops, calls and branches
// consistent by construction.
#ifndef SPMD_PROPAGATION_VALUE_CLASSES_H_
#define SPMD_PROPAGATION_VALUE_CLASSES_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "hlo/ir/hlo_module.h"

namespace spmd {

// Whether the classes join `opcode`'s results to its operands (the ops listed above).
bool JoinsResultsToOperands(hlo::HloOpcode opcode);

class ValueClasses {
 public:
  // Builds the classes of every instruction of every computation of `module`.
  explicit ValueClasses(const hlo::HloModule& module);

  int64_t num_classes() const { return num_classes_; }
  // The class of flattened leaf `leaf` of `instr`, or -1 when `instr` is not in the module or
  // has no such leaf.
  int64_t ClassOf(const hlo::HloInstruction* instr, int64_t leaf) const;
  // The first (instruction, leaf) of `cls` in module order, to name the class in messages.
  std::pair<const hlo::HloInstruction*, int64_t> Representative(int64_t cls) const {
    return representative_[cls];
  }

 private:
  int64_t Node(const hlo::HloInstruction* instr, int64_t leaf) const;
  int64_t Find(int64_t node);
  // Joins `count` consecutive leaves of `a` from `a_leaf` with those of `b` from `b_leaf`.
  void Join(const hlo::HloInstruction* a, int64_t a_leaf, const hlo::HloInstruction* b,
            int64_t b_leaf, int64_t count);
  void JoinWhole(const hlo::HloInstruction* a, const hlo::HloInstruction* b);
  void JoinInstruction(const hlo::HloInstruction& instr);
  // One per row of the table above; JoinerFor gives the opcode's, or null.
  void JoinTuple(const hlo::HloInstruction& instr);
  void JoinGetTupleElement(const hlo::HloInstruction& instr);
  void JoinBarrier(const hlo::HloInstruction& instr);
  void JoinWhile(const hlo::HloInstruction& instr);
  void JoinCall(const hlo::HloInstruction& instr);
  void JoinConditional(const hlo::HloInstruction& instr);
  // A scan's carries (not in the table: its outputs are not its operands' values).
  void JoinScanCarries(const hlo::HloInstruction& instr);
  using Joiner = void (ValueClasses::*)(const hlo::HloInstruction&);
  static Joiner JoinerFor(hlo::HloOpcode opcode);
  friend bool JoinsResultsToOperands(hlo::HloOpcode opcode);
  void JoinShardGroups(const hlo::HloModule& module);

  // By instruction unique id: (first node, leaf count); leaf count -1 for ids not seen.
  std::vector<std::pair<int64_t, int64_t>> base_;
  std::vector<int64_t> parent_;
  std::vector<int64_t> class_of_node_;
  std::vector<std::pair<const hlo::HloInstruction*, int64_t>> representative_;
  int64_t num_classes_ = 0;
};

}  // namespace spmd

#endif  // SPMD_PROPAGATION_VALUE_CLASSES_H_

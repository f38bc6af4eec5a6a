// HloComputation: an ordered list of instructions with a root, owned by an HloModule.
#ifndef HLO_IR_HLO_COMPUTATION_H_
#define HLO_IR_HLO_COMPUTATION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hlo/ir/hlo_instruction.h"

namespace hlo {

class HloModule;

// Parameter shapes (in parameter-number order) and the result shape of a computation.
struct ProgramShape {
  std::vector<Shape> parameters;
  std::vector<std::string> parameter_names;
  Shape result;
};

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  HloComputation(const HloComputation&) = delete;
  HloComputation& operator=(const HloComputation&) = delete;

  const std::string& name() const { return name_; }
  // Renames; the owning module's name index follows.
  void set_name(std::string name);
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }

  // Takes ownership of `instr`, appends it and returns it. Parameters are also indexed by
  // their parameter number.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instr);
  // Removes an instruction that has no users and is not the root.
  absl::Status RemoveInstruction(HloInstruction* instr);

  // Instructions in insertion order (operands before users for parsed modules).
  const std::vector<std::unique_ptr<HloInstruction>>& instructions() const {
    return instructions_;
  }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  // Puts the instructions in `order`, which must hold each of them exactly once (the caller
  // keeps operands before users); fails otherwise, leaving the order as it was.
  absl::Status ReorderInstructions(const std::vector<HloInstruction*>& order);
  // Operands before users, following operand and control edges from the root and also
  // including instructions unreachable from it, each once.
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;

  HloInstruction* root_instruction() const { return root_; }
  void set_root_instruction(HloInstruction* root) { root_ = root; }

  int64_t num_parameters() const { return static_cast<int64_t>(parameters_.size()); }
  // REQUIRES: 0 <= i < num_parameters(); null for a number that no parameter has.
  HloInstruction* parameter_instruction(int64_t i) const { return parameters_[i]; }
  const std::vector<HloInstruction*>& parameter_instructions() const { return parameters_; }

  ProgramShape ComputeProgramShape() const;

  HloModule* parent() const { return parent_; }
  void set_parent(HloModule* module) { parent_ = module; }
  bool is_fusion_computation() const { return is_fusion_; }
  void set_is_fusion_computation(bool fusion) { is_fusion_ = fusion; }
  // `execution_thread` of async computations; empty for the main thread.
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string thread) { execution_thread_ = std::move(thread); }

  std::string ToString() const;

 private:
  std::string name_;
  int64_t unique_id_ = -1;
  std::vector<std::unique_ptr<HloInstruction>> instructions_;
  std::vector<HloInstruction*> parameters_;
  HloInstruction* root_ = nullptr;
  HloModule* parent_ = nullptr;
  bool is_fusion_ = false;
  std::string execution_thread_;
};

}  // namespace hlo

#endif  // HLO_IR_HLO_COMPUTATION_H_

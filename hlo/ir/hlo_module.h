// HloModule: computations (callees before callers), the entry computation, and the module
// configuration the partitioner reads (partition count, propagation permissions, aliasing).
#ifndef HLO_IR_HLO_MODULE_H_
#define HLO_IR_HLO_MODULE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/stack_frame_index.h"

namespace hlo {

// One `input_output_alias` entry: output `output_index` may reuse parameter `parameter_number`
// at `parameter_index`.
struct InputOutputAlias {
  ShapeIndex output_index;
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  bool must_alias = false;  // `must-alias` vs the default `may-alias`.
};

// The most devices (num_partitions x replica_count) a module may name: beyond every machine
// built, and small enough that per-device tables stay small. Readers refuse larger counts.
inline constexpr int64_t kMaxDevices = int64_t{1} << 16;

struct HloModuleConfig {
  int64_t num_partitions = 1;
  int64_t replica_count = 1;
  // The `entry_computation_layout={(params)->result}` given in the header, if any.
  std::optional<ProgramShape> entry_computation_layout;
  // One flag per output leaf (or a single flag for all); empty means not given.
  std::vector<bool> allow_spmd_sharding_propagation_to_output;
  std::vector<bool> allow_spmd_sharding_propagation_to_parameters;
  bool use_spmd_partitioning = false;
};

class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}
  HloModule(const HloModule&) = delete;
  HloModule& operator=(const HloModule&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Takes ownership; assigns the computation and its instructions module-unique ids.
  HloComputation* AddComputation(std::unique_ptr<HloComputation> computation);
  const std::vector<std::unique_ptr<HloComputation>>& computations() const {
    return computations_;
  }
  // Removes `computation` (and its instructions). Fails when it is the entry or another
  // computation's instruction still calls it.
  absl::Status RemoveComputation(HloComputation* computation);
  // Removes every computation of `dead` at once (one pass over the module, where removing them
  // one by one rescans it for each). Fails, removing nothing, when one is the entry or a
  // computation outside `dead` still calls one.
  absl::Status RemoveComputations(const absl::flat_hash_set<const HloComputation*>& dead);
  // Callees before callers, entry last (the printing order).
  std::vector<HloComputation*> MakeComputationPostOrder() const;
  // The first computation named `name` (by an index: constant time), or null.
  HloComputation* GetComputation(std::string_view name) const;

  HloComputation* entry_computation() const { return entry_; }
  void set_entry_computation(HloComputation* entry) { entry_ = entry; }

  const HloModuleConfig& config() const { return config_; }
  HloModuleConfig* mutable_config() { return &config_; }

  const std::vector<InputOutputAlias>& input_output_alias() const { return aliases_; }
  std::vector<InputOutputAlias>* mutable_input_output_alias() { return &aliases_; }
  const FrontendAttributes& frontend_attributes() const { return frontend_attributes_; }
  FrontendAttributes* mutable_frontend_attributes() { return &frontend_attributes_; }
  // Header attributes kept verbatim (e.g. `is_scheduled`, `debug_attributes`).
  const std::vector<RawAttribute>& raw_attributes() const { return raw_attributes_; }
  std::vector<RawAttribute>* mutable_raw_attributes() { return &raw_attributes_; }
  // Source locations that instruction metadata's `stack_frame_id` refers to (XLA's
  // StackFrameIndexProto; the FileNames ... StackFrames sections of the text).
  const StackFrameIndex& stack_frame_index() const { return stack_frame_index_; }
  StackFrameIndex* mutable_stack_frame_index() { return &stack_frame_index_; }

  // A fresh id for an instruction added after parsing.
  int64_t NextUniqueId() { return next_id_++; }
  // Total number of instructions in all computations.
  int64_t instruction_count() const;

  std::string ToString() const;

 private:
  friend class HloComputation;  // Keeps by_name_ current on a rename.
  void IndexName(HloComputation* computation);
  void UnindexName(HloComputation* computation);

  std::string name_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  // Computations by name, in the order they took the name (duplicates are a verifier error,
  // but the index keeps them so that removing one still finds the other).
  absl::flat_hash_map<std::string, std::vector<HloComputation*>> by_name_;
  HloComputation* entry_ = nullptr;
  HloModuleConfig config_;
  std::vector<InputOutputAlias> aliases_;
  FrontendAttributes frontend_attributes_;
  std::vector<RawAttribute> raw_attributes_;
  StackFrameIndex stack_frame_index_;
  int64_t next_id_ = 0;
};

// InvalidArgument naming the first constant whose values the input elided (`{...}`, see
// InstructionAttributes::literal_elided), for the consumers that need the values (executors,
// proto output); OK when there is none.
absl::Status CheckNoElidedConstants(const HloModule& module);

}  // namespace hlo

#endif  // HLO_IR_HLO_MODULE_H_

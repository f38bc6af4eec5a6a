// HloInstruction: one class for every opcode. Per-opcode data lives in typed fields of
// `InstructionAttributes`; which fields an opcode uses is documented at each field and checked by
// the verifier. Instructions are owned by their HloComputation and refer to operands and called
// computations by pointer; use lists are kept in step by the mutators below.
#ifndef HLO_IR_HLO_INSTRUCTION_H_
#define HLO_IR_HLO_INSTRUCTION_H_

#include <cstdint>
#include <memory>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_attributes.h"
#include "hlo/ir/hlo_opcode.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"

namespace hlo {

class HloComputation;

// A position inside a (possibly nested) tuple shape: `{}` is the whole value, `{1,0}` is element
// 0 of element 1.
using ShapeIndex = std::vector<int64_t>;

// One `output_to_operand_aliasing` entry: output `output_index` reuses operand `operand`'s
// buffer at `operand_index`.
struct OutputOperandAlias {
  ShapeIndex output_index;
  int64_t operand = 0;
  ShapeIndex operand_index;
};

struct InstructionAttributes {
  // broadcast, transpose, reduce, reverse, concatenate, sort, all-gather, all-to-all,
  // reduce-scatter, map, scan, topk: the `dimensions={...}` list.
  std::vector<int64_t> dimensions;
  int64_t parameter_number = 0;  // parameter
  int64_t tuple_index = 0;       // get-tuple-element
  int64_t iota_dimension = 0;    // iota
  std::optional<Literal> literal;  // constant
  // A constant written `{...}` (XLA's dumps elide large constants): zeros stand in for its
  // unknown values; it prints back as `{...}`, no executor runs it, no proto carries it.
  bool literal_elided = false;
  ComparisonDirection comparison_direction = ComparisonDirection::kEq;  // compare
  ComparisonType comparison_type = ComparisonType::kDefault;            // compare
  std::optional<DotDimensionNumbers> dot_dimension_numbers;             // dot, ragged-dot
  std::optional<ConvolutionDimensionNumbers> convolution_dimension_numbers;
  std::optional<Window> window;  // convolution, reduce-window, select-and-scatter
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::optional<GatherDimensionNumbers> gather_dimension_numbers;
  std::vector<int64_t> gather_slice_sizes;
  std::optional<ScatterDimensionNumbers> scatter_dimension_numbers;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  std::vector<SliceDimension> slice_dimensions;  // slice
  std::vector<int64_t> dynamic_slice_sizes;      // dynamic-slice
  std::optional<PaddingConfig> padding_config;   // pad
  // Collectives.
  std::optional<ReplicaGroups> replica_groups;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  std::optional<int64_t> channel_id;
  bool use_global_device_ids = false;
  bool constrain_layout = false;
  // custom-call.
  std::string custom_call_target;
  bool custom_call_has_side_effect = false;
  std::optional<std::vector<Shape>> operand_shapes_with_layout;
  std::vector<OutputOperandAlias> output_operand_aliasing;
  std::string backend_config;
  // dot, convolution: `operand_precision={high,default}`.
  std::vector<Precision> operand_precision;
  bool is_stable = false;                 // sort
  int64_t exponent_bits = 0;              // reduce-precision
  int64_t mantissa_bits = 0;              // reduce-precision
  float epsilon = 0;                      // batch-norm-*
  int64_t feature_index = 0;              // batch-norm-*
  FftType fft_type = FftType::kFft;       // fft
  std::vector<int64_t> fft_length;        // fft
  RandomDistribution distribution = RandomDistribution::kInvalid;  // rng
  std::string fusion_kind;                // fusion: kLoop, kInput, kOutput, kCustom
  bool is_host_transfer = false;          // send, recv, send-done, recv-done
  int64_t k = 0;                          // topk
  bool largest = true;                    // topk
  std::string infeed_config;              // infeed
  std::string outfeed_config;             // outfeed
  std::optional<Shape> outfeed_shape;     // outfeed
  // async-start/-update/-done written in XLA's sugared form (`custom-call-start`, `call-done`):
  // the opcode they wrap. The wrapped op's own attributes sit on the async-start.
  std::optional<HloOpcode> async_wrapped_opcode;
  OpMetadata metadata;
  FrontendAttributes frontend_attributes;
  // Attributes kept verbatim, in the order they were given.
  std::vector<RawAttribute> raw_attributes;
};

class HloInstruction {
 public:
  // Creates an instruction with no attributes set. The caller fills `mutable_attrs()` and adds
  // called computations; the verifier checks the combination. `operands` must already belong
  // to the computation the instruction is added to.
  static std::unique_ptr<HloInstruction> Create(HloOpcode opcode, Shape shape,
                                                absl::Span<HloInstruction* const> operands);

  // A copy of this instruction (opcode, shape, attributes shared until either changes them,
  // called computations, sharding and name) reading `operands`, which must already belong to
  // the computation the copy is added to. Control predecessors are not copied.
  std::unique_ptr<HloInstruction> CloneWithOperands(
      absl::Span<HloInstruction* const> operands) const;

  ~HloInstruction();
  HloInstruction(const HloInstruction&) = delete;
  HloInstruction& operator=(const HloInstruction&) = delete;

  HloOpcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // Unique within the module once the instruction is added to a computation.
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }

  const Shape& shape() const { return shape_; }
  Shape* mutable_shape() { return &shape_; }

  const std::vector<HloInstruction*>& operands() const { return operands_; }
  HloInstruction* operand(int64_t i) const { return operands_[i]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  // Instructions that use this one as an operand, each listed once, in first-use order.
  const std::vector<HloInstruction*>& users() const { return users_; }
  // Replaces operand `i` by `new_operand`, updating both use lists.
  void ReplaceOperandWith(int64_t i, HloInstruction* new_operand);
  // Makes every user of this instruction use `other` instead.
  void ReplaceAllUsesWith(HloInstruction* other);
  // Drops every operand, removing this instruction from their use lists (before deletion).
  void DetachFromOperands();
  // Appends an operand (used by builders of variadic ops).
  void AppendOperand(HloInstruction* operand);

  // Control dependencies: this instruction runs after each predecessor.
  const std::vector<HloInstruction*>& control_predecessors() const { return control_preds_; }
  void AddControlPredecessor(HloInstruction* pred);

  // to_apply, condition/body (in that order), branch computations, calls, ... in the order the
  // text names them. HloInstructionProto.called_computation_ids keeps the same order except for
  // a while, whose proto lists [body, condition] (hlo/proto maps the two).
  const std::vector<HloComputation*>& called_computations() const { return called_; }
  void AppendCalledComputation(HloComputation* c) { called_.push_back(c); }
  void set_called_computation(int64_t i, HloComputation* c) { called_[i] = c; }
  // Accessors by role; REQUIRES the opcode to have that role.
  HloComputation* to_apply() const { return called_.at(0); }
  HloComputation* while_condition() const { return called_.at(0); }
  HloComputation* while_body() const { return called_.at(1); }

  HloComputation* parent() const { return parent_; }
  void set_parent(HloComputation* parent) { parent_ = parent; }

  bool has_sharding() const { return sharding_ != nullptr; }
  // REQUIRES: has_sharding().
  const HloSharding& sharding() const { return *sharding_; }
  const HloSharding* sharding_ptr() const { return sharding_.get(); }
  void set_sharding(HloSharding sharding);
  void clear_sharding() { sharding_.reset(); }

  const InstructionAttributes& attrs() const {
    return attrs_ != nullptr ? *attrs_ : NoAttributes();
  }
  // The attributes to change; copied first when shared with another instruction.
  InstructionAttributes* mutable_attrs();
  // Takes `other`'s attributes without copying them: the two share one copy until either
  // asks for mutable_attrs().
  void ShareAttributes(const HloInstruction& other) { attrs_ = other.attrs_; }

  // Shorthands for frequently read attributes.
  const std::vector<int64_t>& dimensions() const { return attrs().dimensions; }
  int64_t parameter_number() const { return attrs().parameter_number; }
  int64_t tuple_index() const { return attrs().tuple_index; }

  // The instruction in HLO text form (one line, no trailing newline).
  std::string ToString() const;

 private:
  HloInstruction(HloOpcode opcode, Shape shape);
  void AddUser(HloInstruction* user);
  void RemoveUser(HloInstruction* user);

  HloOpcode opcode_;
  std::string name_;
  int64_t unique_id_ = -1;
  Shape shape_;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  std::vector<HloInstruction*> control_preds_;
  std::vector<HloComputation*> called_;
  HloComputation* parent_ = nullptr;
  std::unique_ptr<HloSharding> sharding_;
  // Null while every attribute has its default; shared (copy on write) between an instruction
  // and its clones, which the partitioner makes of nearly every instruction.
  std::shared_ptr<InstructionAttributes> attrs_;

  static const InstructionAttributes& NoAttributes();
};

// Custom-calls that only say where a value lives (XLA's host-offloading annotations MoveToHost,
// MoveToDevice, PinToDevice, PinToDeviceSram, and JAX's annotate_device_placement with its
// _xla_buffer_placement attribute): one operand, and the value is that operand. Propagation looks
// through them, the partitioner keeps them on the shard, the executors run them as identities.
bool IsPlacementCustomCall(const HloInstruction& instr);

// Whether `instr` does more than compute its value: an opcode with op_traits::kSideEffect, or a
// custom-call declared `custom_call_has_side_effect`. Dead-code elimination keeps such
// instructions whatever their use; common-subexpression elimination never merges them.
bool HasSideEffect(const HloInstruction& instr);

// Whether `instr`'s value is, on each device, its operand's: an opcode with
// op_traits::kForwardsOperand (copy, opt-barrier), or one of the custom-calls that only mark a
// value (`Sharding`, `SPMDFullToShardShape`, `SPMDShardToFullShape`, `ShardBarrierFrom`/`To`,
// `LayoutConstraint`, the placement custom-calls). The executors run it as a copy or an alias.
bool ForwardsOperand(const HloInstruction& instr);

// Whether each result element of `instr` depends only on its operands' elements at its index:
// an elementwise opcode (IsElementwiseOpcode), a bitcast-convert between types of one width
// (the same bits read as another type), or a map over every dim (its computation applied at
// each index).
bool IsElementwise(const HloInstruction& instr);

// The integer list of the first raw (verbatim) attribute of `instr` named one of `names`
// (`{1,2}` or `1`), empty when there is none; an error naming the attribute when its text is
// not such a list. For attributes the IR keeps as text, e.g. ragged-dot's lhs_ragged_dims.
absl::StatusOr<std::vector<int64_t>> RawDimsAttribute(
    const HloInstruction& instr, std::initializer_list<std::string_view> names);

}  // namespace hlo

#endif  // HLO_IR_HLO_INSTRUCTION_H_

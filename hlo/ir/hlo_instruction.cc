// HloInstruction construction and use-list maintenance.
#include "hlo/ir/hlo_instruction.h"

#include <algorithm>
#include <iterator>

namespace hlo {

HloInstruction::HloInstruction(HloOpcode opcode, Shape shape)
    : opcode_(opcode), shape_(std::move(shape)) {}

std::unique_ptr<HloInstruction> HloInstruction::CloneWithOperands(
    absl::Span<HloInstruction* const> operands) const {
  std::unique_ptr<HloInstruction> copy = Create(opcode_, shape_, operands);
  copy->ShareAttributes(*this);
  copy->called_ = called_;
  if (sharding_ != nullptr) copy->set_sharding(*sharding_);
  copy->set_name(name_);
  return copy;
}

HloInstruction::~HloInstruction() = default;

const InstructionAttributes& HloInstruction::NoAttributes() {
  static const auto* none = new InstructionAttributes();
  return *none;
}

InstructionAttributes* HloInstruction::mutable_attrs() {
  if (attrs_ == nullptr) {
    attrs_ = std::make_shared<InstructionAttributes>();
  } else if (attrs_.use_count() > 1) {
    attrs_ = std::make_shared<InstructionAttributes>(*attrs_);
  }
  return attrs_.get();
}

std::unique_ptr<HloInstruction> HloInstruction::Create(
    HloOpcode opcode, Shape shape, absl::Span<HloInstruction* const> operands) {
  std::unique_ptr<HloInstruction> instr(new HloInstruction(opcode, std::move(shape)));
  for (HloInstruction* operand : operands) instr->AppendOperand(operand);
  return instr;
}

void HloInstruction::AppendOperand(HloInstruction* operand) {
  operands_.push_back(operand);
  operand->AddUser(this);
}

void HloInstruction::AddUser(HloInstruction* user) {
  if (std::find(users_.begin(), users_.end(), user) == users_.end()) users_.push_back(user);
}

void HloInstruction::RemoveUser(HloInstruction* user) {
  // `user` stays a user while it still names this instruction as any operand.
  if (std::find(user->operands_.begin(), user->operands_.end(), this) != user->operands_.end()) {
    return;
  }
  users_.erase(std::remove(users_.begin(), users_.end(), user), users_.end());
}

void HloInstruction::ReplaceOperandWith(int64_t i, HloInstruction* new_operand) {
  HloInstruction* old = operands_[i];
  operands_[i] = new_operand;
  old->RemoveUser(this);
  new_operand->AddUser(this);
}

void HloInstruction::ReplaceAllUsesWith(HloInstruction* other) {
  std::vector<HloInstruction*> users = users_;
  for (HloInstruction* user : users) {
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operands_[i] == this) user->ReplaceOperandWith(i, other);
    }
  }
}

void HloInstruction::DetachFromOperands() {
  std::vector<HloInstruction*> operands = std::move(operands_);
  operands_.clear();
  for (HloInstruction* op : operands) op->RemoveUser(this);
}

void HloInstruction::AddControlPredecessor(HloInstruction* pred) {
  if (std::find(control_preds_.begin(), control_preds_.end(), pred) == control_preds_.end()) {
    control_preds_.push_back(pred);
  }
}

void HloInstruction::set_sharding(HloSharding sharding) {
  sharding_ = std::make_unique<HloSharding>(std::move(sharding));
}

bool IsPlacementCustomCall(const HloInstruction& instr) {
  if (instr.opcode() != HloOpcode::kCustomCall || instr.operand_count() != 1 ||
      !instr.operand(0)->shape().Compatible(instr.shape())) {
    return false;
  }
  static constexpr std::string_view kTargets[] = {
      "MoveToHost",
      "MoveToDevice",
      "PinToDevice",
      "PinToDeviceSram",
      "annotate_device_placement",  // JAX's device_put(memory_kind=...) and offloading remat
  };
  const std::string& target = instr.attrs().custom_call_target;
  return std::find(std::begin(kTargets), std::end(kTargets), target) != std::end(kTargets);
}

bool IsElementwise(const HloInstruction& instr) {
  if (instr.opcode() == HloOpcode::kBitcastConvert) {
    return instr.operand_count() == 1 && instr.shape().IsArray() &&
           instr.operand(0)->shape().IsArray() &&
           ByteWidth(instr.shape().element_type()) ==
               ByteWidth(instr.operand(0)->shape().element_type());
  }
  if (instr.opcode() == HloOpcode::kMap) {
    if (!instr.shape().IsArray()) return false;
    const std::vector<int64_t>& dims = instr.attrs().dimensions;
    for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
      if (dims[d] != d) return false;
    }
    if (static_cast<int64_t>(dims.size()) != instr.shape().rank()) return false;
    for (const HloInstruction* operand : instr.operands()) {
      if (!operand->shape().IsArray() ||
          operand->shape().dimensions() != instr.shape().dimensions()) {
        return false;
      }
    }
    return true;
  }
  return IsElementwiseOpcode(instr.opcode());
}

bool ForwardsOperand(const HloInstruction& instr) {
  if (HasOpcodeFlag(instr.opcode(), op_traits::kForwardsOperand)) return true;
  if (instr.opcode() != HloOpcode::kCustomCall) return false;
  static constexpr std::string_view kTargets[] = {
      "Sharding",         "SPMDFullToShardShape", "SPMDShardToFullShape",
      "ShardBarrierFrom", "ShardBarrierTo",       "LayoutConstraint",
  };
  const std::string& target = instr.attrs().custom_call_target;
  return std::find(std::begin(kTargets), std::end(kTargets), target) != std::end(kTargets) ||
         IsPlacementCustomCall(instr);
}

absl::StatusOr<std::vector<int64_t>> RawDimsAttribute(
    const HloInstruction& instr, std::initializer_list<std::string_view> names) {
  for (const RawAttribute& a : instr.attrs().raw_attributes) {
    if (std::find(names.begin(), names.end(), a.name) == names.end()) continue;
    std::vector<int64_t> dims;
    std::string digits;
    for (char c : a.value + ",") {
      if ((c >= '0' && c <= '9') || c == '-') {
        digits += c;
      } else if (c == ',' || c == '}') {
        if (!digits.empty()) dims.push_back(std::stoll(digits));
        digits.clear();
      } else if (c != '{' && c != ' ') {
        return absl::InvalidArgumentError("cannot read " + a.name + "=" + a.value);
      }
    }
    return dims;
  }
  return std::vector<int64_t>{};
}

bool HasSideEffect(const HloInstruction& instr) {
  return HasOpcodeFlag(instr.opcode(), op_traits::kSideEffect) ||
         (instr.opcode() == HloOpcode::kCustomCall && instr.attrs().custom_call_has_side_effect);
}

}  // namespace hlo

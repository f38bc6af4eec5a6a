// Reads annotations leaf by leaf (a non-tuple sharding on a tuple shape applies to every leaf),
// classifies each by Hold, and keeps the strongest per class. Entry parameters and the root
// without a sharding are held {replicated} unless their propagation flag is true.
#include "spmd/propagation/user_shardings.h"


#include "hlo/ir/custom_call_config.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/strings.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;

enum class EntryRole { kNone, kParameter, kRoot };

EntryRole RoleOf(const hlo::HloModule& module, const HloInstruction& instr) {
  if (instr.parent() != module.entry_computation()) return EntryRole::kNone;
  if (instr.parent()->root_instruction() == &instr) return EntryRole::kRoot;
  if (instr.opcode() == hlo::HloOpcode::kParameter) return EntryRole::kParameter;
  return EntryRole::kNone;
}

// Whether the user gave the flag of this entry leaf at all, and its value.
std::optional<bool> EntryFlag(const hlo::HloModule& module, const HloInstruction& instr,
                              int64_t leaf) {
  const hlo::HloModuleConfig& config = module.config();
  switch (RoleOf(module, instr)) {
    case EntryRole::kRoot:
      if (config.allow_spmd_sharding_propagation_to_output.empty()) return std::nullopt;
      return PropagationAllowed(config.allow_spmd_sharding_propagation_to_output, leaf);
    case EntryRole::kParameter:
      if (config.allow_spmd_sharding_propagation_to_parameters.empty()) return std::nullopt;
      return PropagationAllowed(config.allow_spmd_sharding_propagation_to_parameters,
                                instr.parameter_number());
    case EntryRole::kNone:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<UserSharding> LeafIntent(const hlo::HloModule& module, const HloInstruction& instr,
                                       const HloSharding* leaf_sharding, int64_t leaf) {
  const std::optional<bool> flag = EntryFlag(module, instr, leaf);
  if (leaf_sharding == nullptr || leaf_sharding->IsUnknown()) {
    if (RoleOf(module, instr) != EntryRole::kNone && !flag.value_or(false)) {
      UserSharding fallback{HloSharding::Replicate(), Hold::kFixed, {}, &instr};
      fallback.default_root = RoleOf(module, instr) == EntryRole::kRoot;
      return fallback;
    }
    return std::nullopt;
  }
  UserSharding intent{leaf_sharding->WithShardGroup({}), Hold::kFixed, {}, &instr};
  if (flag.value_or(false)) intent.hold = Hold::kFree;
  if (instr.opcode() == hlo::HloOpcode::kCustomCall && instr.shape().IsArray()) {
    if (auto dims = hlo::ParseUnspecifiedDims(instr.attrs().backend_config)) {
      intent.hold = Hold::kRefinable;
      intent.open_dims.assign(instr.shape().rank(), false);
      for (int64_t d : *dims) {
        if (d >= 0 && d < instr.shape().rank()) intent.open_dims[d] = true;
      }
    }
  }
  return intent;
}

void Offer(std::optional<UserSharding> intent, std::optional<UserSharding>& slot) {
  if (!intent) return;
  if (!slot || static_cast<int>(intent->hold) > static_cast<int>(slot->hold)) {
    slot = std::move(intent);
  }
}

// One loop of CheckWhileDeviceAssignments: the while itself, then its body in order.
absl::Status CheckOneWhile(const HloInstruction& loop) {
  const HloInstruction* first = nullptr;
  int64_t device = -1;
  auto visit = [&](const HloInstruction& instr) -> absl::Status {
    if (!instr.has_sharding()) return absl::OkStatus();
    std::optional<int64_t> unique = instr.sharding().UniqueDevice();
    if (!unique) return absl::OkStatus();
    if (first == nullptr) {
      first = &instr;
      device = *unique;
    } else if (*unique != device) {
      return absl::InvalidArgumentError(
          hlo::StrCat("while %", loop.name(), ": conflicting device assignments: %", first->name(),
                      " is on device ", device, " but %", instr.name(), " is on device ", *unique));
    }
    return absl::OkStatus();
  };
  if (absl::Status s = visit(loop); !s.ok()) return s;
  for (const auto& instr : loop.while_body()->instructions()) {
    if (absl::Status s = visit(*instr); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckWhileDeviceAssignments(const hlo::HloModule& module) {
  for (const hlo::HloComputation* comp : module.MakeComputationPostOrder()) {
    for (const auto& instr : comp->instructions()) {
      if (instr->opcode() != hlo::HloOpcode::kWhile || instr->called_computations().size() != 2) {
        continue;
      }
      if (absl::Status s = CheckOneWhile(*instr); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

bool PropagationAllowed(const std::vector<bool>& flags, int64_t index) {
  if (flags.empty()) return false;
  if (flags.size() == 1) return flags[0];
  return index >= 0 && index < static_cast<int64_t>(flags.size()) && flags[index];
}

std::vector<std::optional<UserSharding>> CollectUserShardings(const hlo::HloModule& module,
                                                              const ValueClasses& classes) {
  std::vector<std::optional<UserSharding>> out(classes.num_classes());
  for (const hlo::HloComputation* comp : module.MakeComputationPostOrder()) {
    for (const auto& instr : comp->instructions()) {
      const int64_t leaves = instr->shape().leaf_count();
      std::optional<HloSharding> normalized;
      if (instr->has_sharding())
        normalized = instr->sharding().NormalizeTupleSharding(instr->shape());
      for (int64_t k = 0; k < leaves; ++k) {
        const HloSharding* leaf = nullptr;
        if (normalized) {
          if (normalized->IsTuple()) {
            if (k < static_cast<int64_t>(normalized->tuple_elements().size())) {
              leaf = &normalized->tuple_elements()[k];
            }
          } else {
            leaf = &*normalized;
          }
        }
        const int64_t cls = classes.ClassOf(instr.get(), k);
        if (cls >= 0) Offer(LeafIntent(module, *instr, leaf, k), out[cls]);
      }
    }
  }
  return out;
}

}  // namespace spmd

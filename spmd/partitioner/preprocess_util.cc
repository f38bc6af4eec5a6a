#include "spmd/partitioner/preprocess_util.h"

#include <memory>
#include <utility>

#include "hlo/strings.h"

namespace spmd {

FreshNames::FreshNames(const hlo::HloModule& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) taken_.insert(instr->name());
  }
}

std::string FreshNames::Fresh(const std::string& base) {
  std::string name = base;
  for (int n = 1; taken_.contains(name); ++n) name = hlo::StrCat(base, ".", n);
  taken_.insert(name);
  return name;
}

absl::flat_hash_set<const hlo::HloInstruction*> OrderingInstructions(
    const hlo::HloComputation& computation) {
  absl::flat_hash_set<const hlo::HloInstruction*> ordering;
  for (const std::unique_ptr<hlo::HloInstruction>& instr : computation.instructions()) {
    ordering.insert(instr->control_predecessors().begin(), instr->control_predecessors().end());
  }
  return ordering;
}

hlo::HloInstruction* AddLike(hlo::HloComputation& computation, hlo::HloOpcode opcode,
                             hlo::Shape shape, std::vector<hlo::HloInstruction*> operands,
                             const hlo::HloInstruction& like,
                             const std::optional<hlo::HloSharding>& sharding,
                             const std::string& name) {
  auto instr = hlo::HloInstruction::Create(opcode, std::move(shape), operands);
  instr->mutable_attrs()->metadata = like.attrs().metadata;
  if (sharding.has_value()) instr->set_sharding(*sharding);
  instr->set_name(name);
  return computation.AddInstruction(std::move(instr));
}

}  // namespace spmd

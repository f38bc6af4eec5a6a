// The verifier reports findings by computation and instruction name; the parser recorded each
// instruction's position, so the name is looked up once to place the message.
#include "tools/verify_input.h"

#include "hlo/strings.h"
#include "hlo/verifier/hlo_verifier.h"

namespace tools {
namespace {

const hlo::HloInstruction* FindInstruction(const hlo::HloModule& module,
                                           const hlo::VerifierError& finding) {
  const hlo::HloComputation* comp = module.GetComputation(finding.computation_name);
  if (comp == nullptr || finding.instruction_name.empty()) return nullptr;
  for (const auto& instr : comp->instructions()) {
    if (instr->name() == finding.instruction_name) return instr.get();
  }
  return nullptr;
}

}  // namespace

absl::Status VerifyParsedInput(const hlo::ParsedModule& parsed) {
  std::vector<hlo::VerifierError> findings;
  const absl::Status status = hlo::VerifyModule(*parsed.module, &findings);
  if (status.ok()) return status;
  if (findings.empty()) {
    return absl::InvalidArgumentError(parsed.FormatError(nullptr, hlo::ToStd(status.message())));
  }
  const hlo::VerifierError& first = findings.front();
  return absl::InvalidArgumentError(
      parsed.FormatError(FindInstruction(*parsed.module, first), first.message));
}

}  // namespace tools

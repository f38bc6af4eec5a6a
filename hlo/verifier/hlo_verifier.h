// The HLO verifier: checks the invariants a transformation can break (its scope is written at
// the top of hlo_verifier.cc). The pass pipeline runs it after every pass in tests and debug
// builds; the text parser runs it on every parsed module.
//
// Error reporting. Every finding is a VerifierError naming the instruction (and computation)
// it is about, so that a caller holding source positions -- the parser keeps a map from
// instruction name to FILE:LINE:COL -- can point at the definition site. VerifyModule returns
// the findings both as a Status (for callers that only propagate errors) and, on request, as a
// vector (for callers that decorate them).
#ifndef HLO_VERIFIER_HLO_VERIFIER_H_
#define HLO_VERIFIER_HLO_VERIFIER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hlo/ir/hlo_module.h"

namespace hlo {

// One verifier finding.
struct VerifierError {
  // Name of the instruction the finding is about, without `%`; empty for findings about a
  // computation or the module as a whole.
  std::string instruction_name;
  // Name of the computation holding that instruction (or the computation the finding is
  // about); empty for module-level findings.
  std::string computation_name;
  // The complete message, which starts with what it is about, e.g.
  // "instruction %add.3: inferred shape f32[4] does not match declared f32[5]",
  // "computation %body: has no root instruction", or
  // "module m: entry computation is not set".
  std::string message;
};

// Checks `module` against every invariant in the verifier's scope. Returns OK when there is no
// finding; otherwise an InvalidArgument status whose message is every finding's `message`, one
// per line, in a deterministic order (module-level findings, then computations in module order
// with their instructions in order). When `errors` is non-null the findings are appended to it
// in the same order (also when the module is valid, nothing is appended).
absl::Status VerifyModule(const HloModule& module, std::vector<VerifierError>* errors = nullptr);

}  // namespace hlo

#endif  // HLO_VERIFIER_HLO_VERIFIER_H_

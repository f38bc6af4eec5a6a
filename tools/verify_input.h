// Verifying a module read from a user's file, with the finding placed at the instruction's
// definition in that file.
#ifndef TOOLS_VERIFY_INPUT_H_
#define TOOLS_VERIFY_INPUT_H_

#include "absl/status/status.h"
#include "hlo/parser/hlo_parser.h"

namespace tools {

// Runs the verifier over `parsed.module`. The first finding becomes InvalidArgument with
// `FILE:LINE:COL: error: MESSAGE` at the instruction it names when the parser recorded its
// position, else `FILE: error: MESSAGE`.
absl::Status VerifyParsedInput(const hlo::ParsedModule& parsed);

}  // namespace tools

#endif  // TOOLS_VERIFY_INPUT_H_

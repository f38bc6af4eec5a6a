// Custom-calls the CPU executor computes (beyond the identities the evaluator handles itself):
// "__op$block_scaled_dot" (block_scaled_dot_ops.cc) and "TopK" (topk_ops.cc).
#ifndef RUNTIME_CPU_OPS_CUSTOM_CALL_HANDLERS_H_
#define RUNTIME_CPU_OPS_CUSTOM_CALL_HANDLERS_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/literal.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {

using CustomCallHandler = absl::StatusOr<hlo::Literal> (*)(
    const hlo::HloInstruction& instr, absl::Span<const hlo::Literal* const> operands,
    Evaluator& evaluator);

// The handler for `target`, or nullptr when the executor does not compute it.
CustomCallHandler FindCustomCallHandler(std::string_view target);

absl::StatusOr<hlo::Literal> HandleBlockScaledDot(const hlo::HloInstruction& instr,
                                                  absl::Span<const hlo::Literal* const> operands,
                                                  Evaluator& evaluator);
absl::StatusOr<hlo::Literal> HandleTopK(const hlo::HloInstruction& instr,
                                        absl::Span<const hlo::Literal* const> operands,
                                        Evaluator& evaluator);

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_CUSTOM_CALL_HANDLERS_H_

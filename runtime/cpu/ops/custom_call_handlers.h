// Custom-calls the CPU executor computes (beyond the identities the evaluator handles itself):
// "__op$block_scaled_dot" (block_scaled_dot_ops.cc), "TopK" (topk_ops.cc), XLA's internal SPMD
// ops "_SPMDInternalOp_*" (spmd_internal_ops.cc), and "xla.debug.Log" and "GetRngSeed"
// (debug_custom_calls.cc).
#ifndef RUNTIME_CPU_OPS_CUSTOM_CALL_HANDLERS_H_
#define RUNTIME_CPU_OPS_CUSTOM_CALL_HANDLERS_H_

#include <cstdint>
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

// The seed "GetRngSeed" returns on every device: fixed, so runs are reproducible and the
// partitioned and unpartitioned programs agree.
inline constexpr int64_t kRngSeed = 42;

// The handler of an "_SPMDInternalOp_*" target, or nullptr.
CustomCallHandler FindSpmdInternalHandler(std::string_view target);
// The handler of "xla.debug.Log" or "GetRngSeed", or nullptr.
CustomCallHandler FindDebugCustomCallHandler(std::string_view target);

absl::StatusOr<hlo::Literal> HandleBlockScaledDot(const hlo::HloInstruction& instr,
                                                  absl::Span<const hlo::Literal* const> operands,
                                                  Evaluator& evaluator);
absl::StatusOr<hlo::Literal> HandleTopK(const hlo::HloInstruction& instr,
                                        absl::Span<const hlo::Literal* const> operands,
                                        Evaluator& evaluator);

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_CUSTOM_CALL_HANDLERS_H_

// Handlers of the dot family that live outside dot_ops.cc (which registers them all):
// convolution (convolution_ops.cc), the Fourier transform (fft_ops.cc), ragged-dot
// (ragged_dot_ops.cc), cholesky and triangular-solve (linalg_ops.cc).
#ifndef RUNTIME_CPU_OPS_DOT_HANDLERS_H_
#define RUNTIME_CPU_OPS_DOT_HANDLERS_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/literal.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {

// convolution(lhs, rhs) with XLA's dimension numbers, window (stride, padding, lhs and rhs
// dilation, reversal), feature_group_count and batch_group_count (convolution_ops.cc).
absl::StatusOr<hlo::Literal> HandleConvolution(const hlo::HloInstruction& instr,
                                               absl::Span<const hlo::Literal* const> operands,
                                               Evaluator& evaluator);

// dot(lhs, rhs) with the instruction's dimension numbers (dot_ops.cc).
absl::StatusOr<hlo::Literal> HandleDotInstruction(const hlo::HloInstruction& instr,
                                                  absl::Span<const hlo::Literal* const> operands,
                                                  Evaluator& evaluator);

// ragged-dot(lhs, rhs, group_sizes) in its three modes (ragged_dot_ops.cc).
absl::StatusOr<hlo::Literal> HandleRaggedDot(const hlo::HloInstruction& instr,
                                             absl::Span<const hlo::Literal* const> operands,
                                             Evaluator& evaluator);

// fft(operand) of every fft_type over the last len(fft_length) dims (fft_ops.cc).
absl::StatusOr<hlo::Literal> HandleFft(const hlo::HloInstruction& instr,
                                       absl::Span<const hlo::Literal* const> operands,
                                       Evaluator& evaluator);

// cholesky(a) and triangular-solve(a, b) on the minor two dims (linalg_ops.cc).
absl::StatusOr<hlo::Literal> HandleCholesky(const hlo::HloInstruction& instr,
                                            absl::Span<const hlo::Literal* const> operands,
                                            Evaluator& evaluator);
absl::StatusOr<hlo::Literal> HandleTriangularSolve(const hlo::HloInstruction& instr,
                                                   absl::Span<const hlo::Literal* const> operands,
                                                   Evaluator& evaluator);

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_DOT_HANDLERS_H_

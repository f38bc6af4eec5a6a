// Handlers of the reduction family that live outside reduce_ops.cc (which registers them all):
// window_ops.cc (reduce-window, select-and-scatter), sort_ops.cc (sort), topk_ops.cc (topk),
// scan_ops.cc (scan).
#ifndef RUNTIME_CPU_OPS_REDUCE_HANDLERS_H_
#define RUNTIME_CPU_OPS_REDUCE_HANDLERS_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/literal.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {

// reduce-window(inputs..., inits...): variadic; window size, stride, padding (skipped, as XLA's
// backends do), base and window dilation.
absl::StatusOr<hlo::Literal> HandleReduceWindow(const hlo::HloInstruction& instr,
                                                absl::Span<const hlo::Literal* const> operands,
                                                Evaluator& evaluator);

// select-and-scatter(operand, source, init): for each window, `select` picks one element of
// `operand`; `scatter` folds the window's `source` value into the output at that element.
absl::StatusOr<hlo::Literal> HandleSelectAndScatter(const hlo::HloInstruction& instr,
                                                    absl::Span<const hlo::Literal* const> operands,
                                                    Evaluator& evaluator);

// sort(operands...): sorts every operand along `dimensions={d}` by the comparator.
absl::StatusOr<hlo::Literal> HandleSort(const hlo::HloInstruction& instr,
                                        absl::Span<const hlo::Literal* const> operands,
                                        Evaluator& evaluator);

// topk(x), k=K, largest=...: the k largest (or smallest) of each last-dim row and their
// indices, as XLA's stable total-order sort would order them (topk_ops.cc).
absl::StatusOr<hlo::Literal> HandleTopKOpcode(const hlo::HloInstruction& instr,
                                              absl::Span<const hlo::Literal* const> operands,
                                              Evaluator& evaluator);

// scan(inputs..., inits...): the body walks dim d carrying state (scan_ops.cc).
absl::StatusOr<hlo::Literal> HandleScan(const hlo::HloInstruction& instr,
                                        absl::Span<const hlo::Literal* const> operands,
                                        Evaluator& evaluator);

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_REDUCE_HANDLERS_H_

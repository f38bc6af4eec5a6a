// The opcodes the evaluator runs through its own machinery rather than element kernels:
// constants, tuples, calls and fusions (the called computation on the operands), async
// start/update/done (run at once), while loops (Evaluator::RunWhile), conditionals (XLA's
// rule: a pred selects branch 0 for true; an out-of-range index selects the last branch), the
// value-forwarding ops (copy, opt-barrier, add-dependency, identity custom-calls) and
// after-all. Registered in the op registry like every other family, so Evaluator::Execute
// dispatches every opcode but parameter through one table.
#include <string>

#include "hlo/ir/hlo_computation.h"
#include "hlo/strings.h"
#include "runtime/cpu/op_registry.h"
#include "runtime/cpu/ops/custom_call_handlers.h"
#include "runtime/cpu/ops/manual_ops.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using Operands = absl::Span<const Literal* const>;

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(message); }

absl::StatusOr<Literal> HandleConstant(const HloInstruction& instr, Operands, Evaluator&) {
  if (!instr.attrs().literal) return Invalid("constant without a value");
  return *instr.attrs().literal;
}

absl::StatusOr<Literal> HandleTuple(const HloInstruction& instr, Operands operands, Evaluator&) {
  if (!instr.shape().IsTuple() || instr.shape().tuple_shapes().size() != operands.size()) {
    return Invalid("tuple shape does not hold one element per operand");
  }
  std::vector<Literal> elements;
  elements.reserve(operands.size());
  for (const Literal* operand : operands) elements.push_back(*operand);
  return Literal::Tuple(instr.shape(), std::move(elements));
}

absl::StatusOr<Literal> HandleGetTupleElement(const HloInstruction& instr, Operands operands,
                                              Evaluator&) {
  const auto& elements = operands[0]->tuple_elements();
  const int64_t k = instr.tuple_index();
  if (k < 0 || k >= static_cast<int64_t>(elements.size())) {
    return Invalid("tuple index out of range");
  }
  return elements[k];
}

absl::StatusOr<Literal> HandleCall(const HloInstruction& instr, Operands operands,
                                   Evaluator& evaluator) {
  return evaluator.Call(*instr.to_apply(), operands);
}

absl::StatusOr<Literal> HandleFusion(const HloInstruction& instr, Operands operands,
                                     Evaluator& evaluator) {
  if (instr.called_computations().empty()) return Invalid("fusion without calls=");
  return evaluator.Call(*instr.called_computations()[0], operands);
}

absl::StatusOr<Literal> HandleAsyncStart(const HloInstruction& instr, Operands operands,
                                         Evaluator& evaluator) {
  return evaluator.RunAsyncStart(instr, operands);
}

absl::StatusOr<Literal> HandleAsyncUpdate(const HloInstruction&, Operands operands, Evaluator&) {
  if (operands.size() != 1) return Invalid("async-update takes one operand");
  return *operands[0];
}

absl::StatusOr<Literal> HandleAsyncDone(const HloInstruction&, Operands operands, Evaluator&) {
  if (operands.size() != 1 || !operands[0]->shape().IsTuple() ||
      operands[0]->tuple_elements().size() < 2) {
    return Invalid("async-done's operand must be an async-start's tuple");
  }
  return operands[0]->tuple_elements()[1];
}

absl::StatusOr<Literal> HandleWhile(const HloInstruction& instr, Operands operands,
                                    Evaluator& evaluator) {
  return evaluator.RunWhile(instr, *operands[0]);
}

absl::StatusOr<Literal> HandleConditional(const HloInstruction& instr, Operands operands,
                                          Evaluator& evaluator) {
  const Literal& selector = *operands[0];
  int64_t branch = selector.shape().element_type() == hlo::PrimitiveType::kPred
                       ? (selector.GetInt(0) ? 0 : 1)
                       : selector.GetInt(0);
  const auto& branches = instr.called_computations();
  if (branch < 0 || branch >= static_cast<int64_t>(branches.size())) {
    branch = static_cast<int64_t>(branches.size()) - 1;  // XLA: out of range -> last.
  }
  return evaluator.Call(*branches[branch], operands.subspan(branch + 1, 1));
}

// copy, opt-barrier: the operand's value.
absl::StatusOr<Literal> HandleForward(const HloInstruction&, Operands operands, Evaluator&) {
  return *operands[0];
}

// after-all makes a token; add-dependency forwards its first operand.
absl::StatusOr<Literal> HandleToken(const HloInstruction& instr, Operands operands, Evaluator&) {
  if (operands.empty() || instr.opcode() == HloOpcode::kAfterAll) return Literal(instr.shape());
  return *operands[0];
}

// The error for a custom-call the executor cannot run, naming what it is where that is known.
std::string UnsupportedCustomCallMessage(const HloInstruction& instr) {
  const std::string& target = instr.attrs().custom_call_target;
  if (target == "CustomSPMDPartitioning") {
    return "a jax custom_partitioning call (custom-call \"CustomSPMDPartitioning\"): its body is "
           "a Python callback that the module does not contain, so no executor can run it";
  }
  return hlo::StrCat("custom-call target \"", target, "\" is not supported by the CPU executor");
}

// A registered custom-call target, else an identity custom-call (a copy, or the manual
// conversions' per-device meaning).
absl::StatusOr<Literal> HandleCustomCall(const HloInstruction& instr, Operands operands,
                                         Evaluator& evaluator) {
  if (CustomCallHandler handler = FindCustomCallHandler(instr.attrs().custom_call_target)) {
    return handler(instr, operands, evaluator);
  }
  if (!IsIdentityCustomCall(instr)) return Invalid(UnsupportedCustomCallMessage(instr));
  if (operands.size() == 1 && IsManualConversion(instr)) {
    return RunManualConversion(instr, *operands[0], evaluator);
  }
  if (operands.size() != 1 || !operands[0]->shape().Compatible(instr.shape())) {
    // SPMDFullToShardShape/ShardToFullShape change shape: they only mean something in a
    // partitioned program, where the partitioner has already rewritten them.
    return Invalid(hlo::StrCat("custom-call \"", instr.attrs().custom_call_target,
                               "\" changes the shape (manual sharding) and cannot "
                               "run unpartitioned"));
  }
  return *operands[0];
}

}  // namespace

void RegisterControlFlowOps(OpTable& table) {
  table[HloOpcode::kConstant] = &HandleConstant;
  table[HloOpcode::kTuple] = &HandleTuple;
  table[HloOpcode::kGetTupleElement] = &HandleGetTupleElement;
  table[HloOpcode::kCall] = &HandleCall;
  table[HloOpcode::kFusion] = &HandleFusion;
  table[HloOpcode::kAsyncStart] = &HandleAsyncStart;
  table[HloOpcode::kAsyncUpdate] = &HandleAsyncUpdate;
  table[HloOpcode::kAsyncDone] = &HandleAsyncDone;
  table[HloOpcode::kWhile] = &HandleWhile;
  table[HloOpcode::kConditional] = &HandleConditional;
  table[HloOpcode::kCopy] = &HandleForward;
  table[HloOpcode::kOptimizationBarrier] = &HandleForward;
  table[HloOpcode::kAfterAll] = &HandleToken;
  table[HloOpcode::kAddDependency] = &HandleToken;
  table[HloOpcode::kCustomCall] = &HandleCustomCall;
}

}  // namespace runtime

// Instruction-order execution with last-use freeing, and the control-flow opcodes (call, fusion,
// while with a trip limit, conditional).
#include "runtime/cpu/evaluator.h"

#include <optional>

#include "hlo/analysis/peak_memory.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;

absl::Status ErrorAt(const HloInstruction& instr, std::string_view message) {
  return absl::InvalidArgumentError(hlo::StrCat("instruction %", instr.name(), ": ", message));
}

// Whether running `computation` (and what it calls) twice on the same arguments gives the same
// result on this device: no collectives (peers' values may change), random numbers, feeds or
// custom-calls.
bool IsDeterministic(const hlo::HloComputation& computation) {
  for (const auto& instr : computation.instructions()) {
    const HloOpcode op = instr->opcode();
    if (hlo::GetHloOpcodeFamily(op) == hlo::HloOpcodeFamily::kCollective ||
        op == HloOpcode::kRng || op == HloOpcode::kRngBitGenerator ||
        op == HloOpcode::kRngGetAndUpdateState || op == HloOpcode::kInfeed ||
        op == HloOpcode::kOutfeed || op == HloOpcode::kSend || op == HloOpcode::kRecv ||
        op == HloOpcode::kCustomCall) {
      return false;
    }
    for (const hlo::HloComputation* called : instr->called_computations()) {
      if (!IsDeterministic(*called)) return false;
    }
  }
  return true;
}

// Whether `loop`'s condition can never change: it reads its state only through
// get-tuple-element of elements that the body returns unchanged (the body's root tuple holds
// get-tuple-element(body parameter, i) at each such index i, or the root is the parameter).
bool ConditionIsLoopInvariant(const HloInstruction& loop) {
  const hlo::HloComputation& cond = *loop.while_condition();
  const hlo::HloComputation& body = *loop.while_body();
  if (cond.num_parameters() != 1 || body.num_parameters() != 1 || !IsDeterministic(cond)) {
    return false;
  }
  const HloInstruction* body_param = body.parameter_instruction(0);
  const HloInstruction* body_root = body.root_instruction();
  if (body_param == nullptr || body_root == nullptr) return false;
  if (body_root == body_param) return true;
  if (body_root->opcode() != HloOpcode::kTuple) return false;
  const HloInstruction* cond_param = cond.parameter_instruction(0);
  for (const auto& instr : cond.instructions()) {
    for (const HloInstruction* operand : instr->operands()) {
      if (operand != cond_param) continue;
      if (instr->opcode() != HloOpcode::kGetTupleElement) return false;  // Reads it whole.
      const int64_t i = instr->tuple_index();
      if (i < 0 || i >= body_root->operand_count()) return false;
      const HloInstruction* next = body_root->operand(i);
      if (next->opcode() != HloOpcode::kGetTupleElement || next->operand(0) != body_param ||
          next->tuple_index() != i) {
        return false;
      }
    }
  }
  return true;
}

int64_t ByteSize(const Literal& literal) {
  int64_t bytes = static_cast<int64_t>(literal.data().size());
  for (const Literal& element : literal.tuple_elements()) bytes += ByteSize(element);
  return bytes;
}

}  // namespace

absl::StatusOr<Literal> Evaluator::RunEntry(std::vector<Literal> args) {
  const hlo::HloComputation* entry = module_.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  std::vector<const Literal*> params;
  for (const Literal& a : args) params.push_back(&a);
  return Execute(*entry, std::move(params), std::move(args));
}

absl::StatusOr<Literal> Evaluator::Call(const hlo::HloComputation& computation,
                                        absl::Span<const Literal* const> args) {
  return Execute(computation, std::vector<const Literal*>(args.begin(), args.end()), {});
}

const Evaluator::LoopFacts& Evaluator::FactsOf(const HloInstruction& loop) {
  auto [it, inserted] = loop_facts_.try_emplace(&loop);
  if (inserted) {
    it->second.deterministic =
        IsDeterministic(*loop.while_condition()) && IsDeterministic(*loop.while_body());
    it->second.condition_invariant = ConditionIsLoopInvariant(loop);
  }
  return it->second;
}

absl::StatusOr<Literal> Evaluator::RunWhile(const HloInstruction& instr, const Literal& init) {
  Literal state = init;
  const LoopFacts facts = FactsOf(instr);
  // A deterministic loop whose body leaves a small state unchanged while the condition holds
  // never ends: say so at once instead of running to the trip limit.
  const bool check_progress = facts.deterministic && ByteSize(init) <= kProgressCheckBytes;
  for (int64_t trips = 0;; ++trips) {
    const Literal* arg = &state;
    ASSIGN_OR_RETURN(Literal keep_going, Call(*instr.while_condition(), {&arg, 1}));
    if (keep_going.data().empty() || keep_going.data()[0] == 0) return state;
    if (trips == max_while_trips_) {
      return ErrorAt(instr, hlo::StrCat("while loop still running after ", max_while_trips_,
                                        " iterations (the executor's limit); its condition "
                                        "never became false"));
    }
    if (trips == 0 && facts.condition_invariant) {
      return ErrorAt(instr, "while loop never ends: its condition holds and reads only state "
                            "that the body passes through unchanged");
    }
    ASSIGN_OR_RETURN(Literal next, Call(*instr.while_body(), {&arg, 1}));
    if (check_progress && next == state) {
      return ErrorAt(instr, hlo::StrCat("while loop never ends: iteration ", trips + 1,
                                        " leaves its state unchanged while the condition "
                                        "holds (on these inputs)"));
    }
    state = std::move(next);
  }
}

absl::StatusOr<Literal> Evaluator::RunAsyncStart(const HloInstruction& instr,
                                                 absl::Span<const Literal* const> operands) {
  const hlo::Shape& shape = instr.shape();
  if (instr.called_computations().empty() || !shape.IsTuple() || shape.tuple_shapes_size() < 2) {
    return ErrorAt(instr, "async-start needs a called computation and a tuple result "
                          "(operands, result, context...)");
  }
  ASSIGN_OR_RETURN(Literal value, Call(*instr.called_computations()[0], operands));
  if (!value.shape().Compatible(shape.tuple_shapes(1))) {
    return ErrorAt(instr, hlo::StrCat("the called computation returns ",
                                      value.shape().ToString(false), " but async-start's result "
                                      "holds ", shape.tuple_shapes(1).ToString(false)));
  }
  Literal result(shape);
  std::vector<Literal>& elements = *result.mutable_tuple_elements();
  const hlo::Shape& operands_shape = shape.tuple_shapes(0);
  if (operands_shape.IsTuple() &&
      operands_shape.tuple_shapes_size() == static_cast<int64_t>(operands.size())) {
    for (size_t i = 0; i < operands.size(); ++i) {
      (*elements[0].mutable_tuple_elements())[i] = *operands[i];
    }
  } else if (operands.size() == 1 && operands[0]->shape().Compatible(operands_shape)) {
    elements[0] = *operands[0];
  }
  elements[1] = std::move(value);
  return result;
}

absl::StatusOr<Literal> Evaluator::Execute(const hlo::HloComputation& computation,
                                           std::vector<const Literal*> params,
                                           std::vector<Literal> owned_params) {
  const auto& instrs = computation.instructions();
  if (static_cast<int64_t>(params.size()) != computation.num_parameters()) {
    return absl::InvalidArgumentError(hlo::StrCat("computation ", computation.name(), " takes ",
                                                  computation.num_parameters(),
                                                  " arguments, got ", params.size()));
  }
  absl::flat_hash_map<const HloInstruction*, size_t> index;
  for (size_t i = 0; i < instrs.size(); ++i) {
    index[instrs[i].get()] = i;
    for (const HloInstruction* op : instrs[i]->operands()) {
      if (!index.contains(op)) {
        return ErrorAt(*instrs[i], hlo::StrCat("operand %", op->name(),
                                               " is not computed before it in computation ",
                                               computation.name()));
      }
    }
  }
  auto root_it = index.find(computation.root_instruction());
  if (root_it == index.end()) {
    return absl::InvalidArgumentError(
        hlo::StrCat("computation ", computation.name(), " has no root"));
  }
  const size_t root = root_it->second;
  // Each value is freed after its last reader (the root's is kept: its last reader is "after
  // the end").
  const std::vector<size_t> last_use = hlo::LastReaders(computation);
  // values[i] owns what instruction i computed; value_ptrs[i] is what readers see (a borrowed
  // argument for parameters of called computations, else &*values[i]).
  std::vector<std::optional<Literal>> values(instrs.size());
  std::vector<const Literal*> value_ptrs(instrs.size(), nullptr);
  std::vector<const Literal*> operand_values;
  for (size_t i = 0; i < instrs.size(); ++i) {
    const HloInstruction& instr = *instrs[i];
    operand_values.clear();
    for (const HloInstruction* op : instr.operands()) {
      const Literal* v = value_ptrs[index.at(op)];
      if (v == nullptr) return ErrorAt(instr, hlo::StrCat("operand %", op->name(), " has no value"));
      operand_values.push_back(v);
    }
    if (instr.opcode() == HloOpcode::kParameter &&
        instr.parameter_number() >= static_cast<int64_t>(owned_params.size())) {
      value_ptrs[i] = params[instr.parameter_number()];  // Borrowed from the caller.
      continue;
    }
    absl::StatusOr<Literal> result;
    if (instr.opcode() == HloOpcode::kParameter) {
      result = std::move(owned_params[instr.parameter_number()]);
    } else if (OpHandler handler = FindOpHandler(instr.opcode())) {
      result = handler(instr, operand_values, *this);
    } else {
      return ErrorAt(instr, hlo::StrCat("opcode ", hlo::HloOpcodeString(instr.opcode()),
                                        " is not supported by the CPU executor"));
    }
    if (!result.ok()) {
      std::string message(result.status().message());
      if (message.rfind("instruction %", 0) == 0) return result.status();
      return absl::Status(result.status().code(),
                          hlo::StrCat("instruction %", instr.name(), ": ", message));
    }
    values[i] = *std::move(result);
    value_ptrs[i] = &*values[i];
    // Drop operands whose last use this was.
    for (const HloInstruction* op : instr.operands()) {
      size_t k = index.at(op);
      if (last_use[k] == i) {
        values[k].reset();
        value_ptrs[k] = nullptr;
      }
    }
    if (last_use[i] == i) {
      values[i].reset();
      value_ptrs[i] = nullptr;
    }
  }
  if (!values[root]) return Literal(*value_ptrs[root]);  // The root is a borrowed argument.
  return std::move(*values[root]);
}

}  // namespace runtime

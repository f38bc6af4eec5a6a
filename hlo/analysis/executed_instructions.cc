// Walks the call graph from the entry computation. A while body and condition are visited with
// the loop's static trip count multiplied in; the trip count comes from XLA's backend_config
// when present, else from the counted-loop pattern that XLA's windowed einsum and our own loops
// use:
//
//   init = (s32[], ...) tuple(c0, ...)          c0 = s32[] constant(0)
//   cond: ROOT lt = pred[] compare(gte(p, 0), constant(4)), direction=LT
//   body: ROOT t = tuple(add(gte(p, 0), constant(1)), ...)      -> 4 - 0 = 4 iterations
// Copies anywhere on those paths are read through (XLA's partitioned dumps have them).
#include "hlo/analysis/executed_instructions.h"

#include <cctype>
#include <string>

namespace hlo {
namespace {

// `instr` with the copies in front of it skipped (XLA's dumps copy loop counters and bounds).
const HloInstruction* ThroughCopies(const HloInstruction* instr) {
  while (instr->opcode() == HloOpcode::kCopy && instr->operand_count() == 1) {
    instr = instr->operand(0);
  }
  return instr;
}

std::optional<int64_t> IntConstant(const HloInstruction* instr) {
  instr = ThroughCopies(instr);
  if (instr->opcode() != HloOpcode::kConstant || !instr->attrs().literal) return std::nullopt;
  const Shape& shape = instr->shape();
  if (!shape.IsArray() || !IsIntegralType(shape.element_type()) || shape.num_elements() != 1) {
    return std::nullopt;
  }
  return instr->attrs().literal->GetInt(0);
}

// `{"known_trip_count":{"n":"8"}}` (XLA writes the number as a string).
std::optional<int64_t> TripCountFromBackendConfig(const std::string& config) {
  size_t at = config.find("\"known_trip_count\"");
  if (at == std::string::npos) return std::nullopt;
  at = config.find("\"n\"", at);
  if (at == std::string::npos) return std::nullopt;
  at = config.find(':', at);
  if (at == std::string::npos) return std::nullopt;
  ++at;
  while (at < config.size() && (config[at] == ' ' || config[at] == '"')) ++at;
  int64_t n = 0;
  size_t digits = 0;
  for (; at < config.size() && std::isdigit(static_cast<unsigned char>(config[at])); ++at) {
    if (++digits > 15) return std::nullopt;
    n = n * 10 + (config[at] - '0');
  }
  if (digits == 0) return std::nullopt;
  return n;
}

// The tuple index k when `instr` is get-tuple-element(parameter(0)), index=k.
std::optional<int64_t> LoopStateIndex(const HloInstruction* instr) {
  instr = ThroughCopies(instr);
  if (instr->opcode() != HloOpcode::kGetTupleElement) return std::nullopt;
  if (instr->operand(0)->opcode() != HloOpcode::kParameter) return std::nullopt;
  return instr->tuple_index();
}

// From the condition `compare(gte(p, k), constant(C)), direction=LT` (or its mirror, GT):
// {k, C}.
std::optional<std::pair<int64_t, int64_t>> CounterBound(const HloComputation& cond) {
  const HloInstruction* root = cond.root_instruction();
  if (root == nullptr || root->opcode() != HloOpcode::kCompare) return std::nullopt;
  const HloInstruction* counter = root->operand(0);
  const HloInstruction* bound = root->operand(1);
  ComparisonDirection dir = root->attrs().comparison_direction;
  if (dir == ComparisonDirection::kGt) {
    std::swap(counter, bound);
    dir = ComparisonDirection::kLt;
  }
  if (dir != ComparisonDirection::kLt) return std::nullopt;
  std::optional<int64_t> k = LoopStateIndex(counter);
  std::optional<int64_t> limit = IntConstant(bound);
  if (!k || !limit) return std::nullopt;
  return std::make_pair(*k, *limit);
}

// True when element `k` of the body's root tuple is gte(p, k) + 1.
bool IncrementsByOne(const HloComputation& body, int64_t k) {
  const HloInstruction* root = body.root_instruction();
  if (root == nullptr || root->opcode() != HloOpcode::kTuple || k >= root->operand_count()) {
    return false;
  }
  const HloInstruction* next = ThroughCopies(root->operand(k));
  if (next->opcode() != HloOpcode::kAdd) return false;
  for (int side = 0; side < 2; ++side) {
    std::optional<int64_t> index = LoopStateIndex(next->operand(side));
    std::optional<int64_t> step = IntConstant(next->operand(1 - side));
    if (index && *index == k && step && *step == 1) return true;
  }
  return false;
}

std::optional<int64_t> TripCountFromPattern(const HloInstruction& loop) {
  std::optional<std::pair<int64_t, int64_t>> bound = CounterBound(*loop.while_condition());
  if (!bound) return std::nullopt;
  const auto [k, limit] = *bound;
  const HloInstruction* init = loop.operand(0);
  if (init->opcode() != HloOpcode::kTuple || k >= init->operand_count()) return std::nullopt;
  std::optional<int64_t> start = IntConstant(init->operand(k));
  if (!start || !IncrementsByOne(*loop.while_body(), k)) return std::nullopt;
  return std::max<int64_t>(0, limit - *start);
}

// Whether `instr`'s called computations run whole as part of it (the while loop is walked by
// trip count). A sugared async op (`reduce-scatter-start(...), to_apply=sum`) calls only the
// wrapped op's combiner; the generic form's `calls=` computation is the work itself.
bool VisitsCallees(const HloInstruction& instr) {
  return HasOpcodeFlag(instr.opcode(), op_traits::kRunsCallees) &&
         !instr.attrs().async_wrapped_opcode.has_value();
}

void Walk(const HloComputation& comp, int64_t executions, const ExecutedInstructionVisitor& visit) {
  for (const auto& instr : comp.instructions()) {
    visit(*instr, executions);
    if (instr->opcode() == HloOpcode::kWhile) {
      const std::optional<int64_t> trips = StaticTripCount(*instr);
      Walk(*instr->while_condition(), executions * (trips ? *trips + 1 : 1), visit);
      Walk(*instr->while_body(), executions * trips.value_or(1), visit);
    } else if (VisitsCallees(*instr)) {
      for (const HloComputation* callee : instr->called_computations()) {
        Walk(*callee, executions, visit);
      }
    }
  }
}

}  // namespace

std::optional<int64_t> StaticTripCount(const HloInstruction& while_instr) {
  if (std::optional<int64_t> n = TripCountFromBackendConfig(while_instr.attrs().backend_config)) {
    return n;
  }
  return TripCountFromPattern(while_instr);
}

void ForEachExecutedInstruction(const HloModule& module, const ExecutedInstructionVisitor& visit) {
  if (module.entry_computation() != nullptr) Walk(*module.entry_computation(), 1, visit);
}

}  // namespace hlo

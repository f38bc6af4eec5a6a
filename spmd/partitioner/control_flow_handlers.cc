// While, conditional and call: the called computations are partitioned too.
//
// A while loop keeps its state in the while's sharding S on every iteration: the init value
// is resharded to S, the body is partitioned with its parameter in S and its root resharded to
// S, and the condition with its parameter in S and its pred root replicated (every device must
// take the same decision). A conditional's branch index is replicated; each branch receives its
// operand in the branch parameter's sharding (else the operand's own) and returns the
// conditional's sharding. A call passes its operands as they are (or as the callee's parameters
// are annotated) and returns the call's sharding. Inside manual subgroups "replicated" means
// whole within each group, so each group may take its own branch or trip count. On 2 devices:
//
//   %w = (s32[], f32[8,4]) while(%init), sharding={{replicated}, {devices=[2,1]<=[2]}}
//   -> %w.spmd = (s32[], f32[4,4]) while(%init.spmd), condition=%cond.spmd, body=%body.spmd
//      (the body computes on f32[4,4] blocks; nothing is gathered around the loop).
#include <vector>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

// The sharding of a value every device must agree on (a loop condition, a branch index)
// beside `like`: whole within the manual subgroups of `like`, else replicated.
HloSharding AgreedSharding(const HloSharding& like, const Shape& shape) {
  if (absl::StatusOr<HloSharding> whole = WholeInManualGroups(like, shape); whole.ok()) {
    return *std::move(whole);
  }
  return shape.IsTuple() ? HloSharding::SingleTuple(shape, HloSharding::Replicate())
                         : HloSharding::Replicate();
}

// The sharding `callee`'s parameter `i` receives `operand` in: the parameter's annotation,
// else the operand's current sharding (nothing moves).
absl::StatusOr<HloSharding> ArgumentSharding(const HloComputation& callee, int64_t i,
                                             const HloInstruction& operand,
                                             PartitionContext& ctx) {
  const HloInstruction* param = i < callee.num_parameters() ? callee.parameter_instruction(i) : nullptr;
  if (param != nullptr && param->has_sharding()) {
    const HloSharding& s = param->sharding();
    return param->shape().IsTuple() && !s.IsTuple() ? HloSharding::SingleTuple(param->shape(), s)
                                                    : s;
  }
  ASSIGN_OR_RETURN(const PartitionedValue* value, ctx.Get(&operand));
  return value->sharding;
}

// Records the clone of `original` with `operands` and `called` computations, sharded
// `sharding`.
absl::Status SetClone(const HloInstruction& original, const HloSharding& sharding,
                      std::vector<HloInstruction*> operands,
                      const std::vector<HloComputation*>& called, PartitionContext& ctx) {
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, original.shape()));
  HloInstruction* clone = CloneWithOperands(original, local, std::move(operands), ctx);
  for (size_t i = 0; i < called.size(); ++i) clone->set_called_computation(i, called[i]);
  ctx.Set(&original, {clone, sharding, original.shape()});
  return absl::OkStatus();
}

absl::Status HandleWhile(const HloInstruction& original, const HloSharding& sharding,
                         PartitionContext& ctx) {
  ASSIGN_OR_RETURN(HloInstruction * init, ctx.GetInSharding(original.operand(0), sharding));
  const HloComputation& condition = *original.while_condition();
  ASSIGN_OR_RETURN(HloComputation * cond,
                   PartitionCalledComputation(
                       condition, {sharding},
                       AgreedSharding(sharding, condition.root_instruction()->shape()), ctx));
  ASSIGN_OR_RETURN(HloComputation * body,
                   PartitionCalledComputation(*original.while_body(), {sharding}, sharding, ctx));
  return SetClone(original, sharding, {init}, {cond, body}, ctx);
}

absl::Status HandleConditional(const HloInstruction& original, const HloSharding& sharding,
                               PartitionContext& ctx) {
  const HloInstruction* selector = original.operand(0);
  ASSIGN_OR_RETURN(HloInstruction * index,
                   ctx.GetInSharding(selector, AgreedSharding(sharding, selector->shape())));
  std::vector<HloInstruction*> operands = {index};
  std::vector<HloComputation*> branches;
  for (size_t b = 0; b < original.called_computations().size(); ++b) {
    const HloComputation& branch = *original.called_computations()[b];
    const HloInstruction& operand = *original.operand(b + 1);
    ASSIGN_OR_RETURN(HloSharding in, ArgumentSharding(branch, 0, operand, ctx));
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(&operand, in));
    ASSIGN_OR_RETURN(HloComputation * partitioned,
                     PartitionCalledComputation(branch, {in}, sharding, ctx));
    operands.push_back(value);
    branches.push_back(partitioned);
  }
  return SetClone(original, sharding, std::move(operands), branches, ctx);
}

absl::Status HandleCall(const HloInstruction& original, const HloSharding& sharding,
                        PartitionContext& ctx) {
  const HloComputation& callee = *original.called_computations().front();
  std::vector<HloInstruction*> operands;
  std::vector<HloSharding> params;
  for (int64_t i = 0; i < original.operand_count(); ++i) {
    ASSIGN_OR_RETURN(HloSharding in, ArgumentSharding(callee, i, *original.operand(i), ctx));
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(original.operand(i), in));
    operands.push_back(value);
    params.push_back(std::move(in));
  }
  ASSIGN_OR_RETURN(HloComputation * partitioned,
                   PartitionCalledComputation(callee, params, sharding, ctx));
  return SetClone(original, sharding, std::move(operands), {partitioned}, ctx);
}

}  // namespace

void RegisterControlFlowHandlers(HandlerTable& table) {
  table[HloOpcode::kWhile] = &HandleWhile;
  table[HloOpcode::kConditional] = &HandleConditional;
  table[HloOpcode::kCall] = &HandleCall;
}

}  // namespace spmd

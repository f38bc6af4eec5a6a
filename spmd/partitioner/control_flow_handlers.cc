// While, conditional and call: the called computations are partitioned too.
//
// A while loop keeps its state in the while's sharding S on every iteration (unannotated:
// replicated, XLA's rule; propagation gives loops the sharding their state, body and condition
// share): the init value is resharded to S, the body is partitioned with its parameter in S and
// its root resharded to S, and the condition with its parameter in S and its pred root
// replicated (every device must take the same decision). A conditional's branch index is
// replicated; each branch receives its operand in the branch parameter's sharding (else the
// operand's own) and returns the conditional's sharding. A call passes its operands as they
// are (or as the callee's parameters are annotated) and returns the call's sharding
// (unannotated: what the callee produces). A branch index or loop condition in manual
// subgroups (whole within each group) lets each group take its own branch or trip count; the
// results are then per group (replicated leaves become whole within each group), a branch
// operand not yet inside the groups enters them before the conditional (whole within each
// group), and every collective made inside the branches or the loop must stay within one
// group (the other group's devices may never get there): else an error naming the
// instruction it serves. On 2 devices:
//
//   %w = (s32[], f32[8,4]) while(%init), sharding={{replicated}, {devices=[2,1]<=[2]}}
//   -> %w.spmd = (s32[], f32[4,4]) while(%init.spmd), condition=%cond.spmd, body=%body.spmd
//      (the body computes on f32[4,4] blocks; nothing is gathered around the loop).
#include <vector>

#include "hlo/analysis/uniform_values.h"
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

HloSharding ReplicatedFor(const Shape& shape) {
  return shape.IsTuple() ? HloSharding::SingleTuple(shape, HloSharding::Replicate())
                         : HloSharding::Replicate();
}

// `sharding` of `shape` with each leaf that is neither {manual} nor in manual subgroups
// (replicated or tiled across all devices) made whole within each manual group of `groups`,
// for a loop or branch that each group runs on its own decision. With `per_group_values` the
// value may differ between the groups (a result), so a leaf tiled across them cannot hold it:
// an error naming it; else (an operand, resharded before the branch) any leaf can enter.
// A leaf in manual subgroups must be in the groups of `groups` (SameManualGroups): in other
// groups no group holds both the decision and the value, and an error names the leaf.
absl::StatusOr<HloSharding> InManualGroups(const HloSharding& sharding, const Shape& shape,
                                           const HloSharding& groups,
                                           const HloInstruction& original, bool per_group_values) {
  const std::vector<Shape> shapes = shape.leaf_shapes();
  const HloSharding normalized = sharding.NormalizeTupleSharding(shape);
  std::vector<HloSharding> leaves =
      normalized.IsTuple() ? normalized.tuple_elements() : std::vector<HloSharding>{normalized};
  if (leaves.size() != shapes.size()) {
    return absl::InvalidArgumentError(hlo::StrCat("sharding ", sharding.ToString(),
                                                  " does not match ", shape.ToString(false)));
  }
  const HloSharding* decider = ManualSubgroupLeaf(groups);
  if (decider == nullptr) {
    return absl::InvalidArgumentError(
        hlo::StrCat(groups.ToString(), " has no manual subgroup to decide per group"));
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (leaves[i].HasManualSubgroup() && !SameManualGroups(leaves[i], *decider)) {
      return absl::UnimplementedError(
          hlo::StrCat(hlo::HloOpcodeString(original.opcode()), " decides per manual subgroup of ",
                      decider->ToString(), ", but ", per_group_values ? "result" : "operand",
                      " leaf ", i, " is in other manual groups, ", leaves[i].ToString(),
                      ": no group holds both its decision and that value"));
    }
    if (leaves[i].HasManualSubgroup() || leaves[i].IsManual()) continue;
    if (per_group_values && !leaves[i].IsReplicated()) {
      return absl::UnimplementedError(hlo::StrCat(
          hlo::HloOpcodeString(original.opcode()), " decides per manual subgroup (",
          groups.ToString(), "), so its results differ between groups, but result leaf ", i,
          " is sharded ", leaves[i].ToString(), " across the groups; shard it inside them"));
    }
    ASSIGN_OR_RETURN(leaves[i], WholeInManualGroups(groups, shapes[i]));
  }
  if (!shape.IsTuple()) return leaves.front();
  return HloSharding::Tuple(std::move(leaves));
}

// The sharding `callee`'s parameter `i` receives `operand` in: the parameter's annotation,
// else the operand's current sharding (nothing moves).
absl::StatusOr<HloSharding> ArgumentSharding(const HloComputation& callee, int64_t i,
                                             const HloInstruction& operand,
                                             PartitionContext& ctx) {
  const HloInstruction* param = i < callee.num_parameters() ? callee.parameter_instruction(i) : nullptr;
  if (param != nullptr && param->has_sharding()) {
    return param->sharding().NormalizeTupleSharding(param->shape());
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

// A while loop. When the state has manual subgroups, the condition may depend on them: it is
// partitioned once to see; a per-group condition makes the whole state per group.
absl::Status HandleWhile(const HloInstruction& original, const HloSharding& sharding,
                         PartitionContext& ctx) {
  const HloComputation& condition = *original.while_condition();
  const Shape& pred = condition.root_instruction()->shape();
  HloSharding state = sharding;
  HloSharding decision = ReplicatedFor(pred);
  bool per_group = false;
  if (ManualSubgroupLeaf(sharding) != nullptr) {
    HloSharding own = HloSharding::Replicate();
    // The probe's decisions are not the program's: its log lines and counts are dropped.
    const size_t lines = ctx.log().lines.size();
    const size_t origins = ctx.log().origins.size();
    const PartitionLog counts = {ctx.log().full_rematerializations,
                                 ctx.log().replicated_fallbacks,
                                 ctx.log().replicated_fallback_bytes,
                                 {}};
    ASSIGN_OR_RETURN(HloComputation * probe,
                     PartitionCalledComputation(condition, {sharding}, nullptr, ctx, &own));
    ctx.log().lines.resize(lines);
    ctx.log().origins.erase(ctx.log().origins.begin() + origins, ctx.log().origins.end());
    ctx.log().full_rematerializations = counts.full_rematerializations;
    ctx.log().replicated_fallbacks = counts.replicated_fallbacks;
    ctx.log().replicated_fallback_bytes = counts.replicated_fallback_bytes;
    RETURN_IF_ERROR(ctx.output()->parent()->RemoveComputation(probe));
    if (const HloSharding* groups = ManualSubgroupLeaf(own)) {
      ASSIGN_OR_RETURN(decision, WholeInManualGroups(*groups, pred));
      // A condition alike on every device (a counter from a constant: JAX's scan) is not each
      // group's own decision: the state keeps its sharding, the collectives may cross groups.
      per_group = !hlo::LoopDecidesUniformly(original);
      if (per_group) {
        ASSIGN_OR_RETURN(state, InManualGroups(sharding, original.shape(), *groups, original,
                                               /*per_group_values=*/true));
      }
    }
  }
  // Each group runs its own trip count: the loop's collectives stay inside the groups.
  const HloSharding* groups = per_group ? ManualSubgroupLeaf(decision) : nullptr;
  ASSIGN_OR_RETURN(HloInstruction * init, ctx.GetInSharding(original.operand(0), state));
  ASSIGN_OR_RETURN(HloComputation * cond,
                   PartitionCalledComputation(condition, {state}, &decision, ctx, nullptr, groups));
  ASSIGN_OR_RETURN(
      HloComputation * body,
      PartitionCalledComputation(*original.while_body(), {state}, &state, ctx, nullptr, groups));
  return SetClone(original, state, {init}, {cond, body}, ctx);
}

// A conditional. A branch index in manual subgroups lets each group take its own branch, so
// the results are per group, the operands enter the groups before the branch, and the
// branches' collectives stay inside the groups.
absl::Status HandleConditional(const HloInstruction& original, const HloSharding& sharding,
                               PartitionContext& ctx) {
  const HloInstruction* selector = original.operand(0);
  ASSIGN_OR_RETURN(const PartitionedValue* decided, ctx.Get(selector));
  HloSharding result = sharding;
  HloSharding decision = ReplicatedFor(selector->shape());
  // A copy: the context's values may move while the branches are partitioned.
  const HloSharding index_sharding = decided->sharding;
  const HloSharding* groups = ManualSubgroupLeaf(index_sharding);
  if (groups != nullptr) {
    ASSIGN_OR_RETURN(decision, WholeInManualGroups(*groups, selector->shape()));
    ASSIGN_OR_RETURN(result, InManualGroups(sharding, original.shape(), *groups, original,
                                            /*per_group_values=*/true));
  }
  ASSIGN_OR_RETURN(HloInstruction * index, ctx.GetInSharding(selector, decision));
  std::vector<HloInstruction*> operands = {index};
  std::vector<HloComputation*> branches;
  for (size_t b = 0; b < original.called_computations().size(); ++b) {
    const HloComputation& branch = *original.called_computations()[b];
    const HloInstruction& operand = *original.operand(b + 1);
    ASSIGN_OR_RETURN(HloSharding in, ArgumentSharding(branch, 0, operand, ctx));
    if (groups != nullptr) {
      ASSIGN_OR_RETURN(in, InManualGroups(in, operand.shape(), *groups, original,
                                          /*per_group_values=*/false));
    }
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(&operand, in));
    ASSIGN_OR_RETURN(HloComputation * partitioned,
                     PartitionCalledComputation(branch, {in}, &result, ctx, nullptr, groups));
    operands.push_back(value);
    branches.push_back(partitioned);
  }
  return SetClone(original, result, std::move(operands), branches, ctx);
}

absl::Status HandleCall(const HloInstruction& original, const HloSharding& sharding,
                        PartitionContext& ctx) {
  const HloComputation& callee = *original.called_computations().front();
  std::vector<HloInstruction*> operands;
  std::vector<HloSharding> params;
  for (int64_t i = 0; i < original.operand_count(); ++i) {
    ASSIGN_OR_RETURN(HloSharding in, ArgumentSharding(callee, i, *original.operand(i), ctx));
    // A parameter the callee never reads takes zeros of its shard's shape: nothing moves to
    // fill it (XLA inlines the call, and its operand dies).
    const HloInstruction* param = callee.parameter_instruction(i);
    HloInstruction* value = nullptr;
    if (param != nullptr && UnreadArrayParameter(callee, *param)) {
      ASSIGN_OR_RETURN(Shape local, LocalShape(in, param->shape()));
      value = ctx.builder().Zeros(local);
    } else {
      ASSIGN_OR_RETURN(value, ctx.GetInSharding(original.operand(i), in));
    }
    operands.push_back(value);
    params.push_back(std::move(in));
  }
  // An unannotated call returns what its computation produces.
  HloSharding result = sharding;
  ASSIGN_OR_RETURN(
      HloComputation * partitioned,
      PartitionCalledComputation(callee, params, original.has_sharding() ? &sharding : nullptr, ctx,
                                 &result, /*groups=*/nullptr,
                                 /*unread_get_zeros=*/true));
  return SetClone(original, result, std::move(operands), {partitioned}, ctx);
}

}  // namespace

void RegisterControlFlowHandlers(HandlerTable& table) {
  table[HloOpcode::kWhile] = &HandleWhile;
  table[HloOpcode::kConditional] = &HandleConditional;
  table[HloOpcode::kCall] = &HandleCall;
}

}  // namespace spmd

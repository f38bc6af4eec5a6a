// Candidate costs: each reshard a candidate strategy needs, priced by the planner's plan.
#include "spmd/partitioner/candidate_cost.h"

#include "hlo/status_macros.h"

namespace spmd {

using hlo::HloInstruction;
using hlo::HloSharding;

absl::StatusOr<double> ReshardCost(const HloInstruction* operand, const HloSharding& to,
                                   PartitionContext& ctx) {
  ASSIGN_OR_RETURN(const PartitionedValue* value, ctx.Get(operand));
  if (value->sharding == to) return 0.0;
  if (operand->opcode() == hlo::HloOpcode::kBroadcast && operand->operand(0)->shape().IsArray() &&
      operand->operand(0)->shape().rank() == 0) {
    return 0.0;  // GetInSharding rebuilds a scalar broadcast in place.
  }
  return ResultCost(operand->shape(), value->sharding, to, ctx);
}

absl::StatusOr<double> ResultCost(const hlo::Shape& shape, const HloSharding& from,
                                  const HloSharding& to, PartitionContext& ctx) {
  if (from == to) return 0.0;
  ASSIGN_OR_RETURN(std::shared_ptr<const ReshardPlan> plan,
                   ctx.planner().Plan(shape, from, to, ctx.num_devices()));
  return plan->cost_us;
}

}  // namespace spmd

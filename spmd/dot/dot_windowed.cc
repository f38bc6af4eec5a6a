#include "spmd/dot/dot_windowed.h"

#include <algorithm>

#include "hlo/sharding/shard_geometry.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace spmd {
namespace {

using hlo::HloSharding;
using hlo::Shape;

absl::Status NotApplicable(const char* why) { return absl::FailedPreconditionError(why); }

// Replaces `comm_us` of communication and the whole compute by a ring loop of `steps` steps.
void ApplyLoop(DotCandidate& w, double comm_us, int64_t block_bytes, int64_t steps,
               const std::vector<std::vector<int64_t>>& groups, const DeviceModel& model) {
  const double transfer =
      EstimateCollective(CollectiveKind::kCollectivePermute, block_bytes, 2, model.LinkFor(groups))
          .time_us;
  const double compute_step = w.compute_us / static_cast<double>(steps);
  w.compute_us = static_cast<double>(steps - 1) * std::max(compute_step, transfer) + compute_step;
  w.note = hlo::StrCat(steps, " steps, each ", compute_step, " us of compute against a ",
                       transfer, " us transfer of ", block_bytes, " B (replacing ", comm_us,
                       " us of collectives)");
}

}  // namespace

absl::StatusOr<DotCandidate> AllGatherLoopVariant(const DotCandidate& base, int64_t operand,
                                                  const WindowedCostInputs& in) {
  const DotProblem& p = in.problem;
  const Shape& shape = operand == 0 ? p.lhs_shape : p.rhs_shape;
  const HloSharding& current = operand == 0 ? p.lhs_current : p.rhs_current;
  const HloSharding& needed = operand == 0 ? base.lhs : base.rhs;
  if (shape.byte_size() < in.threshold_bytes) return NotApplicable("under the threshold");
  ASSIGN_OR_RETURN(std::shared_ptr<const ReshardPlan> plan,
                   in.planner.Plan(shape, current, needed, p.num_devices));
  if (plan->steps.size() != 1 || plan->steps[0].kind != ReshardStepKind::kAllGather ||
      plan->steps[0].dimensions.size() != 1) {
    return NotApplicable("the operand's reshard is not one all-gather");
  }
  const ReshardStep& step = plan->steps[0];
  const int64_t dim = step.dimensions[0];
  const int64_t g = step.group_size;
  const int64_t tiles = current.tile_assignment().dim(dim);
  if (g < 2 || shape.dimensions()[dim] % tiles != 0) return NotApplicable("uneven blocks");
  ASSIGN_OR_RETURN(Shape block, hlo::PaddedShardShape(current, shape));
  DotCandidate w = base;
  w.family = "windowed-ag";
  w.windowed = {WindowedKind::kAllGatherLoop, operand, dim, -1, g,
                step.replica_groups.Expanded()};
  w.operands_us -= step.cost_us;
  w.comm_bytes -= step.bytes_received;
  w.comm_bytes += (g - 1) * block.byte_size();
  ASSIGN_OR_RETURN(Shape gathered, hlo::PaddedShardShape(needed, shape));
  w.memory_bytes += block.byte_size() - gathered.byte_size();
  ApplyLoop(w, step.cost_us, block.byte_size(), g, w.windowed.groups, in.model);
  return w;
}

absl::StatusOr<DotCandidate> ReduceScatterLoopVariant(const DotCandidate& base,
                                                      const WindowedCostInputs& in) {
  const DotProblem& p = in.problem;
  if (base.finish != DotFinish::kReduceScatter) return NotApplicable("no reduce-scatter");
  if (p.result_shape.byte_size() < in.threshold_bytes) return NotApplicable("under threshold");
  ASSIGN_OR_RETURN(Shape local, hlo::PaddedShardShape(base.local, p.result_shape));
  const int64_t g = static_cast<int64_t>(base.pending_groups.front().size());
  const int64_t d = base.scatter_dim;
  if (g < 2 || local.dimensions()[d] % g != 0) return NotApplicable("uneven blocks");
  const int64_t block_bytes = local.byte_size() / g;
  DotCandidate w = base;
  w.family = "windowed-rs";
  w.windowed = {WindowedKind::kReduceScatterLoop, -1, -1, d, g, base.pending_groups};
  const CollectiveCost rs = EstimateCollective(CollectiveKind::kReduceScatter, local.byte_size(),
                                               g, in.model.LinkFor(base.pending_groups));
  w.comm_bytes += (g - 1) * block_bytes - rs.bytes_received;
  w.finish_us = 0;
  ApplyLoop(w, base.finish_us, block_bytes, g, w.windowed.groups, in.model);
  return w;
}

}  // namespace spmd

#include "spmd/dot/dot_windowed.h"

#include <algorithm>
#include <string>

#include "hlo/sharding/shard_geometry.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace spmd {
namespace {

using hlo::HloSharding;
using hlo::Shape;

absl::Status NotApplicable(const char* why) { return absl::FailedPreconditionError(why); }

std::string LoopStepNote(const DeviceModel& model) {
  if (model.loop_step_us <= 0) return "";
  return hlo::StrCat(", plus ", model.loop_step_us, " us per iteration");
}

// Replaces `comm_us` of communication and the whole compute by a ring loop of `steps` steps.
void ApplyLoop(DotCandidate& w, double comm_us, int64_t block_bytes, int64_t steps,
               const LinkModel& link, const DeviceModel& model) {
  const double transfer =
      EstimateCollective(CollectiveKind::kCollectivePermute, block_bytes, 2, link).time_us;
  const double compute_step = w.compute_us / static_cast<double>(steps);
  w.compute_us = static_cast<double>(steps - 1) * std::max(compute_step, transfer) + compute_step +
                 static_cast<double>(steps) * model.loop_step_us;
  w.note = hlo::StrCat(steps, " steps, each ", compute_step, " us of compute against a ", transfer,
                       " us transfer of ", block_bytes, " B", LoopStepNote(model), " (replacing ",
                       comm_us, " us of collectives)");
}

// The bidirectional ring: one own-block step, floor((g-1)/2) steps of two blocks while one
// block moves each way, and for even g a last one-way step.
void ApplyBidirectionalLoop(DotCandidate& w, double comm_us, int64_t block_bytes, int64_t steps,
                            const LinkModel& link, const DeviceModel& model) {
  const double transfer =
      EstimateCollective(CollectiveKind::kCollectivePermute, block_bytes, 2, link).time_us;
  const double block = w.compute_us / static_cast<double>(steps);
  const int64_t pairs = (steps - 1) / 2;
  const int64_t iterations = 1 + pairs + (steps % 2 == 0 ? 1 : 0);
  w.compute_us = block + static_cast<double>(pairs) * std::max(2 * block, transfer) +
                 (steps % 2 == 0 ? std::max(block, transfer) : 0.0) +
                 static_cast<double>(iterations) * model.loop_step_us;
  w.note = hlo::StrCat(iterations - 1, " two-way steps over ", steps, " blocks of ", block,
                       " us compute against a ", transfer, " us transfer of ", block_bytes,
                       " B each way", LoopStepNote(model), " (replacing ", comm_us,
                       " us of collectives)");
}

}  // namespace

absl::StatusOr<DotCandidate> AllGatherLoopVariant(const DotCandidate& base, int64_t operand,
                                                  bool bidirectional,
                                                  const WindowedCostInputs& in) {
  const DotProblem& p = in.problem;
  const Shape& shape = operand == 0 ? p.lhs_shape : p.rhs_shape;
  const HloSharding& current = operand == 0 ? p.lhs_current : p.rhs_current;
  const HloSharding& needed = operand == 0 ? base.lhs : base.rhs;
  if (shape.byte_size() < in.threshold_bytes) return NotApplicable("under the threshold");
  if (base.operand_rebuilt[operand]) return NotApplicable("the operand is rebuilt, not moved");
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
  if (bidirectional && g < 3) return NotApplicable("a ring of two has one direction");
  ASSIGN_OR_RETURN(Shape block, hlo::PaddedShardShape(current, shape));
  DotCandidate w = base;
  w.family = bidirectional ? "windowed-ag-bidir" : "windowed-ag";
  w.windowed = {WindowedKind::kAllGatherLoop, operand, dim, -1, g,
                step.replica_groups.Expanded(), bidirectional};
  // The loop replaces what the base counted for this operand (its share of a gather that
  // other dots reading it alike also use); the loop itself serves this dot alone.
  w.operands_us -= base.operand_us[operand];
  w.comm_bytes -= static_cast<int64_t>(base.operand_bytes[operand]);
  w.operand_us[operand] = 0;
  w.operand_bytes[operand] = 0;
  w.comm_bytes += (g - 1) * block.byte_size();
  ASSIGN_OR_RETURN(Shape gathered, hlo::PaddedShardShape(needed, shape));
  w.memory_bytes += block.byte_size() - gathered.byte_size();
  if (bidirectional) {
    ApplyBidirectionalLoop(w, base.operand_us[operand], block.byte_size(), g, in.planner.link(),
                           in.model);
  } else {
    ApplyLoop(w, base.operand_us[operand], block.byte_size(), g, in.planner.link(), in.model);
  }
  return w;
}

absl::StatusOr<DotCandidate> ReduceScatterLoopVariant(const DotCandidate& base,
                                                      bool bidirectional,
                                                      const WindowedCostInputs& in) {
  const DotProblem& p = in.problem;
  if (base.finish != DotFinish::kReduceScatter) return NotApplicable("no reduce-scatter");
  if (p.result_shape.byte_size() < in.threshold_bytes) return NotApplicable("under threshold");
  ASSIGN_OR_RETURN(Shape local, hlo::PaddedShardShape(base.local, p.result_shape));
  const int64_t g = static_cast<int64_t>(base.pending_groups.front().size());
  const int64_t d = base.scatter_dim;
  if (g < 2 || local.dimensions()[d] % g != 0) return NotApplicable("uneven blocks");
  if (bidirectional && (g < 3 || (local.dimensions()[d] / g) % 2 != 0)) {
    return NotApplicable("a two-way ring needs three members and blocks that halve");
  }
  const int64_t block_bytes = local.byte_size() / g;
  DotCandidate w = base;
  w.family = bidirectional ? "windowed-rs-bidir" : "windowed-rs";
  w.windowed = {WindowedKind::kReduceScatterLoop, -1, -1, d, g, base.pending_groups,
                bidirectional};
  const CollectiveCost rs =
      EstimateCollective(CollectiveKind::kReduceScatter, local.byte_size(), g, in.planner.link());
  w.comm_bytes += (g - 1) * block_bytes - rs.bytes_received;
  w.finish_us = 0;
  // Two-way: each step moves half a block each way at once (one link per direction), so a
  // step's transfer is that of half a block.
  ApplyLoop(w, base.finish_us, bidirectional ? block_bytes / 2 : block_bytes, g, in.planner.link(),
            in.model);
  if (bidirectional) w.note += "; half-blocks travel both ways round the ring";
  return w;
}

}  // namespace spmd

// Candidate costs: each reshard a candidate strategy needs, priced by the planner's plan.
#include "spmd/partitioner/candidate_cost.h"

#include <algorithm>
#include <vector>

#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/partitioner/rebuild.h"

namespace spmd {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

absl::StatusOr<double> ReshardCost(const HloInstruction* operand, const HloSharding& to,
                                   PartitionContext& ctx) {
  ASSIGN_OR_RETURN(const PartitionedValue* value, ctx.Get(operand));
  if (value->sharding == to) return 0.0;
  ASSIGN_OR_RETURN(double moved, ResultCost(operand->shape(), value->sharding, to, ctx));
  std::optional<double> rebuilt = RebuildUs(operand, to, ctx);  // As GetInSharding chooses.
  return rebuilt ? std::min(*rebuilt, moved) : moved;
}

absl::StatusOr<double> ResultCost(const hlo::Shape& shape, const HloSharding& from,
                                  const HloSharding& to, PartitionContext& ctx) {
  if (from == to) return 0.0;
  ASSIGN_OR_RETURN(std::shared_ptr<const ReshardPlan> plan, ctx.PlanReshard(shape, from, to));
  return plan->cost_us;
}

const LinkModel& CollectiveLink(PartitionContext& ctx) { return ctx.planner().link(); }

absl::StatusOr<PartialSum> PlanPartialSum(const Shape& shape, const HloSharding& held,
                                          const std::vector<std::vector<int64_t>>& groups,
                                          const HloSharding& wanted, hlo::PrimitiveType sum_type,
                                          const Received& all_reduce, PartitionContext& ctx) {
  const Received reshard = ReshardReceived(shape, held, wanted, ctx);
  if (reshard.bytes >= kUnplannable) {
    return absl::UnimplementedError(
        hlo::StrCat("no reshard plan from ", held.ToString(), " to ", wanted.ToString()));
  }
  PartialSum best{-1, held, all_reduce + reshard};
  const int64_t g = groups.empty() ? 1 : static_cast<int64_t>(groups[0].size());
  if (g <= 1 || !wanted.IsTiled() || !(held.IsTiled() || held.IsReplicated())) return best;
  ASSIGN_OR_RETURN(Shape local, LocalShape(held, shape));
  const int64_t bytes = local.num_elements() * hlo::ByteWidth(sum_type);
  const CollectiveCost scatter =
      EstimateCollective(CollectiveKind::kReduceScatter, bytes, g, CollectiveLink(ctx));
  for (int64_t d = 0; d < shape.rank() && d < wanted.TiledDataRank(); ++d) {
    const int64_t tiles = held.TilesAlong(d);
    const int64_t block = local.dimensions(d), n = shape.dimensions(d);
    if (wanted.tile_assignment().dim(d) <= tiles || block % g != 0 ||
        block / g != (n + tiles * g - 1) / (tiles * g)) {
      continue;
    }
    absl::StatusOr<HloSharding> split = hlo::SplitAmongGroups(held, shape.rank(), d, groups);
    if (!split.ok()) continue;
    const Received after = Received::Of(scatter) + ReshardReceived(shape, *split, wanted, ctx);
    if (after.us < best.moved.us) best = {d, *std::move(split), after};
  }
  return best;
}

Received ReshardReceived(const Shape& shape, const HloSharding& from, const HloSharding& to,
                         PartitionContext& ctx) {
  if (from == to) return {};
  auto plan = ctx.PlanReshard(shape, from, to);
  if (!plan.ok()) return Received::Unplannable();
  return {(*plan)->bytes_received_per_device, (*plan)->cost_us};
}

Received ReshardReceived(const HloInstruction* operand, const HloSharding& target,
                         PartitionContext& ctx) {
  absl::StatusOr<const PartitionedValue*> now = ctx.Get(operand);
  if (!now.ok()) return Received::Unplannable();
  const std::vector<HloSharding>& made = ctx.ReshardedShardings(operand);
  if (std::find(made.begin(), made.end(), target) != made.end()) return {};  // Cached.
  Received moved = ReshardReceived(operand->shape(), (*now)->sharding, target, ctx);
  std::optional<double> rebuilt = RebuildUs(operand, target, ctx);  // As GetInSharding chooses.
  if (rebuilt && *rebuilt < moved.us) return {0, *rebuilt};
  return moved;
}

std::optional<HloSharding> SlicedTowards(const Shape& shape, const HloSharding& from,
                                         const HloSharding& to, PartitionContext& ctx) {
  if (from == to) return std::nullopt;
  auto plan = ctx.PlanReshard(shape, from, to);
  if (!plan.ok()) return std::nullopt;
  const std::vector<ReshardStep>& steps = (*plan)->steps;
  size_t sliced = 0;
  while (sliced < steps.size() && steps[sliced].kind == ReshardStepKind::kDynamicSlice) ++sliced;
  if (sliced == 0 || sliced == steps.size()) return std::nullopt;
  return steps[sliced - 1].sharding;
}

Received HaloReceived(const Shape& shape, const HloSharding& sharding, const WindowSplit& split,
                      PartitionContext& ctx) {
  if (!split.halo || split.geometry.shard == 0) return {};
  absl::StatusOr<Shape> local = LocalShape(sharding, shape);
  if (!local.ok()) return Received::Unplannable();
  const int64_t bytes = HaloElements(split.geometry) * (local->byte_size() / split.geometry.shard);
  return {bytes, HaloTimeUs(split.geometry, bytes, CollectiveLink(ctx))};
}

Received HalosReceived(const Shape& shape, const HloSharding& sharding,
                       const std::vector<WindowSplit>& splits, PartitionContext& ctx) {
  Received moved;
  for (const WindowSplit& split : splits) moved = moved + HaloReceived(shape, sharding, split, ctx);
  return moved;
}

}  // namespace spmd

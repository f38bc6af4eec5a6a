// The reshard planner: endpoints, fallback, plan assembly and the cache around the search of
// reshard_search.cc.
//
// Maximal endpoints are handled around the search: a maximal source is scattered by one
// all-to-all to some state, or broadcast (masked all-reduce) to replicated, and continues from
// there (CheapestPathFromMaximal), or moves by one collective-permute when the target is
// maximal elsewhere; a maximal target is reached as replicated and relabeled (its owner holds
// the value). Consecutive dynamic-slices merge into one step. Example:
//
//   {devices=[2,4]<=[8]} -> {devices=[2,1,4]<=[8] last_tile_dim_replicate}, f32[16,24]:
//     1. all-gather dims={1} groups=[2,4]<=[8] -> {devices=[2,1,4]<=[8] last_tile_dim_replicate}
//   i.e. per device  f32[8,6] -> all-gather(dimensions={1}) -> f32[8,24]   (576 bytes received)
#include "spmd/reshard/reshard_planner.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/unreduced.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/reshard/reshard_direct.h"
#include "spmd/reshard/reshard_exchange.h"
#include "spmd/reshard/reshard_search.h"
#include "spmd/reshard/reshard_state.h"

namespace spmd {
namespace {

using hlo::HloSharding;

using ShardedHops = std::vector<std::pair<SearchEdge, HloSharding>>;

absl::Status CheckInputs(const hlo::Shape& shape, const HloSharding& source,
                         const HloSharding& target, int64_t num_devices) {
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        hlo::StrCat("reshard: ", shape.ToString(false), " is not an array"));
  }
  if (num_devices < 1) return absl::InvalidArgumentError("reshard: no devices");
  for (const HloSharding* sharding : {&source, &target}) {
    RETURN_IF_ERROR(sharding->Validate(shape, num_devices));
    const HloSharding::Kind kind = sharding->kind();
    if (kind == HloSharding::Kind::kMaximal && sharding->maximal_device() >= num_devices) {
      return absl::InvalidArgumentError(
          hlo::StrCat("reshard: ", sharding->ToString(), " names a device beyond ", num_devices));
    }
    if (kind != HloSharding::Kind::kReplicated && kind != HloSharding::Kind::kMaximal &&
        kind != HloSharding::Kind::kTiled && kind != HloSharding::Kind::kUnreduced) {
      return absl::UnimplementedError(
          hlo::StrCat("reshard: cannot reshard ", sharding->ToStringWithoutMetadata()));
    }
  }
  return absl::OkStatus();
}

absl::Status AppendHops(std::vector<SearchHop> hops, ShardedHops& out) {
  for (SearchHop& hop : hops) {
    ASSIGN_OR_RETURN(HloSharding after, hop.after.ToSharding());
    out.emplace_back(std::move(hop.edge), std::move(after));
  }
  return absl::OkStatus();
}

ReshardStep ToStep(const SearchEdge& edge, const HloSharding& after) {
  ReshardStep step;
  step.kind = edge.kind;
  step.sharding = after;
  step.dimensions = edge.dims;
  if (!edge.groups.empty()) {
    step.replica_groups = MakeReplicaGroups(edge.groups);
    step.group_size = static_cast<int64_t>(edge.groups[0].size());
  }
  step.source_target_pairs = edge.pairs;
  step.bytes_received = edge.bytes;
  step.cost_us = edge.cost_us;
  return step;
}

// Merges consecutive dynamic-slices (one local slice does both).
ShardedHops MergeSlices(ShardedHops hops) {
  ShardedHops merged;
  for (auto& hop : hops) {
    if (!merged.empty() && hop.first.kind == ReshardStepKind::kDynamicSlice &&
        merged.back().first.kind == ReshardStepKind::kDynamicSlice) {
      std::vector<int64_t>& dims = merged.back().first.dims;
      dims.insert(dims.end(), hop.first.dims.begin(), hop.first.dims.end());
      std::sort(dims.begin(), dims.end());
      dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
      merged.back().second = std::move(hop.second);
      continue;
    }
    merged.push_back(std::move(hop));
  }
  return merged;
}

ReshardPlan Assemble(const hlo::Shape& shape, const HloSharding& source, const HloSharding& target,
                     int64_t num_devices, ShardedHops hops) {
  ReshardPlan plan;
  plan.shape = shape;
  plan.source = source;
  plan.target = target;
  plan.num_devices = num_devices;
  bool replicated_on_the_way = false;
  for (const auto& [edge, after] : MergeSlices(std::move(hops))) {
    plan.steps.push_back(ToStep(edge, after));
    plan.cost_us += edge.cost_us;
    plan.bytes_received_per_device += edge.bytes;
    replicated_on_the_way = replicated_on_the_way || after.IsReplicated();
  }
  plan.full_rematerialization = replicated_on_the_way && !source.IsReplicated() && target.IsTiled();
  return plan;
}

// The hops of a plan whose source is maximal.
absl::StatusOr<ShardedHops> FromMaximal(const HloSharding& source, const HloSharding& target,
                                        const StepCoster& coster) {
  ShardedHops hops;
  if (target.kind() == HloSharding::Kind::kMaximal) {
    hops.emplace_back(coster.MaximalPermute(source.maximal_device(), target.maximal_device()),
                      target);
    return hops;
  }
  const int64_t rank = static_cast<int64_t>(coster.shape_dims().size());
  ASSIGN_OR_RETURN(TileState to, TileState::FromSharding(target, rank, coster.num_devices()));
  RETURN_IF_ERROR(AppendHops(CheapestPathFromMaximal(to, coster), hops));
  return hops;
}

// The direct exchange from `from` to `to` as one hop, when the cells divide evenly.
std::optional<SearchHop> ExchangeHop(const TileState& from, const TileState& to,
                                     const StepCoster& coster, const LinkModel& link) {
  if (from == to) return std::nullopt;
  // An empty array has no cells to exchange (and a zero dim to divide by below).
  for (int64_t dim : coster.shape_dims()) {
    if (dim == 0) return std::nullopt;
  }
  absl::StatusOr<ExchangeSize> schedule = SizeExchange(from, to, coster.shape_dims());
  if (!schedule.ok() || schedule->rounds == 0) return std::nullopt;
  int64_t cell_bytes = coster.FullBytes();
  for (size_t d = 0; d < schedule->cell_dims.size(); ++d) {
    cell_bytes = cell_bytes / coster.shape_dims()[d] * schedule->cell_dims[d];
  }
  SearchEdge edge;
  edge.kind = ReshardStepKind::kExchange;
  edge.bytes = schedule->max_cells_received * cell_bytes;
  edge.cost_us =
      static_cast<double>(schedule->rounds) *
      EstimateCollective(CollectiveKind::kCollectivePermute, cell_bytes, 2, link).time_us;
  return SearchHop{std::move(edge), to};
}

// The direct all-to-all from `from` to `to` as one hop, when it applies (reshard_direct.h).
std::optional<SearchHop> DirectHop(const TileState& from, const TileState& to,
                                   const StepCoster& coster, const LinkModel& link) {
  std::optional<DirectAllToAll> direct = PlanDirectAllToAll(from, to, coster.shape_dims());
  if (!direct.has_value()) return std::nullopt;
  const int64_t n = from.num_devices();
  const int64_t g = static_cast<int64_t>(direct->groups.front().size());
  const CollectiveCost cost =
      EstimateCollective(CollectiveKind::kAllToAll, coster.FullBytes() / n, g, link);
  SearchEdge edge;
  edge.kind = ReshardStepKind::kDirectAllToAll;
  edge.factor = g;
  edge.groups = std::move(direct->groups);
  edge.bytes = cost.bytes_received;
  edge.cost_us = cost.time_us;
  return SearchHop{std::move(edge), to};
}

double HopsCost(const std::vector<SearchHop>& hops) {
  double cost = 0;
  for (const SearchHop& hop : hops) cost += hop.edge.cost_us;
  return cost;
}

int64_t HopsBytes(const std::vector<SearchHop>& hops) {
  int64_t bytes = 0;
  for (const SearchHop& hop : hops) bytes += hop.edge.bytes;
  return bytes;
}

}  // namespace

namespace {

// Whether a tiled `s` places data on exactly the devices 0..n-1.
bool CoversAllDevices(const HloSharding& s, int64_t n) {
  if (!s.IsTiled()) return true;
  std::vector<int64_t> devices = s.tile_assignment().Devices();
  if (static_cast<int64_t>(devices.size()) != n) return false;
  std::sort(devices.begin(), devices.end());
  for (int64_t i = 0; i < n; ++i) {
    if (devices[i] != i) return false;
  }
  return true;
}

// A plan through replicated for tilings over a subset of the devices (which the search's
// states cannot express): gather-subset or the searched path to replicated, then slice-subset
// or the searched path to the target. Counted as a full rematerialization.
absl::StatusOr<ReshardPlan> PlanThroughReplicated(const hlo::Shape& shape,
                                                  const HloSharding& source,
                                                  const HloSharding& target, int64_t n,
                                                  const LinkModel& link);

// The plan between two shardings without unreduced devices.
absl::StatusOr<ReshardPlan> PlanReducedReshard(const hlo::Shape& shape, const HloSharding& source,
                                               const HloSharding& target, int64_t num_devices,
                                               const LinkModel& link) {
  if (source == target) return Assemble(shape, source, target, num_devices, {});
  const StepCoster coster(shape, num_devices, link);
  ShardedHops hops;
  if (source.kind() == HloSharding::Kind::kMaximal) {
    ASSIGN_OR_RETURN(hops, FromMaximal(source, target, coster));
    return Assemble(shape, source, target, num_devices, std::move(hops));
  }
  if (!CoversAllDevices(source, num_devices) || !CoversAllDevices(target, num_devices)) {
    return PlanThroughReplicated(shape, source, target, num_devices, link);
  }
  const int64_t rank = shape.rank();
  const bool to_maximal = target.kind() == HloSharding::Kind::kMaximal;
  ASSIGN_OR_RETURN(TileState from, TileState::FromSharding(source, rank, num_devices));
  TileState to = TileState::Replicated(rank, num_devices);
  if (!to_maximal) {
    ASSIGN_OR_RETURN(to, TileState::FromSharding(target, rank, num_devices));
  }
  std::vector<SearchHop> path = CheapestPath(from, to, coster);
  // The direct exchange or all-to-all replaces the path when strictly cheaper (then fewer
  // bytes).
  for (std::optional<SearchHop> direct :
       {ExchangeHop(from, to, coster, link), DirectHop(from, to, coster, link)}) {
    if (!direct.has_value()) continue;
    const double path_cost = HopsCost(path);
    if (direct->edge.cost_us < path_cost ||
        (direct->edge.cost_us == path_cost && direct->edge.bytes < HopsBytes(path))) {
      path = {*std::move(direct)};
    }
  }
  RETURN_IF_ERROR(AppendHops(std::move(path), hops));
  if (to_maximal) hops.emplace_back(SearchEdge{}, target);  // A free relabel.
  return Assemble(shape, source, target, num_devices, std::move(hops));
}

absl::StatusOr<ReshardPlan> PlanThroughReplicated(const hlo::Shape& shape,
                                                  const HloSharding& source,
                                                  const HloSharding& target, int64_t n,
                                                  const LinkModel& link) {
  const HloSharding replicated = HloSharding::Replicate();
  ReshardPlan plan;
  if (!CoversAllDevices(source, n)) {
    if (shape.element_type() == hlo::PrimitiveType::kPred) {
      return absl::UnimplementedError(hlo::StrCat("reshard: gathering a pred array from ",
                                                  source.ToStringWithoutMetadata(),
                                                  ", which uses a subset of the devices"));
    }
    ASSIGN_OR_RETURN(hlo::Shape padded, hlo::PaddedShardShape(source, shape));
    int64_t full_bytes = padded.byte_size();
    for (int64_t d = 0; d < shape.rank(); ++d) {
      full_bytes *= source.tile_assignment().dim(d);
    }
    ReshardStep gather;
    gather.kind = ReshardStepKind::kGatherSubset;
    gather.sharding = replicated;
    const CollectiveCost cost = EstimateCollective(CollectiveKind::kAllReduce, full_bytes, n, link);
    gather.bytes_received = cost.bytes_received;
    gather.cost_us = cost.time_us;
    plan.steps.push_back(std::move(gather));
  } else {
    ASSIGN_OR_RETURN(ReshardPlan to_replicated,
                     PlanReducedReshard(shape, source, replicated, n, link));
    plan.steps = std::move(to_replicated.steps);
  }
  if (!CoversAllDevices(target, n)) {
    ReshardStep slice;
    slice.kind = ReshardStepKind::kSliceSubset;
    slice.sharding = target;
    plan.steps.push_back(std::move(slice));
  } else {
    ASSIGN_OR_RETURN(ReshardPlan from_replicated,
                     PlanReducedReshard(shape, replicated, target, n, link));
    for (ReshardStep& step : from_replicated.steps) plan.steps.push_back(std::move(step));
  }
  plan.shape = shape;
  plan.source = source;
  plan.target = target;
  plan.num_devices = n;
  for (const ReshardStep& step : plan.steps) {
    plan.cost_us += step.cost_us;
    plan.bytes_received_per_device += step.bytes_received;
  }
  plan.full_rematerialization = true;
  return plan;
}

// All-reduce (sum) over the unreduced groups of `source`, leaving `reduced`.
absl::StatusOr<ReshardStep> AllReduceStep(const hlo::Shape& shape, const HloSharding& source,
                                          const HloSharding& reduced, int64_t num_devices,
                                          const LinkModel& link) {
  ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups,
                   hlo::UnreducedGroups(source, num_devices));
  ASSIGN_OR_RETURN(hlo::Shape local, hlo::PaddedShardShape(reduced, shape));
  ReshardStep step;
  step.kind = ReshardStepKind::kAllReduce;
  step.sharding = reduced;
  step.replica_groups = MakeReplicaGroups(groups);
  step.group_size = static_cast<int64_t>(groups.front().size());
  const CollectiveCost cost =
      EstimateCollective(CollectiveKind::kAllReduce, local.byte_size(), step.group_size, link);
  step.bytes_received = cost.bytes_received;
  step.cost_us = cost.time_us;
  return step;
}

// Keeps the value on the first member of each unreduced group of `target` (zeros elsewhere).
absl::StatusOr<ReshardStep> UnreduceStep(const HloSharding& target, int64_t num_devices) {
  ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups,
                   hlo::UnreducedGroups(target, num_devices));
  ReshardStep step;
  step.kind = ReshardStepKind::kUnreduce;
  step.sharding = target;
  step.replica_groups = MakeReplicaGroups(groups);
  step.group_size = static_cast<int64_t>(groups.front().size());
  return step;
}

}  // namespace

absl::StatusOr<ReshardPlan> PlanReshard(const hlo::Shape& shape, const HloSharding& source,
                                        const HloSharding& target, int64_t num_devices,
                                        const LinkModel& link) {
  RETURN_IF_ERROR(CheckInputs(shape, source, target, num_devices));
  if (source == target) return Assemble(shape, source, target, num_devices, {});
  const bool from_unreduced = hlo::HasUnreduced(source);
  const bool to_unreduced = hlo::HasUnreduced(target);
  if (!from_unreduced && !to_unreduced) {
    return PlanReducedReshard(shape, source, target, num_devices, link);
  }
  ASSIGN_OR_RETURN(HloSharding reduced_source, hlo::UnreducedAsReplicated(source));
  ASSIGN_OR_RETURN(HloSharding reduced_target, hlo::UnreducedAsReplicated(target));
  ASSIGN_OR_RETURN(ReshardPlan plan,
                   PlanReducedReshard(shape, reduced_source, reduced_target, num_devices, link));
  if (from_unreduced) {
    ASSIGN_OR_RETURN(ReshardStep reduce,
                     AllReduceStep(shape, source, reduced_source, num_devices, link));
    plan.cost_us += reduce.cost_us;
    plan.bytes_received_per_device += reduce.bytes_received;
    plan.steps.insert(plan.steps.begin(), std::move(reduce));
  }
  if (to_unreduced) {
    ASSIGN_OR_RETURN(ReshardStep unreduce, UnreduceStep(target, num_devices));
    plan.steps.push_back(std::move(unreduce));
  }
  plan.source = source;
  plan.target = target;
  return plan;
}

absl::StatusOr<ReshardPlan> PlanReplicateThenSlice(const hlo::Shape& shape,
                                                   const HloSharding& source,
                                                   const HloSharding& target, int64_t num_devices,
                                                   const LinkModel& link) {
  RETURN_IF_ERROR(CheckInputs(shape, source, target, num_devices));
  if (source == target) return Assemble(shape, source, target, num_devices, {});
  const StepCoster coster(shape, num_devices, link);
  const int64_t rank = shape.rank();
  const TileState replicated = TileState::Replicated(rank, num_devices);
  ShardedHops hops;
  TileState from = replicated;
  if (source.kind() == HloSharding::Kind::kMaximal) {
    hops.emplace_back(coster.Broadcast(), HloSharding::Replicate());
  } else {
    ASSIGN_OR_RETURN(from, TileState::FromSharding(source, rank, num_devices));
  }
  const bool to_maximal = target.kind() == HloSharding::Kind::kMaximal;
  TileState to = replicated;
  if (!to_maximal) {
    ASSIGN_OR_RETURN(to, TileState::FromSharding(target, rank, num_devices));
  }
  RETURN_IF_ERROR(AppendHops(ReplicateThenSliceHops(from, to, coster), hops));
  if (to_maximal) hops.emplace_back(SearchEdge{}, target);  // A free relabel.
  return Assemble(shape, source, target, num_devices, std::move(hops));
}

absl::StatusOr<std::shared_ptr<const ReshardPlan>> ReshardPlanner::Plan(const hlo::Shape& shape,
                                                                        const HloSharding& source,
                                                                        const HloSharding& target,
                                                                        int64_t num_devices) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it =
        cache_.find(KeyRef(source, target, shape.dimensions(), shape.element_type(), num_devices));
    if (it != cache_.end()) {
      ++hits_;
      return it->second;
    }
  }
  ASSIGN_OR_RETURN(ReshardPlan plan, PlanReshard(shape, source, target, num_devices, link_));
  auto shared = std::make_shared<const ReshardPlan>(std::move(plan));
  Key key{source.WithoutMetadata(), target.WithoutMetadata(), shape.dimensions(),
          shape.element_type(), num_devices};
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.emplace(std::move(key), std::move(shared)).first->second;
}

int64_t ReshardPlanner::cache_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(cache_.size());
}

int64_t ReshardPlanner::cache_hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

}  // namespace spmd

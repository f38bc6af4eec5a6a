// The shortest-path search behind the reshard planner, over TileStates (reshard_state.h).
// Internal to spmd/reshard: the planner wraps it with maximal endpoints, the fallback, and
// the cache.
#ifndef SPMD_RESHARD_RESHARD_SEARCH_H_
#define SPMD_RESHARD_RESHARD_SEARCH_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "hlo/ir/shape.h"
#include "spmd/cost/collective_cost.h"
#include "spmd/reshard/reshard_plan.h"
#include "spmd/reshard/reshard_state.h"

namespace spmd {

// One costed step of a path, without its resulting sharding.
struct SearchEdge {
  ReshardStepKind kind = ReshardStepKind::kRelabel;
  std::vector<int64_t> dims;
  int64_t factor = 1;  // All-gather and all-to-all: the group size (the move's factor).
  std::vector<std::vector<int64_t>> groups;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  int64_t bytes = 0;
  double cost_us = 0;
};

// A step and the state it leads to.
struct SearchHop {
  SearchEdge edge;
  TileState after;
};

// Costs single steps for one array (`shape`) on `num_devices` devices and `link`.
class StepCoster {
 public:
  StepCoster(const hlo::Shape& shape, int64_t num_devices, const LinkModel& link);

  const std::vector<int64_t>& shape_dims() const { return dims_; }
  int64_t num_devices() const { return num_devices_; }
  int64_t element_bytes() const { return element_bytes_; }
  const LinkModel& link() const { return link_; }
  // Bytes of one padded shard under `state`.
  int64_t ShardBytes(const TileState& state) const;
  // Bytes of the whole array.
  int64_t FullBytes() const;

  // The edge of a state move taken from `x`.
  SearchEdge FromMove(const TileState& x, const StateMove& move) const;
  // A local dynamic-slice of `dims` (free).
  SearchEdge DynamicSlice(std::vector<int64_t> dims) const;
  // The collective-permute from `x` to `y`. REQUIRES: equal dims (tile grid).
  SearchEdge Permute(const TileState& x, const TileState& y) const;
  // A maximal value moving from device `from` to device `to`.
  SearchEdge MaximalPermute(int64_t from, int64_t to) const;
  // Maximal -> replicated (masked all-reduce over all devices).
  SearchEdge Broadcast() const;
  // Maximal -> `y`: the owner sends each device its shard (ReshardStepKind::kScatter).
  SearchEdge Scatter(const TileState& y) const;

 private:
  std::vector<int64_t> dims_;
  int64_t element_bytes_;
  int64_t num_devices_;
  LinkModel link_;
};

// The fallback hops: an all-gather of every split dim of `source` (to replicated), then one
// dynamic-slice to `target` unless it is replicated.
std::vector<SearchHop> ReplicateThenSliceHops(const TileState& source, const TileState& target,
                                              const StepCoster& coster);

// The cheapest hops from `source` to `target` (empty when equal). Moves are those of
// MovesFrom, a direct dynamic-slice to `target` where regions allow, and at most one
// collective-permute between two states with the same tile grid. Never worse than
// ReplicateThenSliceHops, which it returns if the state budget runs out first. Deterministic.
std::vector<SearchHop> CheapestPath(const TileState& source, const TileState& target,
                                    const StepCoster& coster);

// The cheapest hops from a maximal value to `target`: a broadcast to replicated or a scatter to
// some state that reaches `target`, then that state's cheapest way there. The first hop's
// edge is kBroadcast or kScatter; the owner is the caller's business.
std::vector<SearchHop> CheapestPathFromMaximal(const TileState& target, const StepCoster& coster);

}  // namespace spmd

#endif  // SPMD_RESHARD_RESHARD_SEARCH_H_

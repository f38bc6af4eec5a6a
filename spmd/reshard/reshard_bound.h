// Lower bounds on the cost of any path between two reshard states, for the A* order of the
// search (reshard_search.cc). Internal to spmd/reshard.
//
// RegionBound counts bytes:
// Data reaches a device only by being received, and every step's byte count (padded buffers)
// is at least the real data it delivers to any one device. So a path from `held` to `needed`
// makes each device receive at least the elements of its `needed` region outside its `held`
// region, and the path's bytes are at least the largest such count over the devices, M.
// When M > 0 the path has at least one collective: time >= latency + M / bandwidth. The bound
// is consistent (a step x -> y costs at least bound(x) - bound(y), componentwise), so A*
// settles every state at its cheapest cost and the search's stopping rule stays exact.
//
// Example, f32[16,24] on 8 devices, {devices=[8,1]} -> replicated: each device holds 2 of the
// 16 rows and needs all of them: M = 14 rows x 24 x 4 B = 1344 B, the all-gather's own count.
//
// GridBound counts steps: what a step costs depends only on the tile grid it starts from (tile
// counts and replication), never on which device holds which tile (GridStepCost). So the
// cheapest way between two grids in the graph of grids -- the steps' grid changes as edges,
// every local slice free and not counted as a step, collective-permutes left out (they keep the
// grid) -- costs no more than any path between states of those grids. It adds what the region
// bound leaves out: the latency of every collective a change of grid needs. Example, 128
// devices, [2,8,4,2] -> [1,1,1,8] with 16-way replication: the region bound knows that one
// collective must bring each device its missing bytes; the grid bound, that dims 0, 1 and 2
// each need a collective of their own.
#ifndef SPMD_RESHARD_RESHARD_BOUND_H_
#define SPMD_RESHARD_RESHARD_BOUND_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "spmd/cost/collective_cost.h"
#include "spmd/reshard/reshard_state.h"

namespace spmd {

// A path's cost, or a bound on one: compared by time, then bytes, then steps (Cheaper).
struct CostBound {
  double time_us = 0;
  int64_t bytes = 0;
  int64_t steps = 0;
};

// Whether `a` costs less than `b`: less time (beyond rounding), then fewer bytes, then fewer
// steps, so equal-time paths prefer less traffic.
bool Cheaper(const CostBound& a, const CostBound& b);

class RegionBound {
 public:
  // `fixed` is the state the bound measures against: the target of a forward search
  // (`fixed_is_needed`), the source of a backward one.
  RegionBound(const TileState& fixed, bool fixed_is_needed, std::vector<int64_t> shape_dims,
              int64_t element_bytes, const LinkModel& link);

  // The bound from `state` to the fixed target (forward) or from the fixed source to `state`,
  // for any path (`any`), and for paths without a collective-permute (`permute_free`): every
  // other collective widens a device's region along one dim at most (an all-gather along its
  // dim, an all-to-all along the dim it gathers), so a device whose needed region reaches past
  // its held one along k dims needs k collectives: k latencies plus M / bandwidth.
  struct Bounds {
    CostBound any;
    CostBound permute_free;
  };
  Bounds FromBoth(const TileState& state) const;
  CostBound From(const TileState& state) const { return FromBoth(state).any; }

 private:
  // Fills begin/end (device-major, rank entries each) with each device's region under `state`.
  void Regions(const TileState& state, std::vector<int64_t>& begin,
               std::vector<int64_t>& end) const;

  std::vector<int64_t> dims_;
  int64_t element_bytes_;
  LinkModel link_;
  bool fixed_is_needed_;
  std::vector<int64_t> fixed_begin_, fixed_end_;
  // Scratch for the other state's tile regions (the bound runs for every state the search
  // meets).
  mutable std::vector<int64_t> begin_, end_, idx_, sizes_;
};

// What one step of `kind` (StateMove's `dims` and `factor`) costs a device when it starts from
// a state with tile grid `grid` (TileState::dims: tile counts, then replication), for an array
// of `shape_dims` with `element_bytes` elements. Dynamic-slices cost nothing.
CollectiveCost GridStepCost(absl::Span<const int64_t> grid, StateMove::Kind kind,
                            absl::Span<const int64_t> dims, int64_t factor,
                            absl::Span<const int64_t> shape_dims, int64_t element_bytes,
                            const LinkModel& link);

// Every tile grid of an array on a device count (tile counts and replication multiplying to
// it), and the grid changes the search's steps make (reshard_grid_bound.cc), each costed by
// GridStepCost; slices are free and count as no step (a direct slice to the target is several
// here). Built once per escalated search, for its grid bounds.
class GridGraph {
 public:
  // More grids than this and the graph stays empty (its bounds zero): building it would cost
  // more than it saves.
  static constexpr int64_t kMaxGrids = 4096;
  using Distances = absl::flat_hash_map<std::vector<int64_t>, CostBound>;

  GridGraph(int64_t rank, int64_t num_devices, std::vector<int64_t> shape_dims,
            int64_t element_bytes, const LinkModel& link);

  // The cheapest cost of reaching each grid from any seed (a grid and its starting cost),
  // walking steps forward (`along`) or backward (the cost of reaching a seed from each grid).
  Distances FromSeeds(const Distances& seeds, bool along) const;
  // A collective-permute of one padded shard of `grid` in which devices move (the search's
  // join, StepCoster::Permute).
  CostBound Permute(const std::vector<int64_t>& grid) const;
  const std::vector<std::vector<int64_t>>& grids() const { return grids_; }

 private:
  std::vector<int64_t> shape_dims_;
  int64_t element_bytes_;
  LinkModel link_;
  std::vector<std::vector<int64_t>> grids_;
  absl::flat_hash_map<std::vector<int64_t>, int64_t> index_;
  // steps_[i]: (j, cost) for each step from grid i to grid j; reverse_[j] the same by target.
  std::vector<std::vector<std::pair<int64_t, CostBound>>> steps_, reverse_;
};

// The cheapest change of grid from `state`'s grid to the fixed one (forward) or from the fixed
// grid to `state`'s (backward); zero where the graph has none.
class GridBound {
 public:
  GridBound(const GridGraph& graph, const TileState& fixed, bool fixed_is_needed);
  CostBound From(const TileState& state) const;

 private:
  GridGraph::Distances distance_;
};

// Paths through the search's one collective-permute: the cheapest change of grid to some grid
// g, a permute of g's shard, and the cheapest change from g to the other end (forward: from
// `state` to the target; backward: from the source to `state`). With the region bound's
// permute-free part, min(this, permute-free) bounds every path, and is far tighter where the
// arrangements differ (a transposed device order): a state that has not gathered the dims a
// permute-free path must gather ranks behind the permuted plan already found.
class PermuteBound {
 public:
  PermuteBound(const GridGraph& graph, const TileState& source, const TileState& target,
               bool forward);
  CostBound From(const TileState& state) const;

 private:
  GridGraph::Distances distance_;
};

// The larger of two bounds in the order of path costs (time, then bytes, then steps): still a
// lower bound, and consistent when both are. The smaller of a bound for some paths and one for
// the others bounds all of them (and is consistent when both are).
CostBound Larger(const CostBound& a, const CostBound& b);
CostBound Smaller(const CostBound& a, const CostBound& b);

}  // namespace spmd

#endif  // SPMD_RESHARD_RESHARD_BOUND_H_

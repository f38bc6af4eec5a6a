// A lower bound on the cost of any path between two reshard states, for the A* order of the
// search (reshard_search.cc). Internal to spmd/reshard.
//
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
#ifndef SPMD_RESHARD_RESHARD_BOUND_H_
#define SPMD_RESHARD_RESHARD_BOUND_H_

#include <cstdint>
#include <vector>

#include "spmd/cost/collective_cost.h"
#include "spmd/reshard/reshard_state.h"

namespace spmd {

// The bound's parts, compared like path costs (time, then bytes, then steps).
struct CostBound {
  double time_us = 0;
  int64_t bytes = 0;
  int64_t steps = 0;
};

class RegionBound {
 public:
  // `fixed` is the state the bound measures against: the target of a forward search
  // (`fixed_is_needed`), the source of a backward one.
  RegionBound(const TileState& fixed, bool fixed_is_needed, std::vector<int64_t> shape_dims,
              int64_t element_bytes, const LinkModel& link);

  // The bound from `state` to the fixed target (forward) or from the fixed source to `state`.
  CostBound From(const TileState& state) const;

 private:
  // Fills begin/end (device-major, rank entries each) with each device's region under `state`.
  void Regions(const TileState& state, std::vector<int64_t>& begin,
               std::vector<int64_t>& end) const;

  std::vector<int64_t> dims_;
  int64_t element_bytes_;
  LinkModel link_;
  bool fixed_is_needed_;
  std::vector<int64_t> fixed_begin_, fixed_end_;
  // Scratch for the other state's regions (the bound runs for every state the search meets).
  mutable std::vector<int64_t> begin_, end_, idx_;
};

}  // namespace spmd

#endif  // SPMD_RESHARD_RESHARD_BOUND_H_

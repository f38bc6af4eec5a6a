// The lower bounds of reshard_bound.h. The region bound: per device, the elements of the
// needed region outside the held one, by intersecting the two boxes dim by dim. The grid
// bound: Dijkstra over every grid of the device count, once per search end.
#include "spmd/reshard/reshard_bound.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <queue>
#include <utility>

namespace spmd {
namespace {

using Grid = std::vector<int64_t>;

// Every grid of `rank` dims on `num_devices` devices into `grids`; false when there are more
// than GridBound::kMaxGrids.
bool AllGrids(int64_t rank, int64_t num_devices, std::vector<Grid>& grids) {
  Grid grid(rank + 1);
  std::function<bool(int64_t, int64_t)> place = [&](int64_t d, int64_t left) {
    if (d == rank) {
      grid[rank] = left;
      grids.push_back(grid);
      return static_cast<int64_t>(grids.size()) <= GridBound::kMaxGrids;
    }
    for (int64_t t = 1; t <= left; ++t) {
      if (left % t != 0) continue;
      grid[d] = t;
      if (!place(d + 1, left / t)) return false;
    }
    return true;
  };
  return place(0, num_devices);
}

// Calls f(next, kind, dims, factor) for every grid change a step from grid `x` can make: the
// all-gathers and all-to-alls of MovesFrom (the same conditions), and a slice of any one dim d
// into t tiles of its tiles and the replication whose padded tile is no larger -- every
// dynamic-slice the search takes, alone or, one dim at a time, a direct one to its target.
template <typename F>
void ForEachGridStep(const Grid& x, absl::Span<const int64_t> shape_dims, F f) {
  const int64_t rank = static_cast<int64_t>(x.size()) - 1;
  for (int64_t d = 0; d < rank; ++d) {
    for (int64_t factor : DivisorsAboveOne(x[d])) {
      if (!Aligned(shape_dims[d], x[d] / factor, factor)) continue;
      Grid next = x;
      next[d] /= factor;
      next[rank] *= factor;
      f(next, StateMove::Kind::kAllGather, std::vector<int64_t>{d}, factor);
      for (int64_t c = 0; c < rank; ++c) {
        if (c == d || !Aligned(shape_dims[c], x[c], factor)) continue;
        next = x;
        next[d] /= factor;
        next[c] *= factor;
        f(next, StateMove::Kind::kAllToAll, std::vector<int64_t>{d, c}, factor);
      }
    }
    const int64_t total = x[d] * x[rank];
    for (int64_t tiles = 1; tiles <= total; ++tiles) {
      if (total % tiles != 0 || tiles == x[d] ||
          PaddedSize(shape_dims[d], tiles) > PaddedSize(shape_dims[d], x[d])) {
        continue;
      }
      Grid next = x;
      next[d] = tiles;
      next[rank] = total / tiles;
      f(next, StateMove::Kind::kDynamicSlice, std::vector<int64_t>{d}, 1);
    }
  }
}

CostBound Plus(const CostBound& a, const CostBound& b) {
  return {a.time_us + b.time_us, a.bytes + b.bytes, a.steps + b.steps};
}

}  // namespace

bool Cheaper(const CostBound& a, const CostBound& b) {
  const double scale = std::max({1.0, std::abs(a.time_us), std::abs(b.time_us)});
  if (std::abs(a.time_us - b.time_us) > 1e-9 * scale) return a.time_us < b.time_us;
  if (a.bytes != b.bytes) return a.bytes < b.bytes;
  return a.steps < b.steps;
}

CostBound Larger(const CostBound& a, const CostBound& b) { return Cheaper(a, b) ? b : a; }

CollectiveCost GridStepCost(absl::Span<const int64_t> grid, StateMove::Kind kind,
                            absl::Span<const int64_t> dims, int64_t factor,
                            absl::Span<const int64_t> shape_dims, int64_t element_bytes,
                            const LinkModel& link) {
  if (kind == StateMove::Kind::kDynamicSlice) return {};
  // All-gather: the gathered buffer, factor shards. All-to-all: the exchanged buffer, the
  // shard with dim c padded to factor * (its new padded size).
  int64_t bytes = element_bytes * (kind == StateMove::Kind::kAllGather ? factor : 1);
  for (size_t d = 0; d < shape_dims.size(); ++d) {
    const bool exchanged = kind == StateMove::Kind::kAllToAll && static_cast<int64_t>(d) == dims[1];
    bytes *= exchanged ? factor * PaddedSize(shape_dims[d], grid[d] * factor)
                       : PaddedSize(shape_dims[d], grid[d]);
  }
  return EstimateCollective(
      kind == StateMove::Kind::kAllGather ? CollectiveKind::kAllGather : CollectiveKind::kAllToAll,
      bytes, factor, link);
}

GridBound::GridBound(const TileState& fixed, bool fixed_is_needed, std::vector<int64_t> shape_dims,
                     int64_t element_bytes, const LinkModel& link) {
  std::vector<Grid> grids;
  if (!AllGrids(fixed.rank(), fixed.num_devices(), grids)) return;
  absl::flat_hash_map<Grid, int64_t> index;
  for (size_t i = 0; i < grids.size(); ++i) index.emplace(grids[i], i);
  // Walked from the fixed grid: steps reversed when it is the end of every path.
  std::vector<std::vector<std::pair<int64_t, CostBound>>> edges(grids.size());
  for (size_t i = 0; i < grids.size(); ++i) {
    ForEachGridStep(grids[i], shape_dims,
                    [&](const Grid& next, StateMove::Kind kind, const std::vector<int64_t>& dims,
                        int64_t factor) {
                      const int64_t j = index.at(next);
                      const CollectiveCost c = GridStepCost(grids[i], kind, dims, factor,
                                                            shape_dims, element_bytes, link);
                      // Slices count no step: a direct one to the target is several here.
                      const CostBound cost{c.time_us, c.bytes_received,
                                           kind == StateMove::Kind::kDynamicSlice ? 0 : 1};
                      if (fixed_is_needed) {
                        edges[j].push_back({static_cast<int64_t>(i), cost});
                      } else {
                        edges[i].push_back({j, cost});
                      }
                    });
  }
  struct Entry {
    CostBound cost;
    int64_t grid;
  };
  auto later = [](const Entry& a, const Entry& b) { return Cheaper(b.cost, a.cost); };
  std::priority_queue<Entry, std::vector<Entry>, decltype(later)> queue(later);
  std::vector<std::optional<CostBound>> best(grids.size());
  std::vector<bool> done(grids.size(), false);
  const int64_t start = index.at(fixed.dims);
  best[start] = CostBound();
  queue.push({CostBound(), start});
  while (!queue.empty()) {
    const Entry top = queue.top();
    queue.pop();
    if (done[top.grid]) continue;
    done[top.grid] = true;
    distance_.emplace(grids[top.grid], top.cost);
    for (const auto& [next, step] : edges[top.grid]) {
      const CostBound cost = Plus(top.cost, step);
      if (!done[next] && (!best[next].has_value() || Cheaper(cost, *best[next]))) {
        best[next] = cost;
        queue.push({cost, next});
      }
    }
  }
}

CostBound GridBound::From(const TileState& state) const {
  auto it = distance_.find(state.dims);
  return it == distance_.end() ? CostBound() : it->second;
}

RegionBound::RegionBound(const TileState& fixed, bool fixed_is_needed,
                         std::vector<int64_t> shape_dims, int64_t element_bytes,
                         const LinkModel& link)
    : dims_(std::move(shape_dims)),
      element_bytes_(element_bytes),
      link_(link),
      fixed_is_needed_(fixed_is_needed) {
  Regions(fixed, fixed_begin_, fixed_end_);
}

void RegionBound::Regions(const TileState& state, std::vector<int64_t>& begin,
                          std::vector<int64_t>& end) const {
  const int64_t rank = state.rank();
  const int64_t r = state.replication();
  begin.resize(state.num_devices() * rank);
  end.resize(state.num_devices() * rank);
  idx_.assign(rank, 0);
  sizes_.resize(rank);
  for (int64_t d = 0; d < rank; ++d) sizes_[d] = PaddedSize(dims_[d], state.dims[d]);
  for (int64_t tile = 0; tile < state.num_tiles(); ++tile) {
    for (int64_t j = 0; j < r; ++j) {
      const int64_t device = state.devices[tile * r + j];
      for (int64_t d = 0; d < rank; ++d) {
        begin[device * rank + d] = std::min(idx_[d] * sizes_[d], dims_[d]);
        end[device * rank + d] = std::min(idx_[d] * sizes_[d] + sizes_[d], dims_[d]);
      }
    }
    for (int64_t d = rank - 1; d >= 0; --d) {  // The next row-major tile index.
      if (++idx_[d] < state.dims[d]) break;
      idx_[d] = 0;
    }
  }
}

CostBound RegionBound::From(const TileState& state) const {
  // The state's region of each tile, in one walk, against each member device's fixed region.
  const int64_t rank = static_cast<int64_t>(dims_.size());
  const int64_t r = state.replication();
  idx_.assign(rank, 0);
  sizes_.resize(rank);
  begin_.resize(rank);
  end_.resize(rank);
  for (int64_t d = 0; d < rank; ++d) sizes_[d] = PaddedSize(dims_[d], state.dims[d]);
  int64_t most = 0;
  for (int64_t tile = 0; tile < state.num_tiles(); ++tile) {
    for (int64_t d = 0; d < rank; ++d) {
      begin_[d] = std::min(idx_[d] * sizes_[d], dims_[d]);
      end_[d] = std::min(idx_[d] * sizes_[d] + sizes_[d], dims_[d]);
    }
    for (int64_t j = 0; j < r; ++j) {
      const int64_t* fixed_begin = &fixed_begin_[state.devices[tile * r + j] * rank];
      const int64_t* fixed_end = &fixed_end_[state.devices[tile * r + j] * rank];
      int64_t needed = 1;
      int64_t common = 1;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t lo = std::max(begin_[d], fixed_begin[d]);
        const int64_t hi = std::min(end_[d], fixed_end[d]);
        needed *= fixed_is_needed_ ? fixed_end[d] - fixed_begin[d] : end_[d] - begin_[d];
        common *= std::max<int64_t>(0, hi - lo);
      }
      most = std::max(most, needed - common);
    }
    for (int64_t d = rank - 1; d >= 0; --d) {  // The next row-major tile index.
      if (++idx_[d] < state.dims[d]) break;
      idx_[d] = 0;
    }
  }
  CostBound bound;
  if (most == 0) return bound;
  bound.bytes = most * element_bytes_;
  bound.time_us = TransferTimeUs(bound.bytes, link_);
  bound.steps = 1;
  return bound;
}

}  // namespace spmd

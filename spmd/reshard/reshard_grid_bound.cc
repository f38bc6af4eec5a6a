// The grid graph and its bounds (reshard_bound.h): every grid of the device count, the steps
// between them, and Dijkstra from seeds, along the steps or against them.
#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <utility>

#include "spmd/reshard/reshard_bound.h"

namespace spmd {
namespace {

using Grid = std::vector<int64_t>;
using Distances = GridGraph::Distances;

// Every grid of `rank` dims on `num_devices` devices into `grids`; false when there are more
// than GridGraph::kMaxGrids.
bool AllGrids(int64_t rank, int64_t num_devices, std::vector<Grid>& grids) {
  Grid grid(rank + 1);
  std::function<bool(int64_t, int64_t)> place = [&](int64_t d, int64_t left) {
    if (d == rank) {
      grid[rank] = left;
      grids.push_back(grid);
      return static_cast<int64_t>(grids.size()) <= GridGraph::kMaxGrids;
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

GridGraph::GridGraph(int64_t rank, int64_t num_devices, std::vector<int64_t> shape_dims,
                     int64_t element_bytes, const LinkModel& link)
    : shape_dims_(std::move(shape_dims)), element_bytes_(element_bytes), link_(link) {
  if (!AllGrids(rank, num_devices, grids_)) {
    grids_.clear();
    return;
  }
  for (size_t i = 0; i < grids_.size(); ++i) index_.emplace(grids_[i], i);
  steps_.resize(grids_.size());
  reverse_.resize(grids_.size());
  for (size_t i = 0; i < grids_.size(); ++i) {
    ForEachGridStep(grids_[i], shape_dims_,
                    [&](const Grid& next, StateMove::Kind kind, const std::vector<int64_t>& dims,
                        int64_t factor) {
                      const int64_t j = index_.at(next);
                      const CollectiveCost c = GridStepCost(grids_[i], kind, dims, factor,
                                                            shape_dims_, element_bytes_, link_);
                      const CostBound cost{c.time_us, c.bytes_received,
                                           kind == StateMove::Kind::kDynamicSlice ? 0 : 1};
                      steps_[i].push_back({j, cost});
                      reverse_[j].push_back({static_cast<int64_t>(i), cost});
                    });
  }
}

Distances GridGraph::FromSeeds(const Distances& seeds, bool along) const {
  struct Entry {
    CostBound cost;
    int64_t grid;
  };
  auto later = [](const Entry& a, const Entry& b) { return Cheaper(b.cost, a.cost); };
  std::priority_queue<Entry, std::vector<Entry>, decltype(later)> queue(later);
  std::vector<std::optional<CostBound>> best(grids_.size());
  std::vector<bool> done(grids_.size(), false);
  // Seeds in grid order, so equal costs settle alike whatever the map's order.
  for (size_t i = 0; i < grids_.size(); ++i) {
    auto seed = seeds.find(grids_[i]);
    if (seed == seeds.end()) continue;
    best[i] = seed->second;
    queue.push({seed->second, static_cast<int64_t>(i)});
  }
  const auto& edges = along ? steps_ : reverse_;
  Distances distance;
  while (!queue.empty()) {
    const Entry top = queue.top();
    queue.pop();
    if (done[top.grid]) continue;
    done[top.grid] = true;
    distance.emplace(grids_[top.grid], top.cost);
    for (const auto& [next, step] : edges[top.grid]) {
      const CostBound cost = Plus(top.cost, step);
      if (!done[next] && (!best[next].has_value() || Cheaper(cost, *best[next]))) {
        best[next] = cost;
        queue.push({cost, next});
      }
    }
  }
  return distance;
}

CostBound GridGraph::Permute(const std::vector<int64_t>& grid) const {
  int64_t bytes = element_bytes_;
  for (size_t d = 0; d < shape_dims_.size(); ++d) bytes *= PaddedSize(shape_dims_[d], grid[d]);
  const CollectiveCost c = EstimateCollective(CollectiveKind::kCollectivePermute, bytes, 2, link_);
  return {c.time_us, c.bytes_received, 1};
}

GridBound::GridBound(const GridGraph& graph, const TileState& fixed, bool fixed_is_needed)
    : distance_(graph.FromSeeds({{fixed.dims, CostBound()}}, /*along=*/!fixed_is_needed)) {}

CostBound GridBound::From(const TileState& state) const {
  auto it = distance_.find(state.dims);
  return it == distance_.end() ? CostBound() : it->second;
}

PermuteBound::PermuteBound(const GridGraph& graph, const TileState& source, const TileState& target,
                           bool forward) {
  // The far end's distances, a permute on top of each, then back toward `state`'s grids.
  const Distances far = forward ? graph.FromSeeds({{target.dims, CostBound()}}, /*along=*/false)
                                : graph.FromSeeds({{source.dims, CostBound()}}, /*along=*/true);
  Distances seeds;
  for (const auto& [grid, cost] : far) seeds.emplace(grid, Plus(cost, graph.Permute(grid)));
  distance_ = graph.FromSeeds(seeds, /*along=*/!forward);
}

CostBound PermuteBound::From(const TileState& state) const {
  auto it = distance_.find(state.dims);
  return it == distance_.end() ? CostBound() : it->second;
}

}  // namespace spmd

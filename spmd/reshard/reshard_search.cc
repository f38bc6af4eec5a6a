// Reshard search: A* from both ends (RegionBound, reshard_bound.h), joined by one
// collective-permute.
//
// All-gather, dynamic-slice and all-to-all keep the device arrangement and only move whole
// factors of tile counts, so from the source they reach a family of arrangements F, and the
// states that reach the target through them form another family B (walked backwards from the
// target). A collective-permute joins any state of F to any state of B with the same tile
// grid, at the price of one padded shard. Both searches advance together, the cheaper frontier
// first; every newly reached state is joined to the other side when it is already there, and
// every settled state to the cheapest settled state of its grid on the other side by a permute.
// The search stops when both frontiers (cost so far plus the bound) are past the best path
// found. Costs compare by time, then bytes, then number of steps, so equal-time paths prefer
// less traffic. Dynamic-slices never split a dim beyond the larger tile count of the two ends (that
// only pays off as an arrangement change, which the permute does at the same price).
//
// Example (f32[16,24], 8 devices): {devices=[2,4]<=[8]} -> {devices=[4,2]<=[2,4]T(1,0)}
//   F: all-to-all moves dim 1's minor factor to dim 0 -> [4,2]<=[2,2,2]T(0,2,1)   96 B
//   join: collective-permute to the target (same [4,2] grid)                     192 B
// No single all-to-all can do it: device 2 must end with rows 8..11 x cols 0..11 and holds
// none of them, while an all-to-all always keeps one chunk of a device's own data.
#include "spmd/reshard/reshard_search.h"

#include <algorithm>
#include <map>
#include <optional>
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "spmd/reshard/reshard_bound.h"

namespace spmd {
namespace {

// More explored states than this stop the expansion (each search still returns what it
// found; the fallback path is always among them for the small meshes this is built for).
constexpr int64_t kMaxStates = 20000;
// States hold a device list each: on very large meshes the budget shrinks so the search stays
// within about 10 MB of device ids (then replicate-then-slice answers if nothing was found).
constexpr int64_t kStateDeviceBudget = kMaxStates * 64;
int64_t MaxStates(int64_t num_devices) {
  return std::clamp<int64_t>(kStateDeviceBudget / std::max<int64_t>(num_devices, 1), 256,
                             kMaxStates);
}
// States a search may reach under the region bound alone before it starts again with the grid
// and permute bounds too (reshard_bound.h): most searches finish well within it, and the grid
// graph costs more to build than they do.
constexpr int64_t kEscalateStates = 2000;

using PathCost = CostBound;

PathCost Plus(PathCost cost, const SearchEdge& edge) {
  cost.time_us += edge.cost_us;
  cost.bytes += edge.bytes;
  cost.steps += 1;
  return cost;
}

PathCost Plus(PathCost a, const PathCost& b) {
  a.time_us += b.time_us;
  a.bytes += b.bytes;
  a.steps += b.steps;
  return a;
}

struct SearchNode {
  TileState state;
  PathCost cost;
  int64_t parent = -1;  // Forward: the previous state; backward: the next state.
  SearchEdge via;       // Forward: parent -> this; backward: this -> parent.
  bool done = false;
  PathCost bound;  // The side's bound from this state (Bounds::From), computed once.
};

using Neighbors = std::vector<std::pair<TileState, SearchEdge>>;

struct QueueEntry {
  PathCost cost;
  int64_t seq;
  int64_t node;
};
struct QueueOrder {
  bool operator()(const QueueEntry& a, const QueueEntry& b) const {
    if (Cheaper(a.cost, b.cost)) return false;
    if (Cheaper(b.cost, a.cost)) return true;
    return a.seq > b.seq;
  }
};

// The bounds one side of the search orders its states by: the region bound, and when the
// search was escalated (CheapestPath) the grid bound and the permute bound; none for a plain
// Dijkstra. Any path costs at least the region and grid bounds; a path through a permute at
// least the permute bound, one without at least the region bound's permute-free part.
struct Bounds {
  const RegionBound* region = nullptr;
  const GridBound* grid = nullptr;
  const PermuteBound* permute = nullptr;

  PathCost From(const TileState& state) const {
    if (region == nullptr) return PathCost();
    const RegionBound::Bounds regions = region->FromBoth(state);
    PathCost bound = regions.any;
    if (grid == nullptr) return bound;
    const PathCost change = grid->From(state);
    bound = Larger(bound, change);
    if (permute == nullptr) return bound;
    return Larger(bound, Smaller(permute->From(state), Larger(regions.permute_free, change)));
  }
};

// One direction of the search: A* under `bounds`, settling one state at a time. The queue
// orders states by cost so far plus the bound; nodes keep the cost so far.
class Frontier {
 public:
  Frontier(const TileState& start, Bounds bounds) : bounds_(bounds) {
    nodes_.push_back({start, {}, -1, {}, false, bounds_.From(start)});
    index_.emplace(start, 0);
    Push({}, 0);
  }

  // The key (cost plus bound) of the next state to settle; nullopt when every reachable state
  // is settled.
  std::optional<PathCost> Top() {
    while (!queue_.empty() && nodes_[queue_.top().node].done) queue_.pop();
    if (queue_.empty()) return std::nullopt;
    return queue_.top().cost;
  }

  // Settles the next state (REQUIRES: Top() has a value), relaxes its neighbors, and appends
  // the ids whose cost improved to `relaxed`. Returns the settled id.
  template <typename Expand>
  int64_t SettleNext(Expand expand, std::vector<int64_t>& relaxed) {
    const int64_t id = queue_.top().node;
    queue_.pop();
    nodes_[id].done = true;
    const TileState state = nodes_[id].state;
    for (auto& [next, edge] : expand(state)) {
      const PathCost cost = Plus(nodes_[id].cost, edge);
      auto it = index_.find(next);
      int64_t next_id;
      if (it == index_.end()) {
        next_id = static_cast<int64_t>(nodes_.size());
        index_.emplace(next, next_id);
        PathCost bound = bounds_.From(next);
        nodes_.push_back({std::move(next), cost, id, std::move(edge), false, bound});
      } else if (!nodes_[it->second].done && Cheaper(cost, nodes_[it->second].cost)) {
        next_id = it->second;
        nodes_[next_id].cost = cost;
        nodes_[next_id].parent = id;
        nodes_[next_id].via = std::move(edge);
      } else {
        continue;
      }
      Push(cost, next_id);
      relaxed.push_back(next_id);
    }
    return id;
  }

  const SearchNode& node(int64_t id) const { return nodes_[id]; }
  const std::vector<SearchNode>& nodes() const { return nodes_; }
  // The id of `state`, or -1 when it has not been reached.
  int64_t Find(const TileState& state) const {
    auto it = index_.find(state);
    return it == index_.end() ? -1 : it->second;
  }
  int64_t size() const { return static_cast<int64_t>(nodes_.size()); }

 private:
  // Queues node `id` at `cost` plus its bound.
  void Push(const PathCost& cost, int64_t id) {
    queue_.push({Plus(cost, nodes_[id].bound), seq_++, id});
  }

  std::vector<SearchNode> nodes_;
  absl::flat_hash_map<TileState, int64_t> index_;
  Bounds bounds_;
  std::priority_queue<QueueEntry, std::vector<QueueEntry>, QueueOrder> queue_;
  int64_t seq_ = 0;
};

// The dims whose tile counts differ, or every split dim of `y` when none do.
std::vector<int64_t> ChangedDims(const TileState& x, const TileState& y) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < y.rank(); ++d) {
    if (x.dims[d] != y.dims[d]) dims.push_back(d);
  }
  if (dims.empty()) {
    for (int64_t d = 0; d < y.rank(); ++d) {
      if (y.dims[d] > 1) dims.push_back(d);
    }
  }
  return dims;
}

Neighbors ForwardNeighbors(const TileState& x, const TileState& target,
                           absl::Span<const int64_t> max_tiles, const StepCoster& coster) {
  Neighbors out;
  for (StateMove& move : MovesFrom(x, coster.shape_dims(), max_tiles, /*with_groups=*/false)) {
    SearchEdge edge = coster.FromMove(x, move);
    out.emplace_back(std::move(move.result), std::move(edge));
  }
  if (x != target && ContainsEveryRegion(x, target, coster.shape_dims())) {
    out.emplace_back(target, coster.DynamicSlice(ChangedDims(x, target)));
  }
  return out;
}

// The states X with a step X -> y, each with that step.
Neighbors BackwardNeighbors(const TileState& y, absl::Span<const int64_t> max_tiles,
                            const StepCoster& coster) {
  const std::vector<int64_t>& dims = coster.shape_dims();
  Neighbors out;
  for (StateMove& move : MovesFrom(y, dims, max_tiles, /*with_groups=*/false)) {
    const TileState& x = move.result;
    std::optional<StateMove> forward;
    switch (move.kind) {
      case StateMove::Kind::kDynamicSlice:  // y = all-gather(x)
        forward = AllGatherMove(x, dims, move.dims[0], move.factor, /*with_groups=*/false);
        break;
      case StateMove::Kind::kAllToAll:  // y = all-to-all(x) moving the factor back
        forward = AllToAllMove(x, dims, move.dims[1], move.dims[0], move.factor,
                               /*with_groups=*/false);
        break;
      case StateMove::Kind::kAllGather:  // y = dynamic-slice(x)
        if (ContainsEveryRegion(x, y, dims)) {
          out.emplace_back(x, coster.DynamicSlice({move.dims[0]}));
        }
        continue;
    }
    if (forward.has_value() && forward->result == y) {
      SearchEdge edge = coster.FromMove(x, *forward);
      out.emplace_back(std::move(move.result), std::move(edge));
    }
  }
  return out;
}

// The search costs moves without their device groups (building them for every state it meets
// was most of its time); the steps of the path it keeps get them here, from the state each
// step starts at.
SearchEdge WithGroups(SearchEdge edge, const TileState& from, absl::Span<const int64_t> dims) {
  if (!edge.groups.empty()) return edge;
  std::optional<StateMove> move;
  if (edge.kind == ReshardStepKind::kAllGather && edge.dims.size() == 1) {
    move = AllGatherMove(from, dims, edge.dims[0], edge.factor);
  } else if (edge.kind == ReshardStepKind::kAllToAll && edge.dims.size() == 2) {
    move = AllToAllMove(from, dims, edge.dims[0], edge.dims[1], edge.factor);
  }
  if (move.has_value()) edge.groups = std::move(move->groups);
  return edge;
}

std::vector<SearchHop> ForwardPath(const std::vector<SearchNode>& nodes, int64_t id,
                                   absl::Span<const int64_t> dims) {
  std::vector<SearchHop> hops;
  for (; nodes[id].parent >= 0; id = nodes[id].parent) {
    hops.push_back(
        {WithGroups(nodes[id].via, nodes[nodes[id].parent].state, dims), nodes[id].state});
  }
  std::reverse(hops.begin(), hops.end());
  return hops;
}

std::vector<SearchHop> BackwardPath(const std::vector<SearchNode>& nodes, int64_t id,
                                    absl::Span<const int64_t> dims) {
  std::vector<SearchHop> hops;
  for (; nodes[id].parent >= 0; id = nodes[id].parent) {
    hops.push_back(
        {WithGroups(nodes[id].via, nodes[id].state, dims), nodes[nodes[id].parent].state});
  }
  return hops;
}

// The best path found so far: a forward node, optionally a permute, then a backward node.
struct Best {
  PathCost cost;
  int64_t forward = -1;
  int64_t backward = -1;
  bool permute = false;
};

// Meets the two frontiers: a state reached from both sides, or two settled states of the same
// tile grid joined by a collective-permute (whose cost depends on the grid only).
class Joiner {
 public:
  Joiner(const Frontier& forward, const Frontier& backward, const StepCoster& coster)
      : forward_(forward), backward_(backward), coster_(coster) {}

  // `id` of the forward (`is_forward`) or backward frontier got a new cost (`settled` or not).
  void Update(bool is_forward, int64_t id, bool settled) {
    const Frontier& mine = is_forward ? forward_ : backward_;
    const Frontier& other = is_forward ? backward_ : forward_;
    const SearchNode& node = mine.node(id);
    // Any reached state on the other side closes a real path (its current cost is an upper
    // bound that only improves, and improvements come back through here).
    const int64_t same = other.Find(node.state);
    if (same >= 0) {
      Consider(Plus(node.cost, other.node(same).cost), is_forward ? id : same,
               is_forward ? same : id, false);
    }
    if (!settled) return;
    auto& my_best = is_forward ? forward_grid_ : backward_grid_;
    auto [mine_it, inserted] = my_best.emplace(node.state.dims, id);
    if (!inserted && Cheaper(node.cost, mine.node(mine_it->second).cost)) mine_it->second = id;
    const auto& other_best = is_forward ? backward_grid_ : forward_grid_;
    auto it = other_best.find(node.state.dims);
    if (it == other_best.end() || other.node(it->second).state == node.state) return;
    const int64_t f = is_forward ? id : it->second;
    const int64_t b = is_forward ? it->second : id;
    const SearchEdge permute = coster_.Permute(forward_.node(f).state, backward_.node(b).state);
    Consider(Plus(Plus(forward_.node(f).cost, permute), backward_.node(b).cost), f, b, true);
  }

  const std::optional<Best>& best() const { return best_; }

 private:
  void Consider(PathCost cost, int64_t f, int64_t b, bool permute) {
    if (!best_.has_value() || Cheaper(cost, best_->cost)) best_ = Best{cost, f, b, permute};
  }

  const Frontier& forward_;
  const Frontier& backward_;
  const StepCoster& coster_;
  // The cheapest settled state of each tile grid, per side.
  std::map<std::vector<int64_t>, int64_t> forward_grid_, backward_grid_;
  std::optional<Best> best_;
};

// Whether no path left unexamined can beat `best`. Such a path has a part not yet settled on
// its side, so it costs at least the top of that frontier. (The classic bidirectional bound,
// the sum of both tops, does not hold here: the two searches walk different edge sets, so the
// settled prefix of a path need not meet the backward search at all.)
bool Done(const std::optional<Best>& best, const std::optional<PathCost>& forward_top,
          const std::optional<PathCost>& backward_top) {
  if (!forward_top.has_value() && !backward_top.has_value()) return true;
  if (!best.has_value()) return false;
  PathCost bound;
  if (forward_top.has_value() && backward_top.has_value()) {
    bound = Cheaper(*forward_top, *backward_top) ? *forward_top : *backward_top;
  } else {
    bound = forward_top.has_value() ? *forward_top : *backward_top;
  }
  return !Cheaper(bound, best->cost);
}

}  // namespace

StepCoster::StepCoster(const hlo::Shape& shape, int64_t num_devices, const LinkModel& link)
    : dims_(shape.dimensions()),
      element_bytes_(hlo::ByteWidth(shape.element_type())),
      num_devices_(num_devices),
      link_(link) {}

int64_t StepCoster::ShardBytes(const TileState& state) const {
  int64_t elements = 1;
  for (int64_t size : PaddedShardDims(state, dims_)) elements *= size;
  return elements * element_bytes_;
}

int64_t StepCoster::FullBytes() const {
  int64_t elements = 1;
  for (int64_t size : dims_) elements *= size;
  return elements * element_bytes_;
}

SearchEdge StepCoster::FromMove(const TileState& x, const StateMove& move) const {
  // In StateMove::Kind's order.
  static constexpr ReshardStepKind kKinds[] = {
      ReshardStepKind::kAllGather, ReshardStepKind::kDynamicSlice, ReshardStepKind::kAllToAll};
  SearchEdge edge;
  edge.kind = kKinds[static_cast<int>(move.kind)];
  edge.dims = move.dims;
  edge.factor = move.factor;
  edge.groups = move.groups;
  const CollectiveCost cost =
      GridStepCost(x.dims, move.kind, move.dims, move.factor, dims_, element_bytes_, link_);
  edge.bytes = cost.bytes_received;
  edge.cost_us = cost.time_us;
  return edge;
}

SearchEdge StepCoster::DynamicSlice(std::vector<int64_t> dims) const {
  SearchEdge edge;
  edge.kind = ReshardStepKind::kDynamicSlice;
  edge.dims = std::move(dims);
  return edge;
}

SearchEdge StepCoster::Permute(const TileState& x, const TileState& y) const {
  SearchEdge edge;
  edge.kind = ReshardStepKind::kCollectivePermute;
  bool moves = false;
  for (int64_t tile = 0; tile < x.num_tiles(); ++tile) {
    absl::Span<const int64_t> holders = x.TileDevices(tile);
    absl::Span<const int64_t> needers = y.TileDevices(tile);
    std::vector<int64_t> senders, receivers;
    // Devices that hold and need the tile keep it; the others are matched in sorted order.
    std::set_difference(holders.begin(), holders.end(), needers.begin(), needers.end(),
                        std::back_inserter(senders));
    std::set_difference(needers.begin(), needers.end(), holders.begin(), holders.end(),
                        std::back_inserter(receivers));
    for (int64_t device : needers) {
      if (std::binary_search(holders.begin(), holders.end(), device)) {
        edge.pairs.emplace_back(device, device);
      }
    }
    for (size_t i = 0; i < senders.size(); ++i) edge.pairs.emplace_back(senders[i], receivers[i]);
    moves = moves || !senders.empty();
  }
  std::sort(edge.pairs.begin(), edge.pairs.end());
  const CollectiveCost cost =
      EstimateCollective(CollectiveKind::kCollectivePermute, ShardBytes(x), moves ? 2 : 1, link_);
  edge.bytes = cost.bytes_received;
  edge.cost_us = cost.time_us;
  return edge;
}

SearchEdge StepCoster::MaximalPermute(int64_t from, int64_t to) const {
  SearchEdge edge;
  edge.kind = ReshardStepKind::kCollectivePermute;
  edge.pairs = {{from, to}};
  const CollectiveCost cost =
      EstimateCollective(CollectiveKind::kCollectivePermute, FullBytes(), 2, link_);
  edge.bytes = cost.bytes_received;
  edge.cost_us = cost.time_us;
  return edge;
}

SearchEdge StepCoster::Broadcast() const {
  SearchEdge edge;
  edge.kind = ReshardStepKind::kBroadcast;
  edge.groups.emplace_back();
  for (int64_t device = 0; device < num_devices_; ++device) edge.groups[0].push_back(device);
  const CollectiveCost cost =
      EstimateCollective(CollectiveKind::kAllReduce, FullBytes(), num_devices_, link_);
  edge.bytes = cost.bytes_received;
  edge.cost_us = cost.time_us;
  return edge;
}

SearchEdge StepCoster::Scatter(const TileState& y) const {
  SearchEdge edge;
  edge.kind = ReshardStepKind::kScatter;
  edge.groups = {y.devices};
  // The owner sends each other device its padded target shard, one collective-permute each:
  // every device receives one shard, and the owner's link carries one per other device. The
  // permutes are independent, so their latencies overlap: costed as one push of all of it.
  const int64_t shard = ShardBytes(y);
  const CollectiveCost push =
      EstimateCollective(CollectiveKind::kCollectivePermute, (num_devices_ - 1) * shard, 2, link_);
  edge.bytes = shard;
  edge.cost_us = push.time_us;
  return edge;
}

std::vector<SearchHop> ReplicateThenSliceHops(const TileState& source, const TileState& target,
                                              const StepCoster& coster) {
  std::vector<SearchHop> hops;
  TileState state = source;
  for (int64_t d = 0; d < state.rank(); ++d) {
    if (state.dims[d] == 1) continue;
    // Gathering a whole dim always nests (Aligned with coarse == 1).
    std::optional<StateMove> move = AllGatherMove(state, coster.shape_dims(), d, state.dims[d]);
    hops.push_back({coster.FromMove(state, *move), move->result});
    state = move->result;
  }
  if (!target.IsReplicated()) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < target.rank(); ++d) {
      if (target.dims[d] > 1) dims.push_back(d);
    }
    hops.push_back({coster.DynamicSlice(std::move(dims)), target});
  }
  return hops;
}

namespace {

// What one search found, and whether it finished (proved its path the cheapest) within its
// budget of states.
struct SearchResult {
  std::vector<SearchHop> hops;
  bool finished = false;
};

SearchResult Search(const TileState& source, const TileState& target, const StepCoster& coster,
                    absl::Span<const int64_t> max_tiles, Bounds forward_bounds,
                    Bounds backward_bounds, int64_t max_states) {
  Frontier forward(source, forward_bounds), backward(target, backward_bounds);
  Joiner joiner(forward, backward, coster);
  joiner.Update(true, 0, true);
  joiner.Update(false, 0, true);
  std::vector<int64_t> relaxed;
  SearchResult result;
  while (forward.size() + backward.size() < max_states) {
    const std::optional<PathCost> forward_top = forward.Top();
    const std::optional<PathCost> backward_top = backward.Top();
    if (Done(joiner.best(), forward_top, backward_top)) {
      result.finished = true;
      break;
    }
    // Advance the side whose next state is cheaper (forward on ties).
    const bool is_forward = forward_top.has_value() &&
                            (!backward_top.has_value() || !Cheaper(*backward_top, *forward_top));
    relaxed.clear();
    const int64_t id =
        is_forward
            ? forward.SettleNext(
                  [&](const TileState& x) {
                    return ForwardNeighbors(x, target, max_tiles, coster);
                  },
                  relaxed)
            : backward.SettleNext(
                  [&](const TileState& y) { return BackwardNeighbors(y, max_tiles, coster); },
                  relaxed);
    joiner.Update(is_forward, id, true);
    for (int64_t next : relaxed) joiner.Update(is_forward, next, false);
  }
  if (!joiner.best().has_value()) {
    result.hops = ReplicateThenSliceHops(source, target, coster);
    return result;
  }
  const Best& best = *joiner.best();
  result.hops = ForwardPath(forward.nodes(), best.forward, coster.shape_dims());
  const TileState& joined = backward.node(best.backward).state;
  if (best.permute) {
    result.hops.push_back({coster.Permute(forward.node(best.forward).state, joined), joined});
  }
  for (SearchHop& hop : BackwardPath(backward.nodes(), best.backward, coster.shape_dims())) {
    result.hops.push_back(std::move(hop));
  }
  return result;
}

}  // namespace

std::vector<SearchHop> CheapestPath(const TileState& source, const TileState& target,
                                    const StepCoster& coster) {
  if (source == target) return {};
  // Slicing a dim finer than both ends only to gather it again is never cheaper than the
  // permute it would replace, so dynamic-slices stay within the larger tile count of the ends.
  std::vector<int64_t> max_tiles(source.rank());
  for (int64_t d = 0; d < source.rank(); ++d) {
    max_tiles[d] = std::max(source.dims[d], target.dims[d]);
  }
  const RegionBound to_target(target, /*fixed_is_needed=*/true, coster.shape_dims(),
                              coster.element_bytes(), coster.link());
  const RegionBound from_source(source, /*fixed_is_needed=*/false, coster.shape_dims(),
                                coster.element_bytes(), coster.link());
  const int64_t max_states = MaxStates(coster.num_devices());
  SearchResult first = Search(source, target, coster, max_tiles, {&to_target}, {&from_source},
                              std::min(kEscalateStates, max_states));
  if (first.finished || max_states <= kEscalateStates) return std::move(first.hops);
  // A hard search (device orders that a permute must fix, on large meshes): again, with the
  // grid and permute bounds too.
  const GridGraph graph(source.rank(), coster.num_devices(), coster.shape_dims(),
                        coster.element_bytes(), coster.link());
  const GridBound grid_to_target(graph, target, /*fixed_is_needed=*/true);
  const GridBound grid_from_source(graph, source, /*fixed_is_needed=*/false);
  const PermuteBound permute_to_target(graph, source, target, /*forward=*/true);
  const PermuteBound permute_from_source(graph, source, target, /*forward=*/false);
  return Search(source, target, coster, max_tiles,
                {&to_target, &grid_to_target, &permute_to_target},
                {&from_source, &grid_from_source, &permute_from_source}, max_states)
      .hops;
}

std::vector<SearchHop> CheapestPathFromMaximal(const TileState& target, const StepCoster& coster) {
  // The scatter may land on a state with the target's replication split into tiles.
  std::vector<int64_t> max_tiles = target.TileCounts();
  for (int64_t& tiles : max_tiles) tiles *= target.replication();
  Frontier backward(target, Bounds());
  std::optional<std::pair<PathCost, int64_t>> best;
  SearchEdge best_edge;
  std::vector<int64_t> relaxed;
  const int64_t max_states = MaxStates(coster.num_devices());
  while (backward.size() < max_states) {
    const std::optional<PathCost> top = backward.Top();
    if (!top.has_value() || (best.has_value() && !Cheaper(*top, best->first))) break;
    const int64_t id = backward.SettleNext(
        [&](const TileState& y) { return BackwardNeighbors(y, max_tiles, coster); }, relaxed);
    const SearchNode& node = backward.node(id);
    SearchEdge edge = node.state.IsReplicated() ? coster.Broadcast() : coster.Scatter(node.state);
    const PathCost cost = Plus(Plus(PathCost(), edge), node.cost);
    if (!best.has_value() || Cheaper(cost, best->first)) {
      best.emplace(cost, id);
      best_edge = std::move(edge);
    }
  }
  if (!best.has_value()) return {};  // Unreachable: the target itself is settled first.
  std::vector<SearchHop> hops{{best_edge, backward.node(best->second).state}};
  for (SearchHop& hop : BackwardPath(backward.nodes(), best->second, coster.shape_dims())) {
    hops.push_back(std::move(hop));
  }
  return hops;
}

}  // namespace spmd

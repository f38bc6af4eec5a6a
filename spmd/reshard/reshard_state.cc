// Reshard states and steps. Every step is computed on the explicit device array: a step walks
// the data tiles of the state it starts from (row-major multi-index `idx`), computes each
// tile's index in the result, and places the tile's replication group there; replication
// groups are re-sorted so that equal placements get equal states. Example, 8 devices:
//
//   {devices=[2,4]<=[8]}   dims [2,4,1]  devices 0..7
//   all-gather(d=1, P=2) -> dims [2,2,2]  tiles (0,0):{0,1} (0,1):{2,3} (1,0):{4,5} (1,1):{6,7}
//                          = {devices=[2,2,2]<=[8] last_tile_dim_replicate}
//   groups {0,1},{2,3},{4,5},{6,7} (members ordered by their digit along dim 1).
#include "spmd/reshard/reshard_state.h"

#include <algorithm>
#include <array>
#include <numeric>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace spmd {
namespace {

using hlo::HloSharding;
using hlo::TileAssignment;

// Advances a row-major multi-index over `dims`; false after the last index.
bool NextIndex(absl::Span<const int64_t> dims, std::vector<int64_t>& idx) {
  for (int64_t i = static_cast<int64_t>(idx.size()) - 1; i >= 0; --i) {
    if (++idx[i] < dims[i]) return true;
    idx[i] = 0;
  }
  return false;
}

// One digit of a row-major walk: its size and what a step of it adds to each of up to three
// positions the walk keeps (destination tile, device group, member).
struct Digit {
  int64_t size;
  std::array<int64_t, 3> stride;
};

// Calls f(tile, positions) for every row-major position of `digits` (whose sizes multiply to
// the number of tiles), `positions` being the sums of digit value times stride. The steps'
// loops run for every state the search meets, so the positions advance by adding strides
// instead of re-linearizing multi-indices.
template <typename F>
void WalkDigits(absl::Span<const Digit> digits, F f) {
  if (digits.empty()) return f(0, std::array<int64_t, 3>{0, 0, 0});
  // The last digit runs in an inner loop; the others advance like an odometer between runs.
  const Digit& inner = digits.back();
  const absl::Span<const Digit> outer = digits.first(digits.size() - 1);
  absl::InlinedVector<int64_t, 8> count(outer.size(), 0);
  std::array<int64_t, 3> base = {0, 0, 0};
  for (int64_t tile = 0;;) {
    std::array<int64_t, 3> at = base;
    for (int64_t i = 0; i < inner.size; ++i, ++tile) {
      f(tile, at);
      for (int k = 0; k < 3; ++k) at[k] += inner.stride[k];
    }
    int64_t i = static_cast<int64_t>(outer.size()) - 1;
    for (; i >= 0; --i) {
      for (int k = 0; k < 3; ++k) base[k] += outer[i].stride[k];
      if (++count[i] < outer[i].size) break;
      for (int k = 0; k < 3; ++k) base[k] -= outer[i].stride[k] * outer[i].size;
      count[i] = 0;
    }
    if (i < 0) return;
  }
}

// Row-major strides of the first `rank` entries of `dims`.
absl::InlinedVector<int64_t, 8> Strides(const std::vector<int64_t>& dims, int64_t rank) {
  absl::InlinedVector<int64_t, 8> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  return strides;
}

// Calls f(idx, tile) for every data tile of a state with `dims` (rank + 1 entries).
template <typename F>
void ForEachTile(const std::vector<int64_t>& dims, F f) {
  std::vector<int64_t> idx(dims.size() - 1, 0);
  int64_t tile = 0;
  do {
    f(idx, tile++);
  } while (!idx.empty() && NextIndex(dims, idx));
}

void SortReplicationGroups(TileState& state) {
  const int64_t r = state.replication();
  for (int64_t t = 0; t < state.num_tiles(); ++t) {
    std::sort(state.devices.begin() + t * r, state.devices.begin() + (t + 1) * r);
  }
}

absl::Status Unsupported(const HloSharding& sharding, std::string_view why) {
  return absl::UnimplementedError(
      hlo::StrCat("reshard: sharding ", sharding.ToStringWithoutMetadata(), " ", why));
}

}  // namespace

int64_t PaddedSize(int64_t n, int64_t tiles) { return (n + tiles - 1) / tiles; }

bool Aligned(int64_t n, int64_t coarse, int64_t factor) {
  return coarse == 1 || PaddedSize(n, coarse) == factor * PaddedSize(n, coarse * factor);
}

std::vector<int64_t> DivisorsAboveOne(int64_t n) {
  std::vector<int64_t> divisors;
  for (int64_t d = 2; d <= n; ++d) {
    if (n % d == 0) divisors.push_back(d);
  }
  return divisors;
}

TileState TileState::Replicated(int64_t rank, int64_t num_devices) {
  TileState state;
  state.dims.assign(rank, 1);
  state.dims.push_back(num_devices);
  state.devices.resize(num_devices);
  std::iota(state.devices.begin(), state.devices.end(), 0);
  return state;
}

absl::StatusOr<TileState> TileState::FromSharding(const HloSharding& sharding, int64_t rank,
                                                  int64_t num_devices) {
  if (sharding.kind() == HloSharding::Kind::kReplicated) return Replicated(rank, num_devices);
  if (!sharding.IsTiled()) return Unsupported(sharding, "is neither tiled nor replicated");
  if (sharding.NumSubgroupDims() > (sharding.replicate_on_last_tile_dim() ? 1 : 0)) {
    return Unsupported(sharding, "has manual or unreduced subgroups");
  }
  if (sharding.TiledDataRank() != rank) return Unsupported(sharding, "does not fit the rank");
  const TileAssignment& ta = sharding.tile_assignment();
  TileState state;
  state.dims.assign(ta.dims().begin(), ta.dims().begin() + rank);
  state.dims.push_back(sharding.replicate_on_last_tile_dim() ? ta.dim(rank) : 1);
  state.devices = ta.Devices();
  std::vector<int64_t> sorted = state.devices;
  std::sort(sorted.begin(), sorted.end());
  bool exact = static_cast<int64_t>(sorted.size()) == num_devices;
  for (int64_t i = 0; exact && i < num_devices; ++i) exact = sorted[i] == i;
  if (!exact) {
    return Unsupported(sharding, hlo::StrCat("does not use exactly devices 0..", num_devices - 1));
  }
  SortReplicationGroups(state);
  return state;
}

absl::StatusOr<HloSharding> TileState::ToSharding() const {
  if (IsReplicated()) return HloSharding::Replicate();
  std::vector<int64_t> ta_dims = dims;
  if (replication() == 1) ta_dims.pop_back();
  ASSIGN_OR_RETURN(TileAssignment ta, TileAssignment::Explicit(ta_dims, devices));
  if (std::optional<TileAssignment> iota = ta.ToIota()) ta = *iota;
  if (replication() == 1) return HloSharding::Tile(ta);
  return HloSharding::PartialTile(ta);
}

std::vector<std::vector<int64_t>> TileState::TileIndexByDevice() const {
  std::vector<std::vector<int64_t>> by_device(num_devices());
  const int64_t r = replication();
  ForEachTile(dims, [&](const std::vector<int64_t>& idx, int64_t tile) {
    for (int64_t j = 0; j < r; ++j) by_device[devices[tile * r + j]] = idx;
  });
  return by_device;
}

std::vector<int64_t> PaddedShardDims(const TileState& state, absl::Span<const int64_t> shape_dims) {
  std::vector<int64_t> padded(shape_dims.size());
  for (size_t d = 0; d < shape_dims.size(); ++d)
    padded[d] = PaddedSize(shape_dims[d], state.dims[d]);
  return padded;
}

std::optional<StateMove> AllGatherMove(const TileState& x, absl::Span<const int64_t> shape_dims,
                                       int64_t d, int64_t factor, bool with_groups) {
  const int64_t t = x.dims[d];
  if (factor <= 1 || t % factor != 0 || !Aligned(shape_dims[d], t / factor, factor)) {
    return std::nullopt;
  }
  const int64_t r = x.replication();
  StateMove move{StateMove::Kind::kAllGather, {d}, factor, {}, {}};
  TileState& y = move.result;
  y.dims = x.dims;
  y.dims[d] = t / factor;
  y.dims.back() = r * factor;
  y.devices.resize(x.devices.size());
  if (with_groups) move.groups.assign(x.devices.size() / factor, std::vector<int64_t>(factor));
  // Positions: the device slot of the tile's first member in y, y's tile, the member's digit k.
  const absl::InlinedVector<int64_t, 8> y_strides = Strides(y.dims, x.rank());
  absl::InlinedVector<Digit, 9> digits;
  for (int64_t e = 0; e < x.rank(); ++e) {
    const int64_t size = e == d ? t / factor : x.dims[e];
    digits.push_back({size, {y_strides[e] * r * factor, y_strides[e], 0}});
    if (e == d) digits.push_back({factor, {r, 0, 1}});
  }
  WalkDigits(digits, [&](int64_t tile, const std::array<int64_t, 3>& at) {
    for (int64_t j = 0; j < r; ++j) {
      const int64_t device = x.devices[tile * r + j];
      y.devices[at[0] + j] = device;
      if (with_groups) move.groups[at[1] * r + j][at[2]] = device;
    }
  });
  SortReplicationGroups(y);
  return move;
}

std::optional<StateMove> DynamicSliceMove(const TileState& x, absl::Span<const int64_t> shape_dims,
                                          int64_t d, int64_t factor, int64_t weight) {
  const int64_t r = x.replication();
  if (factor <= 1 || weight < 1 || r % (factor * weight) != 0 ||
      !Aligned(shape_dims[d], x.dims[d], factor)) {
    return std::nullopt;
  }
  StateMove move{StateMove::Kind::kDynamicSlice, {d}, factor, {}, {}};
  TileState& y = move.result;
  y.dims = x.dims;
  y.dims[d] *= factor;
  y.dims.back() = r / factor;
  y.devices.resize(x.devices.size());
  // Member m of a group goes to the fine tile of its digit, at its rank among the rest.
  const int64_t kept = r / factor;
  const absl::InlinedVector<int64_t, 8> y_strides = Strides(y.dims, x.rank());
  std::vector<int64_t> member_slot(r);
  for (int64_t m = 0; m < r; ++m) {
    const int64_t digit = (m / weight) % factor;
    const int64_t rest = (m / (weight * factor)) * weight + m % weight;
    member_slot[m] = digit * y_strides[d] * kept + rest;
  }
  absl::InlinedVector<Digit, 8> digits;
  for (int64_t e = 0; e < x.rank(); ++e) {
    digits.push_back({x.dims[e], {y_strides[e] * (e == d ? factor : 1) * kept, 0, 0}});
  }
  WalkDigits(digits, [&](int64_t tile, const std::array<int64_t, 3>& at) {
    for (int64_t m = 0; m < r; ++m) y.devices[at[0] + member_slot[m]] = x.devices[tile * r + m];
  });
  return move;  // Subsequences of sorted groups stay sorted.
}

std::optional<StateMove> AllToAllMove(const TileState& x, absl::Span<const int64_t> shape_dims,
                                      int64_t s, int64_t c, int64_t factor, bool with_groups) {
  if (s == c || factor <= 1 || x.dims[s] % factor != 0 ||
      !Aligned(shape_dims[s], x.dims[s] / factor, factor) ||
      !Aligned(shape_dims[c], x.dims[c], factor)) {
    return std::nullopt;
  }
  const int64_t r = x.replication();
  StateMove move{StateMove::Kind::kAllToAll, {s, c}, factor, {}, {}};
  TileState& y = move.result;
  y.dims = x.dims;
  y.dims[s] /= factor;
  y.dims[c] *= factor;
  y.devices.resize(x.devices.size());
  // Positions: y's tile, the group key (the tile index with dim s divided by the factor, i.e.
  // y's tile with t_c unchanged), the member's digit k (the minor factor of dim s).
  const absl::InlinedVector<int64_t, 8> y_strides = Strides(y.dims, x.rank());
  std::vector<int64_t> key_dims = x.dims;
  key_dims[s] /= factor;
  const absl::InlinedVector<int64_t, 8> key_strides = Strides(key_dims, x.rank());
  if (with_groups) move.groups.assign(x.devices.size() / factor, std::vector<int64_t>(factor));
  absl::InlinedVector<Digit, 9> digits;
  for (int64_t e = 0; e < x.rank(); ++e) {
    if (e == s) {
      digits.push_back({x.dims[s] / factor, {y_strides[s], key_strides[s], 0}});
      digits.push_back({factor, {y_strides[c], 0, 1}});
    } else {
      digits.push_back({x.dims[e], {y_strides[e] * (e == c ? factor : 1), key_strides[e], 0}});
    }
  }
  WalkDigits(digits, [&](int64_t tile, const std::array<int64_t, 3>& at) {
    for (int64_t j = 0; j < r; ++j) {
      y.devices[at[0] * r + j] = x.devices[tile * r + j];
      if (with_groups) move.groups[at[1] * r + j][at[2]] = x.devices[tile * r + j];
    }
  });
  return move;
}

std::vector<StateMove> MovesFrom(const TileState& x, absl::Span<const int64_t> shape_dims,
                                 absl::Span<const int64_t> max_tiles, bool with_groups) {
  std::vector<StateMove> moves;
  auto add = [&](std::optional<StateMove> move) {
    if (move.has_value()) moves.push_back(*std::move(move));
  };
  const int64_t rank = x.rank();
  for (int64_t d = 0; d < rank; ++d) {
    for (int64_t factor : DivisorsAboveOne(x.dims[d])) {
      add(AllGatherMove(x, shape_dims, d, factor, with_groups));
      for (int64_t c = 0; c < rank; ++c) {
        add(AllToAllMove(x, shape_dims, d, c, factor, with_groups));
      }
    }
    for (int64_t factor : DivisorsAboveOne(x.replication())) {
      if (!max_tiles.empty() && x.dims[d] * factor > max_tiles[d]) break;
      for (int64_t weight = 1; factor * weight <= x.replication(); ++weight) {
        add(DynamicSliceMove(x, shape_dims, d, factor, weight));
      }
    }
  }
  return moves;
}

bool ContainsEveryRegion(const TileState& x, const TileState& y,
                         absl::Span<const int64_t> shape_dims) {
  const std::vector<std::vector<int64_t>> x_index = x.TileIndexByDevice();
  const std::vector<std::vector<int64_t>> y_index = y.TileIndexByDevice();
  const std::vector<int64_t> x_size = PaddedShardDims(x, shape_dims);
  const std::vector<int64_t> y_size = PaddedShardDims(y, shape_dims);
  for (int64_t device = 0; device < x.num_devices(); ++device) {
    bool empty = false;
    bool inside = true;
    for (size_t d = 0; d < shape_dims.size(); ++d) {
      const int64_t n = shape_dims[d];
      const int64_t y_begin = y_index[device][d] * y_size[d];
      const int64_t y_end = std::min(y_begin + y_size[d], n);
      const int64_t x_begin = x_index[device][d] * x_size[d];
      const int64_t x_end = std::min(x_begin + x_size[d], n);
      empty = empty || y_begin >= y_end;
      inside = inside && y_begin >= x_begin && y_end <= x_end;
    }
    if (!empty && !inside) return false;
  }
  return true;
}

}  // namespace spmd

// The states the reshard planner searches over, and the single data-movement steps between them.
//
// A TileState is a tiled placement of one array over devices 0..N-1, normalized so that equal
// placements compare equal: a tile count per array dimension, one trailing replication count,
// and the device array (row-major) with every replication group sorted. Replicated is the state
// whose tile counts are all 1; maximal placements are not TileStates (the planner handles them).
//
// Uneven dimensions follow shard_geometry.h: n elements split t ways give every device a
// padded buffer of ceil(n/t), tile i covering [i*ceil(n/t), min((i+1)*ceil(n/t), n)).
//
// Steps (each keeps the device set and moves whole factors of tile counts):
//   all-gather    dim d's minor factor P (its devices) joins the replication: t_d -> t_d/P.
//   dynamic-slice dim d is split P times further, by devices of each replication group whose
//                 sorted position has digit c (weight B) : t_d -> t_d*P, replication -> r/P.
//   all-to-all    the minor factor P of dim s moves to the minor end of dim c:
//                 t_s -> t_s/P, t_c -> t_c*P.
// A step that would cut a padded tile inside its data is refused (see Aligned).
#ifndef SPMD_RESHARD_RESHARD_STATE_H_
#define SPMD_RESHARD_RESHARD_STATE_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/sharding/hlo_sharding.h"

namespace spmd {

struct TileState {
  // Tile counts of the array dims, then the replication count (rank + 1 entries).
  std::vector<int64_t> dims;
  // Row-major over `dims`; the `replication()` devices of each data tile are sorted.
  std::vector<int64_t> devices;

  // The normalized state of `sharding` (replicated, or tiled with at most a
  // last_tile_dim_replicate subgroup) for an array of rank `rank` on `num_devices` devices.
  // Fails for other kinds, other subgroups, a rank mismatch, or a tile assignment that does
  // not hold exactly the devices 0..num_devices-1.
  static absl::StatusOr<TileState> FromSharding(const hlo::HloSharding& sharding, int64_t rank,
                                                int64_t num_devices);
  // The replicated state: tile counts 1, devices 0..num_devices-1.
  static TileState Replicated(int64_t rank, int64_t num_devices);

  // The HloSharding of this state (iota tile assignment when one exists).
  absl::StatusOr<hlo::HloSharding> ToSharding() const;

  int64_t rank() const { return static_cast<int64_t>(dims.size()) - 1; }
  int64_t replication() const { return dims.back(); }
  int64_t num_devices() const { return static_cast<int64_t>(devices.size()); }
  int64_t num_tiles() const { return num_devices() / replication(); }
  bool IsReplicated() const { return replication() == num_devices(); }
  // The data tile counts (dims without the replication count).
  std::vector<int64_t> TileCounts() const { return {dims.begin(), dims.end() - 1}; }
  // The sorted devices of linear data tile `tile`.
  absl::Span<const int64_t> TileDevices(int64_t tile) const {
    return absl::MakeConstSpan(devices).subspan(tile * replication(), replication());
  }
  // For every device id, its data tile index (rank entries).
  std::vector<std::vector<int64_t>> TileIndexByDevice() const;

  friend bool operator==(const TileState& a, const TileState& b) {
    return a.dims == b.dims && a.devices == b.devices;
  }
  friend bool operator!=(const TileState& a, const TileState& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const TileState& s) {
    return H::combine(std::move(h), s.dims, s.devices);
  }
};

// ceil(n / tiles): the padded per-device size of a dimension of `n` elements split `tiles` ways.
int64_t PaddedSize(int64_t n, int64_t tiles);
// The padded per-device buffer dims of `state` for an array of `shape_dims`.
std::vector<int64_t> PaddedShardDims(const TileState& state, absl::Span<const int64_t> shape_dims);

// Whether a dim of `n` elements in `coarse` tiles and in coarse*`factor` tiles nests exactly:
// coarse == 1 (the whole dim, cut or restored by padding at the end) or
// ceil(n/coarse) == factor * ceil(n/(coarse*factor)) (every coarse tile is `factor` whole fine
// tiles). Example: n=10 in 2 and 4 tiles does not nest (5 vs 2*3).
bool Aligned(int64_t n, int64_t coarse, int64_t factor);

// One step from a state, with the state it produces.
struct StateMove {
  enum class Kind { kAllGather, kDynamicSlice, kAllToAll };
  Kind kind = Kind::kAllGather;
  // kAllGather, kDynamicSlice: {d}; kAllToAll: {s, c} (s becomes less split, c more split).
  std::vector<int64_t> dims;
  int64_t factor = 1;  // P
  // kAllGather, kAllToAll: the device groups, members ordered by their digit of the factor.
  std::vector<std::vector<int64_t>> groups;
  TileState result;
};

// The all-gather of the minor `factor` of dim `d`; nullopt when `factor` does not divide the
// tile count or the tiles do not nest (Aligned). Without `with_groups` the move's groups stay
// empty (the search costs moves by their factor and rebuilds the groups of the path it keeps).
std::optional<StateMove> AllGatherMove(const TileState& x, absl::Span<const int64_t> shape_dims,
                                       int64_t d, int64_t factor, bool with_groups = true);
// The dynamic-slice of dim `d` by `factor`, taking the digit of weight `weight` of each device's
// sorted position in its replication group; nullopt unless factor*weight divides the
// replication and the tiles nest.
std::optional<StateMove> DynamicSliceMove(const TileState& x, absl::Span<const int64_t> shape_dims,
                                          int64_t d, int64_t factor, int64_t weight);
// The all-to-all moving the minor `factor` of dim `s` to dim `c`; nullopt when s == c, the
// factor does not divide t_s, or either dim's tiles do not nest.
std::optional<StateMove> AllToAllMove(const TileState& x, absl::Span<const int64_t> shape_dims,
                                      int64_t s, int64_t c, int64_t factor,
                                      bool with_groups = true);
// Every move above from `x` (each divisor > 1 as factor), leaving out dynamic-slices that
// would split a dim d into more than `max_tiles[d]` tiles (no limit when `max_tiles` is empty).
std::vector<StateMove> MovesFrom(const TileState& x, absl::Span<const int64_t> shape_dims,
                                 absl::Span<const int64_t> max_tiles = {}, bool with_groups = true);

// Whether every device's (non-empty) region under `y` lies inside its region under `x`, so a
// local dynamic-slice turns `x` into `y`. REQUIRES: same rank and device count.
bool ContainsEveryRegion(const TileState& x, const TileState& y,
                         absl::Span<const int64_t> shape_dims);

// The divisors of `n` greater than 1, ascending.
std::vector<int64_t> DivisorsAboveOne(int64_t n);

}  // namespace spmd

#endif  // SPMD_RESHARD_RESHARD_STATE_H_

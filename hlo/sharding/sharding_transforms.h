// Shardings seen through data movement, and combinations of shardings.
//
// Each function keeps the input's metadata and drops its shard group (the result describes a
// different value). Each returns a Status saying why when no sharding does the job.
//
//   TransposeSharding({devices=[4,2]<=[8]}, {1,0})        => {devices=[2,4]<=[4,2]T(1,0)}
//   ReshapeSharding({devices=[2,1]<=[2]}, f32[4,6] -> f32[24])   => {devices=[2]<=[2]}
//   PartiallyReplicate({devices=[2,2]<=[4]}, {1})    => {devices=[2,1,2]<=[4]
//   last_tile_dim_replicate} MergeShardings({devices=[2,1,2]<=[4] last_tile_dim_replicate},
//                  {devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}) => {devices=[2,2]<=[4]}
#ifndef HLO_SHARDING_SHARDING_TRANSFORMS_H_
#define HLO_SHARDING_SHARDING_TRANSFORMS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"

namespace hlo {

// The sharding of `transpose(x), dimensions=perm` when x has `sharding`: result data dim i is
// x's data dim perm[i]; subgroup dims stay last. Non-tiled leaves are returned unchanged.
// Fails for tuples and when `perm` is not a permutation of the tiled data dims.
absl::StatusOr<HloSharding> TransposeSharding(const HloSharding& sharding,
                                              absl::Span<const int64_t> perm);

// The sharding of `reshape(x)` (x of shape `source`, result of shape `target`) that keeps every
// element on the devices that hold it under `sharding`. Non-tiled leaves are returned
// unchanged. Fails (saying which dimension) when a tiled dimension is split or merged in a way
// that no tiling reproduces: tiles that do not divide the dimension, or tiles that would land
// on a minor part of a merged dimension.
absl::StatusOr<HloSharding> ReshapeSharding(const HloSharding& sharding, const Shape& source,
                                            const Shape& target);

// ReshapeSharding, but a tiled source dim that has no equivalent on `target` is replicated
// (PartiallyReplicate) and the rest mapped again, so the dims that do map keep their tiles;
// the result may be {replicated}. Every element stays on the devices that held it (more may
// hold it).
//   f32[2,64,8] {devices=[1,2,4]<=[8]} -> f32[128,8]
//     => {devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}   (dim 1's tiles replicated)
// Fails as ReshapeSharding does for inputs no retry can fix (tuples, mismatched shapes).
absl::StatusOr<HloSharding> ReshapeShardingReplicatingUnmapped(const HloSharding& sharding,
                                                               const Shape& source,
                                                               const Shape& target);

// `sharding` replicated along the data dims `dims`: their tiles move into the replication
// subgroup (the result is canonical, so it may be {replicated}). Non-tiled leaves are returned
// unchanged. Fails for tuples and for dims that are not distinct data dims.
absl::StatusOr<HloSharding> PartiallyReplicate(const HloSharding& sharding,
                                               absl::Span<const int64_t> dims);

// For a rank-`rank` array: whole on every device inside the manual subgroups of `sharding`
// (which has a manual subgroup dim): no data dim tiled, the manual groups kept, the other
// tiles folded into replication.
//   WholeInManualSubgroups({devices=[2,1,2]<=[4] last_tile_dims={manual}}, 0)
//     => {devices=[2,2]<=[4] last_tile_dims={manual, replicated}}
// Fails when `sharding` has no manual subgroup dim.
absl::StatusOr<HloSharding> WholeInManualSubgroups(const HloSharding& sharding, int64_t rank);

// The sharding a manual conversion's global side (SPMDFullToShardShape's operand,
// SPMDShardToFullShape's result), sharded `global`, has for each device's shard to be its
// manual value, of shape `device_shape` (with manual subgroups that tile inside each group,
// the device's tile): `global` with those of `open_dims` replicated along which that value is
// whole (device_shape[d] == global_shape[d]). The conversion's `unspecified_dims` are its
// open dims: propagation may split them further on the global side. Other shardings are
// returned unchanged.
//   ManualConversionSharding({devices=[2,2,1,2]<=[8] last_tile_dim_replicate}, f32[6,3,8],
//                            f32[3,3,8], {1, 2}) => {devices=[2,1,1,4]<=[8]
//                                                    last_tile_dim_replicate}
absl::StatusOr<HloSharding> ManualConversionSharding(const HloSharding& global,
                                                     const Shape& global_shape,
                                                     const Shape& device_shape,
                                                     absl::Span<const int64_t> open_dims);

// `like`'s subgroup types (a partial replication as a replicated subgroup), reduction op and
// metadata on tile array `tiles` of another shape or device order with the same subgroup dims
// last: e.g. the tiles of a data dim moved, or reversed along some dims.
absl::StatusOr<HloSharding> WithTileAssignment(const HloSharding& like, TileAssignment tiles);

// `sharding` with its devices in reverse order along each data dim of `dims` (a reverse's
// result from its operand, and back: XLA's ReverseSharding); not tiled: `sharding` itself.
//   MirrorTiles({devices=[2,4]<=[8]}, {1}) => {devices=[2,4]3,2,1,0,7,6,5,4}
absl::StatusOr<HloSharding> MirrorTiles(const HloSharding& sharding,
                                        const std::vector<int64_t>& dims);

// `sharding` with the tiles of data dim `from` moved into data dim `to` (as its minor part):
// dim `to` is tiled dim(to) * dim(from) ways, `from` becomes whole. The devices of one
// `from` row end up in adjacent `to` tiles, so the move is one all-to-all per group.
//   MoveTileDim({devices=[2,1,4]<=[8]}, 2, 1) => {devices=[2,4,1]<=[8]}
// Fails for tuples, non-tiled shardings, and when `from` or `to` is not a data dim or they
// are equal.
absl::StatusOr<HloSharding> MoveTileDim(const HloSharding& sharding, int64_t from, int64_t to);

// The sharding a reduce-scatter leaves behind when each of `groups` holds partial sums of one
// tile of `held` (the group's devices replicate that tile) and scatters data dim `dim` of it:
// a group's i-th device keeps block i of the tile along `dim`, so `dim` is tiled k times more
// (k, the group size) and the replication k times less. The groups within one tile take its
// replica slots in the order of their first device there. `rank` is the data rank (used when
// `held` is replicated). Whether each block is exactly a shard of the result (an even split
// inside a tile) is the caller's to check.
//   SplitAmongGroups({devices=[2,2]<=[4] last_tile_dim_replicate}, 2, 1, {{0,1},{2,3}})
//     => {devices=[2,2]<=[4]}
// Fails when a group is not inside one tile's replication, groups differ in size, a replica
// is in no group, or `held` has manual or unreduced subgroups or is not tiled or replicated.
absl::StatusOr<HloSharding> SplitAmongGroups(const HloSharding& held, int64_t rank, int64_t dim,
                                             const std::vector<std::vector<int64_t>>& groups);

// One sharding that holds, on every device, the tiles both `a` and `b` give it: a data dim
// tiled in only one input takes that tiling; a dim tiled in both must be tiled alike.
// {replicated} and {unknown} merge to the other input; equal inputs merge to themselves.
// Fails when the inputs disagree (a device in different tiles of one dim, different tile
// counts, different devices), when the merged tiles are not held by equally many devices, or
// when either has unreduced subgroups. With manual subgroups they merge only when both are
// manual in the same groups of devices and one is whole inside each group (to the other).
absl::StatusOr<HloSharding> MergeShardings(const HloSharding& a, const HloSharding& b);

// The sharding an operand needs so that an op mapping operand dimension i to result dimension
// `dim_map[i]` (-1: no result dimension) produces `result` locally: mapped dimensions keep
// the result's tiling and devices; result dimensions no operand dimension maps to become
// replication; a manual subgroup is kept. The same map read the other way (result dimension
// -> operand dimension) moves an operand's sharding to the result. Fails for unreduced
// subgroups, other shardings than replicated, maximal or tiled, and maps that name a result
// dimension twice or past `result_rank`.
//   OperandShardingFromResult({devices=[2,4]<=[8]}, 2, {1, -1})
//     => {devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
absl::StatusOr<HloSharding> OperandShardingFromResult(const HloSharding& result,
                                                      int64_t result_rank,
                                                      const std::vector<int64_t>& dim_map);

}  // namespace hlo

#endif  // HLO_SHARDING_SHARDING_TRANSFORMS_H_

// Which part of an array each device holds under an HloSharding.
//
// Tiles use ceil division, as XLA does: a dimension of size n split k ways has tiles of
// ceil(n/k) elements; on an uneven dimension the last tiles are short or empty. Example: f32[10,7]
// with {devices=[4,1]<=[4]} gives devices 0..3 the rows [0,3), [3,6), [6,9), [9,10), and every
// device the padded shard shape f32[3,7].
#ifndef HLO_SHARDING_SHARD_GEOMETRY_H_
#define HLO_SHARDING_SHARD_GEOMETRY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"

namespace hlo {

// The box [offsets, limits) of an array that one device holds.
struct ShardRegion {
  std::vector<int64_t> offsets;
  std::vector<int64_t> limits;
  // False for a device that holds nothing of a maximal sharding (needed for rank-0 shapes,
  // whose region has no dimension that could be empty).
  bool holds_data = true;

  // limits - offsets, per dimension.
  std::vector<int64_t> sizes() const;
  // Whether the region holds no element (the device holds no data, or some size is 0).
  bool empty() const;
  friend bool operator==(const ShardRegion& a, const ShardRegion& b) {
    return a.offsets == b.offsets && a.limits == b.limits && a.holds_data == b.holds_data;
  }
};

// The number of tiles a sharding splits its data into (1 for non-tiled shardings).
int64_t DataTiles(const HloSharding& sharding);

// The data tile index of `device`: the first TiledDataRank() coordinates of its position in
// the tile assignment. Fails unless `sharding` is tiled and uses `device`.
absl::StatusOr<std::vector<int64_t>> TileIndexForDevice(const HloSharding& sharding,
                                                        int64_t device);

// The devices holding data tile `tile_index` (all subgroup positions, row-major). Fails unless
// `sharding` is tiled and `tile_index` is a valid data tile index.
absl::StatusOr<std::vector<int64_t>> DevicesForTile(const HloSharding& sharding,
                                                    absl::Span<const int64_t> tile_index);

// The region of an array of `shape` that `device` holds. Replicated, manual and unreduced
// leaves give the whole array to every device; a maximal leaf gives it to its device and an
// empty region to the others. Fails for tuple and unknown shardings, for a non-array shape, for
// a rank mismatch, and for a device the tiled sharding does not use.
absl::StatusOr<ShardRegion> ShardRegionForDevice(const HloSharding& sharding, const Shape& shape,
                                                 int64_t device);

// `shape` with the dimensions of ShardRegionForDevice (the unpadded shard).
absl::StatusOr<Shape> ShardShapeForDevice(const HloSharding& sharding, const Shape& shape,
                                          int64_t device);

// The per-device shape the partitioner allocates: each tiled dimension of size n split k ways
// becomes ceil(n/k). A tuple shape needs a tuple (or single leaf) sharding and gives a tuple.
// Fails on rank or leaf-count mismatch.
absl::StatusOr<Shape> PaddedShardShape(const HloSharding& sharding, const Shape& shape);

// Groups of devices that hold identical data, each sorted by position along the replication
// subgroup dim; groups in row-major order of the other tile dims. A tiled sharding without a
// replicated subgroup, and manual or unreduced shardings, give one group per device; replicated
// gives one group of devices 0..num_devices-1; maximal gives its one device. Fails for tuple and
// unknown shardings.
absl::StatusOr<std::vector<std::vector<int64_t>>> ReplicationGroups(const HloSharding& sharding,
                                                                    int64_t num_devices);

}  // namespace hlo

#endif  // HLO_SHARDING_SHARD_GEOMETRY_H_

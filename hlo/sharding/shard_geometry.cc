// Shard geometry: a device's tile index comes from its position in the tile assignment; its
// region along each data dimension i is [min(t*c, n), min((t+1)*c, n)) with n the dimension
// size, k its tile count, c = ceil(n/k) and t the device's tile index. Replication groups are
// the device groups along the replicated subgroup dim (device_groups.h).
#include "hlo/sharding/shard_geometry.h"

#include <algorithm>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/sharding/device_groups.h"

namespace hlo {
namespace {

int64_t CeilOfRatio(int64_t a, int64_t b) { return (a + b - 1) / b; }

absl::Status NotTiled(const HloSharding& sharding) {
  return absl::InvalidArgumentError(
      absl::StrCat("sharding ", sharding.ToStringWithoutMetadata(), " is not tiled"));
}

absl::Status CheckRank(const HloSharding& sharding, const Shape& shape) {
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", shape.ToString(false), " is not an array"));
  }
  if (sharding.IsTiled() && sharding.TiledDataRank() != shape.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sharding ", sharding.ToStringWithoutMetadata(), " tiles ", sharding.TiledDataRank(),
        " dimensions but shape ", shape.ToString(false), " has rank ", shape.rank()));
  }
  return absl::OkStatus();
}

Shape WithDims(const Shape& shape, absl::Span<const int64_t> dims) {
  Shape result = shape;
  for (size_t i = 0; i < dims.size(); ++i) result.set_dimension(i, dims[i]);
  return result;
}

}  // namespace

int64_t DataTiles(const HloSharding& sharding) {
  if (!sharding.IsTiled()) return 1;
  int64_t tiles = 1;
  for (int64_t d = 0; d < sharding.TiledDataRank(); ++d) {
    tiles *= sharding.tile_assignment().dim(d);
  }
  return tiles;
}

std::vector<int64_t> ShardRegion::sizes() const {
  std::vector<int64_t> result(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) result[i] = limits[i] - offsets[i];
  return result;
}

bool ShardRegion::empty() const {
  if (!holds_data) return true;
  for (size_t i = 0; i < offsets.size(); ++i) {
    if (limits[i] <= offsets[i]) return true;
  }
  return false;
}

absl::StatusOr<std::vector<int64_t>> TileIndexForDevice(const HloSharding& sharding,
                                                        int64_t device) {
  if (!sharding.IsTiled()) return NotTiled(sharding);
  std::optional<std::vector<int64_t>> index = sharding.tile_assignment().TileIndexOf(device);
  if (!index.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("device ", device, " is not used by sharding ",
                                                   sharding.ToStringWithoutMetadata()));
  }
  index->resize(sharding.TiledDataRank());
  return *std::move(index);
}

absl::StatusOr<std::vector<int64_t>> DevicesForTile(const HloSharding& sharding,
                                                    absl::Span<const int64_t> tile_index) {
  if (!sharding.IsTiled()) return NotTiled(sharding);
  const TileAssignment& ta = sharding.tile_assignment();
  const int64_t data_rank = sharding.TiledDataRank();
  bool valid = static_cast<int64_t>(tile_index.size()) == data_rank;
  for (int64_t i = 0; valid && i < data_rank; ++i) {
    valid = tile_index[i] >= 0 && tile_index[i] < ta.dim(i);
  }
  if (!valid) {
    return absl::InvalidArgumentError(absl::StrCat("[", absl::StrJoin(tile_index, ","),
                                                   "] is not a data tile index of sharding ",
                                                   sharding.ToStringWithoutMetadata()));
  }
  // The devices of one data tile are a contiguous run in row-major order.
  int64_t first = 0;
  for (int64_t i = 0; i < data_rank; ++i) first = first * ta.dim(i) + tile_index[i];
  const int64_t per_tile =
      ta.num_devices() / std::accumulate(ta.dims().begin(), ta.dims().begin() + data_rank,
                                         int64_t{1}, std::multiplies<>());
  std::vector<int64_t> devices;
  for (int64_t k = 0; k < per_tile; ++k) devices.push_back(ta.device_at(first * per_tile + k));
  return devices;
}

absl::StatusOr<ShardRegion> ShardRegionForDevice(const HloSharding& sharding, const Shape& shape,
                                                 int64_t device) {
  using Kind = HloSharding::Kind;
  if (sharding.kind() == Kind::kTuple || sharding.kind() == Kind::kUnknown) {
    return absl::InvalidArgumentError(
        absl::StrCat("sharding ", sharding.ToStringWithoutMetadata(), " has no per-device region"));
  }
  absl::Status status = CheckRank(sharding, shape);
  if (!status.ok()) return status;
  const std::vector<int64_t>& dims = shape.dimensions();
  ShardRegion region{std::vector<int64_t>(dims.size(), 0), dims};
  if (sharding.kind() == Kind::kMaximal && device != sharding.maximal_device()) {
    region.limits.assign(dims.size(), 0);
    region.holds_data = false;
  }
  if (!sharding.IsTiled()) return region;
  absl::StatusOr<std::vector<int64_t>> index = TileIndexForDevice(sharding, device);
  if (!index.ok()) return index.status();
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t chunk = CeilOfRatio(dims[i], sharding.tile_assignment().dim(i));
    region.offsets[i] = std::min((*index)[i] * chunk, dims[i]);
    region.limits[i] = std::min(((*index)[i] + 1) * chunk, dims[i]);
  }
  return region;
}

absl::StatusOr<Shape> ShardShapeForDevice(const HloSharding& sharding, const Shape& shape,
                                          int64_t device) {
  absl::StatusOr<ShardRegion> region = ShardRegionForDevice(sharding, shape, device);
  if (!region.ok()) return region.status();
  return WithDims(shape, region->sizes());
}

absl::StatusOr<Shape> PaddedShardShape(const HloSharding& sharding, const Shape& shape) {
  if (shape.IsTuple()) {
    if (shape.leaf_count() == 0) return shape;
    const HloSharding normalized = sharding.NormalizeTupleSharding(shape);
    size_t next = 0;
    std::vector<Shape> elements;
    for (const Shape& element : shape.tuple_shapes()) {
      const int64_t count = element.leaf_count();
      if (next + count > normalized.tuple_elements().size()) break;
      const auto first = normalized.tuple_elements().begin() + next;
      next += count;
      absl::StatusOr<Shape> padded;
      if (element.IsTuple()) {
        absl::StatusOr<HloSharding> sub =
            HloSharding::Tuple(std::vector<HloSharding>(first, first + count));
        if (!sub.ok()) return sub.status();
        padded = PaddedShardShape(*sub, element);
      } else {
        padded = PaddedShardShape(count == 0 ? HloSharding::Replicate() : *first, element);
      }
      if (!padded.ok()) return padded.status();
      elements.push_back(*std::move(padded));
    }
    if (next != normalized.tuple_elements().size() ||
        elements.size() != shape.tuple_shapes().size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("sharding ", sharding.ToStringWithoutMetadata(),
                       " does not match the leaves of ", shape.ToString(false)));
    }
    return Shape::Tuple(std::move(elements));
  }
  if (sharding.IsTuple()) {
    return absl::InvalidArgumentError(absl::StrCat("tuple sharding ",
                                                   sharding.ToStringWithoutMetadata(),
                                                   " on non-tuple shape ", shape.ToString(false)));
  }
  if (!sharding.IsTiled() || !shape.IsArray()) return shape;
  absl::Status status = CheckRank(sharding, shape);
  if (!status.ok()) return status;
  std::vector<int64_t> dims = shape.dimensions();
  for (size_t i = 0; i < dims.size(); ++i) {
    dims[i] = CeilOfRatio(dims[i], sharding.tile_assignment().dim(i));
  }
  return WithDims(shape, dims);
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ReplicationGroups(const HloSharding& sharding,
                                                                    int64_t num_devices) {
  using Kind = HloSharding::Kind;
  std::vector<std::vector<int64_t>> groups;
  switch (sharding.kind()) {
    case Kind::kReplicated:
      groups.emplace_back(num_devices);
      std::iota(groups[0].begin(), groups[0].end(), 0);
      return groups;
    case Kind::kMaximal:
      groups.push_back({sharding.maximal_device()});
      return groups;
    case Kind::kManual:
    case Kind::kUnreduced:
      for (int64_t d = 0; d < num_devices; ++d) groups.push_back({d});
      return groups;
    case Kind::kTiled:
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "sharding ", sharding.ToStringWithoutMetadata(), " has no replication groups"));
  }
  const int64_t dim = sharding.SubgroupReplicationDim();
  std::vector<int64_t> group_dims;
  if (dim >= 0) group_dims.push_back(dim);
  absl::StatusOr<TileAssignment> as_groups =
      DeviceGroupsAlongDims(sharding.tile_assignment(), group_dims);
  if (!as_groups.ok()) return as_groups.status();
  return GroupLists(*as_groups);
}

}  // namespace hlo

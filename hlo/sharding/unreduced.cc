#include "hlo/sharding/unreduced.h"

#include <algorithm>
#include <numeric>

#include "hlo/sharding/device_groups.h"

namespace hlo {
namespace {

// The tile-assignment dim of the unreduced subgroup, or -1.
int64_t UnreducedDim(const HloSharding& s) {
  if (!s.IsTiled()) return -1;
  const std::vector<OpShardingType>& types = s.subgroup_types();
  auto it = std::find(types.begin(), types.end(), OpShardingType::kUnreduced);
  if (it == types.end()) return -1;
  return s.TiledDataRank() + (it - types.begin());
}

}  // namespace

bool HasUnreduced(const HloSharding& s) {
  return s.kind() == HloSharding::Kind::kUnreduced || UnreducedDim(s) >= 0;
}

absl::StatusOr<HloSharding> UnreducedAsReplicated(const HloSharding& s) {
  if (s.kind() == HloSharding::Kind::kUnreduced) return HloSharding::Replicate(s.metadata());
  if (UnreducedDim(s) < 0) return s;
  std::vector<OpShardingType> types = s.subgroup_types();
  for (OpShardingType& t : types) {
    if (t == OpShardingType::kManual) {
      return absl::UnimplementedError("unreduced together with manual subgroups");
    }
    if (t == OpShardingType::kUnreduced) t = OpShardingType::kReplicated;
  }
  return HloSharding::Subgroup(s.tile_assignment(), types, s.metadata());
}

absl::StatusOr<std::vector<std::vector<int64_t>>> UnreducedGroups(const HloSharding& s,
                                                                  int64_t num_devices) {
  if (s.kind() == HloSharding::Kind::kUnreduced) {
    std::vector<int64_t> all(num_devices);
    std::iota(all.begin(), all.end(), 0);
    return std::vector<std::vector<int64_t>>{all};
  }
  const int64_t dim = UnreducedDim(s);
  if (dim < 0) return std::vector<std::vector<int64_t>>{};
  absl::StatusOr<TileAssignment> groups = DeviceGroupsAlongDims(s.tile_assignment(), {dim});
  if (!groups.ok()) return groups.status();
  std::vector<std::vector<int64_t>> lists = GroupLists(*groups);
  // Devices the sharding does not name hold nothing: each is a group of its own.
  std::vector<bool> named(std::max<int64_t>(num_devices, 0), false);
  for (const std::vector<int64_t>& group : lists) {
    for (int64_t device : group) {
      if (device >= 0 && device < num_devices) named[device] = true;
    }
  }
  for (int64_t device = 0; device < num_devices; ++device) {
    if (!named[device]) lists.push_back({device});
  }
  return lists;
}

}  // namespace hlo

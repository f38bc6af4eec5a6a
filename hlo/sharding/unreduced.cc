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
  return GroupLists(*groups);
}

}  // namespace hlo

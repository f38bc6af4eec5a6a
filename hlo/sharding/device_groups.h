// Device groups along tile dimensions: the replica_groups of the collectives that reshard.
//
// For `ta` = [2,4]<=[8] (devices 0..7 row-major), grouping along dim 1 gives the groups
// {0,1,2,3},{4,5,6,7} = [2,4]<=[8]; along dim 0 gives {0,4},{1,5},{2,6},{3,7} =
// [4,2]<=[2,4]T(1,0). The result is itself a [num_groups, group_size] TileAssignment, so an
// iota input yields the iota replica-group text `[G,S]<=[dims]T(perm)` whenever one exists.
#ifndef HLO_SHARDING_DEVICE_GROUPS_H_
#define HLO_SHARDING_DEVICE_GROUPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/sharding/tile_assignment.h"

namespace hlo {

// Groups the devices of `ta` that differ only in the dims `group_dims`: row g of the returned
// [num_groups, group_size] assignment is group g. Members are in row-major order over
// `group_dims` taken in the order given; groups are in row-major order over the remaining dims.
// The result is iota when `ta` is iota and the groups have an iota form, explicit otherwise
// (call ToIota() to look for an iota form of groups from an explicit `ta`).
// Fails when `group_dims` repeats a dim or names one out of range.
absl::StatusOr<TileAssignment> DeviceGroupsAlongDims(const TileAssignment& ta,
                                                     absl::Span<const int64_t> group_dims);

// The rows of a 2-D assignment (as returned above) as lists. REQUIRES: groups.rank() == 2.
std::vector<std::vector<int64_t>> GroupLists(const TileAssignment& groups);

}  // namespace hlo

#endif  // HLO_SHARDING_DEVICE_GROUPS_H_

// Unreduced shardings: every device of an unreduced group holds a partial sum, and the value is
// the sum over the group. `{unreduced}` has one group of every device; a tiled sharding with
// an unreduced subgroup (`last_tile_dims={unreduced}` or `{unreduced, replicated}`) has one
// group per data tile (and replica).
//
//   {devices=[2,2]<=[4] last_tile_dims={unreduced}}: tiles {0,1} and {2,3} of dim 0, each held
//   as partial sums by its pair; reduced, the same as {devices=[2,2]<=[4]
//   last_tile_dim_replicate}.
#ifndef HLO_SHARDING_UNREDUCED_H_
#define HLO_SHARDING_UNREDUCED_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/sharding/hlo_sharding.h"

namespace hlo {

// Whether `s` (a leaf) has unreduced devices.
bool HasUnreduced(const HloSharding& s);

// The sharding the value has once each unreduced group is summed (all-reduced): unreduced
// subgroups become replication. Other shardings are returned unchanged. Fails with manual
// subgroups.
absl::StatusOr<HloSharding> UnreducedAsReplicated(const HloSharding& s);

// The unreduced groups of `s` on `num_devices` devices, each in subgroup order; empty when
// `s` has none. Devices `s` does not name (a sharding over some of the devices) follow, each
// in a group of its own, so a collective over these groups names every device.
absl::StatusOr<std::vector<std::vector<int64_t>>> UnreducedGroups(const HloSharding& s,
                                                                  int64_t num_devices);

}  // namespace hlo

#endif  // HLO_SHARDING_UNREDUCED_H_

// Manual conversions whose open dims the free mesh axes split (JAX's partly manual shard_map,
// `axis_names` a subset of the mesh; Shardy's open dims `?` at a manual computation's
// boundary).
//
// A conversion (SPMDFullToShardShape, SPMDShardToFullShape) relates a global value to the
// manual values of its region. Its `structure` is the sharding of the global side as the input
// program writes it: each of its tiles is one manual value, which the devices of one manual
// group of the local side hold. The free axes may split a manual value further inside its
// group (the local sharding's data tiles); on the global side that is the structure's tile
// split the same way:
//   structure {devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}   dim 1 by the manual axis
//   local     {devices=[2,1,4]<=[8] last_tile_dims={manual}}           dim 0 by the free axis
//   global    {devices=[2,4]<=[8]}                                    both
// Propagation reads the conversion through these two maps (each the other's inverse), and the
// partitioner checks with them that the two sides it is given agree tile for tile. Only splits
// whose tiles nest are related (each global tile is one local tile exactly; a padded last tile
// stays last).
#ifndef HLO_SHARDING_MANUAL_CONVERSION_H_
#define HLO_SHARDING_MANUAL_CONVERSION_H_

#include "absl/status/statusor.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"

namespace hlo {

// The global sharding whose tile on each device is the device's tile of `local` (which has a
// manual subgroup) inside the device's tile of `structure`. Fails when the devices of one
// manual group are in different tiles of `structure`, or a split does not cut the structure's
// tiles of `global_shape` into whole tiles.
absl::StatusOr<HloSharding> GlobalFromLocal(const HloSharding& local, const HloSharding& structure,
                                            const Shape& global_shape);

// The local sharding, with the manual groups of `groups` (a sharding with a manual subgroup),
// whose tile on each device is the device's tile of `global` inside its tile of `structure`.
// Fails when `global` does not split `structure`'s tiles (a tile count that is not a multiple,
// a device whose tile of `global` lies outside its tile of `structure`), when a manual group's
// devices are in different tiles of `structure`, or a split does not cut tiles into whole tiles.
absl::StatusOr<HloSharding> LocalFromGlobal(const HloSharding& global, const HloSharding& structure,
                                            const HloSharding& groups, const Shape& global_shape);

// The structure whose tiles `global` splits as `local` (with a manual subgroup) splits each
// manual group's value: the inverse of GlobalFromLocal in its structure. Fails when `global`
// does not split that way (a tile count not a multiple of `local`'s, a device whose tile of
// `global` is not its tile of `local` inside its group's, a group over several structure
// tiles, a split that does not cut tiles into whole tiles).
absl::StatusOr<HloSharding> StructureFromGlobal(const HloSharding& global, const HloSharding& local,
                                                const Shape& global_shape);

}  // namespace hlo

#endif  // HLO_SHARDING_MANUAL_CONVERSION_H_

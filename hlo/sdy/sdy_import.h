// Reads a module exported in Shardy mode (JAX's default) into the project's own form, so that
// propagation, the partitioner and the executors see ordinary shardings and custom-calls:
//
//   xla.sdy.meshes (module)           read; sets num_partitions when the module declares none
//   xla.sdy.sharding                  the instruction's sharding; where `sharding=` is also given
//                                     the two must agree (else an error naming both)
//   xla.sdy.GlobalToLocalShape        per operand: a `Sharding` custom-call in its in_sharding and
//     (+ in_shardings, manual_axes)   an `SPMDFullToShardShape` into the manual region (manual
//                                     over manual_axes, split by the free axes), as GSPMD's
//                                     export of shard_map writes it
//   xla.sdy.LocalToGlobalShape        per operand: a `Sharding` custom-call (manual) and an
//     (+ out_shardings, manual_axes)  `SPMDShardToFullShape` to its out_sharding
//   xla.sdy.FuncResultSharding        a `Sharding` custom-call (a held annotation); with every
//                                     dim open and unsplit it constrains nothing and is removed
//   xla.sdy.ShardingGroup             (+ xla.sdy.sharding_group_id) its operand joins
//                                     `shard_as` group N; the custom-call is removed
//   xla.sdy.sharding_rule             checked and kept: propagation and the partitioner read it
// Open dims (`?`) of a `Sharding` custom-call become XLA's `unspecified_dims=[...]`. Anything
// else named `xla.sdy.*` is an error naming the instruction (`%name`), never ignored; so is a
// sharding that does not fit its value. A module without `xla.sdy.*` is left unchanged.
#ifndef HLO_SDY_SDY_IMPORT_H_
#define HLO_SDY_SDY_IMPORT_H_

#include "absl/status/status.h"
#include "hlo/ir/hlo_module.h"

namespace hlo::sdy {

absl::Status ImportShardy(HloModule* module);

}  // namespace hlo::sdy

#endif  // HLO_SDY_SDY_IMPORT_H_

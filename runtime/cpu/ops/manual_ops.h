// The manual-sharding custom-calls in an unpartitioned program, run on N simulated devices
// (the verifier's reference run of a module with manual regions; see verify.h).
//
//   SPMDFullToShardShape  device d's value is its shard of the (full, identical on every
//                         device) operand under the operand's sharding, zero-padded to the
//                         result shape (into manual subgroups that tile the value inside each
//                         group: its group's value, the shards of the group's devices).
//   SPMDShardToFullShape  every device contributes its value as its shard of the result
//                         under the result's sharding; each device gets the assembled full
//                         value (a region held by several devices is the device's own
//                         there, else taken from the first).
//
// When the operand and result shapes agree the call is an identity (as the partitioner's own
// output treats it).
#ifndef RUNTIME_CPU_OPS_MANUAL_OPS_H_
#define RUNTIME_CPU_OPS_MANUAL_OPS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/literal.h"
#include "hlo/sharding/implied_sharding.h"
#include "hlo/sharding/shard_geometry.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {

// Whether `instr` is SPMDFullToShardShape or SPMDShardToFullShape.
using hlo::IsManualConversion;

// `instr`'s sharding, or replicated when it has none (as the conversions read it).
hlo::HloSharding ShardingOrReplicated(const hlo::HloInstruction& instr);

// Whether `sharding` has manual subgroups and splits the value inside them (which
// SPMDFullToShardShape into them does not support here).
bool TilesInsideManualGroups(const hlo::HloSharding& sharding);

// The index along the manual subgroup dim of each of `num_devices` devices (-1: not used).
// REQUIRES: sharding.HasManualSubgroup().
std::vector<int64_t> ManualGroupOf(const hlo::HloSharding& sharding, int64_t num_devices);

// The region of SPMDFullToShardShape `instr`'s global operand that is device `device`'s manual
// value (of `num_devices`): its shard under ConversionGlobalSharding, or, into manual subgroups
// that tile the value inside each group, the box its group's devices' shards cover (a group's
// value is whole on each of its devices here).
absl::StatusOr<hlo::ShardRegion> FullToShardRegion(const hlo::HloInstruction& instr, int64_t device,
                                                   int64_t num_devices);

// How SPMDShardToFullShape `instr` places the devices' values (a value with manual subgroups
// is its group's whole value on each device here): each device's tile of its value under the
// operand's manual subgroups (`tile`: that tile's shape) as its tile of `sharding`
// (ConversionGlobalSharding); or, where that tile is not the result's tile (propagation split
// the operand inside its groups otherwise than the result splits each group's value, a nested
// region's whole result split after it leaves), its group's whole value (`tile` empty), as
// the partitioner reads it. Shared by the executor and the point evaluator.
struct ShardToFullPlacement {
  hlo::HloSharding sharding;
  std::optional<hlo::Shape> tile;
};
absl::StatusOr<ShardToFullPlacement> PlaceShardToFull(const hlo::HloInstruction& instr);

// Runs a manual conversion on this device. REQUIRES: IsManualConversion(instr).
absl::StatusOr<hlo::Literal> RunManualConversion(const hlo::HloInstruction& instr,
                                                 const hlo::Literal& operand,
                                                 Evaluator& evaluator);

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_MANUAL_OPS_H_

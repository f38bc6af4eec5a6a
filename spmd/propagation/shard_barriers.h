// ShardBarrierFrom / ShardBarrierTo custom-calls: markers that stop propagation in one
// direction (they have no FactorRule, so propagation crosses them in neither) and mean nothing
// afterwards. As in XLA, the propagate pass removes them once it is done:
//
//   %b = f32[8] custom-call(%x), custom_call_target="ShardBarrierFrom"
//   %n = f32[8] negate(%b)
//   -> %n = f32[8] negate(%x)
#ifndef SPMD_PROPAGATION_SHARD_BARRIERS_H_
#define SPMD_PROPAGATION_SHARD_BARRIERS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"

namespace spmd {

// Replaces every single-operand barrier of the same shape as its operand by that operand
// (as root too) and removes it. Returns how many were removed.
absl::StatusOr<int64_t> RemoveShardBarriers(hlo::HloModule* module);

}  // namespace spmd

#endif  // SPMD_PROPAGATION_SHARD_BARRIERS_H_

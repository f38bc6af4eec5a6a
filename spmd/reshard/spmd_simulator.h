// A small lockstep simulator of SPMD programs, for the reshard tests: every instruction of a
// computation runs on all N devices before the next one, so collectives simply read every
// device's operand. Independent of the emitter (it reads replica groups through
// ReplicaGroups::Expanded). Values are held as doubles, which is exact for f32 data and the
// integer offsets the emitter produces.
//
// Supported: parameter, constant, partition-id, dynamic-slice and dynamic-update-slice (XLA
// clamping), slice, pad
// (non-negative edges, interior), reshape, transpose, broadcast, compare, select, add,
// all-gather, all-to-all (array form), collective-permute, all-reduce (sum). Anything else is
// an Unimplemented error naming the instruction.
#ifndef SPMD_RESHARD_SPMD_SIMULATOR_H_
#define SPMD_RESHARD_SPMD_SIMULATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_computation.h"

namespace spmd {
namespace testing {

// A dense row-major array.
struct SimArray {
  std::vector<int64_t> dims;
  std::vector<double> data;
};

// Runs `computation` on `num_devices` devices; `args[device][i]` is parameter i of that
// device. Returns the root's value on every device.
absl::StatusOr<std::vector<SimArray>> RunLockstep(const hlo::HloComputation& computation,
                                                  int64_t num_devices,
                                                  const std::vector<std::vector<SimArray>>& args);

}  // namespace testing
}  // namespace spmd

#endif  // SPMD_RESHARD_SPMD_SIMULATOR_H_

// Which devices a collective splits into: every device's group (runtime/common/collective_groups.h,
// XLA's group modes), deduplicated into one partition of all devices. NCCL needs the whole
// partition: ncclCommSplit is called by every rank of the world communicator, with the group's
// index as color and the rank in the group as key, so that each distinct grouping gets one
// communicator per group.
//
// Example: 4 partitions, all-reduce replica_groups={{0,2},{1,3}} with channel_id and
// use_global_device_ids -> groups {{0,2},{1,3}}; device 3 has group 1, rank 1.
#ifndef RUNTIME_CUDA_COLLECTIVE_GROUPING_H_
#define RUNTIME_CUDA_COLLECTIVE_GROUPING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"
#include "runtime/common/device_context.h"

namespace runtime {
namespace cuda {

struct Grouping {
  std::vector<std::vector<int64_t>> groups;  // Global ids; groups in order of first device.
  int64_t group = 0;                         // The group of the device asked about...
  int64_t rank = 0;                          // ...and its position there.
  int64_t size() const { return static_cast<int64_t>(groups[group].size()); }
};

// The grouping of collective `instr` seen from `device`. Fails when the groups of the devices
// overlap without being equal, or when a device belongs to no group.
absl::StatusOr<Grouping> GroupingOf(const hlo::HloInstruction& instr,
                                    const DeviceContext& device);

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_COLLECTIVE_GROUPING_H_

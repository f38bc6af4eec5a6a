// Asks runtime/common's DeviceGroupOf for every device and keeps each distinct group once.
#include "runtime/cuda/collective_grouping.h"

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/collective_groups.h"
#include "runtime/cuda/collectives.h"
#include "runtime/cuda/kernels/element_math.h"

namespace runtime {
namespace cuda {

absl::StatusOr<Grouping> GroupingOf(const hlo::HloInstruction& instr,
                                    const DeviceContext& device) {
  const int64_t n = device.num_partitions * device.num_replicas;
  std::vector<int64_t> group_of(n, -1);
  Grouping g;
  for (int64_t d = 0; d < n; ++d) {
    DeviceContext other = device;
    other.partition_id = d % device.num_partitions;
    other.replica_id = d / device.num_partitions;
    ASSIGN_OR_RETURN(DeviceGroup group, DeviceGroupOf(instr, other));
    if (group_of[d] >= 0) {
      if (g.groups[group_of[d]] != group.devices) {
        return absl::InvalidArgumentError(hlo::StrCat(
            "instruction %", instr.name(), ": device ", d, " is in two different groups"));
      }
      continue;
    }
    for (int64_t member : group.devices) {
      if (member < 0 || member >= n || group_of[member] >= 0) {
        return absl::InvalidArgumentError(hlo::StrCat("instruction %", instr.name(), ": device ",
                                                      member, " is in two different groups"));
      }
      group_of[member] = static_cast<int64_t>(g.groups.size());
    }
    g.groups.push_back(group.devices);
  }
  const int64_t me = GlobalDeviceId(device);
  g.group = group_of[me];
  const std::vector<int64_t>& mine = g.groups[g.group];
  for (int64_t k = 0; k < static_cast<int64_t>(mine.size()); ++k) {
    if (mine[k] == me) g.rank = k;
  }
  return g;
}

int64_t ChunkBytes(int dtype, int64_t count) { return count * spmd_cuda::BitsOf(dtype) / 8; }

}  // namespace cuda
}  // namespace runtime

// Which devices take part in a collective, following XLA's CollectiveOpGroupMode.
//
// The N = num_replicas x num_partitions simulated devices have global ids
// replica * num_partitions + partition. A collective's replica_groups (explicit or iota form)
// name replicas, partitions or global ids depending on the mode, which XLA derives from
// channel_id and use_global_device_ids:
//
//   no channel_id                              kCrossReplica: groups of replica ids; each group
//                                              is instantiated once per partition.
//   channel_id, op without the flag            kCrossPartition: groups of partition ids, once
//     (all-to-all, collective-permute,          per replica.
//      collective-broadcast)
//   channel_id, use_global_device_ids=false    kCrossReplicaAndPartition: groups of replica ids;
//     (all-reduce, all-gather, reduce-scatter)  a group holds those replicas x all partitions
//                                              (replica-major).
//   channel_id, use_global_device_ids=true     kFlattenedId: groups of global device ids.
//
// Empty replica_groups mean one group of every id of the mode (every device for kFlattenedId).
#ifndef RUNTIME_COMMON_COLLECTIVE_GROUPS_H_
#define RUNTIME_COMMON_COLLECTIVE_GROUPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_instruction.h"
#include "runtime/common/device_context.h"

namespace runtime {

enum class CollectiveGroupMode {
  kCrossReplica,
  kCrossPartition,
  kCrossReplicaAndPartition,
  kFlattenedId,
};

// The group mode of collective `instr` (see the file comment). Fails for
// use_global_device_ids=true without a channel_id, as XLA does.
absl::StatusOr<CollectiveGroupMode> GroupModeOf(const hlo::HloInstruction& instr);

// Whether `instr` is an all-reduce across replicas alone (no channel) in a module of one
// replica whose groups name only replica 0 (or none): every group is one device, so it is the
// identity, on one device or many. Groups naming a replica the module lacks are no program.
bool IsIdentityAllReduce(const hlo::HloInstruction& instr);

// The global device id of `device`.
inline int64_t GlobalDeviceId(const DeviceContext& device) {
  return device.replica_id * device.num_partitions + device.partition_id;
}

// The group of `device` for collective `instr`.
struct DeviceGroup {
  std::vector<int64_t> devices;  // Global device ids, in group order.
  int64_t rank = 0;              // Position of `device` in `devices`.
};

// The participants of `instr` that `device` exchanges data with. Fails when an id in the
// groups is out of range for the mode, or when `device` is in no group.
absl::StatusOr<DeviceGroup> DeviceGroupOf(const hlo::HloInstruction& instr,
                                          const DeviceContext& device);

// For collective-permute: the global id of the device whose value `device` receives, or -1
// when `device` is the target of no pair. Pairs name partitions with a channel_id and
// replicas without one. Fails for out-of-range ids or a device targeted twice.
absl::StatusOr<int64_t> PermuteSourceOf(const hlo::HloInstruction& instr,
                                        const DeviceContext& device);

// The devices of a meeting group in ascending order: `group`, or every device 0..num_devices-1
// when it is empty (a collective that names no group combines every device).
std::vector<int64_t> SortedMembers(absl::Span<const int64_t> group, int64_t num_devices);

// The devices that meet at collective-permute `instr` with `device` (global ids, ascending):
// those its pairs join to it, directly or through others. Pairs name partitions with a
// channel_id, else replicas. REQUIRES: PermuteSourceOf has accepted the pairs' range.
std::vector<int64_t> PermuteGroup(const hlo::HloInstruction& instr, const DeviceContext& device);

}  // namespace runtime

#endif  // RUNTIME_COMMON_COLLECTIVE_GROUPS_H_

// Group resolution: pick the mode, expand replica_groups (iota or explicit), find the group
// holding this device's id in that mode, and map its ids to global device ids.
#include "runtime/common/collective_groups.h"

#include <algorithm>
#include <numeric>

#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/opcode_table.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// Ops whose XLA instruction class has a use_global_device_ids field.
bool HasGlobalIdsFlag(HloOpcode opcode) {
  return IsOneOf(opcode, {HloOpcode::kAllReduce, HloOpcode::kAllReduceStart, HloOpcode::kAllGather,
                          HloOpcode::kAllGatherStart, HloOpcode::kReduceScatter});
}

std::string_view IdKind(CollectiveGroupMode mode) {
  switch (mode) {
    case CollectiveGroupMode::kCrossPartition:
      return "partition";
    case CollectiveGroupMode::kFlattenedId:
      return "device";
    default:
      return "replica";
  }
}

// This device's id in `mode` and how many ids the mode has.
std::pair<int64_t, int64_t> IdAndCount(CollectiveGroupMode mode, const DeviceContext& d) {
  switch (mode) {
    case CollectiveGroupMode::kCrossPartition:
      return {d.partition_id, d.num_partitions};
    case CollectiveGroupMode::kFlattenedId:
      return {GlobalDeviceId(d), d.num_partitions * d.num_replicas};
    default:
      return {d.replica_id, d.num_replicas};
  }
}

// Global ids of the devices that group `ids` (ids of `mode`) stands for, as seen by `d`.
std::vector<int64_t> ToGlobal(CollectiveGroupMode mode, const std::vector<int64_t>& ids,
                              const DeviceContext& d) {
  std::vector<int64_t> out;
  const int64_t p_count = d.num_partitions;
  for (int64_t id : ids) {
    switch (mode) {
      case CollectiveGroupMode::kCrossReplica:
        out.push_back(id * p_count + d.partition_id);
        break;
      case CollectiveGroupMode::kCrossPartition:
        out.push_back(d.replica_id * p_count + id);
        break;
      case CollectiveGroupMode::kFlattenedId:
        out.push_back(id);
        break;
      case CollectiveGroupMode::kCrossReplicaAndPartition:
        for (int64_t p = 0; p < p_count; ++p) out.push_back(id * p_count + p);
        break;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<CollectiveGroupMode> GroupModeOf(const HloInstruction& instr) {
  const hlo::InstructionAttributes& attrs = instr.attrs();
  if (!attrs.channel_id.has_value()) {
    if (attrs.use_global_device_ids) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "instruction %", instr.name(), ": use_global_device_ids=true needs a channel_id"));
    }
    return CollectiveGroupMode::kCrossReplica;
  }
  if (attrs.use_global_device_ids) return CollectiveGroupMode::kFlattenedId;
  return HasGlobalIdsFlag(instr.opcode()) ? CollectiveGroupMode::kCrossReplicaAndPartition
                                          : CollectiveGroupMode::kCrossPartition;
}

absl::StatusOr<DeviceGroup> DeviceGroupOf(const HloInstruction& instr, const DeviceContext& d) {
  ASSIGN_OR_RETURN(CollectiveGroupMode mode, GroupModeOf(instr));
  const auto [my_id, count] = IdAndCount(mode, d);
  std::vector<std::vector<int64_t>> groups;
  if (instr.attrs().replica_groups.has_value()) groups = instr.attrs().replica_groups->Expanded();
  if (groups.empty()) {
    groups.emplace_back();
    for (int64_t id = 0; id < count; ++id) groups.back().push_back(id);
  }
  const std::vector<int64_t>* mine = nullptr;
  for (const std::vector<int64_t>& group : groups) {
    for (int64_t id : group) {
      if (id < 0 || id >= count) {
        return absl::InvalidArgumentError(hlo::StrCat("instruction %", instr.name(),
                                                      ": replica group names ", IdKind(mode), " ",
                                                      id, " but there are only ", count));
      }
      if (id == my_id && mine == nullptr) mine = &group;
    }
  }
  if (mine == nullptr) {
    return absl::InvalidArgumentError(hlo::StrCat("instruction %", instr.name(), ": ", IdKind(mode),
                                                  " ", my_id, " is in no replica group"));
  }
  DeviceGroup result;
  result.devices = ToGlobal(mode, *mine, d);
  const int64_t self = GlobalDeviceId(d);
  for (size_t i = 0; i < result.devices.size(); ++i) {
    if (result.devices[i] == self) result.rank = static_cast<int64_t>(i);
  }
  return result;
}

absl::StatusOr<int64_t> PermuteSourceOf(const HloInstruction& instr, const DeviceContext& d) {
  const bool cross_partition = instr.attrs().channel_id.has_value();
  const int64_t my_id = cross_partition ? d.partition_id : d.replica_id;
  const int64_t count = cross_partition ? d.num_partitions : d.num_replicas;
  int64_t source = -1;
  for (const auto& [from, to] : instr.attrs().source_target_pairs) {
    if (from < 0 || from >= count || to < 0 || to >= count) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "instruction %", instr.name(), ": source_target_pairs entry {", from, ",", to,
          "} is out of range for ", count, cross_partition ? " partitions" : " replicas"));
    }
    if (to != my_id) continue;
    if (source >= 0) {
      return absl::InvalidArgumentError(hlo::StrCat("instruction %", instr.name(), ": ",
                                                    cross_partition ? "partition " : "replica ",
                                                    my_id, " is the target of two pairs"));
    }
    source = from;
  }
  if (source < 0) return int64_t{-1};
  return cross_partition ? d.replica_id * d.num_partitions + source
                         : source * d.num_partitions + d.partition_id;
}

std::vector<int64_t> PermuteGroup(const hlo::HloInstruction& instr, const DeviceContext& device) {
  const bool cross_partition = instr.attrs().channel_id.has_value();
  const int64_t count = cross_partition ? device.num_partitions : device.num_replicas;
  std::vector<int64_t> root(count);
  std::iota(root.begin(), root.end(), 0);
  auto find = [&](int64_t x) {
    while (root[x] != x) x = root[x] = root[root[x]];
    return x;
  };
  for (const auto& [from, to] : instr.attrs().source_target_pairs) {
    const int64_t a = find(from);
    root[a] = find(to);
  }
  const int64_t self = cross_partition ? device.partition_id : device.replica_id;
  std::vector<int64_t> group;
  for (int64_t id = 0; id < count; ++id) {
    if (find(id) != find(self)) continue;
    group.push_back(cross_partition ? device.replica_id * device.num_partitions + id
                                    : id * device.num_partitions + device.partition_id);
  }
  return group;
}

std::vector<int64_t> SortedMembers(absl::Span<const int64_t> group, int64_t num_devices) {
  std::vector<int64_t> members(group.begin(), group.end());
  if (members.empty()) {
    members.resize(num_devices);
    std::iota(members.begin(), members.end(), 0);
  }
  std::sort(members.begin(), members.end());
  return members;
}

bool IsIdentityAllReduce(const hlo::HloInstruction& instr) {
  const hlo::HloComputation* computation = instr.parent();
  const hlo::HloModule* module = computation != nullptr ? computation->parent() : nullptr;
  if (instr.opcode() != hlo::HloOpcode::kAllReduce || instr.attrs().channel_id.has_value() ||
      instr.attrs().use_global_device_ids || module == nullptr ||
      module->config().replica_count != 1) {
    return false;
  }
  // Groups that name a replica the module lacks make no program at all (DeviceGroupOf refuses
  // them), not the identity.
  if (!instr.attrs().replica_groups.has_value()) return true;
  for (const std::vector<int64_t>& group : instr.attrs().replica_groups->Expanded()) {
    for (int64_t id : group) {
      if (id != 0) return false;
    }
  }
  return true;
}

}  // namespace runtime

// Printing of reshard plans, and replica groups in XLA's compact iota form. Groups are tried in
// the order given and sorted by their first member (the order of groups has no meaning for a
// collective; the order inside a group does): {0,4},{1,5},{2,6},{3,7} becomes
// `[4,2]<=[2,4]T(1,0)`; {0,2},{1,3},{4,6},{5,7} becomes `[4,2]<=[2,2,2]T(0,2,1)`.
#include "spmd/reshard/reshard_plan.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "hlo/ir/hlo_printer.h"
#include "hlo/sharding/tile_assignment.h"
#include "hlo/strings.h"

namespace spmd {
namespace {

std::optional<hlo::IotaReplicaGroupList> IotaOf(const std::vector<std::vector<int64_t>>& groups) {
  std::vector<int64_t> flat;
  for (const auto& group : groups) flat.insert(flat.end(), group.begin(), group.end());
  const int64_t num_groups = static_cast<int64_t>(groups.size());
  const int64_t group_size = static_cast<int64_t>(groups[0].size());
  absl::StatusOr<hlo::TileAssignment> ta =
      hlo::TileAssignment::Explicit({num_groups, group_size}, flat);
  if (!ta.ok()) return std::nullopt;
  std::optional<hlo::TileAssignment> iota = ta->ToIota();
  if (!iota.has_value()) return std::nullopt;
  hlo::IotaReplicaGroupList list;
  list.num_replica_groups = num_groups;
  list.num_devices_per_group = group_size;
  list.iota_reshape_dims.assign(iota->iota_reshape_dims().begin(), iota->iota_reshape_dims().end());
  const auto perm = iota->iota_transpose_perm();
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<int64_t>(i);
  if (!identity) list.iota_transpose_perm.assign(perm.begin(), perm.end());
  return list;
}

std::string FormatUs(double us) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3f", us);
  return buffer;
}

}  // namespace

std::string_view ReshardStepKindName(ReshardStepKind kind) {
  switch (kind) {
    case ReshardStepKind::kAllGather:
      return "all-gather";
    case ReshardStepKind::kDynamicSlice:
      return "dynamic-slice";
    case ReshardStepKind::kAllToAll:
      return "all-to-all";
    case ReshardStepKind::kCollectivePermute:
      return "collective-permute";
    case ReshardStepKind::kBroadcast:
      return "broadcast";
    case ReshardStepKind::kRelabel:
      return "relabel";
    case ReshardStepKind::kScatter:
      return "scatter";
    case ReshardStepKind::kExchange:
      return "exchange";
    case ReshardStepKind::kDirectAllToAll:
      return "direct-all-to-all";
    case ReshardStepKind::kAllReduce:
      return "all-reduce";
    case ReshardStepKind::kUnreduce:
      return "unreduce";
    case ReshardStepKind::kGatherSubset:
      return "gather-subset";
    case ReshardStepKind::kSliceSubset:
      return "slice-subset";
  }
  return "unknown";
}

hlo::ReplicaGroups MakeReplicaGroups(const std::vector<std::vector<int64_t>>& groups) {
  hlo::ReplicaGroups result;
  if (groups.empty() || groups[0].empty()) return result;
  std::optional<hlo::IotaReplicaGroupList> iota = IotaOf(groups);
  if (!iota.has_value()) {
    std::vector<std::vector<int64_t>> sorted = groups;
    std::sort(sorted.begin(), sorted.end());
    iota = IotaOf(sorted);
  }
  if (iota.has_value()) {
    result.iota = std::move(iota);
  } else {
    result.groups = groups;
  }
  return result;
}

std::string ReshardStep::ToString() const {
  std::string out(ReshardStepKindName(kind));
  if (!dimensions.empty()) {
    out.append(" dims=");
    hlo::AppendBracedInts(dimensions, &out);
  }
  if (replica_groups.iota.has_value() || !replica_groups.groups.empty()) {
    out.append(" groups=");
    hlo::AppendReplicaGroups(replica_groups, &out);
  }
  if (!source_target_pairs.empty()) {
    out.append(" pairs={");
    for (size_t i = 0; i < source_target_pairs.size(); ++i) {
      hlo::StrAppend(&out, i ? "," : "", "{", source_target_pairs[i].first, ",",
                     source_target_pairs[i].second, "}");
    }
    out.push_back('}');
  }
  hlo::StrAppend(&out, " -> ", sharding.ToStringWithoutMetadata(), ": ", bytes_received, " B, ",
                 FormatUs(cost_us), " us");
  return out;
}

std::string ReshardPlan::Explain() const {
  std::string out = hlo::StrCat(
      "reshard ", shape.ToString(/*print_layout=*/false), " ", source.ToStringWithoutMetadata(),
      " -> ", target.ToStringWithoutMetadata(), " on ", num_devices, " devices: ", steps.size(),
      steps.size() == 1 ? " step, " : " steps, ", bytes_received_per_device,
      " bytes received per device, ", FormatUs(cost_us), " us");
  if (full_rematerialization) out.append(" [full rematerialization]");
  out.push_back('\n');
  for (size_t i = 0; i < steps.size(); ++i) {
    hlo::StrAppend(&out, "  ", i + 1, ". ", steps[i].ToString(), "\n");
  }
  return out;
}

}  // namespace spmd

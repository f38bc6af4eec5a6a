// Grouped resharding inside manual subgroups (see reshard_grouped.h).
#include "spmd/reshard/reshard_grouped.h"

#include <map>
#include <vector>

#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::OpShardingType;
using hlo::PrimitiveType;
using hlo::Shape;
using hlo::TileAssignment;

// Where each device sits in a sharding with a manual subgroup dim.
struct GroupLayout {
  std::vector<int64_t> group;     // Device -> its index along the manual dim.
  std::vector<int64_t> position;  // Device -> row-major position among the other dims.
  std::vector<int64_t> dims;      // The tile dims without the manual dim.
  std::vector<OpShardingType> types;  // Subgroup types without the manual one.
  int64_t groups = 0;
};

absl::StatusOr<GroupLayout> LayoutOf(const HloSharding& s, int64_t num_devices) {
  const TileAssignment& ta = s.tile_assignment();
  const int64_t manual = s.SubgroupManualDim();
  GroupLayout layout;
  layout.groups = ta.dim(manual);
  layout.group.assign(num_devices, -1);
  layout.position.assign(num_devices, -1);
  for (int64_t d = 0; d < ta.rank(); ++d) {
    if (d != manual) layout.dims.push_back(ta.dim(d));
  }
  const int64_t data_rank = s.TiledDataRank();
  for (int64_t i = 0; i < static_cast<int64_t>(s.subgroup_types().size()); ++i) {
    if (data_rank + i != manual) layout.types.push_back(s.subgroup_types()[i]);
  }
  absl::Status status = absl::OkStatus();
  ta.ForEach([&](absl::Span<const int64_t> index, int64_t device) {
    int64_t position = 0;
    for (int64_t d = 0; d < ta.rank(); ++d) {
      if (d != manual) position = position * ta.dim(d) + index[d];
    }
    if (device < 0 || device >= num_devices) {
      status = absl::InvalidArgumentError(hlo::StrCat("device ", device, " out of range"));
      return;
    }
    layout.group[device] = index[manual];
    layout.position[device] = position;
  });
  RETURN_IF_ERROR(status);
  return layout;
}

absl::Status Mismatch(const HloSharding& a, const HloSharding& b, std::string_view why) {
  return absl::UnimplementedError(hlo::StrCat("resharding ", a.ToString(), " to ", b.ToString(),
                                              " inside manual subgroups: ", why));
}

absl::StatusOr<HloSharding> VirtualSharding(TileAssignment ta, std::vector<OpShardingType> types) {
  if (types.empty() && ta.num_devices() == 1) return HloSharding::Replicate();
  return HloSharding::Subgroup(std::move(ta), types);
}

// Rewrites the device ids of a collective emitted over virtual devices to real ones: each
// virtual group (or pair) becomes one per manual group.
void ExpandToGroups(HloInstruction* instr, const std::vector<std::vector<int64_t>>& real) {
  hlo::InstructionAttributes* attrs = instr->mutable_attrs();
  if (attrs->replica_groups.has_value()) {
    std::vector<std::vector<int64_t>> groups;
    for (const std::vector<int64_t>& members : real) {
      for (const std::vector<int64_t>& group : attrs->replica_groups->Expanded()) {
        std::vector<int64_t> mapped;
        for (int64_t v : group) mapped.push_back(members[v]);
        groups.push_back(std::move(mapped));
      }
    }
    attrs->replica_groups = MakeReplicaGroups(groups);
  }
  if (!attrs->source_target_pairs.empty()) {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (const std::vector<int64_t>& members : real) {
      for (const auto& [from, to] : attrs->source_target_pairs) {
        pairs.emplace_back(members[from], members[to]);
      }
    }
    attrs->source_target_pairs = std::move(pairs);
  }
}

}  // namespace

absl::StatusOr<HloSharding> ManualSubgroupAsReplicated(const HloSharding& sharding) {
  if (!sharding.HasManualSubgroup()) return sharding;
  std::vector<OpShardingType> types = sharding.subgroup_types();
  types[sharding.SubgroupManualDim() - sharding.TiledDataRank()] = OpShardingType::kReplicated;
  return HloSharding::Subgroup(sharding.tile_assignment(), types, sharding.metadata());
}

absl::StatusOr<GroupedPlan> PlanGroupedReshard(const Shape& base_shape, const HloSharding& source,
                                               const HloSharding& target, int64_t num_devices,
                                               ReshardPlanner& planner) {
  if (!source.HasManualSubgroup() || !target.HasManualSubgroup()) {
    return Mismatch(source, target, "both need manual subgroups");
  }
  ASSIGN_OR_RETURN(GroupLayout from, LayoutOf(source, num_devices));
  ASSIGN_OR_RETURN(GroupLayout to, LayoutOf(target, num_devices));
  if (from.groups != to.groups) return Mismatch(source, target, "different group counts");
  for (const auto& types : {from.types, to.types}) {
    for (OpShardingType t : types) {
      if (t != OpShardingType::kReplicated) {
        return Mismatch(source, target, "unreduced subgroups are not supported");
      }
    }
  }
  GroupedPlan grouped;
  // real[g][v]: the device of group g with virtual id v (its source position).
  const int64_t per_group = num_devices / from.groups;
  grouped.real.assign(from.groups, std::vector<int64_t>(per_group, -1));
  std::map<int64_t, int64_t> group_map;  // Source group -> target group.
  for (int64_t d = 0; d < num_devices; ++d) {
    if (from.group[d] < 0 || to.group[d] < 0) {
      return Mismatch(source, target, hlo::StrCat("device ", d, " is not in both"));
    }
    auto [it, fresh] = group_map.emplace(from.group[d], to.group[d]);
    if (!fresh && it->second != to.group[d]) {
      return Mismatch(source, target, "the manual groups hold different devices");
    }
    grouped.real[from.group[d]][from.position[d]] = d;
  }
  // The target over virtual devices, which must agree in every group.
  std::vector<int64_t> target_devices(per_group, -1);
  for (int64_t d = 0; d < num_devices; ++d) {
    int64_t& slot = target_devices[to.position[d]];
    if (from.group[d] == 0) slot = from.position[d];
  }
  for (int64_t d = 0; d < num_devices; ++d) {
    if (target_devices[to.position[d]] != from.position[d]) {
      return Mismatch(source, target, "the groups' tile arrays place devices differently");
    }
  }
  std::vector<int64_t> source_devices(per_group);
  for (int64_t v = 0; v < per_group; ++v) source_devices[v] = v;
  ASSIGN_OR_RETURN(TileAssignment source_ta, TileAssignment::Explicit(from.dims, source_devices));
  ASSIGN_OR_RETURN(TileAssignment target_ta, TileAssignment::Explicit(to.dims, target_devices));
  ASSIGN_OR_RETURN(HloSharding virtual_source, VirtualSharding(source_ta, from.types));
  ASSIGN_OR_RETURN(HloSharding virtual_target, VirtualSharding(target_ta, to.types));
  ASSIGN_OR_RETURN(grouped.plan,
                   planner.Plan(base_shape, virtual_source, virtual_target, per_group));
  grouped.position = std::move(from.position);
  return grouped;
}

absl::StatusOr<HloInstruction*> EmitGroupedReshard(
    hlo::HloComputation* computation, HloInstruction* value, const Shape& base_shape,
    const HloSharding& source, const HloSharding& target, int64_t num_devices,
    ReshardPlanner& planner, ChannelIdAllocator& channel_ids, ReshardPlan* plan_out) {
  ASSIGN_OR_RETURN(GroupedPlan grouped,
                   PlanGroupedReshard(base_shape, source, target, num_devices, planner));
  if (plan_out != nullptr) *plan_out = *grouped.plan;
  // The device's virtual id, looked up by partition-id.
  std::vector<HloInstruction*> added;
  SpmdBuilder builder(computation, &channel_ids, {".vd", /*by_unique_id=*/true});
  HloInstruction* id = builder.TableLookup(grouped.position, PrimitiveType::kU32);
  ReshardEmitter emitter(computation, &channel_ids);
  emitter.UseVirtualDevices(id, &added);
  ASSIGN_OR_RETURN(HloInstruction * result, emitter.Emit(value, base_shape, *grouped.plan));
  for (HloInstruction* instr : added) ExpandToGroups(instr, grouped.real);
  return result;
}

}  // namespace spmd

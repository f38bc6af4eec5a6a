// Resharding inside manual subgroups.
//
// A sharding with a manual subgroup dim (`last_tile_dims={manual, ...}`) splits the devices
// into groups that hold independent values; inside each group the value is tiled by the data
// dims (and replicated by a replicated subgroup dim). A reshard between two such shardings
// with the same groups must not move data between groups. It is planned once, for one group,
// over "virtual" devices 0..k-1 (k = devices per group; a device's virtual id is its position
// in the source's tile array with the manual dim removed), and emitted with partition-id
// replaced by the device's virtual id (a table lookup); every collective's replica groups and
// source-target pairs are then expanded to each group's real devices. On 4 devices:
//
//   {devices=[2,1,2]<=[4] last_tile_dims={manual}} -> {devices=[1,2,2]<=[4] last_tile_dims=
//   {manual}}: groups {0,2} and {1,3}; one all-to-all per group, replica_groups={{0,2},{1,3}}.
//
// Fails (Unimplemented, naming both shardings) when the groups differ, when the target's tile
// arrays do not place devices alike in every group, or with unreduced subgroups.
#ifndef SPMD_RESHARD_RESHARD_GROUPED_H_
#define SPMD_RESHARD_RESHARD_GROUPED_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/reshard/reshard_emitter.h"
#include "spmd/reshard/reshard_planner.h"

namespace spmd {

// `sharding` with its manual subgroup dim turned into replication (same devices, same tiles).
absl::StatusOr<hlo::HloSharding> ManualSubgroupAsReplicated(const hlo::HloSharding& sharding);

// A reshard inside manual subgroups planned for one group over virtual devices 0..k-1.
struct GroupedPlan {
  std::shared_ptr<const ReshardPlan> plan;  // The same in every group.
  std::vector<std::vector<int64_t>> real;   // real[g][v]: group g's device with virtual id v.
  std::vector<int64_t> position;            // Device -> its virtual id.
};

// Plans the reshard of an array of `base_shape` from `source` to `target` (both with the same
// manual subgroups) for one group; the same failures as EmitGroupedReshard.
absl::StatusOr<GroupedPlan> PlanGroupedReshard(const hlo::Shape& base_shape,
                                               const hlo::HloSharding& source,
                                               const hlo::HloSharding& target, int64_t num_devices,
                                               ReshardPlanner& planner);

// Plans and emits the reshard of `value` (an array of `base_shape`) from `source` to
// `target`, both with the same manual subgroups, on `num_devices` devices; see the file
// comment. Returns the reshard's last instruction.
absl::StatusOr<hlo::HloInstruction*> EmitGroupedReshard(
    hlo::HloComputation* computation, hlo::HloInstruction* value, const hlo::Shape& base_shape,
    const hlo::HloSharding& source, const hlo::HloSharding& target, int64_t num_devices,
    ReshardPlanner& planner, ChannelIdAllocator& channel_ids, ReshardPlan* plan_out = nullptr);

}  // namespace spmd

#endif  // SPMD_RESHARD_RESHARD_GROUPED_H_

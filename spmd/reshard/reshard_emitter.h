// Emits a reshard plan as HLO into a per-device (SPMD) computation.
//
// The value entering a plan is the per-device buffer of the source sharding (its padded shard
// shape, PaddedShardShape); the value returned is the per-device buffer of the target
// sharding. Padding elements (beyond the array's end in an uneven shard) hold unspecified
// values on entry and on exit; data elements are exact. Collectives use XLA's syntax and
// semantics: all-gather and all-reduce with `channel_id` and `use_global_device_ids=true`,
// all-to-all and collective-permute with `channel_id` (partition ids), replica_groups in iota
// form when expressible. Per-device offsets come from `partition-id` through a constant s32
// offset table (dynamic-slice of the table by partition-id, reshaped to a scalar).
//
// May run inside the partitioner only: the emitted program is SPMD (num_partitions devices,
// one replica).
#ifndef SPMD_RESHARD_RESHARD_EMITTER_H_
#define SPMD_RESHARD_RESHARD_EMITTER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_module.h"
#include "spmd/builder/spmd_builder.h"
#include "spmd/reshard/reshard_plan.h"
#include "spmd/reshard/reshard_planner.h"

namespace spmd {

class ReshardEmitter {
 public:
  // Emits into `computation`, taking channel ids from `channel_ids`; both must outlive the
  // emitter. A plan with a broadcast step needs `computation` to belong to a module (an add
  // reduction computation is added to it once per element type).
  ReshardEmitter(hlo::HloComputation* computation, ChannelIdAllocator* channel_ids)
      : builder_(computation, channel_ids, {".rs", /*by_unique_id=*/true}) {}

  // Appends the instructions of `plan` applied to `value` and returns the final one (`value`
  // itself for an empty plan). `value` must belong to the computation and have the padded
  // shard shape of plan.source for `base_shape`; `base_shape` must have plan.shape's dims and
  // element type. Fails (Internal) when an emitted shape disagrees with the plan.
  absl::StatusOr<hlo::HloInstruction*> Emit(hlo::HloInstruction* value,
                                            const hlo::Shape& base_shape, const ReshardPlan& plan);

  // Emits in a device subspace (reshard_grouped.h): `id`, a u32 scalar already in the
  // computation, stands for partition-id, and every instruction the emitter adds is appended
  // to `*added` (so its device ids can be mapped back).
  void UseVirtualDevices(hlo::HloInstruction* id, std::vector<hlo::HloInstruction*>* added) {
    builder_.UsePartitionId(id);
    builder_.RecordAddedTo(added);
  }

 private:
  // One step being emitted: the value before it and where it must end up.
  struct StepContext {
    const ReshardStep& step;
    hlo::HloInstruction* value;
    const hlo::HloSharding& before;
    const hlo::Shape& base_shape;
    int64_t num_devices;
    std::vector<int64_t> after_dims;  // The padded per-device dims after the step.
  };

  absl::StatusOr<hlo::HloInstruction*> EmitStep(const StepContext& context);
  absl::StatusOr<hlo::HloInstruction*> EmitAllGather(const StepContext& context);
  absl::StatusOr<hlo::HloInstruction*> EmitAllToAll(const StepContext& context);
  absl::StatusOr<hlo::HloInstruction*> EmitDynamicSlice(const StepContext& context);
  absl::StatusOr<hlo::HloInstruction*> EmitBroadcast(const StepContext& context);
  absl::StatusOr<hlo::HloInstruction*> EmitScatter(const StepContext& context);
  absl::StatusOr<hlo::HloInstruction*> EmitUnreduce(const StepContext& context);
  // Defined in reshard_emit_exchange.cc (the direct reshards).
  absl::StatusOr<hlo::HloInstruction*> EmitExchange(const StepContext& context);
  absl::StatusOr<hlo::HloInstruction*> EmitDirectAllToAll(const StepContext& context);
  // Defined in reshard_emit_subset.cc.
  absl::StatusOr<hlo::HloInstruction*> EmitGatherSubset(const StepContext& context);
  absl::StatusOr<hlo::HloInstruction*> EmitSliceSubset(const StepContext& context);
  // Per-dim s32 start scalars from per-device offsets `offsets[device][dim]`.
  std::vector<hlo::HloInstruction*> DeviceStarts(const std::vector<std::vector<int64_t>>& offsets,
                                                 int64_t rank);

  // Names its instructions `<opcode>.rs<unique id>`.
  SpmdBuilder builder_;
};

// Plans (through `planner`'s cache) and emits the reshard of `value` from `source` to `target`
// for an array of `base_shape` on `num_devices` devices. Errors as PlanReshard and Emit.
absl::StatusOr<hlo::HloInstruction*> EmitReshard(
    hlo::HloComputation* computation, hlo::HloInstruction* value, const hlo::Shape& base_shape,
    const hlo::HloSharding& source, const hlo::HloSharding& target, int64_t num_devices,
    ReshardPlanner& planner, ChannelIdAllocator& channel_ids);

}  // namespace spmd

#endif  // SPMD_RESHARD_RESHARD_EMITTER_H_

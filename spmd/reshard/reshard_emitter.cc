// Reshard emission: each plan step becomes a few instructions on the per-device buffer.
//
//   all-gather      all-gather(dimensions={d}); when the gathered padded shards are longer
//                   than the new shard (the dim becomes whole), a slice drops the padding.
//   all-to-all      pad dim c to P*L_c' -> reshape c into [P, L_c'] -> all-to-all on the P dim
//                   -> transpose P next to (major of) dim s -> reshape merging them -> slice
//                   when dim s became whole.
//   dynamic-slice   pad where a device's window would run past its buffer, then one
//                   dynamic-slice whose offsets are table[partition-id] per dim.
//   permute         collective-permute with the plan's pairs (self pairs kept, so every
//                   device is a target).
//   broadcast       select(partition-id == owner, x, 0) -> all-reduce(sum) over all devices.
//   scatter         pad to whole tiles -> reshape/transpose into [tiles, shard] -> broadcast
//                   over the replication -> all-to-all over all devices (group = the target's
//                   device list, so chunk j reaches the j-th device) -> keep the owner's chunk.
//
// Example: f32[16,24] {devices=[2,4]<=[8]} -> {devices=[4,2]<=[2,2,2]T(0,2,1)}: the minor factor
// of the column split (s=1) moves to the rows (c=0). Per device, before -> after:
//   %p = f32[8,6] parameter(0)
//     =>
//   %r = f32[2,4,6] reshape(%p)                      the two row chunks to send
//   %a = f32[2,4,6] all-to-all(%r), channel_id=1, replica_groups=[4,2]<=[8], dimensions={0}
//   %t = f32[4,2,6] transpose(%a), dimensions={1,0,2}
//   %o = f32[4,12] reshape(%t)                       the members' columns side by side
#include "spmd/reshard/reshard_emitter.h"

#include <algorithm>
#include <numeric>

#include "absl/status/status.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/reshard/reshard_state.h"

namespace spmd {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::PrimitiveType;
using hlo::Shape;

namespace {

absl::StatusOr<TileState> StateOf(const HloSharding& sharding, const Shape& base_shape,
                                  int64_t num_devices) {
  return TileState::FromSharding(sharding, base_shape.rank(), num_devices);
}

}  // namespace

absl::StatusOr<HloInstruction*> ReshardEmitter::Emit(HloInstruction* value, const Shape& base_shape,
                                                     const ReshardPlan& plan) {
  RET_CHECK(base_shape.dimensions() == plan.shape.dimensions());
  ASSIGN_OR_RETURN(Shape source_shape, hlo::PaddedShardShape(plan.source, base_shape));
  if (value->shape().dimensions() != source_shape.dimensions()) {
    return absl::InvalidArgumentError(
        hlo::StrCat("reshard: ", value->name(), " has shape ", value->shape().ToString(false),
                    " but the padded shard of ", plan.source.ToStringWithoutMetadata(), " is ",
                    source_shape.ToString(false)));
  }
  const HloSharding* before = &plan.source;
  for (const ReshardStep& step : plan.steps) {
    ASSIGN_OR_RETURN(Shape after_shape, hlo::PaddedShardShape(step.sharding, base_shape));
    StepContext context{
        step, value, *before, base_shape, plan.num_devices, after_shape.dimensions()};
    ASSIGN_OR_RETURN(value, EmitStep(context));
    if (value->shape().dimensions() != after_shape.dimensions()) {
      return absl::InternalError(hlo::StrCat("reshard: step ", step.ToString(), " produced ",
                                             value->shape().ToString(false), ", expected ",
                                             after_shape.ToString(false)));
    }
    before = &step.sharding;
  }
  return value;
}

absl::StatusOr<HloInstruction*> ReshardEmitter::EmitStep(const StepContext& context) {
  const ReshardStep& step = context.step;
  switch (step.kind) {
    case ReshardStepKind::kAllGather:
      return EmitAllGather(context);
    case ReshardStepKind::kAllToAll:
      return EmitAllToAll(context);
    case ReshardStepKind::kDynamicSlice:
      return EmitDynamicSlice(context);
    case ReshardStepKind::kBroadcast:
      return EmitBroadcast(context);
    case ReshardStepKind::kScatter:
      return EmitScatter(context);
    case ReshardStepKind::kRelabel:
      return context.value;
    case ReshardStepKind::kExchange:
      return EmitExchange(context);
    case ReshardStepKind::kDirectAllToAll:
      return EmitDirectAllToAll(context);
    case ReshardStepKind::kAllReduce:
      return builder_.AllReduceSum(context.value, step.replica_groups,
                                   context.before.reduction_op());
    case ReshardStepKind::kUnreduce:
      return EmitUnreduce(context);
    case ReshardStepKind::kGatherSubset:
      return EmitGatherSubset(context);
    case ReshardStepKind::kSliceSubset:
      return EmitSliceSubset(context);
    case ReshardStepKind::kCollectivePermute:
      return builder_.CollectivePermute(context.value, step.source_target_pairs);
  }
  return absl::InternalError("reshard: unknown step kind");
}

absl::StatusOr<HloInstruction*> ReshardEmitter::EmitUnreduce(const StepContext& context) {
  // The maximum (minimum) of copies of the value is the value: every member keeps it.
  if (context.step.sharding.reduction_op() != hlo::ReductionOp::kSum) return context.value;
  std::vector<int64_t> keeps(context.num_devices, 0);
  for (const std::vector<int64_t>& group : context.step.replica_groups.Expanded()) {
    if (!group.empty()) keeps[group.front()] = 1;
  }
  return builder_.KeepOnDevices(context.value, keeps);
}

absl::StatusOr<HloInstruction*> ReshardEmitter::EmitAllGather(const StepContext& context) {
  const ReshardStep& step = context.step;
  RET_CHECK(step.dimensions.size() == 1);
  const int64_t d = step.dimensions[0];
  std::vector<int64_t> gathered = context.value->shape().dimensions();
  gathered[d] *= step.group_size;
  RET_CHECK(gathered[d] >= context.after_dims[d]);
  HloInstruction* all_gather = builder_.Add(
      HloOpcode::kAllGather, WithDims(context.value->shape(), gathered), {context.value});
  hlo::InstructionAttributes* attrs = all_gather->mutable_attrs();
  attrs->dimensions = {d};
  attrs->replica_groups = step.replica_groups;
  attrs->channel_id = builder_.channel_ids().Next();
  attrs->use_global_device_ids = true;
  // The gathered padded shards are contiguous data followed by padding: drop the padding.
  return builder_.SliceTo(all_gather, context.after_dims);
}

absl::StatusOr<HloInstruction*> ReshardEmitter::EmitAllToAll(const StepContext& context) {
  const ReshardStep& step = context.step;
  RET_CHECK(step.dimensions.size() == 2);
  const int64_t s = step.dimensions[0];
  const int64_t c = step.dimensions[1];
  const int64_t factor = step.group_size;
  const Shape& like = context.value->shape();
  // 1. Pad dim c to factor whole new shards and split it into [factor, new size].
  std::vector<int64_t> padded = like.dimensions();
  RET_CHECK(padded[c] <= factor * context.after_dims[c]);
  padded[c] = factor * context.after_dims[c];
  HloInstruction* value = builder_.PadHigh(context.value, padded);
  std::vector<int64_t> split = padded;
  split[c] = context.after_dims[c];
  split.insert(split.begin() + c, factor);
  value = builder_.Add(HloOpcode::kReshape, WithDims(like, split), {value});
  // 2. Exchange: chunk q of the factor dim goes to member q; received chunks stack in order.
  HloInstruction* exchange = builder_.Add(HloOpcode::kAllToAll, value->shape(), {value});
  exchange->mutable_attrs()->dimensions = {c};
  exchange->mutable_attrs()->replica_groups = step.replica_groups;
  exchange->mutable_attrs()->channel_id = builder_.channel_ids().Next();
  // 3. Move the factor dim just major of dim s and merge: member q's rows come q-th.
  const int64_t s_index = s < c ? s : s + 1;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < static_cast<int64_t>(split.size()); ++i) {
    if (i == s_index) perm.push_back(c);
    if (i != c) perm.push_back(i);
  }
  std::vector<int64_t> transposed(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) transposed[i] = split[perm[i]];
  HloInstruction* transpose =
      builder_.Add(HloOpcode::kTranspose, WithDims(like, transposed), {exchange});
  transpose->mutable_attrs()->dimensions = perm;
  std::vector<int64_t> merged = padded;
  merged[c] = context.after_dims[c];
  merged[s] = padded[s] * factor;
  RET_CHECK(merged[s] >= context.after_dims[s]);
  value = builder_.Add(HloOpcode::kReshape, WithDims(like, merged), {transpose});
  return builder_.SliceTo(value, context.after_dims);
}

absl::StatusOr<HloInstruction*> ReshardEmitter::EmitDynamicSlice(const StepContext& context) {
  const Shape& base = context.base_shape;
  const int64_t rank = base.rank();
  ASSIGN_OR_RETURN(TileState before, StateOf(context.before, base, context.num_devices));
  ASSIGN_OR_RETURN(TileState after, StateOf(context.step.sharding, base, context.num_devices));
  const std::vector<int64_t> before_size = PaddedShardDims(before, base.dimensions());
  const std::vector<std::vector<int64_t>> before_index = before.TileIndexByDevice();
  const std::vector<std::vector<int64_t>> after_index = after.TileIndexByDevice();
  // offsets[d][device]: where the device's new window starts inside its current buffer.
  std::vector<std::vector<int64_t>> offsets(rank, std::vector<int64_t>(context.num_devices, 0));
  std::vector<int64_t> needed = context.value->shape().dimensions();
  for (int64_t d = 0; d < rank; ++d) needed[d] = std::max(needed[d], context.after_dims[d]);
  for (int64_t device = 0; device < context.num_devices; ++device) {
    bool empty = false;
    for (int64_t d = 0; d < rank; ++d) {
      empty = empty || after_index[device][d] * context.after_dims[d] >= base.dimensions(d);
    }
    for (int64_t d = 0; d < rank && !empty; ++d) {
      const int64_t offset =
          after_index[device][d] * context.after_dims[d] - before_index[device][d] * before_size[d];
      RET_CHECK(offset >= 0);
      offsets[d][device] = offset;
      needed[d] = std::max(needed[d], offset + context.after_dims[d]);
    }
  }
  // Every device keeps its whole buffer (size-1 dims split, each device's window at its start):
  // nothing to slice.
  const bool at_start = std::all_of(offsets.begin(), offsets.end(), [](const auto& per_device) {
    return std::all_of(per_device.begin(), per_device.end(), [](int64_t o) { return o == 0; });
  });
  if (at_start && context.value->shape().dimensions() == context.after_dims) return context.value;
  HloInstruction* value = builder_.PadHigh(context.value, needed);
  std::vector<HloInstruction*> operands{value};
  for (int64_t d = 0; d < rank; ++d) operands.push_back(builder_.PerDeviceScalar(offsets[d]));
  HloInstruction* slice = builder_.Add(HloOpcode::kDynamicSlice,
                                       WithDims(value->shape(), context.after_dims), operands);
  slice->mutable_attrs()->dynamic_slice_sizes = context.after_dims;
  return slice;
}

absl::StatusOr<HloInstruction*> ReshardEmitter::EmitBroadcast(const StepContext& context) {
  RET_CHECK(context.before.kind() == HloSharding::Kind::kMaximal);
  const Shape& like = context.value->shape();
  const PrimitiveType type = like.element_type();
  // The reducer first, as it always was (its instructions take unique ids).
  RETURN_IF_ERROR(builder_.AddReducer(type).status());
  HloInstruction* owner =
      builder_.ScalarConstant(PrimitiveType::kU32, context.before.maximal_device());
  HloInstruction* is_owner = builder_.Add(
      HloOpcode::kCompare, Shape::Array(PrimitiveType::kPred, {}), {builder_.PartitionId(), owner});
  is_owner->mutable_attrs()->comparison_direction = hlo::ComparisonDirection::kEq;
  const Shape mask_shape = Shape::Array(PrimitiveType::kPred, like.dimensions());
  HloInstruction* mask = builder_.Add(HloOpcode::kBroadcast, mask_shape, {is_owner});
  HloInstruction* zeros = builder_.Add(HloOpcode::kBroadcast, WithDims(like, like.dimensions()),
                                       {builder_.ScalarConstant(type, 0)});
  HloInstruction* masked = builder_.Add(HloOpcode::kSelect, WithDims(like, like.dimensions()),
                                        {mask, context.value, zeros});
  return builder_.AllReduceSum(masked, context.step.replica_groups);
}

absl::StatusOr<HloInstruction*> ReshardEmitter::EmitScatter(const StepContext& context) {
  RET_CHECK(context.before.kind() == HloSharding::Kind::kMaximal);
  ASSIGN_OR_RETURN(TileState after,
                   StateOf(context.step.sharding, context.base_shape, context.num_devices));
  const Shape& like = context.value->shape();
  const std::vector<int64_t>& shard = context.after_dims;
  const int64_t rank = static_cast<int64_t>(shard.size());
  std::vector<int64_t> whole(rank);
  for (int64_t d = 0; d < rank; ++d) whole[d] = after.dims[d] * shard[d];
  HloInstruction* value = builder_.PadHigh(context.value, whole);
  // The owner slices each device's shard out of its value and sends it by a collective-permute
  // of its own (a permute names a source once); each device keeps the one it received.
  const std::vector<std::vector<int64_t>> tile_index = after.TileIndexByDevice();
  auto shard_of = [&](int64_t device) {
    HloInstruction* slice = builder_.Add(HloOpcode::kSlice, WithDims(like, shard), {value});
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t start = tile_index[device][d] * shard[d];
      slice->mutable_attrs()->slice_dimensions.push_back({start, start + shard[d], 1});
    }
    return slice;
  };
  const int64_t owner = context.before.maximal_device();
  HloInstruction* result = shard_of(owner);
  const Shape mask_shape = Shape::Array(PrimitiveType::kPred, shard);
  const std::vector<int64_t> members = context.step.replica_groups.Expanded().at(0);
  for (int64_t device : members) {
    if (device == owner) continue;
    HloInstruction* received = builder_.CollectivePermute(shard_of(device), {{owner, device}});
    HloInstruction* is_target = builder_.Add(
        HloOpcode::kCompare, Shape::Array(PrimitiveType::kPred, {}),
        {builder_.PartitionId(), builder_.ScalarConstant(PrimitiveType::kU32, device)});
    is_target->mutable_attrs()->comparison_direction = hlo::ComparisonDirection::kEq;
    HloInstruction* mask = builder_.Add(HloOpcode::kBroadcast, mask_shape, {is_target});
    result = builder_.Add(HloOpcode::kSelect, received->shape(), {mask, received, result});
  }
  return result;
}

absl::StatusOr<HloInstruction*> EmitReshard(hlo::HloComputation* computation, HloInstruction* value,
                                            const Shape& base_shape, const HloSharding& source,
                                            const HloSharding& target, int64_t num_devices,
                                            ReshardPlanner& planner,
                                            ChannelIdAllocator& channel_ids) {
  ASSIGN_OR_RETURN(std::shared_ptr<const ReshardPlan> plan,
                   planner.Plan(base_shape, source, target, num_devices));
  ReshardEmitter emitter(computation, &channel_ids);
  return emitter.Emit(value, base_shape, *plan);
}

}  // namespace spmd

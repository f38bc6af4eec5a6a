// Reduce: the operand stays in its current tiling. Reduced dimensions that are split produce
// partial results per device, when the reducer is a single commutative binary op (add,
// multiply, maximum, minimum, and, or) whose identity is known for the type: padding is masked
// with the identity, each device reduces from the identity, the partials are combined by an
// all-reduce over the devices that differ only in those dimensions, and the reduce's own init
// value (which need not be an identity) is applied once at the end. Other reducers, variadic
// ones included, gather the reduced dimensions first. The result keeps the kept dimensions'
// tiling; a reduce on one device (maximal operands) runs there.
//
//   %r = f32[8] reduce(f32[8,16] %x, %init), dimensions={1}, to_apply=%add   (x tiled [2,4])
//   -> %p = f32[4] reduce(%x.masked, f32[] 0), dimensions={1}
//      %s = f32[4] all-reduce(%p), replica_groups=[2,4]<=[8], to_apply=%add
//      %r.spmd = f32[4] add(%s, broadcast(%init))
#include <limits>
#include <numeric>
#include <optional>

#include "hlo/sharding/device_groups.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/combiners.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/reshard/reshard_plan.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

// Removes the (now size-1) tile dimensions `dims` of a sharding whose data rank shrinks.
absl::StatusOr<HloSharding> DropDims(const HloSharding& sharding, const std::vector<int64_t>& dims) {
  if (!sharding.IsTiled()) return sharding;
  const hlo::TileAssignment& ta = sharding.tile_assignment();
  std::vector<int64_t> new_dims;
  for (int64_t d = 0; d < ta.rank(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) new_dims.push_back(ta.dim(d));
  }
  ASSIGN_OR_RETURN(hlo::TileAssignment reshaped, ta.Reshape(new_dims));
  if (sharding.replicate_on_last_tile_dim()) return HloSharding::PartialTile(std::move(reshaped));
  ASSIGN_OR_RETURN(HloSharding rebuilt,
                   HloSharding::Subgroup(std::move(reshaped), sharding.subgroup_types()));
  return rebuilt.WithReductionOpOf(sharding);
}

// Whether the subgroup dims of tiled `sharding` are replication or manual groups only (a
// reduce inside manual subgroups runs in each group as it would alone).
bool ReplicatedOrManualSubgroups(const HloSharding& sharding) {
  for (hlo::OpShardingType type : sharding.subgroup_types()) {
    if (type != hlo::OpShardingType::kReplicated && type != hlo::OpShardingType::kManual) {
      return false;
    }
  }
  return true;
}

// The inits' sharding: replicated, or whole inside each manual group of `in_sharding`.
absl::StatusOr<HloSharding> InitSharding(const HloSharding& in_sharding) {
  if (!in_sharding.HasManualSubgroup()) return HloSharding::Replicate();
  return hlo::WholeInManualSubgroups(in_sharding, 0);
}

// The operands of a reduce of `n` arrays in `sharding`, then their inits in `init_sharding`.
absl::StatusOr<std::vector<HloInstruction*>> ReduceOperands(const HloInstruction& original,
                                                            const HloSharding& sharding,
                                                            const HloSharding& init_sharding,
                                                            PartitionContext& ctx) {
  const int64_t n = original.operand_count() / 2;
  std::vector<HloInstruction*> operands;
  for (int64_t i = 0; i < 2 * n; ++i) {
    ASSIGN_OR_RETURN(HloInstruction * value,
                     ctx.GetInSharding(original.operand(i), i < n ? sharding : init_sharding));
    operands.push_back(value);
  }
  return operands;
}

// A reduce whose operands are all on one device (maximal): it runs there on the operands as
// they are; the other devices' copies are don't-care, like the result's.
absl::Status ReduceOnOneDevice(const HloInstruction& original, const HloSharding& maximal,
                               PartitionContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<HloInstruction*> operands,
                   ReduceOperands(original, maximal, maximal, ctx));
  HloSharding result =
      original.shape().IsTuple() ? HloSharding::SingleTuple(original.shape(), maximal) : maximal;
  HloInstruction* local = CloneWithOperands(original, original.shape(), std::move(operands), ctx);
  ctx.Set(&original, {local, std::move(result), original.shape()});
  return absl::OkStatus();
}

// The tuple `partial` of a reduce's per-device partial results (each device reduced its blocks
// of the `split` dims of `in_sharding`) gathered along a new leading dim over the devices that
// differ only in those dims, and reduced again along it with `original`'s reducer and `inits`.
absl::StatusOr<HloInstruction*> ReducePartials(const HloInstruction& original,
                                               HloInstruction* partial,
                                               const HloSharding& in_sharding,
                                               const std::vector<int64_t>& split,
                                               const std::vector<HloInstruction*>& inits,
                                               PartitionContext& ctx) {
  ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                   hlo::DeviceGroupsAlongDims(in_sharding.tile_assignment(), split));
  const std::vector<std::vector<int64_t>> lists = hlo::GroupLists(groups);
  const int64_t group_size = static_cast<int64_t>(lists.front().size());
  const int64_t n = static_cast<int64_t>(inits.size());
  std::vector<HloInstruction*> rows;
  for (int64_t i = 0; i < n; ++i) {
    HloInstruction* element = ctx.builder().GetTupleElement(partial, i);
    std::vector<int64_t> dims = element->shape().dimensions();
    dims.insert(dims.begin(), 1);
    rows.push_back(ctx.Add(HloOpcode::kReshape, Shape::Array(element->shape().element_type(), dims),
                           {element}));
  }
  HloInstruction* gathered =
      ctx.builder().AllGather(std::move(rows), 0, MakeReplicaGroups(lists), group_size);
  std::vector<HloInstruction*> operands;
  for (int64_t i = 0; i < n; ++i) operands.push_back(ctx.builder().GetTupleElement(gathered, i));
  operands.insert(operands.end(), inits.begin(), inits.end());
  HloInstruction* result = CloneWithOperands(original, partial->shape(), std::move(operands), ctx);
  result->mutable_attrs()->dimensions = {0};
  return result;
}

absl::Status HandleReduce(const HloInstruction& original, const HloSharding& sharding,
                          PartitionContext& ctx) {
  // A variadic reduce (n operands, n inits, a tuple of n results) keeps the operands' tiling
  // like a single one. Its split reduced dims give partial results when the reducer selects
  // one input whole (ReducePartials); otherwise they are gathered (combining partial results
  // would take the reducer's identity, which a tuple reducer does not name).
  const int64_t n = original.operand_count() / 2;
  ASSIGN_OR_RETURN(const PartitionedValue* input, ctx.Get(original.operand(0)));
  HloSharding in_sharding = input->sharding;
  // Inside a manual region the reduce runs as written, unless its operand is split inside
  // manual subgroups: then each group reduces its blocks as a whole program would.
  if (RunsAsWritten(original, sharding) && !in_sharding.HasManualSubgroup()) {
    return HandleManualAsWritten(original, sharding, ctx);
  }
  if (in_sharding.kind() == HloSharding::Kind::kMaximal) {
    return ReduceOnOneDevice(original, in_sharding, ctx);
  }
  // Tiled, possibly with replicated and manual subgroups; other subgroups go replicated.
  if (!in_sharding.IsTiled() || !ReplicatedOrManualSubgroups(in_sharding)) {
    return FallBackToReplicated(original, sharding, ctx,
                                "the reduced operand has subgroups other than replication");
  }
  const std::vector<int64_t>& reduced = original.dimensions();
  std::vector<int64_t> split_reduced;
  for (int64_t d : reduced) {
    if (in_sharding.tile_assignment().dim(d) > 1) split_reduced.push_back(d);
  }
  const HloOpcode op = original.to_apply()->root_instruction()->opcode();
  std::optional<hlo::Literal> identity =
      n == 1 && hlo::MatchCombiner(*original.to_apply()).has_value()
          ? CombinerIdentity(op, original.shape().element_type())
          : std::nullopt;
  // Partial results are combined by an all-reduce that every device must join: a sharding over
  // some devices only is replicated along the reduced dims first.
  const bool all_devices = in_sharding.tile_assignment().num_devices() == ctx.num_devices();
  const bool combine = !split_reduced.empty() && identity.has_value() && all_devices;
  // A selecting tuple reducer (argmax) reduces each block from the init, gathers the partial
  // results and reduces them again: the init applied once per block changes nothing.
  const bool regather = !split_reduced.empty() && !combine && all_devices && n > 1 &&
                        hlo::IsSelectingCombiner(*original.to_apply());
  if (!split_reduced.empty() && !combine && !regather) {
    ASSIGN_OR_RETURN(in_sharding, hlo::PartiallyReplicate(in_sharding, split_reduced));
    split_reduced.clear();
  }
  ASSIGN_OR_RETURN(HloSharding init_sharding, InitSharding(in_sharding));
  ASSIGN_OR_RETURN(std::vector<HloInstruction*> operands,
                   ReduceOperands(original, in_sharding, init_sharding, ctx));
  HloInstruction* init = operands[1];
  const std::vector<HloInstruction*> init_operands(operands.begin() + n, operands.end());
  // Split reductions start from the identity, mask padding with it, and take the init once.
  if (combine) {
    operands[1] = ctx.Add(HloOpcode::kConstant, init->shape(), {});
    operands[1]->mutable_attrs()->literal = *std::move(identity);
  }
  // Only the reduced dims' padding reaches a real result; a kept dim's padding lands in the
  // result's padding, so the kept dims are not masked.
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < in_sharding.TiledDataRank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  }
  ASSIGN_OR_RETURN(HloSharding reduced_tiles, hlo::PartiallyReplicate(in_sharding, kept));
  for (int64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(operands[i], ctx.MaskPadding(operands[i], original.operand(i)->shape(),
                                                  reduced_tiles, operands[n + i]));
  }
  // Sharding of the partial result: reduced dims drop out; their tiles become replication.
  ASSIGN_OR_RETURN(HloSharding replicated_reduced,
                   hlo::PartiallyReplicate(in_sharding, reduced));
  ASSIGN_OR_RETURN(HloSharding result_sharding, DropDims(replicated_reduced, reduced));
  ASSIGN_OR_RETURN(Shape local, LocalShape(result_sharding, original.shape()));
  HloInstruction* partial = CloneWithOperands(original, local, std::move(operands), ctx);
  if (combine) {
    ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                     hlo::DeviceGroupsAlongDims(in_sharding.tile_assignment(), split_reduced));
    HloInstruction* all_reduce = ctx.builder().ReducingCollective(
        HloOpcode::kAllReduce, local, partial, MakeReplicaGroups(hlo::GroupLists(groups)),
        original.to_apply());
    HloInstruction* init_everywhere = ctx.Add(HloOpcode::kBroadcast, local, {init});
    partial = ctx.Add(op, local, {all_reduce, init_everywhere});
  }
  if (regather) {
    ASSIGN_OR_RETURN(
        partial, ReducePartials(original, partial, in_sharding, split_reduced, init_operands, ctx));
  }
  if (original.shape().IsTuple()) {
    result_sharding = HloSharding::SingleTuple(original.shape(), result_sharding);
  }
  ctx.Set(&original, {partial, std::move(result_sharding), original.shape()});
  return absl::OkStatus();
}

}  // namespace

void RegisterReduceHandlers(HandlerTable& table) { table[HloOpcode::kReduce] = &HandleReduce; }

}  // namespace spmd

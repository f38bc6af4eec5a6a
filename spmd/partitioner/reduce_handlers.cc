// Reduce: the operand stays in its current tiling. Reduced dimensions that are split produce
// partial results per device, when the reducer is a single commutative binary op (add,
// multiply, maximum, minimum, and, or) whose identity is known for the type: padding is masked
// with the identity, each device reduces from the identity, the partials are combined by an
// all-reduce over the devices that differ only in those dimensions, and the reduce's own init
// value (which need not be an identity) is applied once at the end. Other reducers gather the
// reduced dimensions first. The result keeps the kept dimensions' tiling.
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
  return HloSharding::Tile(std::move(reshaped));
}

absl::Status HandleReduce(const HloInstruction& original, const HloSharding& sharding,
                          PartitionContext& ctx) {
  if (original.operand_count() != 2 || !original.shape().IsArray()) {
    return FallBackToReplicated(original, sharding, ctx, "a variadic reduce");
  }
  ASSIGN_OR_RETURN(const PartitionedValue* input, ctx.Get(original.operand(0)));
  HloSharding in_sharding = input->sharding;
  // Tiled, possibly with a last_tile_dim_replicate subgroup; other subgroups go replicated.
  if (!in_sharding.IsTiled() || !in_sharding.subgroup_types().empty()) {
    return FallBackToReplicated(original, sharding, ctx,
                                "the reduced operand has subgroups other than replication");
  }
  const std::vector<int64_t>& reduced = original.dimensions();
  std::vector<int64_t> split_reduced;
  for (int64_t d : reduced) {
    if (in_sharding.tile_assignment().dim(d) > 1) split_reduced.push_back(d);
  }
  const HloOpcode op = original.to_apply()->root_instruction()->opcode();
  std::optional<hlo::Literal> identity = hlo::MatchCombiner(*original.to_apply()).has_value()
                                             ? CombinerIdentity(op, original.shape().element_type())
                                             : std::nullopt;
  // Partial results are combined by an all-reduce that every device must join: a sharding over
  // some devices only is replicated along the reduced dims first.
  const bool all_devices = in_sharding.tile_assignment().num_devices() == ctx.num_devices();
  const bool combine = !split_reduced.empty() && identity.has_value() && all_devices;
  if (!split_reduced.empty() && !combine) {
    ASSIGN_OR_RETURN(in_sharding, hlo::PartiallyReplicate(in_sharding, split_reduced));
    split_reduced.clear();
  }
  ASSIGN_OR_RETURN(HloInstruction * operand, ctx.GetInSharding(original.operand(0), in_sharding));
  ASSIGN_OR_RETURN(HloInstruction * init, ctx.GetInSharding(original.operand(1),
                                                            HloSharding::Replicate()));
  // Split reductions start from the identity, mask padding with it, and take the init once.
  HloInstruction* start = init;
  if (combine) {
    start = ctx.Add(HloOpcode::kConstant, init->shape(), {});
    start->mutable_attrs()->literal = *std::move(identity);
  }
  ASSIGN_OR_RETURN(operand, ctx.MaskPadding(operand, original.operand(0)->shape(), in_sharding,
                                            start));
  // Sharding of the partial result: reduced dims drop out; their tiles become replication.
  ASSIGN_OR_RETURN(HloSharding replicated_reduced,
                   hlo::PartiallyReplicate(in_sharding, reduced));
  ASSIGN_OR_RETURN(HloSharding result_sharding, DropDims(replicated_reduced, reduced));
  ASSIGN_OR_RETURN(Shape local, LocalShape(result_sharding, original.shape()));
  HloInstruction* partial = CloneWithOperands(original, local, {operand, start}, ctx);
  if (combine) {
    ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                     hlo::DeviceGroupsAlongDims(in_sharding.tile_assignment(), split_reduced));
    HloInstruction* all_reduce = ctx.builder().ReducingCollective(
        HloOpcode::kAllReduce, local, partial, MakeReplicaGroups(hlo::GroupLists(groups)),
        original.to_apply());
    HloInstruction* init_everywhere = ctx.Add(HloOpcode::kBroadcast, local, {init});
    partial = ctx.Add(op, local, {all_reduce, init_everywhere});
  }
  ctx.Set(&original, {partial, result_sharding, original.shape()});
  return absl::OkStatus();
}

}  // namespace

void RegisterReduceHandlers(HandlerTable& table) { table[HloOpcode::kReduce] = &HandleReduce; }

}  // namespace spmd

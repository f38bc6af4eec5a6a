// Sort: every row along the sort dimension must sit whole on one device.
//
// When the requested tiling splits the sort dimension, its tiles move to another dimension
// that can take them evenly (one all-to-all per group, and each device still holds 1/N of
// the data) -- the dimension with the most elements per tile wins; only when no dimension can
// take them is the sort dimension replicated (an all-gather). Operands and results of a
// variadic sort share one tiling. Consumers reshard from the sort's tiling as they need.
//
//   %s = f32[4,16,8] sort(%x), dimensions={2}, sharding={devices=[1,1,4]<=[4]}
//   -> %x in {devices=[1,4,1]<=[4]} (all-to-all), %s.spmd = f32[4,4,8] sort(...)
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

// The tiling a sort along `dim` of arrays shaped `shape` runs in, given the requested `leaf`.
absl::StatusOr<HloSharding> SortTiling(const HloSharding& leaf, const Shape& shape, int64_t dim) {
  const int64_t tiles = leaf.tile_assignment().dim(dim);
  if (tiles == 1) return leaf;
  int64_t best = -1;
  int64_t best_per_tile = 0;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const int64_t ways = leaf.tile_assignment().dim(d) * tiles;
    if (d == dim || shape.dimensions(d) % ways != 0) continue;
    const int64_t per_tile = shape.dimensions(d) / ways;
    if (per_tile > best_per_tile) {
      best = d;
      best_per_tile = per_tile;
    }
  }
  if (best >= 0) return hlo::MoveTileDim(leaf, dim, best);
  return hlo::PartiallyReplicate(leaf, {dim});
}

absl::Status HandleSort(const HloInstruction& original, const HloSharding& sharding,
                        PartitionContext& ctx) {
  const HloSharding& leaf = sharding.IsTuple() ? sharding.tuple_elements().front() : sharding;
  const Shape& array = original.operand(0)->shape();
  if (!leaf.IsTiled() || !leaf.subgroup_types().empty() || original.dimensions().size() != 1 ||
      !array.IsArray()) {
    return FallBackToReplicated(original, sharding, ctx,
                                "a sort with subgroups in its sharding, or of several dimensions");
  }
  ASSIGN_OR_RETURN(HloSharding local, SortTiling(leaf, array, original.dimensions()[0]));
  std::vector<HloInstruction*> operands;
  for (const HloInstruction* operand : original.operands()) {
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(operand, local));
    operands.push_back(value);
  }
  ASSIGN_OR_RETURN(Shape local_shape, LocalShape(local, original.shape()));
  HloSharding result = local;
  if (original.shape().IsTuple()) {
    result = HloSharding::SingleTuple(original.shape(), local);
    ASSIGN_OR_RETURN(local_shape, LocalShape(result, original.shape()));
  }
  ctx.Set(&original, {CloneWithOperands(original, local_shape, operands, ctx), result,
                      original.shape()});
  return absl::OkStatus();
}

}  // namespace

void RegisterSortHandler(HandlerTable& table) { table[hlo::HloOpcode::kSort] = &HandleSort; }

}  // namespace spmd

// Ops whose rows along some dimensions must sit whole on one device: sort (its sort dimension)
// here; fft, cholesky and triangular-solve through their factor rules (local_rule_handler.cc).
//
// When the requested tiling splits such a dimension, its tiles move to another dimension that
// can take them evenly (one all-to-all per group, and each device still holds 1/N of the data)
// -- the dimension with the most elements per tile wins; only when no dimension can take them
// is the dimension replicated (an all-gather). Operands and results of a variadic sort share
// one tiling. Consumers reshard from the op's tiling as they need.
//
//   %s = f32[4,16,8] sort(%x), dimensions={2}, sharding={devices=[1,1,4]<=[4]}
//   -> %x in {devices=[1,4,1]<=[4]} (all-to-all), %s.spmd = f32[4,4,8] sort(...)
#include <algorithm>
#include <vector>

#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {

absl::StatusOr<hlo::HloSharding> WholeDimsTiling(hlo::HloSharding leaf, const hlo::Shape& shape,
                                                 const std::vector<int64_t>& whole) {
  auto is_whole = [&](int64_t d) {
    return std::find(whole.begin(), whole.end(), d) != whole.end();
  };
  for (int64_t dim : whole) {
    // TilesAlong: a leaf that an earlier dim left replicated has no tile dims.
    const int64_t tiles = leaf.TilesAlong(dim);
    if (tiles == 1) continue;
    int64_t best = -1;
    int64_t best_per_tile = 0;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      const int64_t ways = leaf.TilesAlong(d) * tiles;
      if (is_whole(d) || shape.dimensions(d) % ways != 0) continue;
      const int64_t per_tile = shape.dimensions(d) / ways;
      if (per_tile > best_per_tile) {
        best = d;
        best_per_tile = per_tile;
      }
    }
    if (best >= 0) {
      ASSIGN_OR_RETURN(leaf, hlo::MoveTileDim(leaf, dim, best));
    } else {
      ASSIGN_OR_RETURN(leaf, hlo::PartiallyReplicate(leaf, {dim}));
    }
  }
  return leaf;
}

namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

absl::Status HandleSort(const HloInstruction& original, const HloSharding& sharding,
                        PartitionContext& ctx) {
  const HloSharding& leaf = sharding.IsTuple() ? sharding.tuple_elements().front() : sharding;
  const Shape& array = original.operand(0)->shape();
  if (!MovesDataInTiling(leaf) || original.dimensions().size() != 1 || !array.IsArray()) {
    return FallBackToReplicated(
        original, sharding, ctx,
        "a sort with partial sums in its sharding, or of several dimensions");
  }
  ASSIGN_OR_RETURN(HloSharding local, WholeDimsTiling(leaf, array, {original.dimensions()[0]}));
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

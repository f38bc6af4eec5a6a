// Ops whose rows along some dimensions must sit whole on one device: sort (its sort dimension)
// and fft (its 1 to 3 innermost, transformed dimensions).
//
// When the requested tiling splits such a dimension, its tiles move to another dimension that
// can take them evenly (one all-to-all per group, and each device still holds 1/N of the data)
// -- the dimension with the most elements per tile wins; only when no dimension can take them
// is the dimension replicated (an all-gather). Operands and results of a variadic sort share
// one tiling. Consumers reshard from the op's tiling as they need.
//
//   %s = f32[4,16,8] sort(%x), dimensions={2}, sharding={devices=[1,1,4]<=[4]}
//   -> %x in {devices=[1,4,1]<=[4]} (all-to-all), %s.spmd = f32[4,4,8] sort(...)
//   %f = c64[4,16,17] fft(f32[4,16,32] %x), fft_type=RFFT, fft_length={32},
//        sharding={devices=[2,1,4]<=[8]}
//   -> %x in {devices=[2,4,1]<=[8]} (all-to-all), %f.spmd = c64[2,4,17] fft(...)
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
    const int64_t tiles = leaf.tile_assignment().dim(dim);
    if (tiles == 1) continue;
    int64_t best = -1;
    int64_t best_per_tile = 0;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      const int64_t ways = leaf.tile_assignment().dim(d) * tiles;
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

// An fft transforms its innermost fft_length.size() dims: those stay whole; the others keep
// their tiles (an RFFT's or IRFFT's last dim changes size, but it is whole on both sides).
absl::Status HandleFft(const HloInstruction& original, const HloSharding& sharding,
                       PartitionContext& ctx) {
  const Shape& shape = original.shape();
  const int64_t transformed = static_cast<int64_t>(original.attrs().fft_length.size());
  if (!MovesDataInTiling(sharding) || !shape.IsArray() || transformed < 1 ||
      transformed > shape.rank()) {
    return FallBackToReplicated(original, sharding, ctx,
                                "an fft with partial sums in its sharding");
  }
  std::vector<int64_t> whole;
  for (int64_t d = shape.rank() - transformed; d < shape.rank(); ++d) whole.push_back(d);
  ASSIGN_OR_RETURN(HloSharding local, WholeDimsTiling(sharding, shape, whole));
  ASSIGN_OR_RETURN(HloInstruction * operand, ctx.GetInSharding(original.operand(0), local));
  ASSIGN_OR_RETURN(Shape local_shape, LocalShape(local, shape));
  ctx.Set(&original, {CloneWithOperands(original, local_shape, {operand}, ctx), local, shape});
  return absl::OkStatus();
}

}  // namespace

void RegisterSortAndFftHandlers(HandlerTable& table) {
  table[hlo::HloOpcode::kSort] = &HandleSort;
  table[hlo::HloOpcode::kFft] = &HandleFft;
}

}  // namespace spmd

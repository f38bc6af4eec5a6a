// Custom-calls that carry a Shardy sharding rule (`xla.sdy.sharding_rule`; jax's
// custom_partitioning exports one with each `CustomSPMDPartitioning` call in Shardy mode).
//
// The rule says which factors of the op may be split (hlo::sdy::FactorMaySplit: pass-through
// factors alone in their dims); the others stay whole. The result keeps the tiles of its
// splittable dims and replicates the rest; each operand is resharded so that its dims of the
// same factors hold the same tiles on the same devices, and the call runs on those local
// shapes. Example, rule `([i, j])->([i, j]) need_replication={j}` with the result wanted
// {devices=[2,4]<=[8]}: the call runs on f32[16,64] shards split 2 ways along i (dim 1 whole,
// replicated over the 4 devices of each row).
//
// A custom_partitioning call's own partitioner is a Python callback that the module does not
// contain: the call is kept, on local shapes, and the --explain log says so by name.
#include <string>
#include <vector>

#include "hlo/sdy/sdy_attributes.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloSharding;
using hlo::sdy::ShardingRule;

// The factor whose dim `dim` is on tensor `side`, or -1.
int64_t FactorAt(const std::vector<std::vector<int64_t>>& dims, int64_t side, int64_t dim) {
  for (size_t f = 0; f < dims.size(); ++f) {
    if (dims[f][side] == dim) return static_cast<int64_t>(f);
  }
  return -1;
}

// `result` with the tiles of its dims that no factor of `keep` owns moved into replication.
absl::StatusOr<HloSharding> KeepFactorDims(const HloSharding& result,
                                           const std::vector<std::vector<int64_t>>& dims,
                                           int64_t result_side, const std::vector<bool>& keep) {
  if (!result.IsTiled()) return result;
  std::vector<int64_t> drop;
  for (int64_t d = 0; d < result.TiledDataRank(); ++d) {
    const int64_t f = FactorAt(dims, result_side, d);
    if (result.tile_assignment().dim(d) > 1 && (f < 0 || !keep[f])) drop.push_back(d);
  }
  return drop.empty() ? result : hlo::PartiallyReplicate(result, drop);
}

// The sharding of tensor `side` (rank `rank`) whose factor dims hold the tiles `result` gives
// the same factors' result dims, on the same devices.
absl::StatusOr<HloSharding> ProjectToOperand(const HloSharding& result,
                                             const std::vector<std::vector<int64_t>>& dims,
                                             int64_t result_side, int64_t side, int64_t rank) {
  std::vector<bool> on_side(dims.size());
  for (size_t f = 0; f < dims.size(); ++f) on_side[f] = dims[f][side] >= 0;
  ASSIGN_OR_RETURN(HloSharding kept, KeepFactorDims(result, dims, result_side, on_side));
  if (!kept.IsTiled()) return kept;
  const hlo::TileAssignment& tiles = kept.tile_assignment();
  const int64_t result_rank = kept.TiledDataRank();
  std::vector<int64_t> perm, new_dims;
  std::vector<bool> used(tiles.rank(), false);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t f = FactorAt(dims, side, d);
    const int64_t from = f < 0 ? -1 : dims[f][result_side];
    new_dims.push_back(from < 0 ? 1 : tiles.dim(from));
    if (from >= 0) {
      perm.push_back(from);
      used[from] = true;
    }
  }
  for (int64_t d = 0; d < result_rank; ++d) {
    if (!used[d]) perm.push_back(d);  // Whole (one tile) after KeepFactorDims.
  }
  for (int64_t d = result_rank; d < tiles.rank(); ++d) {
    perm.push_back(d);
    new_dims.push_back(tiles.dim(d));
  }
  ASSIGN_OR_RETURN(hlo::TileAssignment moved, tiles.Transpose(perm));
  ASSIGN_OR_RETURN(moved, moved.Reshape(new_dims));
  return hlo::WithTileAssignment(kept.WithoutMetadata(), std::move(moved));
}

absl::Status HandleWithRule(const hlo::HloInstruction& original, const HloSharding& sharding,
                            const ShardingRule& rule, PartitionContext& ctx) {
  const std::vector<std::vector<int64_t>> dims = hlo::sdy::SingleFactorDims(rule);
  const int64_t result_side = original.operand_count();
  std::vector<bool> may_split(dims.size());
  for (size_t f = 0; f < dims.size(); ++f) may_split[f] = hlo::sdy::FactorMaySplit(rule, f);
  ASSIGN_OR_RETURN(HloSharding result, KeepFactorDims(sharding, dims, result_side, may_split));
  std::vector<hlo::HloInstruction*> operands;
  for (int64_t i = 0; i < original.operand_count(); ++i) {
    const hlo::HloInstruction* operand = original.operand(i);
    ASSIGN_OR_RETURN(HloSharding wanted,
                     ProjectToOperand(result, dims, result_side, i, operand->shape().rank()));
    ASSIGN_OR_RETURN(operands.emplace_back(), ctx.GetInSharding(operand, wanted));
  }
  ASSIGN_OR_RETURN(hlo::Shape local, LocalShape(result, original.shape()));
  ctx.log().lines.push_back(hlo::StrCat(
      "custom-call %", original.name(), " (", original.attrs().custom_call_target,
      "): partitioned by its sharding rule, result ", result.ToStringWithoutMetadata(),
      original.attrs().custom_call_target == "CustomSPMDPartitioning"
          ? "; its partitioner is a Python callback (jax custom_partitioning) that the module "
            "does not contain, so the call runs as written on each device's shards"
          : ""));
  ctx.Set(&original, {CloneWithOperands(original, local, std::move(operands), ctx),
                      std::move(result), original.shape()});
  return absl::OkStatus();
}

}  // namespace

absl::Status HandleShardingRuleCustomCall(const hlo::HloInstruction& original,
                                          const HloSharding& sharding, PartitionContext& ctx,
                                          bool* handled) {
  *handled = false;
  absl::StatusOr<std::optional<ShardingRule>> rule = hlo::sdy::ShardingRuleOf(original);
  if (!rule.ok() || !rule->has_value() || original.shape().IsTuple() || !sharding.IsTiled()) {
    return absl::OkStatus();
  }
  for (hlo::OpShardingType type : sharding.subgroup_types()) {
    if (type != hlo::OpShardingType::kReplicated) return absl::OkStatus();
  }
  *handled = true;
  return HandleWithRule(original, sharding, **rule, ctx);
}

}  // namespace spmd

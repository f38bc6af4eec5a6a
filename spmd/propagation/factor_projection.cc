// ProjectSharding builds a dimension map (target dim -> source dim) from the rule's factors
// and hands it to hlo::OperandShardingFromResult, the same mapping the partitioner uses to
// ask for an operand "in the result's layout": mapped dims keep their tiles and devices,
// unmapped source tiles fold into the replication subgroup. Reshapes use hlo::ReshapeSharding
// with the shapes swapped as needed, which is symmetric.
#include "spmd/propagation/factor_projection.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "hlo/sharding/manual_conversion.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace spmd {
namespace {

using hlo::HloSharding;

// `sharding` with every dim it splits into more tiles than the dim has elements made whole
// (its tiles join the replication): a slice of 3 columns of an array split 4 ways keeps the
// other dims' tiles. Replicated when no dim keeps a split.
absl::StatusOr<HloSharding> FitTiles(const HloSharding& sharding, const hlo::Shape& shape) {
  if (!sharding.IsTiled()) return sharding;
  std::vector<int64_t> too_small;
  for (int64_t d = 0; d < sharding.TiledDataRank() && d < shape.rank(); ++d) {
    if (sharding.tile_assignment().dim(d) > shape.dimensions(d)) too_small.push_back(d);
  }
  if (too_small.empty()) return sharding;
  return hlo::PartiallyReplicate(sharding, too_small);
}

}  // namespace

std::vector<int64_t> FactorDimMap(const FactorRule& rule, int64_t from, int64_t to,
                                  int64_t to_rank) {
  std::vector<int64_t> dim_map(to_rank, -1);
  for (const Factor& f : rule.factors) {
    if (f.kind == Factor::Kind::kNeedReplication) continue;
    const int64_t to_dim = f.dims[to];
    const int64_t from_dim = f.dims[from];
    if (to_dim >= 0 && from_dim >= 0 && to_dim < to_rank) dim_map[to_dim] = from_dim;
  }
  return dim_map;
}

namespace {

// What ProjectSharding decides without rebuilding tiles: replicated, manual, refusals, and the
// identity map (elementwise ops). Otherwise nullopt, with `dim_map` set (empty for a reshape).
std::optional<absl::StatusOr<HloSharding>> Shortcut(const FactorRule& rule, int64_t from,
                                                    int64_t to, const HloSharding& sharding,
                                                    const hlo::Shape& from_shape,
                                                    const hlo::Shape& to_shape,
                                                    std::vector<int64_t>& dim_map) {
  if (sharding.IsReplicated()) return HloSharding::Replicate();
  // A value computed in a manual region keeps every side of its op in that region.
  if (sharding.kind() == HloSharding::Kind::kManual) return HloSharding::Manual();
  const bool unreduced =
      sharding.IsTiled() &&
      std::any_of(sharding.subgroup_types().begin(), sharding.subgroup_types().end(),
                  [](hlo::OpShardingType t) { return t == hlo::OpShardingType::kUnreduced; });
  if (!sharding.IsTiled() || unreduced) {
    return absl::UnimplementedError(
        hlo::StrCat("sharding ", sharding.ToString(), " is not propagated"));
  }
  if (rule.reshape) return std::nullopt;
  dim_map = FactorDimMap(rule, from, to, to_shape.rank());
  bool identity = from_shape.rank() == to_shape.rank();
  for (int64_t d = 0; d < to_shape.rank() && identity; ++d) identity = dim_map[d] == d;
  // The common case (elementwise ops): the same layout, without rebuilding the tiles.
  // A sharding that splits a dim into more tiles than it has (a user's, with padded shards)
  // holds for every value of that shape.
  if (identity && from_shape.dimensions() == to_shape.dimensions()) {
    return sharding.WithoutMetadata();
  }
  return std::nullopt;
}

// The tiles of `sharding` rebuilt for the other side: by hlo::ReshapeSharding for a reshape,
// else by `dim_map`.
absl::StatusOr<HloSharding> Rebuild(const HloSharding& sharding, const hlo::Shape& from_shape,
                                    const hlo::Shape& to_shape, bool reshape,
                                    const std::vector<int64_t>& dim_map) {
  HloSharding result = HloSharding::Replicate();
  if (reshape) {
    ASSIGN_OR_RETURN(result,
                     hlo::ReshapeShardingReplicatingUnmapped(sharding, from_shape, to_shape));
  } else {
    ASSIGN_OR_RETURN(result, hlo::OperandShardingFromResult(sharding, from_shape.rank(), dim_map));
  }
  ASSIGN_OR_RETURN(result, FitTiles(result, to_shape));
  return result.WithoutMetadata();
}

// A manual conversion's side `to` from side `from` sharded `sharding`. {manual} has no free
// axes to carry, and a replicated local side is not a value of the region: neither projects.
absl::StatusOr<HloSharding> ProjectConversion(const ConversionSides& sides, int64_t from,
                                              const HloSharding& sharding) {
  if (from == sides.global_side) {
    if (!sharding.IsTiled() && !sharding.IsReplicated()) {
      return absl::UnimplementedError("only a tiled global side projects into the region");
    }
    return hlo::LocalFromGlobal(sharding, sides.structure, sides.groups, sides.global_shape);
  }
  if (!sharding.HasManualSubgroup()) {
    return absl::UnimplementedError("only manual subgroups project out of the region");
  }
  return hlo::GlobalFromLocal(sharding, sides.structure, sides.global_shape);
}

// `projected` with a reverse's mirrored dims applied (FactorRule::mirrored).
absl::StatusOr<HloSharding> Mirror(const FactorRule& rule, absl::StatusOr<HloSharding> projected) {
  if (rule.mirrored.empty() || !projected.ok()) return projected;
  return hlo::MirrorTiles(*projected, rule.mirrored);
}

}  // namespace

absl::StatusOr<HloSharding> ProjectSharding(const FactorRule& rule, int64_t from, int64_t to,
                                            const HloSharding& sharding,
                                            const hlo::Shape& from_shape,
                                            const hlo::Shape& to_shape) {
  if (rule.conversion) return ProjectConversion(*rule.conversion, from, sharding);
  std::vector<int64_t> dim_map;
  if (auto decided = Shortcut(rule, from, to, sharding, from_shape, to_shape, dim_map)) {
    return Mirror(rule, *std::move(decided));
  }
  return Mirror(rule, Rebuild(sharding, from_shape, to_shape, rule.reshape, dim_map));
}

absl::StatusOr<HloSharding> ProjectionCache::Project(const FactorRule& rule, int64_t from,
                                                     int64_t to, const HloSharding& sharding,
                                                     const hlo::Shape& from_shape,
                                                     const hlo::Shape& to_shape) {
  if (rule.conversion) return ProjectConversion(*rule.conversion, from, sharding);
  std::vector<int64_t> dim_map;
  if (auto decided = Shortcut(rule, from, to, sharding, from_shape, to_shape, dim_map)) {
    return Mirror(rule, *std::move(decided));
  }
  Key key{rule.reshape, from_shape.dimensions(), to_shape.dimensions(), std::move(dim_map),
          sharding};
  if (auto it = results_.find(key); it != results_.end()) return Mirror(rule, it->second);
  absl::StatusOr<HloSharding> result =
      Rebuild(sharding, from_shape, to_shape, key.reshape, key.dim_map);
  results_.emplace(std::move(key), result);
  return Mirror(rule, std::move(result));
}

}  // namespace spmd

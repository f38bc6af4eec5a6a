// Moving a sharding across an instruction along its FactorRule, in either direction.
//
// One function serves forward (operand -> result), backward (result -> operand) and sideways
// (operand -> operand, e.g. a dot's contracting dims) propagation: the tiling of each factor
// present on both sides moves from one side's dimension to the other's; factors missing on the
// target, contracting factors reaching the result, and need-replication factors become
// replication.
//
//   dot(f32[8,16] a, f32[16,4] b) with a: {devices=[1,2]<=[2]}
//     a -> result: {replicated}                   (k is contracting)
//     a -> b:      {devices=[2,1]<=[2]}           (k shared by both operands)
//     result {devices=[2,1]<=[2]} -> a: {devices=[2,1]<=[2]}, -> b: {replicated}
#ifndef SPMD_PROPAGATION_FACTOR_PROJECTION_H_
#define SPMD_PROPAGATION_FACTOR_PROJECTION_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"
#include "hlo/sharding/shard_geometry.h"
#include "spmd/propagation/factor_rule.h"

namespace spmd {

// The sharding side `to` should have so that it lines up with `sharding` on side `from` (sides
// as in FactorRule: operands, then the result at num_operands). `from_shape` and `to_shape` are
// the sides' shapes. Replicated stays replicated and {manual} stays {manual} (the op is inside
// a manual region). Fails for other shardings than those and tilings with at most a
// replication subgroup, and when a projected tiling would split a dimension into more tiles
// than it has elements.
absl::StatusOr<hlo::HloSharding> ProjectSharding(const FactorRule& rule, int64_t from, int64_t to,
                                                 const hlo::HloSharding& sharding,
                                                 const hlo::Shape& from_shape,
                                                 const hlo::Shape& to_shape);

// ProjectSharding's results for one module's propagation: projections that rebuild the tiles
// (a dimension map other than the identity, or a reshape) depend only on the shapes' dimensions,
// the dimension map and the sharding, which many instructions share (a stack of layers), so
// each is computed once. Same results as ProjectSharding.
class ProjectionCache {
 public:
  absl::StatusOr<hlo::HloSharding> Project(const FactorRule& rule, int64_t from, int64_t to,
                                           const hlo::HloSharding& sharding,
                                           const hlo::Shape& from_shape,
                                           const hlo::Shape& to_shape);

 private:
  struct Key {
    bool reshape;
    std::vector<int64_t> from_dims;
    std::vector<int64_t> to_dims;
    std::vector<int64_t> dim_map;  // Empty for a reshape.
    hlo::HloSharding sharding;
    friend bool operator==(const Key& a, const Key& b) {
      return a.reshape == b.reshape && a.from_dims == b.from_dims && a.to_dims == b.to_dims &&
             a.dim_map == b.dim_map && a.sharding == b.sharding;
    }
    // The sharding enters by its tile dims only: HloSharding's own hash walks the devices,
    // and keys that differ only there are told apart by operator==.
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      h = H::combine(std::move(h), k.reshape, k.from_dims, k.to_dims, k.dim_map,
                     static_cast<int>(k.sharding.kind()));
      if (!k.sharding.IsTiled()) return h;
      return H::combine(std::move(h), k.sharding.tile_assignment().dims(),
                        k.sharding.subgroup_types().size());
    }
  };
  absl::flat_hash_map<Key, absl::StatusOr<hlo::HloSharding>> results_;
};

// For each dimension of side `to` of `rule`, the dimension of side `from` that carries the same
// factor, or -1 (`to_rank` entries; factors that must stay whole map nowhere). Not for reshapes
// (no factors). The partitioner's dimension-mapping handlers read it too: with `from` the
// result side and `to` an operand, it is the map hlo::OperandShardingFromResult takes.
//   broadcast(f32[4] x), dimensions={1} to f32[8,4]: result -> operand {1}
//   transpose(f32[4,8] x), dimensions={1,0}:        result -> operand {1, 0}
std::vector<int64_t> FactorDimMap(const FactorRule& rule, int64_t from, int64_t to,
                                  int64_t to_rank);

using hlo::DataTiles;  // hlo/sharding/shard_geometry.h

}  // namespace spmd

#endif  // SPMD_PROPAGATION_FACTOR_PROJECTION_H_

// Shardy's attributes as JAX's HLO export carries them (`xla.sdy.*` frontend attributes), read
// into the project's sharding model. The forms, as Shardy prints them:
//
//   meshes     `{mesh = #sdy.mesh<["data"=2, "model"=4]>, m1 = #sdy.mesh<[], device_ids=[3]>}`
//              (axis names and sizes, major to minor; `device_ids` lists the devices row-major
//              over the axes, default iota; no axes and one id: a single-device mesh)
//   sharding   `#sdy.sharding<@mesh, [{"data"}, {"model", ?}], replicated={"x"}>`: per tensor
//              dim the axes splitting it, major to minor, `"x":(1)2` a sub-axis, `?` an open
//              dim (propagation may split it further), `p0` after a dim its priority (read and
//              dropped: every annotation is held); `replicated=` / `unreduced=` axis lists. The
//              mesh is `@name` or written inline (`#sdy.mesh<...>` or `mesh<...>`).
//   per value  `#sdy.sharding_per_value<[<@mesh, [...]>, <@mesh, [...]>]>`: one per result.
//   manual     `#sdy<manual_axes{"data", "model"}>`: the axes a shard_map body is manual over.
//   rule       `#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=4}
//              reduction={j} need_replication={..} permutation={..} blocked_propagation={..},
//              custom>`: each operand and result dim as its factors, major to minor (`ij`: two
//              factors; `1`: none), the factors' sizes and kinds.
// Semantics of the conversion to HloSharding: named_mesh.h. Errors are InvalidArgument with a
// message naming what was expected and where in the attribute text.
#ifndef HLO_SDY_SDY_ATTRIBUTES_H_
#define HLO_SDY_SDY_ATTRIBUTES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/sharding/hlo_sharding.h"
#include "hlo/sharding/named_mesh.h"

namespace hlo::sdy {

struct Mesh {
  std::optional<NamedMesh> named;         // Set when the mesh has axes.
  std::optional<int64_t> maximal_device;  // No axes, `device_ids=[d]`: everything on device d.
  // The number of devices the mesh spans (1 for a mesh without axes).
  int64_t num_devices() const;
};
using MeshTable = std::map<std::string, Mesh, std::less<>>;

struct TensorSharding {
  std::shared_ptr<const Mesh> mesh;
  NamedShardingAxes axes;
  std::vector<int64_t> open_dims;  // Dims written with `?`.
};

// `{name = #sdy.mesh<...>, ...}` (the module's `xla.sdy.meshes`).
absl::StatusOr<MeshTable> ParseMeshes(std::string_view text);
// `#sdy.sharding<...>`.
absl::StatusOr<TensorSharding> ParseTensorSharding(std::string_view text, const MeshTable& meshes);
// `#sdy.sharding_per_value<[...]>`.
absl::StatusOr<std::vector<TensorSharding>> ParseShardingPerValue(std::string_view text,
                                                                  const MeshTable& meshes);
// `#sdy<manual_axes{...}>`: the axis names.
absl::StatusOr<std::vector<std::string>> ParseManualAxes(std::string_view text);

// The HloSharding equal to `sharding` (named_mesh.h), with `rank` tensor dims.
absl::StatusOr<HloSharding> ToHloSharding(const TensorSharding& sharding, int64_t rank);
// Inside a manual computation over `manual_axes`: the sharding of the local value, manual over
// those axes (each must be a whole mesh axis and, in a dim, come before the free axes) and split
// by the rest as `sharding` says.
absl::StatusOr<HloSharding> ToManualHloSharding(const TensorSharding& sharding, int64_t rank,
                                                absl::Span<const std::string> manual_axes);

struct ShardingRule {
  enum class FactorKind { kPassThrough, kReduction, kNeedReplication, kPermutation, kBlocked };
  using TensorFactors = std::vector<std::vector<int64_t>>;  // Per dim: factor ids, major first.
  std::vector<std::string> factor_names;
  std::vector<int64_t> factor_sizes;  // -1 where the rule gives no size.
  std::vector<FactorKind> factor_kinds;
  std::vector<TensorFactors> operands;
  std::vector<TensorFactors> results;
  bool is_custom = false;
};
// `#sdy.op_sharding_rule<...>`.
absl::StatusOr<ShardingRule> ParseShardingRule(std::string_view text);

// The rule in a custom-call's `xla.sdy.sharding_rule` attribute (Shardy exports, e.g. jax's
// custom_partitioning), checked against its operand and result ranks; without one, the rule
// Shardy builds in for a known target (X64Combine, X64SplitLow/High: pointwise); nullopt when
// it has neither or `instr` is not a custom-call (XLA copies the attribute onto
// get-tuple-elements). The import checks every rule, so later readers may treat an error as "no
// rule".
absl::StatusOr<std::optional<ShardingRule>> ShardingRuleOf(const HloInstruction& instr);

// Per factor, per tensor (operands, then results): the dim that is this factor alone, or -1
// (the tensor lacks the factor, or the factor shares a dim with others: such a dim is never
// split by one factor's tiling, so it is whole).
std::vector<std::vector<int64_t>> SingleFactorDims(const ShardingRule& rule);

// Whether a tiling of factor `f` may cross the op: a pass-through factor that is alone in
// every dim it appears in. The others (reduction, need_replication, permutation, blocked) stay
// whole: an opaque op's partial results or permuted blocks cannot be combined from outside.
bool FactorMaySplit(const ShardingRule& rule, int64_t f);

}  // namespace hlo::sdy

#endif  // HLO_SDY_SDY_ATTRIBUTES_H_

// Named-mesh shardings (XLA's NamedSharding, the "V3" form from Shardy), converted to the
// tile-assignment HloSharding that the rest of the project uses.
//
// A mesh names its axes and their sizes, `mesh['x'=2,'y'=4]`, and orders its 8 devices: by
// default row-major over the axes (the device at x=i, y=j is 4*i+j), or as `device_ids` lists
// them. A sharding names, for each tensor dimension, the axes that split it, major to minor
// (`[{'y'}, {'x'}]`); axes may also be listed as unreduced or manual. Every axis (or piece of
// one) that no dimension uses and that is neither unreduced nor manual replicates.
//
// A sub-axis `'x':(p)s` is the piece of size `s` of axis x that comes after the first `p`: split
// x's devices major to minor into pieces, `p` is the product of the sizes of the pieces more
// major than this one. With x=8, `'x':(1)2` is the major half (x in 0..3 vs 4..7), `'x':(4)2`
// the minor bit (x even vs odd), `'x':(2)2` the bit between them.
//
// Conversion: split each axis at every sub-axis boundary used, view the mesh's device array over
// those pieces, transpose the pieces into the order [dim 0's, dim 1's, ..., manual, unreduced,
// replicated] and reshape to one dim per tensor dim plus one per subgroup kind:
//   mesh['x'=2,'y'=2] [{'x','y'}, {}]  =>  {devices=[4,1]<=[4]}
//   mesh['x'=2,'y'=2] [{'y'}, {}]      =>  {devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}
// HloSharding::Subgroup then canonicalizes as usual. The named form itself is not kept: such a
// sharding prints in the tile-assignment form.
#ifndef HLO_SHARDING_NAMED_MESH_H_
#define HLO_SHARDING_NAMED_MESH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/sharding/hlo_sharding.h"
#include "hlo/sharding/tile_assignment.h"

namespace hlo {

struct MeshAxis {
  std::string name;
  int64_t size = 1;
};

// The axes of a mesh and the device at each mesh position.
class NamedMesh {
 public:
  // A mesh with `axes`, its devices row-major over them (`devices` is nullopt), or `devices`,
  // an array whose dims are the axis sizes. Fails when there is no axis, a name repeats, a size
  // is below 1, or `devices` has other dims.
  static absl::StatusOr<NamedMesh> Create(std::vector<MeshAxis> axes,
                                          std::optional<TileAssignment> devices);

  const std::vector<MeshAxis>& axes() const { return axes_; }
  // The device array; dim i is axis i.
  const TileAssignment& devices() const { return devices_; }
  // The index of the axis called `name`.
  std::optional<int64_t> FindAxis(std::string_view name) const;

 private:
  std::vector<MeshAxis> axes_;
  TileAssignment devices_;
};

// A whole mesh axis, or the sub-axis `'x':(pre_size)size` of it.
struct MeshAxisRef {
  struct SubAxis {
    int64_t pre_size = 1;
    int64_t size = 1;
  };
  int64_t axis = 0;
  std::optional<SubAxis> sub_axis;
};

// `'x'` or `'x':(2)2`. REQUIRES: ref.axis is an axis of `mesh`.
std::string MeshAxisRefName(const NamedMesh& mesh, const MeshAxisRef& ref);

// Checks that `ref` names an axis of `mesh` and, for a sub-axis, that pre_size >= 1, size > 1,
// size is less than the axis size and pre_size * size divides it.
absl::Status ValidateMeshAxisRef(const NamedMesh& mesh, const MeshAxisRef& ref);

// Checks that two valid refs can be used in one sharding: on different axes, or disjoint pieces
// of one axis that nest (the larger pre-size is a multiple of the smaller one's end).
absl::Status CheckMeshAxisRefsDisjoint(const NamedMesh& mesh, const MeshAxisRef& a,
                                       const MeshAxisRef& b);

// The axes of a named sharding. `replicated` may list axes explicitly; those that no other list
// uses replicate anyway. Order within unreduced, manual and replicated does not matter.
struct NamedShardingAxes {
  std::vector<std::vector<MeshAxisRef>> dims;  // One list per tensor dim, major to minor.
  std::vector<MeshAxisRef> replicated;
  std::vector<MeshAxisRef> unreduced;
  std::vector<MeshAxisRef> manual;
  ReductionOp unreduced_op = ReductionOp::kSum;  // `unreduced=max{...}`: how they combine.
};

// The tile-assignment sharding equal to `axes` on `mesh` (see the file comment). Fails when a
// ref is invalid or two refs overlap.
absl::StatusOr<HloSharding> NamedShardingToHloSharding(const NamedMesh& mesh,
                                                       const NamedShardingAxes& axes,
                                                       HloSharding::Metadata metadata = {});

// The replica groups of `replica_groups=mesh[...] {axes}` (XLA's MeshAxesReplicaGroupList): the
// devices that differ only in `axes` form one group, ordered by `axes` major to minor as listed;
// groups are ordered by the remaining axes (pieces) in mesh order. An empty `axes` gives one
// group per device. Fails when a ref is invalid or two refs overlap.
//   mesh['x'=2,'y'=2] {'y'} => {0,1},{2,3};   {'x'} => {0,2},{1,3};   {'y','x'} => {0,2,1,3}
absl::StatusOr<std::vector<std::vector<int64_t>>> MeshAxesReplicaGroups(
    const NamedMesh& mesh, absl::Span<const MeshAxisRef> axes);

// Parses `mesh[...] (, device_ids=(...))? {axes}` at the start of `text` (leading whitespace
// allowed; grammar and errors as for named shardings in HloSharding::Parse) and returns
// MeshAxesReplicaGroups of it; sets `*consumed` to the offset just past the closing '}'.
// Implemented beside the sharding parser (hlo_sharding_parser.cc).
absl::StatusOr<std::vector<std::vector<int64_t>>> ParseMeshAxesReplicaGroups(std::string_view text,
                                                                             size_t* consumed);

// Parses the axes of a named sharding on `mesh` at the start of `text`: `[dims]` (each dim
// `{ref,*}` with an optional trailing `?`) and then `, replicated=`/`unreduced=`/`manual=` lists
// (Shardy's `#sdy.sharding` body after its mesh). Names may be 'quoted' or "strings". Sets
// `*consumed` past the last token. Errors as for HloSharding::Parse (`offset N: ...`).
absl::StatusOr<NamedShardingAxes> ParseNamedShardingAxes(const NamedMesh& mesh,
                                                         std::string_view text, size_t* consumed);

}  // namespace hlo

#endif  // HLO_SHARDING_NAMED_MESH_H_

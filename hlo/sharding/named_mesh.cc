// Named-mesh sharding to tile assignment. Each axis of size N is cut at 1, N and at both ends
// (pre_size and pre_size * size) of every sub-axis used; consecutive cuts c_j < c_{j+1} bound
// a piece of size c_{j+1} / c_j, pieces ordered major to minor. Refs are pairwise disjoint and
// nested, so the cuts of an axis form a divisibility chain and every ref covers a run of whole
// pieces. Reshaping the mesh's device array to the piece sizes (all axes, in order) gives one
// array dim per piece; the transpose puts them in output order.
//
//   mesh['x'=8] [{'x':(1)2, 'x':(4)2}, {'x':(2)2}]
//     cuts of x: 1, 2, 4, 8 -> pieces p0 (size 2, the major bit), p1, p2 (the minor bit)
//     dim 0 = [p0, p2], dim 1 = [p1]  ->  [8]<=[8] viewed as [2,2,2], transposed (0,2,1),
//     reshaped [4,2]                  =>  {devices=[4,2]<=[2,2,2]T(0,2,1)}
#include "hlo/sharding/named_mesh.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

int64_t RefBegin(const MeshAxisRef& ref) {
  return ref.sub_axis.has_value() ? ref.sub_axis->pre_size : 1;
}

// One past the ref's last piece, as a pre-size.
int64_t RefEnd(const NamedMesh& mesh, const MeshAxisRef& ref) {
  return ref.sub_axis.has_value() ? ref.sub_axis->pre_size * ref.sub_axis->size
                                  : mesh.axes()[ref.axis].size;
}

// The pieces every axis is cut into, numbered across the mesh: axis a's pieces are
// first_piece[a] .. first_piece[a] + cuts[a].size() - 2.
struct Pieces {
  std::vector<std::vector<int64_t>> cuts;  // Per axis, ascending, starting at 1, ending at N.
  std::vector<int64_t> first_piece;
  std::vector<int64_t> sizes;  // Per piece.

  // The piece whose pre-size is `cut` on `axis`. REQUIRES: `cut` is one of that axis's cuts.
  int64_t PieceAt(int64_t axis, int64_t cut) const {
    const std::vector<int64_t>& c = cuts[axis];
    return first_piece[axis] + (std::lower_bound(c.begin(), c.end(), cut) - c.begin());
  }
};

Pieces CutIntoPieces(const NamedMesh& mesh, const std::vector<const MeshAxisRef*>& refs) {
  Pieces pieces;
  const int64_t num_axes = static_cast<int64_t>(mesh.axes().size());
  pieces.cuts.resize(num_axes);
  for (int64_t a = 0; a < num_axes; ++a) pieces.cuts[a] = {1, mesh.axes()[a].size};
  for (const MeshAxisRef* ref : refs) {
    pieces.cuts[ref->axis].push_back(RefBegin(*ref));
    pieces.cuts[ref->axis].push_back(RefEnd(mesh, *ref));
  }
  for (int64_t a = 0; a < num_axes; ++a) {
    std::vector<int64_t>& c = pieces.cuts[a];
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    pieces.first_piece.push_back(static_cast<int64_t>(pieces.sizes.size()));
    for (size_t j = 0; j + 1 < c.size(); ++j) pieces.sizes.push_back(c[j + 1] / c[j]);
  }
  return pieces;
}

// Validates every ref and checks them pairwise for overlap.
absl::Status CheckRefs(const NamedMesh& mesh, const std::vector<const MeshAxisRef*>& refs) {
  for (size_t i = 0; i < refs.size(); ++i) {
    RETURN_IF_ERROR(ValidateMeshAxisRef(mesh, *refs[i]));
    for (size_t j = 0; j < i; ++j) {
      RETURN_IF_ERROR(CheckMeshAxisRefsDisjoint(mesh, *refs[j], *refs[i]));
    }
  }
  return absl::OkStatus();
}

// Appends the pieces `ref` covers, major to minor, to `out`; returns their total size.
int64_t AppendPieces(const NamedMesh& mesh, const Pieces& pieces, const MeshAxisRef& ref,
                     std::vector<int64_t>* out) {
  int64_t size = 1;
  const int64_t end = pieces.PieceAt(ref.axis, RefEnd(mesh, ref));
  for (int64_t p = pieces.PieceAt(ref.axis, RefBegin(ref)); p < end; ++p) {
    out->push_back(p);
    size *= pieces.sizes[p];
  }
  return size;
}

// The mesh's devices viewed over `pieces` and transposed by `perm` (a permutation of the pieces).
absl::StatusOr<TileAssignment> PermutePieces(const NamedMesh& mesh, const Pieces& pieces,
                                             std::vector<int64_t> perm) {
  std::vector<int64_t> piece_sizes = pieces.sizes;
  if (piece_sizes.empty()) {  // A mesh of size-1 axes: one device.
    piece_sizes.push_back(1);
    perm.push_back(0);
  }
  ASSIGN_OR_RETURN(TileAssignment ta, mesh.devices().Reshape(piece_sizes));
  return ta.Transpose(perm);
}

}  // namespace

absl::StatusOr<NamedMesh> NamedMesh::Create(std::vector<MeshAxis> axes,
                                            std::optional<TileAssignment> devices) {
  if (axes.empty()) return absl::InvalidArgumentError("a mesh needs at least one axis");
  absl::flat_hash_set<std::string> names;
  std::vector<int64_t> sizes;
  for (const MeshAxis& axis : axes) {
    if (!names.insert(axis.name).second) {
      return absl::InvalidArgumentError(StrCat("mesh axis '", axis.name, "' appears twice"));
    }
    if (axis.size < 1) {
      return absl::InvalidArgumentError(
          StrCat("mesh axis '", axis.name, "' has size ", axis.size, "; sizes are at least 1"));
    }
    sizes.push_back(axis.size);
  }
  NamedMesh mesh;
  if (devices.has_value()) {
    if (!std::equal(sizes.begin(), sizes.end(), devices->dims().begin(), devices->dims().end())) {
      return absl::InvalidArgumentError(StrCat("mesh device array ", devices->ToString(),
                                               " does not have the mesh axis sizes as dims"));
    }
    mesh.devices_ = *std::move(devices);
  } else {
    ASSIGN_OR_RETURN(mesh.devices_, TileAssignment::Iota(sizes));
  }
  mesh.axes_ = std::move(axes);
  return mesh;
}

std::optional<int64_t> NamedMesh::FindAxis(std::string_view name) const {
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].name == name) return static_cast<int64_t>(i);
  }
  return std::nullopt;
}

std::string MeshAxisRefName(const NamedMesh& mesh, const MeshAxisRef& ref) {
  std::string name = StrCat("'", mesh.axes()[ref.axis].name, "'");
  if (ref.sub_axis.has_value()) {
    StrAppend(&name, ":(", ref.sub_axis->pre_size, ")", ref.sub_axis->size);
  }
  return name;
}

absl::Status ValidateMeshAxisRef(const NamedMesh& mesh, const MeshAxisRef& ref) {
  if (ref.axis < 0 || ref.axis >= static_cast<int64_t>(mesh.axes().size())) {
    return absl::InvalidArgumentError(
        StrCat("mesh axis index ", ref.axis, " is out of range [0, ", mesh.axes().size(), ")"));
  }
  if (!ref.sub_axis.has_value()) return absl::OkStatus();
  const int64_t axis_size = mesh.axes()[ref.axis].size;
  const int64_t pre = ref.sub_axis->pre_size;
  const int64_t size = ref.sub_axis->size;
  const std::string name = MeshAxisRefName(mesh, ref);
  if (pre < 1) {
    return absl::InvalidArgumentError(StrCat("sub-axis ", name, ": pre-size must be at least 1"));
  }
  if (size < 2) {
    return absl::InvalidArgumentError(StrCat("sub-axis ", name, ": size must be at least 2"));
  }
  if (size >= axis_size) {
    return absl::InvalidArgumentError(StrCat("sub-axis ", name,
                                             ": size must be less than the axis size ", axis_size,
                                             " (write the whole axis without ':(...)')"));
  }
  if (axis_size % size != 0 || axis_size / size % pre != 0) {
    return absl::InvalidArgumentError(StrCat("sub-axis ", name, ": pre-size times size (", pre, "*",
                                             size, ") does not divide the axis size ", axis_size));
  }
  return absl::OkStatus();
}

absl::Status CheckMeshAxisRefsDisjoint(const NamedMesh& mesh, const MeshAxisRef& a,
                                       const MeshAxisRef& b) {
  if (a.axis != b.axis) return absl::OkStatus();
  if (!a.sub_axis.has_value() || !b.sub_axis.has_value()) {
    return absl::InvalidArgumentError(StrCat("mesh axis '", mesh.axes()[a.axis].name,
                                             "' is used twice (", MeshAxisRefName(mesh, a), " and ",
                                             MeshAxisRefName(mesh, b), ")"));
  }
  const MeshAxisRef& lo = RefBegin(a) <= RefBegin(b) ? a : b;
  const MeshAxisRef& hi = &lo == &a ? b : a;
  if (RefEnd(mesh, lo) > RefBegin(hi)) {
    return absl::InvalidArgumentError(StrCat("sub-axes ", MeshAxisRefName(mesh, a), " and ",
                                             MeshAxisRefName(mesh, b), " overlap"));
  }
  if (RefBegin(hi) % RefEnd(mesh, lo) != 0) {
    return absl::InvalidArgumentError(
        StrCat("sub-axes ", MeshAxisRefName(mesh, a), " and ", MeshAxisRefName(mesh, b),
               " do not nest: ", RefBegin(hi), " is not a multiple of ", RefEnd(mesh, lo)));
  }
  return absl::OkStatus();
}

absl::StatusOr<HloSharding> NamedShardingToHloSharding(const NamedMesh& mesh,
                                                       const NamedShardingAxes& axes,
                                                       HloSharding::Metadata metadata) {
  std::vector<const MeshAxisRef*> refs;
  for (const std::vector<MeshAxisRef>& dim : axes.dims) {
    for (const MeshAxisRef& ref : dim) refs.push_back(&ref);
  }
  for (const std::vector<MeshAxisRef>* list : {&axes.replicated, &axes.unreduced, &axes.manual}) {
    for (const MeshAxisRef& ref : *list) refs.push_back(&ref);
  }
  RETURN_IF_ERROR(CheckRefs(mesh, refs));
  const Pieces pieces = CutIntoPieces(mesh, refs);
  std::vector<int64_t> perm;
  std::vector<int64_t> out_dims;
  for (const std::vector<MeshAxisRef>& dim : axes.dims) {
    int64_t size = 1;
    for (const MeshAxisRef& ref : dim) size *= AppendPieces(mesh, pieces, ref, &perm);
    out_dims.push_back(size);
  }
  // Manual and unreduced pieces in mesh order, then every piece not placed yet (replicated,
  // explicitly or not), in mesh order.
  for (const std::vector<MeshAxisRef>* group : {&axes.manual, &axes.unreduced}) {
    std::vector<int64_t> group_pieces;
    int64_t size = 1;
    for (const MeshAxisRef& ref : *group) size *= AppendPieces(mesh, pieces, ref, &group_pieces);
    std::sort(group_pieces.begin(), group_pieces.end());
    perm.insert(perm.end(), group_pieces.begin(), group_pieces.end());
    out_dims.push_back(size);
  }
  std::vector<bool> placed(pieces.sizes.size(), false);
  for (int64_t p : perm) placed[p] = true;
  int64_t replicated = 1;
  for (size_t p = 0; p < placed.size(); ++p) {
    if (placed[p]) continue;
    perm.push_back(static_cast<int64_t>(p));
    replicated *= pieces.sizes[p];
  }
  out_dims.push_back(replicated);
  ASSIGN_OR_RETURN(TileAssignment ta, PermutePieces(mesh, pieces, std::move(perm)));
  ASSIGN_OR_RETURN(ta, ta.Reshape(out_dims));
  ASSIGN_OR_RETURN(HloSharding sharding,
                   HloSharding::Subgroup(std::move(ta),
                                         {OpShardingType::kManual, OpShardingType::kUnreduced,
                                          OpShardingType::kReplicated},
                                         std::move(metadata)));
  // Unreduced axes of size 1 leave no unreduced devices, and nothing to combine.
  if (axes.unreduced_op == ReductionOp::kSum || !sharding.WithReductionOp(axes.unreduced_op).ok()) {
    return sharding;
  }
  return sharding.WithReductionOp(axes.unreduced_op);
}

absl::StatusOr<std::vector<std::vector<int64_t>>> MeshAxesReplicaGroups(
    const NamedMesh& mesh, absl::Span<const MeshAxisRef> axes) {
  std::vector<const MeshAxisRef*> refs;
  for (const MeshAxisRef& ref : axes) refs.push_back(&ref);
  RETURN_IF_ERROR(CheckRefs(mesh, refs));
  const Pieces pieces = CutIntoPieces(mesh, refs);
  std::vector<int64_t> grouped;
  int64_t group_size = 1;
  for (const MeshAxisRef& ref : axes) group_size *= AppendPieces(mesh, pieces, ref, &grouped);
  std::vector<bool> in_group(pieces.sizes.size(), false);
  for (int64_t p : grouped) in_group[p] = true;
  std::vector<int64_t> perm;
  for (size_t p = 0; p < in_group.size(); ++p) {
    if (!in_group[p]) perm.push_back(static_cast<int64_t>(p));
  }
  perm.insert(perm.end(), grouped.begin(), grouped.end());
  ASSIGN_OR_RETURN(TileAssignment ta, PermutePieces(mesh, pieces, std::move(perm)));
  const std::vector<int64_t> devices = ta.Devices();
  std::vector<std::vector<int64_t>> groups;
  for (size_t i = 0; i < devices.size(); i += group_size) {
    groups.emplace_back(devices.begin() + i, devices.begin() + i + group_size);
  }
  return groups;
}

}  // namespace hlo

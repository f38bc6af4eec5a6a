#include "spmd/dot/dot_space.h"

#include <algorithm>
#include <numeric>

#include "hlo/sharding/device_groups.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace spmd {
namespace {

using hlo::HloSharding;
using hlo::TileAssignment;

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

absl::Status CheckDims(const std::vector<int64_t>& dims, int64_t rank, std::string_view what) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return absl::InvalidArgumentError(hlo::StrCat("dot ", what, " dimension ", d,
                                                    " out of range for rank ", rank));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DotSpace> DotSpace::Make(const hlo::Shape& lhs, const hlo::Shape& rhs,
                                        const hlo::DotDimensionNumbers& dn) {
  RETURN_IF_ERROR(CheckDims(dn.lhs_batch_dimensions, lhs.rank(), "lhs batch"));
  RETURN_IF_ERROR(CheckDims(dn.rhs_batch_dimensions, rhs.rank(), "rhs batch"));
  RETURN_IF_ERROR(CheckDims(dn.lhs_contracting_dimensions, lhs.rank(), "lhs contracting"));
  RETURN_IF_ERROR(CheckDims(dn.rhs_contracting_dimensions, rhs.rank(), "rhs contracting"));
  if (dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size() ||
      dn.lhs_contracting_dimensions.size() != dn.rhs_contracting_dimensions.size()) {
    return absl::InvalidArgumentError("dot batch/contracting dimension counts differ");
  }
  DotSpace s;
  s.lhs_to_space_.assign(lhs.rank(), -1);
  s.rhs_to_space_.assign(rhs.rank(), -1);
  auto add = [&](DotDimKind kind, int64_t l, int64_t r, int64_t size) {
    const int64_t i = static_cast<int64_t>(s.dims_.size());
    s.dims_.push_back({kind, l, r, -1, size});
    if (l >= 0) s.lhs_to_space_[l] = i;
    if (r >= 0) s.rhs_to_space_[r] = i;
  };
  for (size_t i = 0; i < dn.lhs_batch_dimensions.size(); ++i) {
    add(DotDimKind::kBatch, dn.lhs_batch_dimensions[i], dn.rhs_batch_dimensions[i],
        lhs.dimensions()[dn.lhs_batch_dimensions[i]]);
  }
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (!Contains(dn.lhs_batch_dimensions, d) && !Contains(dn.lhs_contracting_dimensions, d)) {
      add(DotDimKind::kLhsFree, d, -1, lhs.dimensions()[d]);
    }
  }
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (!Contains(dn.rhs_batch_dimensions, d) && !Contains(dn.rhs_contracting_dimensions, d)) {
      add(DotDimKind::kRhsFree, -1, d, rhs.dimensions()[d]);
    }
  }
  for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i) {
    add(DotDimKind::kContracting, dn.lhs_contracting_dimensions[i],
        dn.rhs_contracting_dimensions[i], lhs.dimensions()[dn.lhs_contracting_dimensions[i]]);
  }
  for (int64_t i = 0; i < s.rank(); ++i) {
    if (s.dims_[i].kind != DotDimKind::kContracting) {
      s.dims_[i].result = static_cast<int64_t>(s.result_to_space_.size());
      s.result_to_space_.push_back(i);
    }
  }
  if (Contains(s.lhs_to_space_, -1) || Contains(s.rhs_to_space_, -1)) {
    return absl::InvalidArgumentError("dot dimension numbers repeat a dimension");
  }
  return s;
}

std::vector<int64_t> DotSpace::ContractingDims() const {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < rank(); ++i) {
    if (dims_[i].kind == DotDimKind::kContracting) out.push_back(i);
  }
  return out;
}

std::string DotSpace::DimName(int64_t i) const {
  static constexpr char kLetters[] = {'b', 'm', 'n', 'k'};
  int64_t ordinal = 0;
  for (int64_t j = 0; j < i; ++j) ordinal += dims_[j].kind == dims_[i].kind;
  return hlo::StrCat(std::string(1, kLetters[static_cast<int>(dims_[i].kind)]), ordinal);
}

std::vector<int64_t> DotSpace::TileCounts(const HloSharding& space) const {
  std::vector<int64_t> counts(rank() + 1, 1);
  if (!space.IsTiled()) {
    counts.back() = 0;  // Unknown until the device count is known; callers use FullAssignment.
    return counts;
  }
  const TileAssignment& ta = space.tile_assignment();
  for (int64_t i = 0; i < rank(); ++i) counts[i] = ta.dim(i);
  if (space.replicate_on_last_tile_dim()) counts.back() = ta.dim(rank());
  return counts;
}

absl::StatusOr<TileAssignment> DotSpace::FullAssignment(const HloSharding& space,
                                                        int64_t num_devices) const {
  std::vector<int64_t> dims(rank() + 1, 1);
  if (space.IsReplicated()) {
    dims.back() = num_devices;
    return TileAssignment::Iota(dims);
  }
  const bool only_replication =
      space.subgroup_types().empty() || space.replicate_on_last_tile_dim();
  if (!space.IsTiled() || !only_replication) {
    return absl::UnimplementedError(
        hlo::StrCat("dot strategies need tiled shardings, got ", space.ToString()));
  }
  const TileAssignment& ta = space.tile_assignment();
  for (int64_t i = 0; i < rank(); ++i) dims[i] = ta.dim(i);
  if (space.replicate_on_last_tile_dim()) dims.back() = ta.dim(rank());
  return ta.Reshape(dims);
}

absl::StatusOr<HloSharding> DotSpace::Lift(const HloSharding& sharding,
                                           const std::vector<int64_t>& to_space) const {
  if (sharding.IsReplicated()) return HloSharding::Replicate();
  const bool partial = sharding.replicate_on_last_tile_dim();
  if (!sharding.IsTiled() || (!sharding.subgroup_types().empty() && !partial)) {
    return absl::UnimplementedError(
        hlo::StrCat("cannot lift sharding ", sharding.ToString(), " into a dot's space"));
  }
  const int64_t r = static_cast<int64_t>(to_space.size());
  const TileAssignment& ta = sharding.tile_assignment();
  // Operand dims in space order, then the replication dim.
  std::vector<int64_t> perm(r);
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(),
            [&](int64_t a, int64_t b) { return to_space[a] < to_space[b]; });
  if (partial) perm.push_back(r);
  ASSIGN_OR_RETURN(TileAssignment transposed, ta.Transpose(perm));
  std::vector<int64_t> dims(rank() + 1, 1);
  for (int64_t d = 0; d < r; ++d) dims[to_space[d]] = ta.dim(d);
  dims.back() = partial ? ta.dim(r) : 1;
  ASSIGN_OR_RETURN(TileAssignment lifted, transposed.Reshape(dims));
  return HloSharding::PartialTile(std::move(lifted));
}

absl::StatusOr<HloSharding> DotSpace::Project(const HloSharding& space,
                                              const std::vector<int64_t>& to_space) const {
  if (space.IsReplicated()) return HloSharding::Replicate();
  ASSIGN_OR_RETURN(TileAssignment full, FullAssignment(space, space.tile_assignment().num_devices()));
  std::vector<int64_t> perm = to_space;
  std::vector<int64_t> dims;
  for (int64_t s : to_space) dims.push_back(full.dim(s));
  int64_t rest = 1;
  for (int64_t s = 0; s <= rank(); ++s) {
    if (!Contains(to_space, s)) {
      perm.push_back(s);
      rest *= full.dim(s);
    }
  }
  dims.push_back(rest);
  ASSIGN_OR_RETURN(TileAssignment transposed, full.Transpose(perm));
  ASSIGN_OR_RETURN(TileAssignment projected, transposed.Reshape(dims));
  return HloSharding::PartialTile(std::move(projected));
}

absl::StatusOr<std::vector<std::vector<int64_t>>> DotSpace::PendingSumGroups(
    const HloSharding& space) const {
  if (!space.IsTiled()) return std::vector<std::vector<int64_t>>{};
  ASSIGN_OR_RETURN(TileAssignment full, FullAssignment(space, space.tile_assignment().num_devices()));
  std::vector<int64_t> split;
  for (int64_t k : ContractingDims()) {
    if (full.dim(k) > 1) split.push_back(k);
  }
  if (split.empty()) return std::vector<std::vector<int64_t>>{};
  ASSIGN_OR_RETURN(TileAssignment groups, hlo::DeviceGroupsAlongDims(full, split));
  return hlo::GroupLists(groups);
}

std::string DotSpace::Describe(const HloSharding& space) const {
  if (!space.IsTiled()) return "replicated";
  std::string out;
  const std::vector<int64_t> counts = TileCounts(space);
  for (int64_t i = 0; i < rank(); ++i) {
    if (counts[i] > 1) hlo::StrAppend(&out, out.empty() ? "" : " ", DimName(i), ":", counts[i]);
  }
  if (counts.back() > 1) hlo::StrAppend(&out, out.empty() ? "" : " ", "repl:", counts.back());
  return out.empty() ? "replicated" : out;
}

}  // namespace spmd

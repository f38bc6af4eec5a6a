// MeshView: recover an iota form (TileAssignment::ToIota), refine its reshape dims against the
// tile dims (RefineIota), and number the refined factors reshape-dim-major; those are the mesh
// axes, with strides the row-major strides of the refined reshape dims. A device at mesh
// coordinates is found through the tile assignment itself: each tile dim's index is the
// mixed-radix number formed by the coordinates of its axes.
#include "hlo/sharding/mesh_view.h"

#include <algorithm>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hlo {

MeshView MeshView::Of(const TileAssignment& ta) {
  MeshView view(ta);
  view.tile_dim_axes_.resize(ta.rank());
  std::optional<TileAssignment> iota = ta.ToIota();
  std::optional<std::vector<IotaFactor>> factors;
  if (iota.has_value()) factors = RefineIota(*iota);
  if (!factors.has_value()) {
    for (int64_t t = 0; t < ta.rank(); ++t) {
      if (ta.dim(t) == 1) continue;
      view.tile_dim_axes_[t].push_back(static_cast<int64_t>(view.axes_.size()));
      view.axes_.push_back({ta.dim(t), 0, t});
    }
    return view;
  }
  view.strided_ = true;
  // Factor f becomes axis axis_of[f]; axes are ordered reshape-dim-major.
  std::vector<int64_t> axis_of(factors->size());
  const int64_t num_reshape = static_cast<int64_t>(iota->iota_reshape_dims().size());
  for (int64_t r = 0; r < num_reshape; ++r) {
    for (size_t f = 0; f < factors->size(); ++f) {
      if ((*factors)[f].reshape_dim != r) continue;
      axis_of[f] = static_cast<int64_t>(view.axes_.size());
      view.axes_.push_back({(*factors)[f].size, 0, (*factors)[f].tile_dim});
    }
  }
  int64_t stride = 1;
  for (auto it = view.axes_.rbegin(); it != view.axes_.rend(); ++it) {
    it->stride = stride;
    stride *= it->size;
  }
  for (size_t f = 0; f < factors->size(); ++f) {
    view.tile_dim_axes_[(*factors)[f].tile_dim].push_back(axis_of[f]);
  }
  return view;
}

int64_t MeshView::Device(absl::Span<const int64_t> coords) const {
  std::vector<int64_t> tile_index(ta_.rank(), 0);
  for (int64_t t = 0; t < ta_.rank(); ++t) {
    for (int64_t a : tile_dim_axes_[t]) tile_index[t] = tile_index[t] * axes_[a].size + coords[a];
  }
  return ta_.device(tile_index);
}

absl::StatusOr<std::vector<std::vector<int64_t>>> MeshView::DeviceGroupsAlong(
    absl::Span<const int64_t> axes) const {
  const int64_t num_axes = static_cast<int64_t>(axes_.size());
  std::vector<bool> in_group(num_axes, false);
  for (int64_t a : axes) {
    if (a < 0 || a >= num_axes || in_group[a]) {
      return absl::InvalidArgumentError(absl::StrCat("axes (", absl::StrJoin(axes, ","),
                                                     ") must be distinct axes of ", ToString()));
    }
    in_group[a] = true;
  }
  // Enumerate the other axes (outer loop) and the group axes (inner loop), both row-major.
  std::vector<int64_t> order;
  for (int64_t a = 0; a < num_axes; ++a) {
    if (!in_group[a]) order.push_back(a);
  }
  order.insert(order.end(), axes.begin(), axes.end());
  int64_t group_size = 1;
  for (int64_t a : axes) group_size *= axes_[a].size;
  std::vector<std::vector<int64_t>> groups(ta_.num_devices() / group_size);
  std::vector<int64_t> coords(num_axes, 0);
  for (int64_t n = 0; n < ta_.num_devices(); ++n) {
    groups[n / group_size].push_back(Device(coords));
    for (int64_t k = static_cast<int64_t>(order.size()) - 1; k >= 0; --k) {
      if (++coords[order[k]] < axes_[order[k]].size) break;
      coords[order[k]] = 0;
    }
  }
  return groups;
}

std::string MeshView::ToString() const {
  std::string out = "mesh{";
  for (size_t a = 0; a < axes_.size(); ++a) {
    if (a > 0) out.push_back(' ');
    absl::StrAppend(&out, "a", a, "=", axes_[a].size);
    if (strided_) absl::StrAppend(&out, "@", axes_[a].stride);
  }
  out.append("; tile_dims=[");
  for (size_t t = 0; t < tile_dim_axes_.size(); ++t) {
    if (t > 0) out.push_back(',');
    out.push_back('{');
    for (size_t i = 0; i < tile_dim_axes_[t].size(); ++i) {
      if (i > 0) out.push_back(',');
      absl::StrAppend(&out, "a", tile_dim_axes_[t][i]);
    }
    out.push_back('}');
  }
  out.append("]}");
  return out;
}

}  // namespace hlo

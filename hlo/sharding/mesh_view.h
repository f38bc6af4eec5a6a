// A device-mesh view of a tile assignment, for the reshard planner. Derived on demand from
// the TileAssignment; never stored beside it.
//
// When the devices form a strided mesh (the assignment has an iota form), the mesh axes are the
// iota's reshape dims, split where a tile dim boundary falls inside one; each axis has a size
// and a device stride, and each tile dim spans a run of axes. Example: [2,4]<=[4,2]T(1,0) has
// axes a0 (size 4, stride 2) and a1 (size 2, stride 1); tile dim 0 spans {a1}, tile dim 1 spans
// {a0}. Devices that differ only along a0 are {0,2,4,6} and {1,3,5,7}.
//
// Otherwise (an irregular explicit list) there is one axis per tile dim of size > 1, with no
// stride.
#ifndef HLO_SHARDING_MESH_VIEW_H_
#define HLO_SHARDING_MESH_VIEW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/sharding/tile_assignment.h"

namespace hlo {

class MeshView {
 public:
  struct Axis {
    int64_t size = 1;
    // Device id difference between neighbours along this axis; 0 when !is_strided().
    int64_t stride = 0;
    // The tile dim this axis lies in.
    int64_t tile_dim = 0;
  };

  // The mesh view of `ta`.
  static MeshView Of(const TileAssignment& ta);

  // Whether device ids are sum(coordinate * stride) over the axes (an iota form exists).
  bool is_strided() const { return strided_; }
  // Strided: the axes in decreasing stride order (device-id major to minor).
  // Irregular: one axis per tile dim of size > 1, in tile dim order.
  const std::vector<Axis>& axes() const { return axes_; }
  // The axes that tile dim `tile_dim` spans, major to minor; empty for a size-1 dim.
  const std::vector<int64_t>& AxesOfTileDim(int64_t tile_dim) const {
    return tile_dim_axes_[tile_dim];
  }
  // The device at mesh coordinates `coords` (one per axis).
  int64_t Device(absl::Span<const int64_t> coords) const;
  // Groups of devices that differ only along `axes`: members in row-major order over `axes` as
  // given, groups in row-major order over the other axes. Fails when `axes` repeats an axis or
  // names one out of range.
  absl::StatusOr<std::vector<std::vector<int64_t>>> DeviceGroupsAlong(
      absl::Span<const int64_t> axes) const;

  // E.g. `mesh{a0=4@2 a1=2@1; tile_dims=[{a1},{a0}]}` (`@stride`, omitted when irregular).
  std::string ToString() const;

 private:
  explicit MeshView(TileAssignment ta) : ta_(std::move(ta)) {}

  TileAssignment ta_;
  bool strided_ = false;
  std::vector<Axis> axes_;
  std::vector<std::vector<int64_t>> tile_dim_axes_;
};

}  // namespace hlo

#endif  // HLO_SHARDING_MESH_VIEW_H_

// The region lower bound of reshard_bound.h: per device, the elements of the needed region
// outside the held one, by intersecting the two boxes dim by dim.
#include "spmd/reshard/reshard_bound.h"

#include <algorithm>
#include <utility>

namespace spmd {

RegionBound::RegionBound(const TileState& fixed, bool fixed_is_needed,
                         std::vector<int64_t> shape_dims, int64_t element_bytes,
                         const LinkModel& link)
    : dims_(std::move(shape_dims)),
      element_bytes_(element_bytes),
      link_(link),
      fixed_is_needed_(fixed_is_needed) {
  Regions(fixed, fixed_begin_, fixed_end_);
}

void RegionBound::Regions(const TileState& state, std::vector<int64_t>& begin,
                          std::vector<int64_t>& end) const {
  const int64_t rank = state.rank();
  const int64_t r = state.replication();
  begin.resize(state.num_devices() * rank);
  end.resize(state.num_devices() * rank);
  idx_.assign(rank, 0);
  for (int64_t tile = 0; tile < state.num_tiles(); ++tile) {
    for (int64_t j = 0; j < r; ++j) {
      const int64_t device = state.devices[tile * r + j];
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t size = PaddedSize(dims_[d], state.dims[d]);
        begin[device * rank + d] = std::min(idx_[d] * size, dims_[d]);
        end[device * rank + d] = std::min(idx_[d] * size + size, dims_[d]);
      }
    }
    for (int64_t d = rank - 1; d >= 0; --d) {  // The next row-major tile index.
      if (++idx_[d] < state.dims[d]) break;
      idx_[d] = 0;
    }
  }
}

CostBound RegionBound::From(const TileState& state) const {
  Regions(state, begin_, end_);
  const std::vector<int64_t>& held_begin = fixed_is_needed_ ? begin_ : fixed_begin_;
  const std::vector<int64_t>& held_end = fixed_is_needed_ ? end_ : fixed_end_;
  const std::vector<int64_t>& needed_begin = fixed_is_needed_ ? fixed_begin_ : begin_;
  const std::vector<int64_t>& needed_end = fixed_is_needed_ ? fixed_end_ : end_;
  const int64_t rank = static_cast<int64_t>(dims_.size());
  int64_t most = 0;
  for (int64_t device = 0; device < state.num_devices(); ++device) {
    int64_t needed = 1;
    int64_t common = 1;
    for (int64_t d = device * rank; d < (device + 1) * rank; ++d) {
      needed *= needed_end[d] - needed_begin[d];
      common *= std::max<int64_t>(
          0, std::min(needed_end[d], held_end[d]) - std::max(needed_begin[d], held_begin[d]));
    }
    most = std::max(most, needed - common);
  }
  CostBound bound;
  if (most == 0) return bound;
  bound.bytes = most * element_bytes_;
  bound.time_us = TransferTimeUs(bound.bytes, link_);
  bound.steps = 1;
  return bound;
}

}  // namespace spmd

// The region bound of reshard_bound.h: per device, the elements of the needed region outside
// the held one, by intersecting the two boxes dim by dim, and the dims along which it reaches
// past it. (The grid bounds are in reshard_grid_bound.cc.)
#include "spmd/reshard/reshard_bound.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace spmd {

bool Cheaper(const CostBound& a, const CostBound& b) {
  const double scale = std::max({1.0, std::abs(a.time_us), std::abs(b.time_us)});
  if (std::abs(a.time_us - b.time_us) > 1e-9 * scale) return a.time_us < b.time_us;
  if (a.bytes != b.bytes) return a.bytes < b.bytes;
  return a.steps < b.steps;
}

CostBound Larger(const CostBound& a, const CostBound& b) { return Cheaper(a, b) ? b : a; }

CostBound Smaller(const CostBound& a, const CostBound& b) { return Cheaper(b, a) ? b : a; }

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
  sizes_.resize(rank);
  for (int64_t d = 0; d < rank; ++d) sizes_[d] = PaddedSize(dims_[d], state.dims[d]);
  for (int64_t tile = 0; tile < state.num_tiles(); ++tile) {
    for (int64_t j = 0; j < r; ++j) {
      const int64_t device = state.devices[tile * r + j];
      for (int64_t d = 0; d < rank; ++d) {
        begin[device * rank + d] = std::min(idx_[d] * sizes_[d], dims_[d]);
        end[device * rank + d] = std::min(idx_[d] * sizes_[d] + sizes_[d], dims_[d]);
      }
    }
    for (int64_t d = rank - 1; d >= 0; --d) {  // The next row-major tile index.
      if (++idx_[d] < state.dims[d]) break;
      idx_[d] = 0;
    }
  }
}

RegionBound::Bounds RegionBound::FromBoth(const TileState& state) const {
  // The state's region of each tile, in one walk, against each member device's fixed region.
  const int64_t rank = static_cast<int64_t>(dims_.size());
  const int64_t r = state.replication();
  idx_.assign(rank, 0);
  sizes_.resize(rank);
  begin_.resize(rank);
  end_.resize(rank);
  for (int64_t d = 0; d < rank; ++d) sizes_[d] = PaddedSize(dims_[d], state.dims[d]);
  int64_t most = 0;
  int64_t most_dims = 0;  // The most dims along which a device's needed region passes its held.
  for (int64_t tile = 0; tile < state.num_tiles(); ++tile) {
    for (int64_t d = 0; d < rank; ++d) {
      begin_[d] = std::min(idx_[d] * sizes_[d], dims_[d]);
      end_[d] = std::min(idx_[d] * sizes_[d] + sizes_[d], dims_[d]);
    }
    for (int64_t j = 0; j < r; ++j) {
      const int64_t* fixed_begin = &fixed_begin_[state.devices[tile * r + j] * rank];
      const int64_t* fixed_end = &fixed_end_[state.devices[tile * r + j] * rank];
      const int64_t* needed_begin = fixed_is_needed_ ? fixed_begin : begin_.data();
      const int64_t* needed_end = fixed_is_needed_ ? fixed_end : end_.data();
      const int64_t* held_begin = fixed_is_needed_ ? begin_.data() : fixed_begin;
      const int64_t* held_end = fixed_is_needed_ ? end_.data() : fixed_end;
      int64_t needed = 1;
      int64_t common = 1;
      int64_t past = 0;
      for (int64_t d = 0; d < rank; ++d) {
        needed *= needed_end[d] - needed_begin[d];
        common *= std::max<int64_t>(
            0, std::min(needed_end[d], held_end[d]) - std::max(needed_begin[d], held_begin[d]));
        past += needed_begin[d] < held_begin[d] || needed_end[d] > held_end[d];
      }
      if (needed == 0) continue;
      most = std::max(most, needed - common);
      most_dims = std::max(most_dims, past);
    }
    for (int64_t d = rank - 1; d >= 0; --d) {  // The next row-major tile index.
      if (++idx_[d] < state.dims[d]) break;
      idx_[d] = 0;
    }
  }
  Bounds bounds;
  if (most == 0) return bounds;
  const double transfer = TransferTimeUs(most * element_bytes_, link_);
  bounds.any = {transfer, most * element_bytes_, 1};
  bounds.permute_free = {transfer + (most_dims - 1) * link_.latency_us, most * element_bytes_,
                         most_dims};
  return bounds;
}

}  // namespace spmd

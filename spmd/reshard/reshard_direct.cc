// The direct all-to-all's applicability and piece order (reshard_direct.h).
#include "spmd/reshard/reshard_direct.h"

#include <algorithm>

namespace spmd {
namespace {

// The dims `state` splits (tile count above 1), ascending.
std::vector<int64_t> SplitDims(const TileState& state) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < state.rank(); ++d) {
    if (state.dims[d] > 1) dims.push_back(d);
  }
  return dims;
}

// Each device's row-major rank over its tile coordinates (`index`, TileIndexByDevice) along
// `order` (major first).
std::vector<int64_t> Ranks(const TileState& state, const std::vector<std::vector<int64_t>>& index,
                           absl::Span<const int64_t> order) {
  std::vector<int64_t> ranks(index.size(), 0);
  for (size_t device = 0; device < index.size(); ++device) {
    for (int64_t d : order) ranks[device] = ranks[device] * state.dims[d] + index[device][d];
  }
  return ranks;
}

}  // namespace

std::optional<DirectAllToAll> PlanDirectAllToAll(const TileState& from, const TileState& to,
                                                 absl::Span<const int64_t> shape_dims) {
  if (from.replication() != 1 || to.replication() != 1 || from == to ||
      from.num_devices() != to.num_devices()) {
    return std::nullopt;
  }
  for (int64_t d = 0; d < from.rank(); ++d) {
    if (from.dims[d] > 1 && to.dims[d] > 1) return std::nullopt;  // Split dims must be disjoint.
    if (shape_dims[d] % (from.dims[d] * to.dims[d]) != 0) return std::nullopt;
  }
  DirectAllToAll direct;
  direct.send_dims = SplitDims(to);
  std::vector<int64_t> recv = SplitDims(from);
  // Every pair of orders (the permutations of at most rank dims each): the first whose ranks
  // agree on every device.
  const std::vector<std::vector<int64_t>> from_index = from.TileIndexByDevice();
  const std::vector<std::vector<int64_t>> to_index = to.TileIndexByDevice();
  do {
    const std::vector<int64_t> send_ranks = Ranks(to, to_index, direct.send_dims);
    std::sort(recv.begin(), recv.end());
    do {
      if (Ranks(from, from_index, recv) == send_ranks) {
        direct.recv_dims = recv;
        direct.group.assign(send_ranks.size(), 0);
        for (size_t device = 0; device < send_ranks.size(); ++device) {
          direct.group[send_ranks[device]] = static_cast<int64_t>(device);
        }
        return direct;
      }
    } while (std::next_permutation(recv.begin(), recv.end()));
  } while (std::next_permutation(direct.send_dims.begin(), direct.send_dims.end()));
  return std::nullopt;
}

}  // namespace spmd

// The direct all-to-all's applicability and piece order (reshard_direct.h).
#include "spmd/reshard/reshard_direct.h"

#include <algorithm>
#include <map>

namespace spmd {
namespace {

// The dims whose `counts` exceed 1, ascending.
std::vector<int64_t> SplitDims(const std::vector<int64_t>& counts) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < counts.size(); ++d) {
    if (counts[d] > 1) dims.push_back(static_cast<int64_t>(d));
  }
  return dims;
}

// Each device's row-major rank over `coords` (per device, per dim) along `order` (major
// first), with `counts` coordinates per dim.
std::vector<int64_t> Ranks(const std::vector<int64_t>& counts,
                           const std::vector<std::vector<int64_t>>& coords,
                           absl::Span<const int64_t> order) {
  std::vector<int64_t> ranks(coords.size(), 0);
  for (size_t device = 0; device < coords.size(); ++device) {
    for (int64_t d : order) ranks[device] = ranks[device] * counts[d] + coords[device][d];
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
  DirectAllToAll direct;
  for (int64_t d = 0; d < from.rank(); ++d) {
    const int64_t f = from.dims[d], t = to.dims[d];
    if ((f % t != 0 && t % f != 0) || shape_dims[d] % std::max(f, t) != 0) return std::nullopt;
    direct.send_counts.push_back(t > f ? t / f : 1);
    direct.recv_counts.push_back(f > t ? f / t : 1);
  }
  // Per device: its coarser tile along every dim (which must agree in both shardings; the
  // group key) and its coordinates within it in each sharding.
  const std::vector<std::vector<int64_t>> from_index = from.TileIndexByDevice();
  const std::vector<std::vector<int64_t>> to_index = to.TileIndexByDevice();
  const size_t n = from_index.size();
  std::vector<std::vector<int64_t>> keys(n), send_coords(n), recv_coords(n);
  for (size_t device = 0; device < n; ++device) {
    for (int64_t d = 0; d < from.rank(); ++d) {
      const int64_t s = direct.send_counts[d], r = direct.recv_counts[d];
      const int64_t coarse = to_index[device][d] / s;
      if (from_index[device][d] / r != coarse) return std::nullopt;
      keys[device].push_back(coarse);
      send_coords[device].push_back(to_index[device][d] % s);
      recv_coords[device].push_back(from_index[device][d] % r);
    }
  }
  direct.send_dims = SplitDims(direct.send_counts);
  std::vector<int64_t> recv = SplitDims(direct.recv_counts);
  // Every pair of orders (the permutations of at most rank dims each): the first whose ranks
  // agree on every device.
  do {
    const std::vector<int64_t> send_ranks =
        Ranks(direct.send_counts, send_coords, direct.send_dims);
    std::sort(recv.begin(), recv.end());
    do {
      if (Ranks(direct.recv_counts, recv_coords, recv) != send_ranks) continue;
      direct.recv_dims = recv;
      int64_t size = 1;
      for (int64_t c : direct.send_counts) size *= c;
      std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
      for (size_t device = 0; device < n; ++device) {
        std::vector<int64_t>& group = groups[keys[device]];
        group.resize(size, -1);
        group[send_ranks[device]] = static_cast<int64_t>(device);
      }
      for (auto& [key, group] : groups) direct.groups.push_back(std::move(group));
      return direct;
    } while (std::next_permutation(recv.begin(), recv.end()));
  } while (std::next_permutation(direct.send_dims.begin(), direct.send_dims.end()));
  return std::nullopt;
}

}  // namespace spmd

// Test helpers: random shardings and brute-force element holders.
#include "hlo/sharding/sharding_test_util.h"

#include <algorithm>
#include <numeric>

#include "hlo/sharding/shard_geometry.h"

namespace hlo {
namespace sharding_test {

ShardingCase RandomShardingCase(std::mt19937& rng, bool allow_partial) {
  const int64_t data_rank = 1 + rng() % 3;
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < data_rank; ++i) dims.push_back(1 + rng() % 4);
  const bool partial = allow_partial && rng() % 2 == 0;
  if (partial) dims.push_back(2 + rng() % 2);
  int64_t n = std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  if (n == 1) dims[0] = n = 2;
  TileAssignment ta;
  switch (rng() % 3) {
    case 0:
      ta = TileAssignment::Iota(dims).value();
      break;
    case 1: {
      std::vector<int64_t> reshape = dims;
      std::shuffle(reshape.begin(), reshape.end(), rng);
      std::vector<int64_t> perm(reshape.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      ta = TileAssignment::Iota(dims, reshape, perm).value();
      break;
    }
    default: {
      std::vector<int64_t> devices(n);
      std::iota(devices.begin(), devices.end(), 0);
      std::shuffle(devices.begin(), devices.end(), rng);
      ta = TileAssignment::Explicit(dims, devices).value();
    }
  }
  HloSharding s = partial ? HloSharding::PartialTile(ta).value() : HloSharding::Tile(ta).value();
  std::vector<int64_t> shape_dims;
  for (int64_t i = 0; i < data_rank; ++i) shape_dims.push_back(rng() % (2 * dims[i] + 2));
  return {s, Shape::Array(PrimitiveType::kF32, shape_dims), n};
}

void ForEachElement(absl::Span<const int64_t> dims,
                    absl::FunctionRef<void(int64_t, absl::Span<const int64_t>)> f) {
  const int64_t count = std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    f(n, index);
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
  }
}

std::set<int64_t> Holders(const HloSharding& sharding, const Shape& shape, int64_t num_devices,
                          absl::Span<const int64_t> index) {
  std::set<int64_t> holders;
  for (int64_t d = 0; d < num_devices; ++d) {
    ShardRegion region = ShardRegionForDevice(sharding, shape, d).value();
    bool holds = true;
    for (size_t i = 0; i < index.size(); ++i) {
      holds = holds && index[i] >= region.offsets[i] && index[i] < region.limits[i];
    }
    if (holds) holders.insert(d);
  }
  return holders;
}

}  // namespace sharding_test
}  // namespace hlo

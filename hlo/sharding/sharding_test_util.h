// Random shardings and element holders, for the property tests of the sharding library.
#ifndef HLO_SHARDING_SHARDING_TEST_UTIL_H_
#define HLO_SHARDING_SHARDING_TEST_UTIL_H_

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"

namespace hlo {
namespace sharding_test {

struct ShardingCase {
  HloSharding sharding;
  Shape shape;
  int64_t num_devices;
};

// A random tiled (or, when `allow_partial`, sometimes partially replicated) sharding whose tile
// assignment is an iota, a transposed iota or a shuffled explicit list, with a random f32 shape
// of rank 1..3 whose dims are often not multiples of the tile counts.
ShardingCase RandomShardingCase(std::mt19937& rng, bool allow_partial);

// Calls `f(linear_index, index)` for every element of an array of `dims`, row-major.
void ForEachElement(absl::Span<const int64_t> dims,
                    absl::FunctionRef<void(int64_t, absl::Span<const int64_t>)> f);

// The devices (of 0..num_devices-1) whose shard of `shape` contains element `index`.
std::set<int64_t> Holders(const HloSharding& sharding, const Shape& shape, int64_t num_devices,
                          absl::Span<const int64_t> index);

}  // namespace sharding_test
}  // namespace hlo

#endif  // HLO_SHARDING_SHARDING_TEST_UTIL_H_

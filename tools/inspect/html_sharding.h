// The sharding view of spmd-inspect's HTML page, like jax.debug.visualize_sharding: for each
// entry parameter and each result, its sharding as a grid of blocks, each block naming the
// devices that hold it, with the mesh (tile dimensions, replication) written above it.
#ifndef TOOLS_INSPECT_HTML_SHARDING_H_
#define TOOLS_INSPECT_HTML_SHARDING_H_

#include <string>
#include <vector>

#include "hlo/ir/hlo_module.h"
#include "hlo/sharding/hlo_sharding.h"

namespace tools {

struct ShardedValue {
  std::string name;           // "lhs", "result", "result {2}"
  hlo::Shape shape;           // An array.
  hlo::HloSharding sharding;  // Not a tuple.
};

// The entry parameters that carry a sharding (a tuple's leaves each), then the root's leaves.
std::vector<ShardedValue> EntryShardings(const hlo::HloModule& module);

// `<section id="ID">`. `source` says where the shardings came from (shown under the
// heading); `num_devices` labels replicated values.
std::string ShardingSection(const std::vector<ShardedValue>& values, int64_t num_devices,
                            const std::string& source, const std::string& id = "shardings");

}  // namespace tools

#endif  // TOOLS_INSPECT_HTML_SHARDING_H_

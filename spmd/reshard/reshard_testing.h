// Shared cases and checks of the reshard tests: the shardings and shapes every test runs over,
// a one-reshard SPMD module builder, per-device inputs cut from a full array, and the check of
// every device's result against the full array (tests/reshard_executor_test.cc runs the modules
// on the CPU executor).
#ifndef SPMD_RESHARD_RESHARD_TESTING_H_
#define SPMD_RESHARD_RESHARD_TESTING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/reshard/reshard_emitter.h"
#include "spmd/reshard/reshard_planner.h"

namespace spmd {
namespace testing {

constexpr int64_t kTestDevices = 8;
// What padding elements of an input shard hold, so that padding reaching data shows.
constexpr double kPaddingSentinel = 1.0e9;

// A dense row-major array (f32 data and padding sentinels are exact in double).
struct DenseArray {
  std::vector<int64_t> dims;
  std::vector<double> data;
};

// 15 shardings of a rank-2 array on 8 devices: iota, transposed iota, one-dim tilings,
// partial replication on either dim, replicated, maximal, explicit shuffled device lists.
std::vector<std::string> TestShardings();

// f32[16,24] (even), f32[15,23] (uneven, tiles nest) and f32[10,7] (uneven; 10 rows in 2 and 4
// tiles do not nest: 5 vs 2*3).
std::vector<hlo::Shape> TestShapes();

// One reshard on a larger mesh or of higher rank.
struct ReshardCase {
  std::string from;
  std::string to;
  hlo::Shape shape;
  int64_t devices;
};
// 64- and 16-device meshes, rank 2 and uneven rank 3, a maximal source: searches that must stay
// fast and plans that must beat replicate-then-slice on a latency-free link.
std::vector<ReshardCase> LargerMeshCases();

// `param(per-device shard of from) -> reshard -> root` with num_partitions = `num_devices`.
struct ReshardModule {
  std::unique_ptr<hlo::HloModule> module;
  std::shared_ptr<const ReshardPlan> plan;
};
absl::StatusOr<ReshardModule> BuildReshardModule(const hlo::Shape& shape,
                                                 const hlo::HloSharding& from,
                                                 const hlo::HloSharding& to,
                                                 ReshardPlanner& planner,
                                                 int64_t num_devices = kTestDevices);

// Deterministic pseudo-random f32 values (exact in double) for an array of `shape`.
std::vector<double> RandomArray(const hlo::Shape& shape, uint32_t seed);

// The padded shard of `full` that `device` holds under `sharding` (padding = the sentinel; a
// maximal sharding gives non-owners a sentinel-filled full-size buffer).
DenseArray ShardOf(const std::vector<double>& full, const hlo::Shape& shape,
                   const hlo::HloSharding& sharding, int64_t device);

// "" when `result` holds, at every data position of `device`'s region under `sharding`, the
// element of `full`; else a description of the first mismatch.
std::string CheckShard(const DenseArray& result, const std::vector<double>& full,
                       const hlo::Shape& shape, const hlo::HloSharding& sharding, int64_t device);

}  // namespace testing
}  // namespace spmd

#endif  // SPMD_RESHARD_RESHARD_TESTING_H_

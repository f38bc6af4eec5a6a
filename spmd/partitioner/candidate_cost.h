// The estimated times handlers compare their candidate strategies by: the reshards a candidate
// needs, priced by the reshard planner (its α-β estimate of the cheapest plan).
#ifndef SPMD_PARTITIONER_CANDIDATE_COST_H_
#define SPMD_PARTITIONER_CANDIDATE_COST_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/cost/collective_cost.h"
#include "spmd/partitioner/halo_exchange.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {

// The estimated time (us) to bring the partitioned `operand` from its current sharding to `to`:
// 0 when it is already there; the local work when rebuilding it there beats moving it
// (rebuild.h).
absl::StatusOr<double> ReshardCost(const hlo::HloInstruction* operand, const hlo::HloSharding& to,
                                   PartitionContext& ctx);

// The estimated time (us) to reshard an array of `shape` from `from` to `to` (0 when equal).
absl::StatusOr<double> ResultCost(const hlo::Shape& shape, const hlo::HloSharding& from,
                                  const hlo::HloSharding& to, PartitionContext& ctx);

inline constexpr int64_t kUnplannable = std::numeric_limits<int64_t>::max() / 4;
inline constexpr double kUnplannableUs = 1e30;

// What a candidate's communication costs one device: the bytes it receives and their estimated
// time (each collective's latency plus its transfer). Sums saturate at kUnplannable, so a
// candidate with an unplannable part never looks cheap.
struct Received {
  int64_t bytes = 0;
  double us = 0;

  static Received Unplannable() { return {kUnplannable, kUnplannableUs}; }
  // What one collective's estimate says a device receives, and its time.
  static Received Of(const CollectiveCost& c) { return {c.bytes_received, c.time_us}; }
  Received operator+(const Received& o) const {
    return {std::min(kUnplannable, bytes + o.bytes), std::min(kUnplannableUs, us + o.us)};
  }
};

// The link every collective a handler adds is costed on: the reshard planner's (the device
// model's innermost level), so a handler's own collectives and the reshards it needs compare
// like for like. (The planner's moves carry no device groups, so the model's outer levels are
// not costed yet; the dot strategies read the same link.)
const LinkModel& CollectiveLink(PartitionContext& ctx);

// What a device receives to bring a value of `shape` from `from` into `to`: the planner's
// cheapest plan (unplannable when it has none).
Received ReshardReceived(const hlo::Shape& shape, const hlo::HloSharding& from,
                         const hlo::HloSharding& to, PartitionContext& ctx);
// The same for the partitioned `operand` into `target`; nothing when the context already holds
// it there (a reshard made for an earlier user), only time when it is rebuilt there (rebuild.h).
Received ReshardReceived(const hlo::HloInstruction* operand, const hlo::HloSharding& target,
                         PartitionContext& ctx);

// The sharding a value of `shape` reaches from `from` by the local dynamic-slices that lead the
// planner's plan to `to`, when there are such steps and more follow: computing a result there
// instead of in `from` does less work and leaves the same collectives to reach `to`.
//   from {devices=[1,2,4]<=[8] last_tile_dim_replicate}, to {devices=[1,4,2]<=[2,4]T(1,0) ...}
//     => {devices=[1,4,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate} (then one permute)
std::optional<hlo::HloSharding> SlicedTowards(const hlo::Shape& shape, const hlo::HloSharding& from,
                                              const hlo::HloSharding& to, PartitionContext& ctx);

// What a device receives by halo exchange along `split` for an operand of `shape` in
// `sharding` (nothing when the window is sliced from a whole operand), with one latency per
// collective-permute it takes.
Received HaloReceived(const hlo::Shape& shape, const hlo::HloSharding& sharding,
                      const WindowSplit& split, PartitionContext& ctx);
// The halos of every split in `splits` for an operand of `shape` in `sharding`.
Received HalosReceived(const hlo::Shape& shape, const hlo::HloSharding& sharding,
                       const std::vector<WindowSplit>& splits, PartitionContext& ctx);

// How partial results reach `wanted`. The devices of each of `groups` hold partial sums (in
// `sum_type`) of one tile of `held`, for an array of `shape`. An all-reduce, whose cost the
// caller gives (`all_reduce`), leaves `held`. A reduce-scatter along a dim `wanted` splits
// more than `held` does leaves `held` split among the groups (hlo::SplitAmongGroups); only dims
// whose blocks are exactly the new shards are tried. The cheapest by the sum's time plus the
// reshard of what it leaves to `wanted`.
struct PartialSum {
  int64_t scatter_dim = -1;                                 // -1: the all-reduce.
  hlo::HloSharding result = hlo::HloSharding::Replicate();  // What the sum leaves.
  Received moved;                                           // The sum and the reshard.
};
absl::StatusOr<PartialSum> PlanPartialSum(const hlo::Shape& shape, const hlo::HloSharding& held,
                                          const std::vector<std::vector<int64_t>>& groups,
                                          const hlo::HloSharding& wanted,
                                          hlo::PrimitiveType sum_type, const Received& all_reduce,
                                          PartitionContext& ctx);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_CANDIDATE_COST_H_

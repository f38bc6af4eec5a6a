// The reshard planner: the cheapest sequence of collectives and local slices that turns an
// array sharded as `source` into the same array sharded as `target`.
//
// Shardings may be replicated, maximal, or tiled in any device order with or without a
// last_tile_dim_replicate subgroup, or with unreduced devices (summed by an all-reduce first /
// reached reduced, then unreduced by a local select); manual shardings are not resharded here
// (Unimplemented). Steps are costed with the α-β model of spmd/cost on padded (ceil) shards.
// "Replicate everything, then slice" is always a candidate; a plan that does it is flagged
// `full_rematerialization` and is returned only when no cheaper plan exists. The search is
// described in docs/reshard.md.
#ifndef SPMD_RESHARD_RESHARD_PLANNER_H_
#define SPMD_RESHARD_RESHARD_PLANNER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/types/span.h"
#include "absl/status/statusor.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/cost/collective_cost.h"
#include "spmd/reshard/reshard_plan.h"

namespace spmd {

// The cheapest plan (by cost_us; ties by bytes, then by step count) from `source` to `target`
// for an array of `shape` on `num_devices` devices, costed on `link`. Fails when `shape` is not
// an array, a sharding does not fit it (HloSharding::Validate), or a sharding is of an
// unsupported kind or does not use exactly the devices 0..num_devices-1. Deterministic.
absl::StatusOr<ReshardPlan> PlanReshard(const hlo::Shape& shape, const hlo::HloSharding& source,
                                        const hlo::HloSharding& target, int64_t num_devices,
                                        const LinkModel& link);

// The fallback plan alone: all-gather every split dimension (a broadcast for a maximal source),
// then dynamic-slice to `target`. Same arguments and errors as PlanReshard.
absl::StatusOr<ReshardPlan> PlanReplicateThenSlice(const hlo::Shape& shape,
                                                   const hlo::HloSharding& source,
                                                   const hlo::HloSharding& target,
                                                   int64_t num_devices, const LinkModel& link);

// PlanReshard behind a thread-safe cache keyed by (source, target, shape dims, element type,
// device count). Plans are immutable and shared.
class ReshardPlanner {
 public:
  explicit ReshardPlanner(LinkModel link = LinkModel()) : link_(link) {}
  ReshardPlanner(const ReshardPlanner&) = delete;
  ReshardPlanner& operator=(const ReshardPlanner&) = delete;

  // The cached plan, computing it on a miss (outside the lock; concurrent misses for one key
  // may both compute, and the first stored wins). Errors as PlanReshard; errors are not cached.
  absl::StatusOr<std::shared_ptr<const ReshardPlan>> Plan(const hlo::Shape& shape,
                                                          const hlo::HloSharding& source,
                                                          const hlo::HloSharding& target,
                                                          int64_t num_devices);

  const LinkModel& link() const { return link_; }
  int64_t cache_size() const;
  int64_t cache_hits() const;

 private:
  // A cached plan's key; lookups go through KeyRef, which copies nothing.
  struct Key {
    hlo::HloSharding source;
    hlo::HloSharding target;
    std::vector<int64_t> dims;
    hlo::PrimitiveType element_type;
    int64_t num_devices;
  };
  struct KeyRef {
    KeyRef(const Key& k)  // NOLINT: every Key is a KeyRef.
        : source(k.source), target(k.target), dims(k.dims), element_type(k.element_type),
          num_devices(k.num_devices) {}
    KeyRef(const hlo::HloSharding& source, const hlo::HloSharding& target,
           absl::Span<const int64_t> dims, hlo::PrimitiveType element_type, int64_t num_devices)
        : source(source), target(target), dims(dims), element_type(element_type),
          num_devices(num_devices) {}
    const hlo::HloSharding& source;  // Hashed and compared by meaning (metadata ignored).
    const hlo::HloSharding& target;
    absl::Span<const int64_t> dims;
    hlo::PrimitiveType element_type;
    int64_t num_devices;
  };
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(const KeyRef& k) const {
      return absl::HashOf(k.source, k.target, k.dims, static_cast<int>(k.element_type),
                          k.num_devices);
    }
  };
  struct KeyEq {
    using is_transparent = void;
    bool operator()(const KeyRef& a, const KeyRef& b) const {
      return a.source == b.source && a.target == b.target && a.dims == b.dims &&
             a.element_type == b.element_type && a.num_devices == b.num_devices;
    }
  };

  const LinkModel link_;
  mutable std::mutex mu_;
  absl::flat_hash_map<Key, std::shared_ptr<const ReshardPlan>, KeyHash, KeyEq> cache_;
  int64_t hits_ = 0;
};

}  // namespace spmd

#endif  // SPMD_RESHARD_RESHARD_PLANNER_H_

// A reshard plan: the sequence of collectives and local slices that turns a value sharded one
// way into the same value sharded another way, with its cost. Produced by reshard_planner.h,
// turned into HLO by reshard_emitter.h, printed for `--explain` by ReshardPlan::Explain.
#ifndef SPMD_RESHARD_RESHARD_PLAN_H_
#define SPMD_RESHARD_RESHARD_PLAN_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hlo/ir/hlo_attributes.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"

namespace spmd {

enum class ReshardStepKind {
  // all-gather along `dimensions[0]` within `replica_groups`.
  kAllGather,
  // A local dynamic-slice (offsets from partition-id) of `dimensions`; no communication.
  kDynamicSlice,
  // all-to-all: `dimensions` = {s, c}; the tiles of dim s grow `group_size` times and those of
  // dim c shrink as many times.
  kAllToAll,
  // collective-permute by `source_target_pairs` (a device order change, or a maximal value
  // moving to another device).
  kCollectivePermute,
  // Maximal -> replicated: every device but the owner masks its copy to zero, then an
  // all-reduce(sum) over all devices (XLA's idiom).
  kBroadcast,
  // Replicated -> maximal: no data moves; the copies off the owner become don't-care.
  kRelabel,
  // Maximal -> tiled: the owner sends each other device its shard, one collective-permute each
  // (`replica_groups[0]` is the target's device list, tile-major), and each device keeps the
  // one addressed to it (the owner its own).
  kScatter,
  // Tiled -> tiled directly: each device receives exactly the cells of its new region it
  // lacks, by rounds of collective-permutes (reshard_exchange.h). `dimensions` is empty; the
  // schedule follows from the shardings before and after.
  kExchange,
  // Full tiling -> full tiling over disjoint split dims in one all-to-all among all devices
  // (reshard_direct.h); `replica_groups` holds the one group in piece order.
  kDirectAllToAll,
  // Unreduced -> reduced: all-reduce over `replica_groups`, the unreduced groups, combining as
  // the source's reduction op says (sum, max or min).
  kAllReduce,
  // Reduced -> unreduced: the first member of each group in `replica_groups` keeps the value,
  // the others hold zeros (their sum is the value); for max and min every member keeps it. No
  // communication.
  kUnreduce,
  // A tiling over a subset of the devices -> replicated: each tile's first holder places its
  // shard (padding zeroed) in a zero buffer of the whole array, then an all-reduce (sum) over
  // all devices.
  kGatherSubset,
  // Replicated -> a tiling over a subset of the devices: each of those slices its region;
  // the other devices keep an arbitrary window.
  kSliceSubset,
};

// "all-gather", "dynamic-slice", "all-to-all", "collective-permute", "broadcast", "relabel",
// "scatter", "exchange", "direct-all-to-all", "all-reduce", "unreduce", "gather-subset",
// "slice-subset".
std::string_view ReshardStepKindName(ReshardStepKind kind);

struct ReshardStep {
  ReshardStepKind kind = ReshardStepKind::kRelabel;
  // The sharding of the value after this step.
  hlo::HloSharding sharding = hlo::HloSharding::Replicate();
  // Tensor dimensions involved (see ReshardStepKind).
  std::vector<int64_t> dimensions;
  // kAllGather, kAllToAll, kBroadcast, kScatter: the groups, each ordered as the collective
  // concatenates (iota form when one exists).
  hlo::ReplicaGroups replica_groups;
  int64_t group_size = 1;
  // kCollectivePermute: (source, target) device pairs; every target appears once.
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  // Bytes one device receives (maximum over devices; cli-contract.md conventions).
  int64_t bytes_received = 0;
  double cost_us = 0;

  // One line, e.g. `all-gather dims={1} groups=[2,4]<=[8] -> {devices=...}: 576 B, 5.006 us`.
  std::string ToString() const;
};

struct ReshardPlan {
  hlo::Shape shape;  // The full (unsharded) array.
  hlo::HloSharding source = hlo::HloSharding::Replicate();
  hlo::HloSharding target = hlo::HloSharding::Replicate();
  int64_t num_devices = 1;
  std::vector<ReshardStep> steps;
  double cost_us = 0;
  int64_t bytes_received_per_device = 0;
  // The plan makes every device hold the whole array and then slices it again (counted in the
  // statistics' `full_rematerializations`). Only chosen when nothing cheaper exists.
  bool full_rematerialization = false;

  // A multi-line explanation: the endpoints, totals, and one line per step.
  std::string Explain() const;
};

// The replica groups `groups` (each list ordered), in iota form `[G,S]<=[dims]T(perm)` when
// some order of the groups has one, else explicit. REQUIRES: equal-sized, non-empty groups.
hlo::ReplicaGroups MakeReplicaGroups(const std::vector<std::vector<int64_t>>& groups);

}  // namespace spmd

#endif  // SPMD_RESHARD_RESHARD_PLAN_H_

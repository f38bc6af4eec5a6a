// Cross-device semantics of the point evaluator (point_ops.h): collectives, which read their
// operand's frame on the other devices of their group, and the manual conversions of a program
// with manual regions, evaluated as each device as the CPU executor runs them (ops/manual_ops.h):
//
//   SPMDFullToShardShape  device d's element i is the global operand's element at d's offset
//                         plus i (zero past d's region: the executor's zero padding; into
//                         manual subgroups tiled inside, the region is its group's);
//   SPMDShardToFullShape  element g is read on the frame's own device where its region holds
//                         g, else on the first device whose region holds g, at g
//                         less that region's offset (an operand with manual subgroups is whole
//                         on each device here, so that device's tile of it is what it brings).
#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/sharding/implied_sharding.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/collective_groups.h"
#include "runtime/common/device_context.h"
#include "runtime/cpu/ops/manual_ops.h"
#include "runtime/cpu/point_elements.h"
#include "runtime/cpu/point_ops.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Literal;
using hlo::Shape;
using hlo::ShardRegion;
using Frame = PointEvaluator::Frame;
using points::Source;
using points::Synthetic;
using points::Unsupported;

// Fails when a region of `sizes` does not fit a manual value of `shape` (as the executor).
absl::Status CheckFits(const HloInstruction& instr, const std::vector<int64_t>& sizes,
                       const Shape& shape) {
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] > shape.dimensions(static_cast<int64_t>(i))) {
      return absl::InvalidArgumentError(
          hlo::StrCat("%", instr.name(), ": a device's region does not fit the manual shape ",
                      shape.ToString(false)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

// all-reduce's combination of `operand`'s elements `indices` over `group`, in group order.
absl::StatusOr<Literal> PointOps::CombineOverGroup(PointEvaluator& ev, const HloInstruction& instr,
                                                   const HloInstruction& operand, int64_t leaf,
                                                   const Frame* frame, const DeviceGroup& group,
                                                   absl::Span<const int64_t> indices) {
  ASSIGN_OR_RETURN(Literal acc,
                   ev.Get(operand, leaf, ev.OnDevice(frame, group.devices.front()), indices));
  for (size_t j = 1; j < group.devices.size(); ++j) {
    ASSIGN_OR_RETURN(Literal next,
                     ev.Get(operand, leaf, ev.OnDevice(frame, group.devices[j]), indices));
    const Literal* pair[] = {&acc, &next};
    // The reduction computation mapped over the two arrays.
    Synthetic synthetic;
    HloInstruction* map = synthetic.Make(HloOpcode::kMap, acc.shape(), pair);
    map->mutable_attrs()->dimensions = {0};
    map->AppendCalledComputation(instr.to_apply());
    map->set_name(instr.name());
    ASSIGN_OR_RETURN(Literal combined, RunHandler(ev, *map, pair));
    acc = std::move(combined);
  }
  return acc;
}

absl::StatusOr<Literal> PointOps::Collective(PointEvaluator& ev, const HloInstruction& instr,
                                             int64_t leaf, const Frame* frame,
                                             absl::Span<const int64_t> indices) {
  // A combined collective (several operands) has one leaf per operand.
  const bool combined = instr.operand_count() > 1;
  const HloInstruction& operand = *instr.operand(combined ? leaf : 0);
  const int64_t operand_leaf = combined ? 0 : leaf;
  if (frame->device < 0) {
    if (IsIdentityAllReduce(instr)) return ev.Get(operand, operand_leaf, frame, indices);
    return Unsupported(instr, "in the unpartitioned reference");
  }
  DeviceContext device;
  device.partition_id = frame->device;
  device.num_partitions = ev.num_devices_;
  if (instr.opcode() == HloOpcode::kCollectivePermute) {
    ASSIGN_OR_RETURN(int64_t source, PermuteSourceOf(instr, device));
    if (source < 0) {
      ASSIGN_OR_RETURN(const Shape* shape, points::FlatLeafShape(instr, leaf));
      return Literal(Shape::Array(shape->element_type(), {static_cast<int64_t>(indices.size())}));
    }
    return ev.Get(operand, operand_leaf, ev.OnDevice(frame, source), indices);
  }
  ASSIGN_OR_RETURN(DeviceGroup group, DeviceGroupOf(instr, device));
  const int64_t size = static_cast<int64_t>(group.devices.size());
  // Stays a switch: each case reads this group's members differently (one function's locals).
  switch (instr.opcode()) {
    case HloOpcode::kAllReduce:
      // Every member holds the same combination: computed once, by the group's first member
      // (a group of N devices costs N operand reads, not N per member).
      if (group.rank != 0) {
        return ev.Get(instr, leaf, ev.OnDevice(frame, group.devices.front()), indices);
      }
      return CombineOverGroup(ev, instr, operand, operand_leaf, frame, group, indices);
    case HloOpcode::kReduceScatter: {
      ASSIGN_OR_RETURN(const Shape* shape, points::FlatLeafShape(instr, leaf));
      const int64_t d = instr.dimensions().at(0);
      const int64_t chunk = shape->dimensions(d);
      const Shape& in = *points::LeafAt(operand.shape(), operand_leaf);
      std::vector<int64_t> asked(indices.size()), o(shape->rank());
      for (size_t e = 0; e < indices.size(); ++e) {
        points::Unravel(indices[e], shape->dimensions(), o.data());
        o[d] += group.rank * chunk;
        asked[e] = points::Ravel(o.data(), in.dimensions());
      }
      return CombineOverGroup(ev, instr, operand, operand_leaf, frame, group, asked);
    }
    case HloOpcode::kCollectiveBroadcast:  // Every member gets its group's first member's value.
      return ev.Get(operand, operand_leaf, ev.OnDevice(frame, group.devices.front()), indices);
    case HloOpcode::kAllGather:
      return Move(ev, instr, leaf, indices, [&](int64_t* o, Source& s) {
        const int64_t d = instr.dimensions().at(0);
        const Shape& in = *points::LeafAt(operand.shape(), operand_leaf);
        const int64_t chunk = in.dimensions(d);
        const int64_t from = o[d] / chunk;
        o[d] %= chunk;
        s = Source{&operand, operand_leaf, ev.OnDevice(frame, group.devices[from]),
                   points::Ravel(o, in.dimensions())};
        return absl::OkStatus();
      });
    case HloOpcode::kAllToAll:
      if (instr.dimensions().empty()) {  // Tuple form: leaf j comes from device j's operand.
        return ev.Get(*instr.operand(group.rank), 0, ev.OnDevice(frame, group.devices[leaf]),
                      indices);
      }
      return Move(ev, instr, leaf, indices, [&](int64_t* o, Source& s) {
        const int64_t d = instr.dimensions().at(0);
        const int64_t chunk = instr.shape().dimensions(d) / size;
        const int64_t from = o[d] / chunk;
        o[d] = group.rank * chunk + o[d] % chunk;
        s = Source{&operand, 0, ev.OnDevice(frame, group.devices[from]),
                   points::Ravel(o, operand.shape().dimensions())};
        return absl::OkStatus();
      });
    default:
      return Unsupported(instr);
  }
}

absl::StatusOr<Literal> PointOps::FullToShard(PointEvaluator& ev, const HloInstruction& instr,
                                              const Frame* frame,
                                              absl::Span<const int64_t> indices) {
  const HloInstruction& operand = *instr.operand(0);
  if (frame->device < 0) {
    return Unsupported(instr, "read where the program has one value for all devices");
  }
  ASSIGN_OR_RETURN(const ShardRegion region,
                   FullToShardRegion(instr, frame->device, ev.num_devices_));
  const std::vector<int64_t> sizes = region.sizes();
  return Move(ev, instr, 0, indices, [&](int64_t* o, Source& s) {
    for (size_t d = 0; d < sizes.size() || !region.holds_data; ++d) {
      if (!region.holds_data || o[d] >= sizes[d]) {
        s = Source{};  // Past the device's region: zero.
        return absl::OkStatus();
      }
      o[d] += region.offsets[d];
    }
    s = Source{&operand, 0, frame, points::Ravel(o, operand.shape().dimensions())};
    return absl::OkStatus();
  });
}

absl::StatusOr<Literal> PointOps::ShardToFull(PointEvaluator& ev, const HloInstruction& instr,
                                              const Frame* frame,
                                              absl::Span<const int64_t> indices) {
  const HloInstruction& operand = *instr.operand(0);
  const HloSharding operand_sharding = ShardingOrReplicated(operand);
  ASSIGN_OR_RETURN(const ShardToFullPlacement placement, PlaceShardToFull(instr));
  const HloSharding& sharding = placement.sharding;
  const Shape tile = placement.tile.value_or(operand.shape());
  const int64_t n = ev.num_devices_;
  std::vector<int64_t> group_of;
  if (sharding.HasManualSubgroup()) {
    if (frame->device < 0) {
      return Unsupported(instr,
                         "into manual subgroups, read where the program has one value "
                         "for all devices");
    }
    group_of = ManualGroupOf(sharding, n);
  }
  // The device holding each region (this frame's device where it holds one, else the first in
  // id order), with where its tile starts in its whole value (an operand with manual
  // subgroups) and in the result.
  struct Holder {
    int64_t device;
    std::vector<int64_t> tile_offsets;
    ShardRegion region;
  };
  absl::flat_hash_map<std::vector<int64_t>, Holder> holders;
  std::vector<int64_t> order;
  if (frame->device >= 0 && frame->device < n) order.push_back(frame->device);
  for (int64_t d = 0; d < n; ++d) {
    if (d != frame->device) order.push_back(d);
  }
  for (int64_t d : order) {
    if (sharding.IsTiled() && !sharding.UsesDevice(d)) continue;
    if (!group_of.empty() && group_of[d] != group_of[frame->device]) continue;
    ASSIGN_OR_RETURN(ShardRegion region, hlo::ShardRegionForDevice(sharding, instr.shape(), d));
    if (region.empty() || holders.contains(region.offsets)) continue;
    RETURN_IF_ERROR(CheckFits(instr, region.sizes(), tile));
    std::vector<int64_t> tile_offsets(tile.rank(), 0);
    if (placement.tile.has_value()) {
      ASSIGN_OR_RETURN(ShardRegion own,
                       hlo::ShardRegionForDevice(operand_sharding, operand.shape(), d));
      tile_offsets = own.offsets;
    }
    std::vector<int64_t> key = region.offsets;
    holders.emplace(std::move(key), Holder{d, std::move(tile_offsets), std::move(region)});
  }
  ASSIGN_OR_RETURN(const Shape padded, hlo::PaddedShardShape(sharding, instr.shape()));
  return Move(ev, instr, 0, indices, [&](int64_t* o, Source& s) {
    std::vector<int64_t> start(padded.rank());
    for (int64_t d = 0; d < padded.rank(); ++d) {
      const int64_t size = std::max<int64_t>(1, padded.dimensions(d));
      start[d] = o[d] / size * size;
    }
    const auto found = holders.find(start);
    if (found == holders.end()) {
      s = Source{};  // No device holds it: the executor leaves zero.
      return absl::OkStatus();
    }
    const Holder& h = found->second;
    for (int64_t d = 0; d < padded.rank(); ++d) {
      o[d] += h.tile_offsets[d] - h.region.offsets[d];
    }
    s = Source{&operand, 0, ev.OnDevice(frame, h.device),
               points::Ravel(o, operand.shape().dimensions())};
    return absl::OkStatus();
  });
}

absl::StatusOr<Literal> PointOps::ManualConversion(PointEvaluator& ev, const HloInstruction& instr,
                                                   int64_t leaf, const Frame* frame,
                                                   absl::Span<const int64_t> indices) {
  const Shape& from = instr.operand(0)->shape();
  if (from.Compatible(instr.shape())) return ev.Get(*instr.operand(0), leaf, frame, indices);
  if (!from.IsArray() || !instr.shape().IsArray() || from.rank() != instr.shape().rank() ||
      from.element_type() != instr.shape().element_type()) {
    return Unsupported(instr, "between arrays of different ranks or types");
  }
  if (instr.attrs().custom_call_target == "SPMDFullToShardShape") {
    return FullToShard(ev, instr, frame, indices);
  }
  return ShardToFull(ev, instr, frame, indices);
}

}  // namespace runtime

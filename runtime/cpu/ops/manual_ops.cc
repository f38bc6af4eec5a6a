// SPMDFullToShardShape and SPMDShardToFullShape on simulated devices (see manual_ops.h).
#include "runtime/cpu/ops/manual_ops.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "hlo/sharding/implied_sharding.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cpu/box_copy.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Literal;
using hlo::Shape;

// Device `device`'s region of a `full_shape` value under `sharding`, checked to fit the
// device's value of `shard_shape` (its origin box).
absl::StatusOr<hlo::ShardRegion> RegionFitting(const HloSharding& sharding, int64_t device,
                                               const Shape& full_shape, const Shape& shard_shape) {
  ASSIGN_OR_RETURN(hlo::ShardRegion region,
                   hlo::ShardRegionForDevice(sharding, full_shape, device));
  const std::vector<int64_t> sizes = region.sizes();
  for (size_t i = 0; i < sizes.size() && !region.empty(); ++i) {
    if (sizes[i] > shard_shape.dimensions(i)) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "device ", device, "'s shard of ", full_shape.ToString(false), " under ",
          sharding.ToString(), " does not fit the manual shape ", shard_shape.ToString(false)));
    }
  }
  return region;
}

// Copies device `device`'s region of `full` (under `sharding`) into `shard` at the origin.
absl::Status CopyRegionOut(const HloSharding& sharding, int64_t device, const Literal& full,
                           Literal& shard) {
  ASSIGN_OR_RETURN(hlo::ShardRegion region,
                   RegionFitting(sharding, device, full.shape(), shard.shape()));
  if (region.empty()) return absl::OkStatus();
  const std::vector<int64_t> sizes = region.sizes();
  return CopyBox(full, region.offsets, shard, std::vector<int64_t>(sizes.size(), 0), sizes);
}

// Copies `shard`'s origin box into device `device`'s region of `full` (under `sharding`).
absl::Status CopyRegionIn(const HloSharding& sharding, int64_t device, const Literal& shard,
                          Literal& full) {
  ASSIGN_OR_RETURN(hlo::ShardRegion region,
                   RegionFitting(sharding, device, full.shape(), shard.shape()));
  if (region.empty()) return absl::OkStatus();
  const std::vector<int64_t> sizes = region.sizes();
  return CopyBox(shard, std::vector<int64_t>(sizes.size(), 0), full, region.offsets, sizes);
}

absl::Status CheckRanks(const HloInstruction& instr, const Shape& a, const Shape& b) {
  if (a.IsArray() && b.IsArray() && a.rank() == b.rank() &&
      a.element_type() == b.element_type()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(hlo::StrCat(
      "custom-call \"", instr.attrs().custom_call_target, "\" needs arrays of one rank and type, ",
      "got ", a.ToString(false), " and ", b.ToString(false)));
}

absl::StatusOr<Literal> FullToShard(const HloInstruction& instr, const Literal& operand,
                                    Evaluator& evaluator) {
  const DeviceContext& device = evaluator.device();
  ASSIGN_OR_RETURN(const hlo::ShardRegion region,
                   FullToShardRegion(instr, device.partition_id, device.num_partitions));
  Literal shard(instr.shape());
  if (region.empty()) return shard;
  const std::vector<int64_t> sizes = region.sizes();
  RETURN_IF_ERROR(
      CopyBox(operand, region.offsets, shard, std::vector<int64_t>(sizes.size(), 0), sizes));
  return shard;
}

absl::StatusOr<Literal> ShardToFull(const HloInstruction& instr, const Literal& operand,
                                    Evaluator& evaluator) {
  const DeviceContext& device = evaluator.device();
  Literal full(instr.shape());
  // A value with manual subgroups is whole on each device here; the SPMD program holds only
  // the device's tile of it (under the operand's sharding), so that tile is what it brings,
  // unless it is not the result's tile (PlaceShardToFull).
  ASSIGN_OR_RETURN(const ShardToFullPlacement placement, PlaceShardToFull(instr));
  const HloSharding& sharding = placement.sharding;
  std::optional<Literal> tile;
  if (placement.tile.has_value()) {
    tile.emplace(*placement.tile);
    RETURN_IF_ERROR(CopyRegionOut(ShardingOrReplicated(*instr.operand(0)), device.partition_id,
                                  operand, *tile));
  }
  const Literal& mine = tile ? *tile : operand;
  // Into manual subgroups (a nested manual region): each group assembles its own value from
  // its devices' tiles; the devices of a group share their index along the manual dim.
  std::vector<int64_t> group_of;
  if (sharding.HasManualSubgroup()) group_of = ManualGroupOf(sharding, device.num_partitions);
  auto assemble = [&](absl::Span<const Literal* const> shards) -> absl::Status {
    // A region held by several devices is written by each: the device's own region last (its
    // own value there, so that a module whose replicas differ gives devices different values,
    // which the verifier names), the others in reverse, leaving the first holder's values.
    const int64_t self = shards.size() == 1 ? 0 : device.partition_id;
    auto place = [&](int64_t d) -> absl::Status {
      if (sharding.IsTiled() && !sharding.UsesDevice(d)) return absl::OkStatus();
      if (!group_of.empty() && group_of[d] != group_of[device.partition_id]) {
        return absl::OkStatus();
      }
      return CopyRegionIn(sharding, d, *shards[d], full);
    };
    for (int64_t d = static_cast<int64_t>(shards.size()) - 1; d >= 0; --d) {
      if (d != self) RETURN_IF_ERROR(place(d));
    }
    return place(self);
  };
  if (device.hub == nullptr || device.num_partitions == 1) {
    const Literal* only = &mine;
    RETURN_IF_ERROR(assemble(absl::MakeConstSpan(&only, 1)));
    return full;
  }
  const CollectiveKey key{instr.unique_id(), evaluator.NextSequence(instr)};
  RETURN_IF_ERROR(device.hub->Rendezvous(key, device.partition_id,
                                         hlo::StrCat("%", instr.name()), &mine, assemble));
  return full;
}

}  // namespace

HloSharding ShardingOrReplicated(const HloInstruction& instr) {
  return instr.has_sharding() ? instr.sharding() : HloSharding::Replicate();
}

bool TilesInsideManualGroups(const HloSharding& sharding) {
  if (!sharding.HasManualSubgroup()) return false;
  for (int64_t d = 0; d < sharding.TiledDataRank(); ++d) {
    if (sharding.tile_assignment().dim(d) != 1) return true;
  }
  return false;
}

absl::StatusOr<ShardToFullPlacement> PlaceShardToFull(const HloInstruction& instr) {
  const Shape& operand = instr.operand(0)->shape();
  const HloSharding operand_sharding = ShardingOrReplicated(*instr.operand(0));
  const HloSharding result = ShardingOrReplicated(instr);
  if (operand_sharding.HasManualSubgroup()) {
    ASSIGN_OR_RETURN(Shape tile, hlo::PaddedShardShape(operand_sharding, operand));
    ASSIGN_OR_RETURN(HloSharding sharding, hlo::ConversionGlobalSharding(instr, result, tile));
    ASSIGN_OR_RETURN(Shape placed, hlo::PaddedShardShape(sharding, instr.shape()));
    if (placed.dimensions() == tile.dimensions()) {
      return ShardToFullPlacement{std::move(sharding), std::move(tile)};
    }
  }
  // The tiles are placed whole along the dims they are whole along (ManualConversionSharding).
  ASSIGN_OR_RETURN(HloSharding sharding, hlo::ConversionGlobalSharding(instr, result, operand));
  return ShardToFullPlacement{std::move(sharding), std::nullopt};
}

std::vector<int64_t> ManualGroupOf(const HloSharding& sharding, int64_t num_devices) {
  std::vector<int64_t> group_of(num_devices, -1);
  const int64_t manual = sharding.SubgroupManualDim();
  sharding.tile_assignment().ForEach([&](absl::Span<const int64_t> index, int64_t d) {
    if (d >= 0 && d < num_devices) group_of[d] = index[manual];
  });
  return group_of;
}

absl::StatusOr<hlo::ShardRegion> FullToShardRegion(const HloInstruction& instr, int64_t device,
                                                   int64_t num_devices) {
  const HloSharding result = ShardingOrReplicated(instr);
  const HloInstruction& operand = *instr.operand(0);
  Shape device_shape = instr.shape();
  std::vector<int64_t> members = {device};
  if (TilesInsideManualGroups(result)) {
    ASSIGN_OR_RETURN(device_shape, hlo::PaddedShardShape(result, instr.shape()));
    const std::vector<int64_t> group_of = ManualGroupOf(result, num_devices);
    if (device < 0 || device >= num_devices || group_of[device] < 0) {
      return absl::InvalidArgumentError(
          hlo::StrCat(result.ToString(), " places nothing on device ", device));
    }
    members.clear();
    for (int64_t e = 0; e < num_devices; ++e) {
      if (group_of[e] == group_of[device]) members.push_back(e);
    }
  }
  ASSIGN_OR_RETURN(const HloSharding from, hlo::ConversionGlobalSharding(
                                               instr, ShardingOrReplicated(operand), device_shape));
  std::optional<hlo::ShardRegion> box;
  for (int64_t e : members) {
    ASSIGN_OR_RETURN(hlo::ShardRegion region, hlo::ShardRegionForDevice(from, operand.shape(), e));
    if (region.empty()) continue;
    if (!box) {
      box = std::move(region);
      continue;
    }
    for (size_t d = 0; d < region.offsets.size(); ++d) {
      box->offsets[d] = std::min(box->offsets[d], region.offsets[d]);
      box->limits[d] = std::max(box->limits[d], region.limits[d]);
    }
  }
  if (!box) return hlo::ShardRegionForDevice(from, operand.shape(), device);
  for (int64_t d = 0; d < instr.shape().rank(); ++d) {
    if (box->limits[d] - box->offsets[d] > instr.shape().dimensions(d)) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "%", instr.name(), ": device ", device, "'s region of ", operand.shape().ToString(false),
          " does not fit the manual shape ", instr.shape().ToString(false)));
    }
  }
  return *box;
}

absl::StatusOr<Literal> RunManualConversion(const HloInstruction& instr, const Literal& operand,
                                            Evaluator& evaluator) {
  if (operand.shape().Compatible(instr.shape())) return operand;
  RETURN_IF_ERROR(CheckRanks(instr, operand.shape(), instr.shape()));
  if (evaluator.device().num_replicas != 1) {
    return absl::UnimplementedError("manual conversions with several replicas are not supported");
  }
  if (instr.attrs().custom_call_target == "SPMDFullToShardShape") {
    return FullToShard(instr, operand, evaluator);
  }
  return ShardToFull(instr, operand, evaluator);
}

}  // namespace runtime

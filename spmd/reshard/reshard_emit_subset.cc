// Emission of the steps for tilings over a subset of the devices (reshard_plan.h):
// gather-subset (tiles placed by their first holders into a zero buffer, then one all-reduce
// over all devices) and slice-subset (each device of the tiling takes its window).
#include "hlo/sharding/shard_geometry.h"
#include "hlo/status_macros.h"
#include "spmd/reshard/reshard_emitter.h"
#include "spmd/reshard/reshard_plan.h"

namespace spmd {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::PrimitiveType;
using hlo::Shape;

namespace {

int64_t CeilOfRatio(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Per dim: the padded tile size of `sharding` over `base`.
std::vector<int64_t> Chunks(const HloSharding& sharding, const Shape& base) {
  std::vector<int64_t> chunks;
  for (int64_t d = 0; d < base.rank(); ++d) {
    chunks.push_back(CeilOfRatio(base.dimensions(d), sharding.tile_assignment().dim(d)));
  }
  return chunks;
}

// offsets[dim][device]: where each device's tile starts (0 for devices outside the tiling).
std::vector<std::vector<int64_t>> TileStarts(const HloSharding& sharding, const Shape& base,
                                             int64_t num_devices) {
  const std::vector<int64_t> chunks = Chunks(sharding, base);
  std::vector<std::vector<int64_t>> starts(base.rank(), std::vector<int64_t>(num_devices, 0));
  for (int64_t device = 0; device < num_devices; ++device) {
    absl::StatusOr<std::vector<int64_t>> tile = hlo::TileIndexForDevice(sharding, device);
    if (!tile.ok()) continue;
    for (int64_t d = 0; d < base.rank(); ++d) starts[d][device] = (*tile)[d] * chunks[d];
  }
  return starts;
}

}  // namespace

absl::StatusOr<HloInstruction*> ReshardEmitter::EmitGatherSubset(const StepContext& context) {
  const HloSharding& source = context.before;
  const Shape& base = context.base_shape;
  const int64_t n = context.num_devices;
  const int64_t rank = base.rank();
  const Shape& local = context.value->shape();
  const PrimitiveType type = local.element_type();
  const std::vector<int64_t> chunks = Chunks(source, base);
  // Each tile's first holder contributes; its elements beyond the array's end are zeroed.
  std::vector<int64_t> contributes(n, 0);
  std::vector<std::vector<int64_t>> valid(rank, std::vector<int64_t>(n, 0));
  std::vector<std::vector<int64_t>> seen;
  for (int64_t device = 0; device < n; ++device) {
    absl::StatusOr<hlo::ShardRegion> region = hlo::ShardRegionForDevice(source, base, device);
    if (!region.ok()) continue;  // Outside the tiling.
    if (std::find(seen.begin(), seen.end(), region->offsets) != seen.end()) continue;
    seen.push_back(region->offsets);
    contributes[device] = 1;
    for (int64_t d = 0; d < rank; ++d) valid[d][device] = region->limits[d] - region->offsets[d];
  }
  const Shape pred_shape = Shape::Array(PrimitiveType::kPred, local.dimensions());
  const Shape index_shape = Shape::Array(PrimitiveType::kS32, local.dimensions());
  auto compare = [&](HloInstruction* a, HloInstruction* b, hlo::ComparisonDirection direction) {
    HloInstruction* c = builder_.Add(HloOpcode::kCompare, pred_shape, {a, b});
    c->mutable_attrs()->comparison_direction = direction;
    return c;
  };
  HloInstruction* mask = compare(
      builder_.Add(HloOpcode::kBroadcast, index_shape, {builder_.PerDeviceScalar(contributes)}),
      builder_.Add(HloOpcode::kBroadcast, index_shape,
                   {builder_.ScalarConstant(PrimitiveType::kS32, 1)}),
      hlo::ComparisonDirection::kEq);
  for (int64_t d = 0; d < rank; ++d) {
    HloInstruction* iota = builder_.Add(HloOpcode::kIota, index_shape, {});
    iota->mutable_attrs()->iota_dimension = d;
    HloInstruction* limit =
        builder_.Add(HloOpcode::kBroadcast, index_shape, {builder_.PerDeviceScalar(valid[d])});
    mask = builder_.Add(HloOpcode::kAnd, pred_shape,
                        {mask, compare(iota, limit, hlo::ComparisonDirection::kLt)});
  }
  HloInstruction* zeros =
      builder_.Add(HloOpcode::kBroadcast, local, {builder_.ScalarConstant(type, 0)});
  HloInstruction* placed = builder_.Add(HloOpcode::kSelect, local, {mask, context.value, zeros});
  std::vector<int64_t> big_dims(rank);
  for (int64_t d = 0; d < rank; ++d) big_dims[d] = chunks[d] * source.tile_assignment().dim(d);
  const Shape big_shape = Shape::Array(type, big_dims);
  HloInstruction* big =
      builder_.Add(HloOpcode::kBroadcast, big_shape, {builder_.ScalarConstant(type, 0)});
  std::vector<HloInstruction*> operands = {big, placed};
  for (const std::vector<int64_t>& starts : TileStarts(source, base, n)) {
    operands.push_back(builder_.PerDeviceScalar(starts));
  }
  big = builder_.Add(HloOpcode::kDynamicUpdateSlice, big_shape, operands);
  std::vector<int64_t> everyone(n);
  for (int64_t i = 0; i < n; ++i) everyone[i] = i;
  ASSIGN_OR_RETURN(HloInstruction * sum, builder_.AllReduceSum(big, MakeReplicaGroups({everyone})));
  return builder_.SliceTo(sum, base.dimensions());
}

absl::StatusOr<HloInstruction*> ReshardEmitter::EmitSliceSubset(const StepContext& context) {
  const HloSharding& target = context.step.sharding;
  const Shape& base = context.base_shape;
  const std::vector<int64_t> chunks = Chunks(target, base);
  std::vector<int64_t> padded(base.rank());
  for (int64_t d = 0; d < base.rank(); ++d) padded[d] = chunks[d] * target.tile_assignment().dim(d);
  HloInstruction* value = builder_.PadHigh(context.value, padded);
  std::vector<HloInstruction*> operands = {value};
  for (const std::vector<int64_t>& starts : TileStarts(target, base, context.num_devices)) {
    operands.push_back(builder_.PerDeviceScalar(starts));
  }
  HloInstruction* slice =
      builder_.Add(HloOpcode::kDynamicSlice,
                   Shape::Array(value->shape().element_type(), context.after_dims), operands);
  slice->mutable_attrs()->dynamic_slice_sizes = context.after_dims;
  return slice;
}

}  // namespace spmd

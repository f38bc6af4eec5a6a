// Masked gather and shifted scatter on an operand split along indexed dims (see the header).
// On 2 devices, rows of %x split:
//
//   %g = f32[3,4] gather(f32[16,4] %x {devices=[2,1]}, s32[3,1] %i), collapsed_slice_dims={0}
//   -> %c = clamp(0, %i, 15); %in = %c >= offset && %c < limit
//      %l = gather(f32[8,4] %x.shard, %c - offset); %m = select(%in, %l, 0)
//      %g.spmd = f32[3,4] all-reduce(%m), to_apply=add            {replicated}
//
// The scatter form uses select(%in, %i - offset, 16) as its indices: 16 is past the end of
// every shard, so the update is dropped there, and the padding of an uneven shard is never
// written.
#include "spmd/partitioner/gather_scatter_masked.h"

#include <algorithm>
#include <optional>

#include "hlo/analysis/iota_pieces.h"
#include "hlo/sharding/device_groups.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/reshard/reshard_plan.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::PrimitiveType;
using hlo::Shape;

// The data tile index of `device` under `s` (empty for a replicated sharding), or nullopt when
// `s` does not place the device.
std::optional<std::vector<int64_t>> DataTile(const HloSharding& s, int64_t device) {
  if (s.IsReplicated()) return std::vector<int64_t>{};
  if (!s.IsTiled()) return std::nullopt;
  std::optional<std::vector<int64_t>> index = s.tile_assignment().TileIndexOf(device);
  if (index) index->resize(s.TiledDataRank());
  return index;
}

int64_t At(const std::vector<int64_t>& tile, int64_t dim) { return tile.empty() ? 0 : tile[dim]; }

// Whether the mapped dims of `a` and `b` agree on every device.
bool MappedTilesAgree(const HloSharding& a, const std::vector<int64_t>& a_to_b,
                      const HloSharding& b, int64_t num_devices) {
  for (size_t k = 0; k < a_to_b.size(); ++k) {
    if (a_to_b[k] >= 0 && a.TilesAlong(k) != b.TilesAlong(a_to_b[k])) return false;
  }
  for (int64_t device = 0; device < num_devices; ++device) {
    std::optional<std::vector<int64_t>> ta = DataTile(a, device);
    std::optional<std::vector<int64_t>> tb = DataTile(b, device);
    if (!ta || !tb) return false;
    for (size_t k = 0; k < a_to_b.size(); ++k) {
      if (a_to_b[k] >= 0 && At(*ta, k) != At(*tb, a_to_b[k])) return false;
    }
  }
  return true;
}

Shape WithType(const Shape& shape, PrimitiveType type) {
  return Shape::Array(type, shape.dimensions());
}

HloInstruction* Compare(HloInstruction* a, HloInstruction* b, hlo::ComparisonDirection direction,
                        PartitionContext& ctx) {
  HloInstruction* c =
      ctx.Add(HloOpcode::kCompare, WithType(a->shape(), PrimitiveType::kPred), {a, b});
  c->mutable_attrs()->comparison_direction = direction;
  return c;
}

HloInstruction* Broadcast(HloInstruction* scalar, const Shape& like, PartitionContext& ctx) {
  return ctx.Add(HloOpcode::kBroadcast, WithType(like, scalar->shape().element_type()), {scalar});
}

// Component `j` of `indices` along `dim` (kept as a dim of size 1).
HloInstruction* Component(HloInstruction* indices, int64_t dim, int64_t j, PartitionContext& ctx) {
  return ctx.builder().SliceAlong(indices, dim, j, j + 1);
}

// `indices` with each component j of its index vector (along `index_vector_dim`; the whole
// array when that is its rank) replaced by `components[j]` where that is set.
HloInstruction* WithComponents(HloInstruction* indices, int64_t index_vector_dim,
                               std::vector<HloInstruction*> components, PartitionContext& ctx) {
  if (std::all_of(components.begin(), components.end(),
                  [](const HloInstruction* c) { return c == nullptr; })) {
    return indices;
  }
  if (index_vector_dim == indices->shape().rank()) return components[0];
  for (size_t j = 0; j < components.size(); ++j) {
    if (components[j] == nullptr) {
      components[j] = Component(indices, index_vector_dim, static_cast<int64_t>(j), ctx);
    }
  }
  if (components.size() == 1) return components[0];
  HloInstruction* out = ctx.Add(HloOpcode::kConcatenate, indices->shape(), components);
  out->mutable_attrs()->dimensions = {index_vector_dim};
  return out;
}

// One component shifted into the shard of `operand` along `dim`: the local index (as the
// indices' type) and whether it is inside the shard (null for a scatter along an evenly split
// dim: there the shifted index alone is out of bounds exactly when it is outside the shard, as
// every shard is as long as the local dim, and the clamp keeps the shift from wrapping).
std::pair<HloInstruction*, HloInstruction*> ShiftComponent(HloInstruction* index, int64_t dim,
                                                           const MaskedOperand& operand,
                                                           const Shape& operand_shape,
                                                           OutsideShard outside,
                                                           PartitionContext& ctx) {
  const PrimitiveType type = index->shape().element_type();
  const int64_t size = operand_shape.dimensions(dim);
  // Clamping keeps every value in s32 range and, for scatter, keeps out-of-bounds indices
  // out of bounds (-1 or size).
  const bool below = outside == OutsideShard::kOutOfBounds && !hlo::IsUnsignedIntegralType(type);
  const double low = below ? -1 : 0;
  const double high = outside == OutsideShard::kClamp ? size - 1 : size;
  HloInstruction* clamped =
      ctx.Add(HloOpcode::kClamp, index->shape(),
              {Broadcast(ctx.ScalarConstant(type, low), index->shape(), ctx), index,
               Broadcast(ctx.ScalarConstant(type, high), index->shape(), ctx)});
  const Shape s32 = WithType(index->shape(), PrimitiveType::kS32);
  HloInstruction* global =
      type == PrimitiveType::kS32 ? clamped : ctx.Add(HloOpcode::kConvert, s32, {clamped});
  const std::vector<int64_t> starts = ctx.ShardBounds(operand.sharding, operand_shape, dim);
  HloInstruction* lo = Broadcast(ctx.PerDeviceScalar(starts), s32, ctx);
  HloInstruction* local = ctx.Add(HloOpcode::kSubtract, s32, {global, lo});
  if (outside == OutsideShard::kOutOfBounds &&
      size % operand.sharding.tile_assignment().dim(dim) == 0) {
    if (type != PrimitiveType::kS32) local = ctx.Add(HloOpcode::kConvert, index->shape(), {local});
    return {local, nullptr};
  }
  // In the shard when 0 <= local < its width: one unsigned comparison, since a negative local
  // read as u32 is past every width.
  std::vector<int64_t> widths =
      ctx.ShardBounds(operand.sharding, operand_shape, dim, /*limits=*/true);
  for (size_t k = 0; k < widths.size(); ++k)
    widths[k] = std::max<int64_t>(0, widths[k] - starts[k]);
  const Shape u32 = WithType(s32, PrimitiveType::kU32);
  HloInstruction* width = ctx.Add(HloOpcode::kConvert, Shape::Array(PrimitiveType::kU32, {}),
                                  {ctx.PerDeviceScalar(widths)});
  HloInstruction* in_shard =
      Compare(ctx.Add(HloOpcode::kBitcastConvert, u32, {local}), Broadcast(width, u32, ctx),
              hlo::ComparisonDirection::kLt, ctx);
  if (outside == OutsideShard::kOutOfBounds) {
    // Past the end of every shard (a window is 1 wide along `dim`).
    HloInstruction* past = Broadcast(ctx.ScalarConstant(PrimitiveType::kS32, size), s32, ctx);
    local = ctx.Add(HloOpcode::kSelect, s32, {in_shard, local, past});
  }
  if (type != PrimitiveType::kS32) local = ctx.Add(HloOpcode::kConvert, index->shape(), {local});
  return {local, in_shard};
}

}  // namespace

std::vector<IotaDim> IotaIndexedDims(const HloInstruction& indices, int64_t index_vector_dim,
                                     const std::vector<IndexedDim>& indexed,
                                     const std::vector<int64_t>& batching_dims,
                                     const Shape& operand_shape) {
  // (component, indices dim) of every one-component iota piece of the index vector.
  std::vector<std::pair<int64_t, int64_t>> iotas;
  const Shape& shape = indices.shape();
  for (const hlo::IotaPiece& p : hlo::IotaPieces(indices)) {
    if (p.dim == index_vector_dim) continue;
    if (p.concat_dim < 0 &&
        (index_vector_dim == shape.rank() || shape.dimensions(index_vector_dim) == 1)) {
      iotas.emplace_back(0, p.dim);
    } else if (p.concat_dim == index_vector_dim && p.end - p.begin == 1) {
      iotas.emplace_back(p.begin, p.dim);
    }
  }
  std::vector<IotaDim> out;
  for (const auto& [component, b] : iotas) {
    const bool taken =
        std::find(batching_dims.begin(), batching_dims.end(), b) != batching_dims.end() ||
        std::any_of(out.begin(), out.end(),
                    [&, b = b](const IotaDim& d) { return d.indices_dim == b; });
    if (taken) continue;
    for (const IndexedDim& d : indexed) {
      if (d.component == component &&
          operand_shape.dimensions(d.operand_dim) == indices.shape().dimensions(b)) {
        out.push_back({d.operand_dim, b, component});
      }
    }
  }
  return out;
}

absl::StatusOr<HloInstruction*> LocalIotaComponents(
    HloInstruction* indices, int64_t index_vector_dim, const std::vector<IotaDim>& dims,
    const HloSharding& operand, const HloSharding& indices_sharding,
    const std::vector<int64_t>& masked_dims, PartitionContext& ctx) {
  const Shape& shape = indices->shape();
  const bool implicit = index_vector_dim == shape.rank();
  const int64_t count = implicit ? 1 : shape.dimensions(index_vector_dim);
  std::vector<HloInstruction*> components(count, nullptr);
  for (const IotaDim& d : dims) {
    if (operand.TilesAlong(d.operand_dim) == 1 ||
        std::find(masked_dims.begin(), masked_dims.end(), d.operand_dim) != masked_dims.end()) {
      continue;
    }
    if (operand.TilesAlong(d.operand_dim) != indices_sharding.TilesAlong(d.indices_dim)) {
      return absl::InternalError(hlo::StrCat("operand dim ", d.operand_dim, " and indices dim ",
                                             d.indices_dim, " (an iota) are split unlike"));
    }
    std::vector<int64_t> sizes = shape.dimensions();
    if (!implicit) sizes[index_vector_dim] = 1;
    HloInstruction* iota = ctx.Add(HloOpcode::kIota, Shape::Array(shape.element_type(), sizes), {});
    iota->mutable_attrs()->iota_dimension = d.indices_dim;
    components[d.component] = iota;
  }
  return WithComponents(indices, index_vector_dim, std::move(components), ctx);
}

absl::StatusOr<MaskedOperand> MaskedOperandSharding(const HloSharding& current,
                                                    const std::vector<IndexedDim>& indexed,
                                                    const std::vector<int64_t>& operand_to_other,
                                                    int64_t num_devices) {
  if (!MovesDataInTiling(current) || current.tile_assignment().num_devices() != num_devices) {
    return absl::UnimplementedError("the operand is not tiled over every device");
  }
  MaskedOperand out;
  for (const IndexedDim& d : indexed) {
    if (current.tile_assignment().dim(d.operand_dim) > 1) out.dims.push_back(d.operand_dim);
  }
  if (out.dims.empty()) return absl::UnimplementedError("no indexed dim is split");
  std::vector<int64_t> whole;
  for (int64_t d = 0; d < current.TiledDataRank(); ++d) {
    const bool kept = operand_to_other[d] >= 0 ||
                      std::find(out.dims.begin(), out.dims.end(), d) != out.dims.end();
    if (!kept) whole.push_back(d);
  }
  ASSIGN_OR_RETURN(out.sharding, hlo::PartiallyReplicate(current, whole));
  return out;
}

bool TilesAgree(const HloSharding& a, const std::vector<int64_t>& a_to_b,
                const std::vector<int64_t>& group_dims, const HloSharding& b, int64_t num_devices) {
  if (!MappedTilesAgree(a, a_to_b, b, num_devices)) return false;
  if (group_dims.empty()) return true;
  if (!a.IsTiled()) return false;
  absl::StatusOr<hlo::TileAssignment> groups =
      hlo::DeviceGroupsAlongDims(a.tile_assignment(), group_dims);
  if (!groups.ok()) return false;
  for (const std::vector<int64_t>& group : hlo::GroupLists(*groups)) {
    for (int64_t device : group) {
      if (DataTile(b, device) != DataTile(b, group[0])) return false;
    }
  }
  return true;
}

ShardIndices ShiftIndicesIntoShard(HloInstruction* indices, int64_t index_vector_dim,
                                   const std::vector<IndexedDim>& dims,
                                   const MaskedOperand& operand, const Shape& operand_shape,
                                   OutsideShard outside, PartitionContext& ctx) {
  // Narrow index types are widened first: an operand dim may be longer than they can count, and
  // a shifted index must not wrap back into the shard (u16 0 less an offset of 65536 is 0).
  if (hlo::ByteWidth(indices->shape().element_type()) < 4) {
    indices =
        ctx.Add(HloOpcode::kConvert, WithType(indices->shape(), PrimitiveType::kS32), {indices});
  }
  const Shape& shape = indices->shape();
  const bool implicit = index_vector_dim == shape.rank();
  const int64_t count = implicit ? 1 : shape.dimensions(index_vector_dim);
  std::vector<HloInstruction*> components(count, nullptr);
  HloInstruction* in_shard = nullptr;
  for (const IndexedDim& d : dims) {
    if (std::find(operand.dims.begin(), operand.dims.end(), d.operand_dim) == operand.dims.end()) {
      continue;
    }
    HloInstruction* index =
        implicit ? indices : Component(indices, index_vector_dim, d.component, ctx);
    auto [local, in] = ShiftComponent(index, d.operand_dim, operand, operand_shape, outside, ctx);
    components[d.component] = local;
    if (in != nullptr) {
      in_shard = in_shard == nullptr ? in : ctx.Add(HloOpcode::kAnd, in->shape(), {in_shard, in});
    }
  }
  ShardIndices out{WithComponents(indices, index_vector_dim, std::move(components), ctx), in_shard};
  if (implicit || in_shard == nullptr) return out;
  std::vector<int64_t> batch = shape.dimensions();
  batch.erase(batch.begin() + index_vector_dim);
  out.in_shard =
      ctx.Add(HloOpcode::kReshape, Shape::Array(PrimitiveType::kPred, batch), {in_shard});
  return out;
}

absl::StatusOr<HloInstruction*> SumMaskedShards(HloInstruction* value, HloInstruction* in_shard,
                                                const std::vector<int64_t>& batch_dims,
                                                const MaskedOperand& operand, int64_t scatter_dim,
                                                PartitionContext& ctx) {
  const Shape& shape = value->shape();
  HloInstruction* mask =
      ctx.Add(HloOpcode::kBroadcast, WithType(shape, PrimitiveType::kPred), {in_shard});
  mask->mutable_attrs()->dimensions = batch_dims;
  HloInstruction* zeros = Broadcast(ctx.ScalarConstant(shape.element_type(), 0), shape, ctx);
  HloInstruction* mine = ctx.Add(HloOpcode::kSelect, shape, {mask, value, zeros});
  ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                   hlo::DeviceGroupsAlongDims(operand.sharding.tile_assignment(), operand.dims));
  if (scatter_dim >= 0) return ctx.ReduceScatterSum(mine, hlo::GroupLists(groups), scatter_dim);
  // Add on pred is or, so one sum serves every type.
  return ctx.AllReduceSum(mine, hlo::GroupLists(groups));
}

HloInstruction* AllReduceInGroups(HloInstruction* value, const hlo::TileAssignment& groups,
                                  hlo::HloComputation* reducer, PartitionContext& ctx) {
  return ctx.builder().ReducingCollective(HloOpcode::kAllReduce, value->shape(), value,
                                          MakeReplicaGroups(hlo::GroupLists(groups)), reducer);
}

}  // namespace spmd

// PartitionContext: value bookkeeping, cached resharding, and the small emitters handlers
// share (per-device scalars from partition-id, padding masks).
#include "spmd/partitioner/partition_context.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "absl/strings/str_join.h"
#include "hlo/analysis/constant_dims.h"
#include "hlo/sharding/device_groups.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/halo_exchange.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/partitioner/rebuild.h"
#include "spmd/reshard/reshard_grouped.h"

namespace spmd {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::PrimitiveType;
using hlo::Shape;

absl::Status PartitionContext::RecordFallback(const HloInstruction& original,
                                              const HloSharding& sharding,
                                              std::string_view reason) {
  const std::string what =
      hlo::StrCat(hlo::HloOpcodeString(original.opcode()), " %", original.name(), " wanted ",
                  sharding.ToStringWithoutMetadata(), " but is computed whole ",
                  std::any_of(sharding.Leaves().begin(), sharding.Leaves().end(),
                              [](const HloSharding& leaf) { return leaf.HasManualSubgroup(); })
                      ? "in each manual group"
                      : "on every device",
                  " (", reason, ")");
  if (options_->strict) {
    return absl::FailedPreconditionError(hlo::StrCat(
        "instruction %", original.name(), ": replicated fallback under --strict: ", what));
  }
  const int64_t bytes = original.shape().byte_size();
  ++log_->replicated_fallbacks;
  log_->replicated_fallback_bytes += bytes;
  log_->lines.push_back(hlo::StrCat("fallback: ", what, "; ", bytes, " bytes per device"));
  return absl::OkStatus();
}

absl::StatusOr<const PartitionedValue*> PartitionContext::Get(
    const HloInstruction* original) const {
  auto it = values_.find(original);
  if (it == values_.end()) {
    return absl::InternalError(hlo::StrCat("%", original->name(), " has not been partitioned"));
  }
  return &it->second;
}

void PartitionContext::Set(const HloInstruction* original, PartitionedValue value) {
  values_.insert_or_assign(original, std::move(value));
}

namespace {

// Tile counts per data dim (1 for every dim of a replicated sharding); nullopt for shardings
// other than replicated and tiled with replicated subgroups only.
std::optional<std::vector<int64_t>> PlainTileCounts(const HloSharding& sharding, int64_t rank) {
  if (sharding.IsReplicated()) return std::vector<int64_t>(rank, 1);
  if (!sharding.IsTiled() || sharding.TiledDataRank() != rank) return std::nullopt;
  for (hlo::OpShardingType type : sharding.subgroup_types()) {
    if (type != hlo::OpShardingType::kReplicated) return std::nullopt;
  }
  std::vector<int64_t> counts(rank);
  for (int64_t d = 0; d < rank; ++d) counts[d] = sharding.tile_assignment().dim(d);
  return counts;
}

}  // namespace

absl::StatusOr<HloInstruction*> PartitionContext::Reshard(HloInstruction* value,
                                                          const Shape& base_shape,
                                                          const HloSharding& from,
                                                          const HloSharding& to) {
  if (from == to || base_shape.IsToken()) return value;  // Tokens carry no data.
  if (base_shape.IsTuple()) return ReshardTuple(value, base_shape, from, to);
  if (!base_shape.IsArray()) {
    return absl::UnimplementedError(hlo::StrCat("resharding a ", base_shape.ToString(),
                                                " value from ", from.ToString(), " to ",
                                                to.ToString()));
  }
  if (from.IsManual() || to.IsManual() || from.HasManualSubgroup() || to.HasManualSubgroup()) {
    return ReshardManual(value, base_shape, from, to);
  }
  ASSIGN_OR_RETURN(HloSharding source, ReplicateDataTileDims(value, base_shape, from, to));
  if (source == to) return value;
  ASSIGN_OR_RETURN(std::shared_ptr<const ReshardPlan> plan,
                   planner_->Plan(base_shape, source, to, num_devices_));
  if (plan->full_rematerialization) ++log_->full_rematerializations;
  if (log_->keep_lines) log_->lines.push_back(plan->Explain());
  return emitter_.Emit(value, base_shape, *plan);
}

absl::StatusOr<std::shared_ptr<const ReshardPlan>> PartitionContext::PlanReshard(
    const Shape& shape, const HloSharding& from, const HloSharding& to) {
  if (from.HasManualSubgroup() && to.HasManualSubgroup()) {
    ASSIGN_OR_RETURN(GroupedPlan grouped,
                     PlanGroupedReshard(shape, from, to, num_devices_, *planner_));
    return grouped.plan;
  }
  if (to.HasManualSubgroup() && !from.IsManual()) {
    // A global value entering: each device's tile of it (ReshardManual).
    ASSIGN_OR_RETURN(HloSharding target, ManualSubgroupAsReplicated(to));
    return planner_->Plan(shape, from, target, num_devices_);
  }
  return planner_->Plan(shape, from, to, num_devices_);
}

absl::StatusOr<HloSharding> PartitionContext::ReplicateDataTileDims(HloInstruction*& value,
                                                                   const Shape& base_shape,
                                                                   const HloSharding& from,
                                                                   const HloSharding& to) {
  const int64_t rank = base_shape.rank();
  std::optional<std::vector<int64_t>> from_tiles = PlainTileCounts(from, rank);
  std::optional<std::vector<int64_t>> to_tiles = PlainTileCounts(to, rank);
  const hlo::PrimitiveType type = base_shape.element_type();
  if (!from_tiles || !to_tiles || !from.IsTiled() || type == PrimitiveType::kPred ||
      from.tile_assignment().num_devices() != num_devices_) {
    return from;
  }
  // Dims whose data lies in their first k tiles (the others only padding) with 2k < t (else
  // an all-gather moves as little), and that the target splits into fewer tiles (taken whole,
  // each device then slices its tile): e.g. a size-1 dim split 8 ways (k = 1), or 2 rows split
  // 8 ways (k = 2). Such dims are summed in one all-reduce, which a dim with data in the first
  // of 2 tiles joins (its buffer does not grow); two such dims alone are summed too (one
  // all-reduce instead of two all-gathers: XLA's BroadcastAsReplicate).
  std::vector<DataTiles> dims;
  bool worth = false;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t n = base_shape.dimensions(d), t = (*from_tiles)[d];
    const int64_t c = (n + t - 1) / t;
    const int64_t k = c == 0 ? 0 : (n + c - 1) / c;
    if ((*to_tiles)[d] >= t || k == 0 || (2 * k >= t && k != 1)) continue;
    dims.push_back({d, c, k, n});
    worth |= 2 * k < t;
  }
  if (!worth && dims.size() < 2) return from;
  ASSIGN_OR_RETURN(value, SumDataTiles(value, from, dims));
  std::vector<int64_t> summed;
  std::string explained;
  for (const DataTiles& dt : dims) {
    summed.push_back(dt.dim);
    hlo::StrAppend(&explained, explained.empty() ? "" : ", ", "dim ", dt.dim, " in its first ",
                   dt.tiles, " of ", (*from_tiles)[dt.dim]);
  }
  ASSIGN_OR_RETURN(HloSharding gathered, hlo::PartiallyReplicate(from, summed));
  if (log_->keep_lines) {
    log_->lines.push_back(hlo::StrCat(
        "reshard ", base_shape.ToString(), " ", from.ToStringWithoutMetadata(), " -> ",
        to.ToStringWithoutMetadata(), ": data only in the first tiles (", explained,
        "); they are placed in zeros and summed over each group (one masked all-reduce), "
        "giving ",
        gathered.ToStringWithoutMetadata()));
  }
  return gathered;
}

absl::StatusOr<HloInstruction*> PartitionContext::SumDataTiles(HloInstruction* value,
                                                               const HloSharding& sharding,
                                                               const std::vector<DataTiles>& dims) {
  std::vector<int64_t> holds(num_devices_, 1);
  std::vector<std::vector<int64_t>> offsets(dims.size(), std::vector<int64_t>(num_devices_, 0));
  for (int64_t device = 0; device < num_devices_; ++device) {
    ASSIGN_OR_RETURN(std::vector<int64_t> tile, hlo::TileIndexForDevice(sharding, device));
    for (size_t i = 0; i < dims.size(); ++i) {
      const DataTiles& dt = dims[i];
      if (tile[dt.dim] >= dt.tiles) holds[device] = 0;
      offsets[i][device] = std::min(tile[dt.dim], dt.tiles - 1) * dt.shard;
    }
  }
  HloInstruction* placed = value;
  std::vector<int64_t> along;
  for (size_t i = 0; i < dims.size(); ++i) {
    const DataTiles& dt = dims[i];
    along.push_back(dt.dim);
    if (dt.tiles == 1) continue;
    std::vector<int64_t> grown = placed->shape().dimensions();
    grown[dt.dim] = dt.tiles * dt.shard;
    const Shape buffer = Shape::Array(placed->shape().element_type(), grown);
    placed = builder_.UpdateDim(builder_.Zeros(buffer), placed, dt.dim,
                                PerDeviceScalar(offsets[i]));
  }
  const Shape& buffer = placed->shape();
  HloInstruction* masked = builder_.KeepOnDevices(placed, holds);
  ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                   hlo::DeviceGroupsAlongDims(sharding.tile_assignment(), along));
  ASSIGN_OR_RETURN(HloInstruction * summed, AllReduceSum(masked, hlo::GroupLists(groups)));
  std::vector<int64_t> sizes = buffer.dimensions();
  for (const DataTiles& dt : dims) sizes[dt.dim] = dt.size;
  return builder_.SliceTo(summed, sizes);
}

absl::StatusOr<HloInstruction*> PartitionContext::ReshardManual(HloInstruction* value,
                                                                const Shape& base_shape,
                                                                const HloSharding& from,
                                                                const HloSharding& to) {
  auto refuse = [&]() {
    const bool leaving = from.IsManual() || from.HasManualSubgroup();
    return absl::InvalidArgumentError(hlo::StrCat(
        "cannot reshard ", from.ToString(), " to ", to.ToString(), ": ",
        leaving ? "a value inside a manual region (its devices or groups hold different values) "
                  "leaves it only through SPMDShardToFullShape"
                : "a split value enters a manual region only through SPMDFullToShardShape"));
  };
  if (to.IsManual()) {
    // Every device's whole copy (replicated, or whole inside its manual group) is its
    // manual value; a device the sharding does not name has none.
    if (std::optional<int64_t> missing = FirstUnnamedDevice(from, num_devices_)) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "cannot reshard ", from.ToString(), " to ", to.ToString(), ": it is over ",
          from.tile_assignment().num_devices(), " of the ", num_devices_,
          " devices, and the others (device ", *missing, " first) hold no value to make theirs"));
    }
    if (from.IsReplicated() || IsWholeOnEveryDevice(from)) return value;
    return refuse();
  }
  if (!to.HasManualSubgroup() || from.IsManual()) return refuse();
  const bool from_manual = from.HasManualSubgroup();
  std::shared_ptr<const ReshardPlan> plan;
  if (!from_manual) {
    // A global value is the same in every group: take each device's tile of it.
    ASSIGN_OR_RETURN(HloSharding target, ManualSubgroupAsReplicated(to));
    ASSIGN_OR_RETURN(plan, planner_->Plan(base_shape, from, target, num_devices_));
    if (plan->full_rematerialization) ++log_->full_rematerializations;
    if (log_->keep_lines) log_->lines.push_back(plan->Explain());
    const size_t before = output_->instructions().size();
    ASSIGN_OR_RETURN(HloInstruction * entered, emitter_.Emit(value, base_shape, *plan));
    for (size_t i = before; i < output_->instructions().size(); ++i) {
      entering_.insert(output_->instructions()[i].get());
    }
    return entered;
  }
  ReshardPlan grouped;
  ASSIGN_OR_RETURN(HloInstruction * result,
                   EmitGroupedReshard(output_, value, base_shape, from, to, num_devices_,
                                      *planner_, *channel_ids_, &grouped));
  if (grouped.full_rematerialization) ++log_->full_rematerializations;
  if (log_->keep_lines) {
    log_->lines.push_back(hlo::StrCat("within each manual group: ", grouped.Explain()));
  }
  return result;
}

absl::StatusOr<HloInstruction*> PartitionContext::ReshardTuple(HloInstruction* value,
                                                               const Shape& base_shape,
                                                               const HloSharding& from,
                                                               const HloSharding& to) {
  const HloSharding from_tuple = from.IsTuple() ? from : HloSharding::SingleTuple(base_shape, from);
  const HloSharding to_tuple = to.IsTuple() ? to : HloSharding::SingleTuple(base_shape, to);
  // Leaf shardings are flattened in order; walk the (possibly nested) tuple alongside.
  size_t leaf = 0;
  std::function<absl::StatusOr<HloInstruction*>(HloInstruction*, const Shape&)> rebuild =
      [&](HloInstruction* v, const Shape& shape) -> absl::StatusOr<HloInstruction*> {
    if (!shape.IsTuple()) {
      if (leaf >= from_tuple.tuple_elements().size() || leaf >= to_tuple.tuple_elements().size()) {
        return absl::InvalidArgumentError("tuple sharding does not match the tuple shape");
      }
      const HloSharding& a = from_tuple.tuple_elements()[leaf];
      const HloSharding& b = to_tuple.tuple_elements()[leaf];
      ++leaf;
      return Reshard(v, shape, a, b);
    }
    std::vector<HloInstruction*> elements;
    std::vector<Shape> shapes;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      HloInstruction* gte =
          Add(HloOpcode::kGetTupleElement, v->shape().tuple_shapes(i), {v});
      gte->mutable_attrs()->tuple_index = i;
      ASSIGN_OR_RETURN(HloInstruction * element, rebuild(gte, shape.tuple_shapes(i)));
      elements.push_back(element);
      shapes.push_back(element->shape());
    }
    return Add(HloOpcode::kTuple, Shape::Tuple(std::move(shapes)), std::move(elements));
  };
  return rebuild(value, base_shape);
}

absl::StatusOr<HloInstruction*> PartitionContext::GetInSharding(const HloInstruction* original,
                                                                const HloSharding& sharding) {
  ASSIGN_OR_RETURN(const PartitionedValue* pv, Get(original));
  if (pv->sharding == sharding) return pv->value;
  auto key = std::make_pair(original, sharding);
  auto it = resharded_.find(key);
  if (it != resharded_.end()) return it->second;
  HloInstruction* result = nullptr;
  if (std::optional<double> us = RebuildUs(original, sharding, *this)) {
    // Computed again where it is wanted when that beats moving it (rebuild.h).
    const Received moved = ReshardReceived(original->shape(), pv->sharding, sharding, *this);
    if (*us < moved.us) {
      ASSIGN_OR_RETURN(result, RebuildRecorded(original, sharding));
      if (log_->keep_lines) {
        log_->lines.push_back(hlo::StrCat(
            "reshard %", original->name(), " ", pv->sharding.ToStringWithoutMetadata(), " -> ",
            sharding.ToStringWithoutMetadata(), ": rebuilt from available operands, ", *us,
            " us of local work instead of receiving ",
            moved.bytes >= kUnplannable ? std::string("(unplannable)")
                                        : hlo::StrCat(moved.bytes, " bytes"),
            " (", moved.us >= kUnplannableUs ? 0.0 : moved.us, " us)"));
      }
    }
  }
  if (result == nullptr) {
    ASSIGN_OR_RETURN(result, RebuildInsteadOfSlice(original, *pv, sharding));
  }
  if (result == nullptr) {
    ASSIGN_OR_RETURN(result, ReshardAlongConstantDims(*original, *pv, sharding));
  }
  if (result == nullptr) {
    ASSIGN_OR_RETURN(result, Reshard(pv->value, pv->base_shape, pv->sharding, sharding));
  }
  resharded_[key] = result;
  resharded_to_[original].push_back(sharding);
  return result;
}

absl::StatusOr<HloInstruction*> PartitionContext::RebuildInsteadOfSlice(
    const HloInstruction* original, const PartitionedValue& pv, const HloSharding& to) {
  if (!original->shape().IsArray() || pv.sharding.IsManual() ||
      !SameManualGroupsOrNone(pv.sharding, to) ||
      ReshardReceived(original->shape(), pv.sharding, to, *this).bytes != 0) {
    return nullptr;
  }
  std::optional<double> us = RebuildAgainUs(original, to, *this);
  absl::StatusOr<Shape> local = hlo::PaddedShardShape(to, original->shape());
  if (!us || !local.ok()) return nullptr;
  // The slice reads and writes the shard's bytes; the planner prices it at nothing.
  const double slice_us =
      options_->device_model.MemoryTimeUs(2.0 * static_cast<double>(local->byte_size()));
  if (*us > slice_us) return nullptr;
  if (log_->keep_lines) {
    log_->lines.push_back(hlo::StrCat("reshard %", original->name(), " ",
                                      pv.sharding.ToStringWithoutMetadata(), " -> ",
                                      to.ToStringWithoutMetadata(), ": rebuilt (", *us,
                                      " us) rather than sliced from the whole value"));
  }
  return RebuildRecorded(original, to);
}

absl::StatusOr<HloInstruction*> PartitionContext::RebuildRecorded(const HloInstruction* original,
                                                                  const HloSharding& to) {
  const size_t before = output_->instructions().size();
  ASSIGN_OR_RETURN(HloInstruction * result, Rebuild(original, to, *this));
  // A second home of the value (hlo/sharding/spmd_origin.h), when the rebuild made one of its
  // own: a marker rebuilt as its operand's value (a Sharding custom-call of a replicated
  // parameter) returns the operand's home, existing or just made (recorded with the operand when
  // rebuilt; a reshard has no record), and the modular verifier reads an instruction's first
  // record.
  const bool made =
      !RebuiltAsOperand(*original) &&
      std::any_of(output_->instructions().begin() + static_cast<std::ptrdiff_t>(before),
                  output_->instructions().end(),
                  [&](const std::unique_ptr<HloInstruction>& i) { return i.get() == result; });
  if (options_->record_origins && made && !log_->preprocessed.contains(original)) {
    log_->origins.push_back({hlo::SpmdOrigin::Kind::kValue, output_->name(), result->name(),
                             original->parent()->name(), original->name(), to});
  }
  return result;
}

absl::StatusOr<HloInstruction*> PartitionContext::ReshardAlongConstantDims(
    const HloInstruction& original, const PartitionedValue& pv, const HloSharding& to) {
  const Shape& base = pv.base_shape;
  if (!base.IsArray() || base.rank() == 0) return nullptr;
  const int64_t rank = base.rank();
  std::optional<std::vector<int64_t>> from_tiles = PlainTileCounts(pv.sharding, rank);
  std::optional<std::vector<int64_t>> to_tiles = PlainTileCounts(to, rank);
  if (!from_tiles || !to_tiles) return nullptr;
  // The dims along which the value is constant and one of the shardings splits, where every
  // source tile holds at least one element (a device's first element along them is data).
  std::vector<int64_t> dims;
  for (int64_t d : hlo::ConstantAlongDims(original, constant_dims_)) {
    const int64_t n = base.dimensions(d), t = (*from_tiles)[d];
    if (std::max(t, (*to_tiles)[d]) > 1 && (t - 1) * ((n + t - 1) / t) < n) dims.push_back(d);
  }
  if (dims.empty()) return nullptr;
  ASSIGN_OR_RETURN(HloSharding from_rest, hlo::PartiallyReplicate(pv.sharding, dims));
  ASSIGN_OR_RETURN(HloSharding to_rest, hlo::PartiallyReplicate(to, dims));
  // One element along `dims` is the whole value: reshard that, then broadcast it again.
  Shape one = base;
  std::vector<int64_t> local_one = pv.value->shape().dimensions();
  for (int64_t d : dims) {
    one.set_dimension(d, 1);
    local_one[d] = 1;
  }
  HloInstruction* value = builder_.SliceTo(pv.value, local_one);
  if (from_rest != to_rest) {
    ASSIGN_OR_RETURN(value, Reshard(value, one, from_rest, to_rest));
  }
  ASSIGN_OR_RETURN(Shape local, hlo::PaddedShardShape(to, base));
  local.clear_layout();
  std::vector<int64_t> kept, kept_sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) continue;
    kept.push_back(d);
    kept_sizes.push_back(local.dimensions(d));
  }
  HloInstruction* squeezed =
      Add(HloOpcode::kReshape, Shape::Array(base.element_type(), kept_sizes), {value});
  HloInstruction* result = Add(HloOpcode::kBroadcast, local, {squeezed});
  result->mutable_attrs()->dimensions = kept;
  if (log_->keep_lines) {
    log_->lines.push_back(hlo::StrCat(
        "reshard %", original.name(), " ", pv.sharding.ToStringWithoutMetadata(), " -> ",
        to.ToStringWithoutMetadata(), ": constant along dims {", absl::StrJoin(dims, ","),
        "}; one element along them is resharded (", from_rest.ToStringWithoutMetadata(), " -> ",
        to_rest.ToStringWithoutMetadata(), ") and broadcast again"));
  }
  return result;
}

absl::StatusOr<HloInstruction*> PartitionContext::LocalIota(const HloInstruction& original,
                                                            const HloSharding& sharding) {
  const Shape& shape = original.shape();
  const hlo::PrimitiveType type = shape.element_type();
  if (!shape.IsArray() || !PlainTileCounts(sharding, shape.rank()) ||
      !(hlo::IsIntegralType(type) || hlo::IsFloatingPointType(type))) {
    return nullptr;
  }
  const int64_t dim = original.attrs().iota_dimension;
  ASSIGN_OR_RETURN(Shape local, hlo::PaddedShardShape(sharding, shape));
  local.clear_layout();
  const std::vector<int64_t> offsets = ShardBounds(sharding, shape, dim);
  const bool shifted = !IsUniform(offsets) || offsets[0] != 0;
  // The offset and the conversion apply along the iota dim only: computed on a 1-D iota and
  // broadcast, so the local work is one row, not the whole shard.
  const bool as_row = local.rank() > 1 && (shifted || type != PrimitiveType::kS32);
  const Shape row =
      Shape::Array(PrimitiveType::kS32,
                   as_row ? std::vector<int64_t>{local.dimensions(dim)} : local.dimensions());
  HloInstruction* iota = Add(HloOpcode::kIota, row, {});
  iota->mutable_attrs()->iota_dimension = as_row ? 0 : dim;
  if (shifted) {
    HloInstruction* offset = Add(HloOpcode::kBroadcast, row, {PerDeviceScalar(offsets)});
    iota = Add(HloOpcode::kAdd, row, {iota, offset});
  }
  if (type != PrimitiveType::kS32) {
    iota = Add(HloOpcode::kConvert, Shape::Array(type, row.dimensions()), {iota});
  }
  if (!as_row) return iota;
  HloInstruction* whole = Add(HloOpcode::kBroadcast, local, {iota});
  whole->mutable_attrs()->dimensions = {dim};
  return whole;
}

const std::vector<HloSharding>& PartitionContext::ReshardedShardings(
    const HloInstruction* original) const {
  static const std::vector<HloSharding>* const kNone = new std::vector<HloSharding>();
  auto it = resharded_to_.find(original);
  return it == resharded_to_.end() ? *kNone : it->second;
}

std::vector<int64_t> PartitionContext::ShardBounds(const HloSharding& sharding,
                                                   const Shape& shape, int64_t dim,
                                                   bool limits) const {
  std::vector<int64_t> bounds(num_devices_, 0);
  for (int64_t device = 0; device < num_devices_; ++device) {
    absl::StatusOr<hlo::ShardRegion> region = hlo::ShardRegionForDevice(sharding, shape, device);
    if (region.ok()) bounds[device] = limits ? region->limits[dim] : region->offsets[dim];
  }
  return bounds;
}

HloInstruction* PartitionContext::ClampedIndex(HloInstruction* index, int64_t max_start) {
  const Shape s32 = Shape::Array(PrimitiveType::kS32, {});
  HloInstruction* start = index->shape().element_type() == PrimitiveType::kS32
                              ? index
                              : Add(HloOpcode::kConvert, s32, {index});
  return Add(HloOpcode::kClamp, s32,
             {ScalarConstant(PrimitiveType::kS32, 0), start,
              ScalarConstant(PrimitiveType::kS32, static_cast<double>(max_start))});
}

HloInstruction* PartitionContext::PerDeviceScalar(const std::vector<int64_t>& table) {
  // The handlers' partition-id comes before their first table (the emitter's after its first).
  if (!IsUniform(table)) builder_.PartitionId();
  return builder_.PerDeviceScalar(table);
}

HloInstruction* PartitionContext::PositionInRange(const Shape& like, int64_t dim,
                                                  HloInstruction* origin, HloInstruction* lo,
                                                  HloInstruction* hi) {
  return PositionsInRanges(like, {{dim, origin, lo, hi}});
}

HloInstruction* PartitionContext::PositionsInRanges(const Shape& like,
                                                    std::vector<PositionRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const PositionRange& a, const PositionRange& b) { return a.dim < b.dim; });
  std::vector<int64_t> dims, sizes;
  for (const PositionRange& r : ranges) {
    dims.push_back(r.dim);
    sizes.push_back(like.dimensions(r.dim));
  }
  const Shape box = Shape::Array(PrimitiveType::kPred, sizes);
  HloInstruction* mask = nullptr;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const PositionRange& r = ranges[i];
    const Shape index_shape = Shape::Array(PrimitiveType::kS32, {sizes[i]});
    const Shape pred_shape = Shape::Array(PrimitiveType::kPred, {sizes[i]});
    HloInstruction* iota = Add(HloOpcode::kIota, index_shape, {});
    iota->mutable_attrs()->iota_dimension = 0;
    // From a zero origin the positions are the iota, never below a zero `lo`.
    const bool from_zero = IsZeroConstant(*r.origin);
    HloInstruction* position =
        from_zero ? iota
                  : Add(HloOpcode::kAdd, index_shape,
                        {iota, Add(HloOpcode::kBroadcast, index_shape, {r.origin})});
    auto compare = [&](hlo::ComparisonDirection direction, HloInstruction* bound) {
      HloInstruction* c = Add(HloOpcode::kCompare, pred_shape,
                              {position, Add(HloOpcode::kBroadcast, index_shape, {bound})});
      c->mutable_attrs()->comparison_direction = direction;
      return c;
    };
    HloInstruction* in = compare(hlo::ComparisonDirection::kLt, r.hi);
    if (!from_zero || !IsZeroConstant(*r.lo)) {
      in = Add(HloOpcode::kAnd, pred_shape, {compare(hlo::ComparisonDirection::kGe, r.lo), in});
    }
    if (ranges.size() > 1) {
      in = Add(HloOpcode::kBroadcast, box, {in});
      in->mutable_attrs()->dimensions = {static_cast<int64_t>(i)};
    }
    mask = mask == nullptr ? in : Add(HloOpcode::kAnd, box, {mask, in});
  }
  HloInstruction* wide =
      Add(HloOpcode::kBroadcast, Shape::Array(PrimitiveType::kPred, like.dimensions()), {mask});
  wide->mutable_attrs()->dimensions = dims;
  return wide;
}

absl::StatusOr<HloInstruction*> PartitionContext::MaskPadding(HloInstruction* value,
                                                              const Shape& base_shape,
                                                              const HloSharding& sharding,
                                                              HloInstruction* fill) {
  if (!sharding.IsTiled()) return value;
  const Shape& local = value->shape();
  std::vector<PositionRange> ranges;
  for (int64_t d = 0; d < base_shape.rank(); ++d) {
    const int64_t tiles = sharding.tile_assignment().dim(d);
    if (tiles == 1 || base_shape.dimensions(d) % tiles == 0) continue;
    // Valid elements along d on this device: limit - offset of its region.
    std::vector<int64_t> valid = ShardBounds(sharding, base_shape, d, /*limits=*/true);
    const std::vector<int64_t> offsets = ShardBounds(sharding, base_shape, d);
    for (int64_t device = 0; device < num_devices_; ++device) valid[device] -= offsets[device];
    HloInstruction* zero = ScalarConstant(PrimitiveType::kS32, 0);
    ranges.push_back({d, zero, zero, PerDeviceScalar(valid)});
  }
  if (ranges.empty()) return value;
  if (fill == nullptr) fill = ScalarConstant(local.element_type(), 0);
  HloInstruction* mask = PositionsInRanges(local, std::move(ranges));
  HloInstruction* filler = Add(HloOpcode::kBroadcast, local, {fill});
  return Add(HloOpcode::kSelect, local, {mask, value, filler});
}

std::optional<int64_t> FirstUnnamedDevice(const HloSharding& sharding, int64_t num_devices) {
  if (!sharding.IsTiled()) return std::nullopt;
  std::vector<bool> named(num_devices, false);
  for (int64_t device : sharding.tile_assignment().Devices()) {
    if (device >= 0 && device < num_devices) named[device] = true;
  }
  for (int64_t device = 0; device < num_devices; ++device) {
    if (!named[device]) return device;
  }
  return std::nullopt;
}

bool IsWholeOnEveryDevice(const HloSharding& sharding) {
  if (sharding.IsReplicated() || sharding.IsManual()) return true;
  if (!sharding.IsTiled()) return false;
  for (hlo::OpShardingType t : sharding.subgroup_types()) {
    if (t == hlo::OpShardingType::kUnreduced) return false;
  }
  for (int64_t d = 0; d < sharding.TiledDataRank(); ++d) {
    if (sharding.tile_assignment().dim(d) != 1) return false;
  }
  return true;
}

absl::StatusOr<HloInstruction*> PartitionContext::AllReduceSum(
    HloInstruction* value, const std::vector<std::vector<int64_t>>& groups) {
  return builder_.AllReduceSum(value, MakeReplicaGroups(groups));
}

absl::StatusOr<HloInstruction*> PartitionContext::ReduceScatterSum(
    HloInstruction* value, const std::vector<std::vector<int64_t>>& groups, int64_t dim) {
  const int64_t size = groups.empty() ? 1 : static_cast<int64_t>(groups.front().size());
  return builder_.ReduceScatterSum(value, MakeReplicaGroups(groups), size, dim);
}

}  // namespace spmd

// Ops that read a window of their operand along split dimensions: reduce-window, slice, pad,
// concatenate (each operand a window placed at its offset) and reverse (shards mirrored, then
// realigned by a halo when uneven); select-and-scatter has its own file. Each device computes a
// block of the result from its window input (halo_exchange.h). A slice is a window of size 1
// with the slice's stride and padding -start, an edge pad one of size 1 with padding `low` (the
// pad value filling positions outside the operand); the local op then runs with those
// dimensions neutralised. An interior pad is a one-position window base-dilated by interior + 1
// (DilatedWindow: each block pads the inputs it holds and keeps its positions from its offset).
//
// Reduce-window: partitioned along every dimension of the result.
//
// A dimension whose window is trivial (size 1, stride 1, no padding or dilation) maps onto the
// operand's dimension and runs locally. A dimension with a real window gives each device a
// block of output positions computed from its window input (halo_exchange.h): the operand split
// alike plus halos from its neighbours, or a window sliced from the operand whole along it.
// The op's padding adds nothing to a window (the init value counts once per output), so the
// positions outside the operand are filled with the reducer's identity (0 for add, -inf for
// max, ...) and the local reduce-window runs without padding there. Without a known identity
// (another reducer, or a type without one), and with base dilation, those dimensions stay
// whole.
// On 2 devices:
//
//   %r = f32[16] reduce-window(f32[16] %x, f32[] %init), window={size=3 pad=1_1}, to_apply=%max,
//        sharding={devices=[2]<=[2]}
//   with %x in {devices=[2]<=[2]} -> each device adds the neighbouring element to its f32[8]
//   shard (collective-permute), the outer ends become -inf:
//   %r.spmd = f32[8] reduce-window(f32[10] ..., %init), window={size=3}
#include <algorithm>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "hlo/ir/custom_call_config.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/combiners.h"
#include "spmd/partitioner/composed_concat.h"
#include "spmd/partitioner/halo_exchange.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/partitioner/masked_slice.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

// For an op whose operand 0 has the result's dims (reduce-window, slice, pad): chooses halo
// exchange or window slices for `splits` (ChooseWindowInputs) and returns the sharding operand 0
// is fetched in: `local`'s tiling, whole along the dims sliced locally.
absl::StatusOr<HloSharding> ChooseSameRankOperand(const HloInstruction& original,
                                                  const HloSharding& local,
                                                  std::vector<WindowSplit>& splits,
                                                  PartitionContext& ctx) {
  ASSIGN_OR_RETURN(const PartitionedValue* operand_now, ctx.Get(original.operand(0)));
  ChooseWindowInputs(original, original.operand(0)->shape(), operand_now->sharding, splits, ctx);
  const int64_t rank = original.operand(0)->shape().rank();
  std::vector<int64_t> operand_map(rank);
  for (int64_t d = 0; d < rank; ++d) operand_map[d] = d;
  for (const WindowSplit& split : splits) {
    if (!split.halo) operand_map[split.wd.dim] = -1;
  }
  return hlo::OperandShardingFromResult(local, rank, operand_map);
}

// A reduce-window computed in some tiling: the result's local tiling (whole along the dims
// that cannot stay split), the tiling its operand is fetched in, and the split window dims.
struct WindowPlan {
  HloSharding local = HloSharding::Replicate();
  HloSharding operand = HloSharding::Replicate();
  std::vector<WindowSplit> splits;
};

// The plan for computing `original` (a plain reduce-window) in `sharding`, or the reason none
// keeps a split.
absl::StatusOr<std::optional<WindowPlan>> PlanReduceWindow(const HloInstruction& original,
                                                           const HloSharding& sharding,
                                                           bool has_identity,
                                                           PartitionContext& ctx) {
  const hlo::Window& window = *original.attrs().window;
  std::vector<int64_t> whole;
  WindowPlan plan;
  for (int64_t d = 0; d < original.shape().rank(); ++d) {
    const int64_t tiles = sharding.tile_assignment().dim(d);
    const hlo::WindowDimension& w = window.dimensions[d];
    if (tiles == 1 || TrivialWindow(w)) continue;
    WindowSplit split;
    split.wd = {d, tiles, original.operand(0)->shape().dimensions(d),
                original.shape().dimensions(d), w};
    split.output_dim = d;
    split.window_index = d;
    if (!has_identity || (!SplittableWindow(w) && !DilatedWindowGeometry(split.wd).has_value())) {
      whole.push_back(d);
      continue;
    }
    plan.splits.push_back(split);
  }
  ASSIGN_OR_RETURN(plan.local, hlo::PartiallyReplicate(sharding, whole));
  if (plan.local.IsReplicated()) return std::optional<WindowPlan>();
  ASSIGN_OR_RETURN(plan.operand, ChooseSameRankOperand(original, plan.local, plan.splits, ctx));
  return std::optional<WindowPlan>(std::move(plan));
}

// What a plan receives: its operand's reshard, halos, and its result's reshard to `wanted`.
Received PlanReceived(const HloInstruction& original, const WindowPlan& plan,
                      const HloSharding& wanted, PartitionContext& ctx) {
  Received r = ReshardReceived(original.operand(0), plan.operand, ctx) +
               HalosReceived(original.operand(0)->shape(), plan.operand, plan.splits, ctx);
  if (!(plan.local == wanted)) r = r + ReshardReceived(original.shape(), plan.local, wanted, ctx);
  return r;
}

absl::Status EmitReduceWindow(const HloInstruction& original, std::optional<hlo::Literal> identity,
                              WindowPlan plan, PartitionContext& ctx) {
  ASSIGN_OR_RETURN(HloInstruction * init, GetReplicated(original.operand(1), ctx));
  HloInstruction* fill = nullptr;
  if (!plan.splits.empty()) {
    fill = ctx.Add(hlo::HloOpcode::kConstant, init->shape(), {});
    fill->mutable_attrs()->literal = *std::move(identity);
  }
  const bool zero = fill != nullptr && IsZeroConstant(*fill);
  ASSIGN_OR_RETURN(HloInstruction * operand,
                   BuildWindowInput(ctx, original.operand(0), plan.operand, plan.local, plan.splits,
                                    fill, zero ? Outside::kZeroPad : Outside::kPad));
  ASSIGN_OR_RETURN(Shape local_shape, LocalShape(plan.local, original.shape()));
  local_shape = WithDims(local_shape, WindowOutputDims(local_shape.dimensions(), plan.splits));
  HloInstruction* result = CloneWithOperands(original, local_shape, {operand, init}, ctx);
  result->mutable_attrs()->window = WithoutPadding(*original.attrs().window, plan.splits);
  ASSIGN_OR_RETURN(result, CutDilatedOutputs(ctx, result, plan.local, plan.splits));
  ctx.Set(&original, {result, plan.local, original.shape()});
  return absl::OkStatus();
}

// Reduce-window: computed in the wanted sharding, or in its operand's current tiling and the
// result resharded when that receives less within 5% of the time (a cumulative sum wanted whole
// along a dim its operand splits: scanned with that dim split, then gathered, instead of
// gathering the operand along both dims first). Each candidate's explain lines are kept only
// for the one chosen.
absl::Status HandleReduceWindow(const HloInstruction& original, const HloSharding& sharding,
                                PartitionContext& ctx) {
  const bool plain =
      original.shape().IsArray() && original.operand_count() == 2 && MovesDataInTiling(sharding) &&
      original.attrs().window.has_value() &&
      static_cast<int64_t>(original.attrs().window->dimensions.size()) == original.shape().rank();
  if (!plain)
    return FallBackToReplicated(original, sharding, ctx,
                                "a window op with partial sums in its sharding");
  const std::optional<hlo::HloOpcode> op = hlo::MatchCombiner(*original.to_apply());
  std::optional<hlo::Literal> identity =
      op.has_value() ? CombinerIdentity(*op, original.shape().element_type()) : std::nullopt;
  std::vector<std::string>& lines = ctx.log().lines;
  const size_t first_line = lines.size();
  ASSIGN_OR_RETURN(std::optional<WindowPlan> direct,
                   PlanReduceWindow(original, sharding, identity.has_value(), ctx));
  if (!direct.has_value())
    return FallBackToReplicated(original, sharding, ctx, "no windowed dimension can stay split");
  ASSIGN_OR_RETURN(const PartitionedValue* operand_now, ctx.Get(original.operand(0)));
  const HloSharding& current = operand_now->sharding;
  const size_t alt_line = lines.size();
  std::optional<WindowPlan> alt;
  if (MovesDataInTiling(current) && SameManualGroupsOrNone(current, sharding) &&
      current.TiledDataRank() == original.shape().rank() && !(current == sharding)) {
    ASSIGN_OR_RETURN(alt, PlanReduceWindow(original, current, identity.has_value(), ctx));
  }
  if (alt.has_value()) {
    const Received d = PlanReceived(original, *direct, sharding, ctx);
    const Received a = PlanReceived(original, *alt, sharding, ctx);
    if (ChooseNearFastest({d.us, a.us}, {d.bytes, a.bytes}) == 1) {
      lines.erase(lines.begin() + first_line, lines.begin() + alt_line);
      if (ctx.log().keep_lines) {
        lines.push_back(hlo::StrCat("%", original.name(), ": computed in its operand's tiling ",
                                    alt->local.ToStringWithoutMetadata(), " and resharded to ",
                                    sharding.ToStringWithoutMetadata(), " (", a.bytes, " bytes, ",
                                    a.us, " us, against ", d.bytes, " bytes, ", d.us, " us)"));
      }
      const HloSharding computed = alt->local;
      RETURN_IF_ERROR(EmitReduceWindow(original, std::move(identity), *std::move(alt), ctx));
      ASSIGN_OR_RETURN(const PartitionedValue* value, ctx.Get(&original));
      ASSIGN_OR_RETURN(HloInstruction * result,
                       ctx.Reshard(value->value, original.shape(), computed, sharding));
      ctx.Set(&original, {result, sharding, original.shape()});
      return absl::OkStatus();
    }
  }
  lines.erase(lines.begin() + alt_line, lines.end());
  return EmitReduceWindow(original, std::move(identity), *std::move(direct), ctx);
}

// The backend_config of _SPMDInternalOp_MultiSlice.
struct MultiSliceConfig {
  int64_t dim = 0;
  int64_t amount = 0;
  std::vector<int64_t> start, strides;
};

absl::StatusOr<MultiSliceConfig> ReadMultiSlice(const HloInstruction& original) {
  ASSIGN_OR_RETURN(
      hlo::CustomCallConfig config,
      hlo::CustomCallConfig::Parse(
          original.attrs().custom_call_target, original.attrs().backend_config,
          {"dimension", "amount", "start_indices", "limit_indices", "strides", "bufferize"}));
  MultiSliceConfig c;
  ASSIGN_OR_RETURN(c.dim, config.Int("dimension"));
  ASSIGN_OR_RETURN(c.amount, config.Int("amount"));
  ASSIGN_OR_RETURN(c.start, config.List("start_indices"));
  ASSIGN_OR_RETURN(c.strides, config.List("strides"));
  const int64_t rank = original.operand(0)->shape().rank();
  RET_CHECK(c.dim >= 0 && c.dim < rank && c.amount >= 0 &&
            static_cast<int64_t>(c.start.size()) == rank &&
            static_cast<int64_t>(c.strides.size()) == rank);
  return c;
}

// Whether every leaf of `sharding` is `leaf`, a plain tiling.
bool OneTiling(const HloSharding& sharding, const HloSharding& leaf) {
  if (!MovesDataInTiling(leaf)) return false;
  if (!sharding.IsTuple()) return sharding == leaf;
  for (const HloSharding& element : sharding.tuple_elements()) {
    if (element != leaf) return false;
  }
  return true;
}

// Result i of a multi-slice cut from the local window input `window` (split dims start at the
// device's block, others hold the whole operand).
HloInstruction* CutSlice(const MultiSliceConfig& c, int64_t i, const HloSharding& local,
                         const Shape& local_leaf, HloInstruction* window, PartitionContext& ctx) {
  HloInstruction* slice = ctx.Add(hlo::HloOpcode::kSlice, local_leaf, {window});
  std::vector<hlo::SliceDimension>& dims = slice->mutable_attrs()->slice_dimensions;
  for (int64_t d = 0; d < local_leaf.rank(); ++d) {
    const int64_t size = local_leaf.dimensions(d);
    const int64_t shift = d == c.dim ? i : 0;
    if (local.tile_assignment().dim(d) > 1) {
      dims.push_back({shift, shift + size, 1});
    } else {
      const int64_t from = c.start[d] + shift;
      dims.push_back({from, from + (size - 1) * c.strides[d] + 1, c.strides[d]});
    }
  }
  return slice;
}

// XLA's _SPMDInternalOp_MultiSlice: A+1 results, result i the slice start..limit (strides)
// shifted by i along `dimension`. Split along that dim (stride 1), output position j of every
// result reads a window of A+1 elements from start + j, so each device builds one window input
// for its block (halo exchange, or a slice of the operand whole there) and cuts each result at
// offset i. Another split dim stays split only where it is sliced whole; unsplit dims are sliced
// locally. On 2 devices, f64[1536] -> 4 x f64[1520] from 6: device 1 receives the 3 elements
// before its shard instead of the shard.
absl::Status HandleMultiSlice(const HloInstruction& original, const HloSharding& sharding,
                              PartitionContext& ctx) {
  const Shape& shape = original.operand(0)->shape();
  const HloSharding& leaf = sharding.IsTuple() ? sharding.tuple_elements().front() : sharding;
  absl::StatusOr<MultiSliceConfig> config =
      shape.IsArray() ? ReadMultiSlice(original) : absl::InvalidArgumentError("not an array");
  if (!config.ok() || !OneTiling(sharding, leaf)) {
    return FallBackToReplicated(original, sharding, ctx,
                                "a multi-slice with subgroups or differing leaves in its sharding");
  }
  const MultiSliceConfig& c = *config;
  const Shape& result_leaf =
      original.shape().IsTuple() ? original.shape().tuple_shapes(0) : original.shape();
  std::vector<int64_t> whole;
  std::vector<WindowSplit> splits;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const int64_t tiles = leaf.tile_assignment().dim(d);
    const bool identity =
        c.start[d] == 0 && c.strides[d] == 1 && result_leaf.dimensions(d) == shape.dimensions(d);
    if (tiles == 1 || (d != c.dim && identity)) continue;
    if (d != c.dim || c.strides[d] != 1) {
      whole.push_back(d);
      continue;
    }
    WindowSplit split;
    split.wd = {d, tiles, shape.dimensions(d), result_leaf.dimensions(d), hlo::WindowDimension()};
    split.wd.window.size = c.amount + 1;
    split.wd.window.padding_low = -c.start[d];
    split.wd.window.padding_high =
        result_leaf.dimensions(d) + c.amount - shape.dimensions(d) + c.start[d];
    split.output_dim = d;
    split.window_index = d;
    splits.push_back(split);
  }
  ASSIGN_OR_RETURN(HloSharding local, hlo::PartiallyReplicate(leaf, whole));
  if (WholeWhereItLives(local))
    return FallBackToReplicated(original, sharding, ctx, "no sliced dimension can stay split");
  ASSIGN_OR_RETURN(HloSharding operand_sharding,
                   ChooseSameRankOperand(original, local, splits, ctx));
  ASSIGN_OR_RETURN(HloInstruction * window,
                   BuildWindowInput(ctx, original.operand(0), operand_sharding, local, splits,
                                    ctx.ScalarConstant(shape.element_type(), 0), Outside::kPad));
  ASSIGN_OR_RETURN(Shape local_leaf, LocalShape(local, result_leaf));
  std::vector<HloInstruction*> results;
  for (int64_t i = 0; i <= c.amount; ++i) {
    results.push_back(CutSlice(c, i, local, local_leaf, window, ctx));
  }
  HloInstruction* result = results.front();
  HloSharding result_sharding = local;
  if (original.shape().IsTuple()) {
    result = ctx.Add(hlo::HloOpcode::kTuple,
                     Shape::Tuple(std::vector<Shape>(results.size(), local_leaf)), results);
    result_sharding = HloSharding::SingleTuple(original.shape(), local);
  }
  ctx.Set(&original, {result, result_sharding, original.shape()});
  return absl::OkStatus();
}

// The window of a slice or pad along `d` as a WindowedDim, or nullopt when `d` moves no data
// or cannot be split. A pad with interior padding is a one-position window over its operand
// base-dilated by interior + 1 (halo_exchange.h DilatedWindow): each block fetches the inputs
// it holds, pads them with the interior and one low edge for every device, and keeps its
// positions from its own offset.
std::optional<WindowedDim> SlicePadWindow(const HloInstruction& original, int64_t d,
                                          int64_t tiles) {
  WindowedDim wd;
  wd.dim = d;
  wd.tiles = tiles;
  wd.input_size = original.operand(0)->shape().dimensions(d);
  wd.output_size = original.shape().dimensions(d);
  if (original.opcode() == hlo::HloOpcode::kSlice) {
    const hlo::SliceDimension& slice = original.attrs().slice_dimensions[d];
    if (slice.start == 0 && slice.stride == 1 && slice.limit == wd.input_size) return std::nullopt;
    wd.window.stride = slice.stride;
    wd.window.padding_low = -slice.start;
    return wd;
  }
  const hlo::PaddingDimension& pad = original.attrs().padding_config->dimensions[d];
  if (pad.edge_padding_low == 0 && pad.edge_padding_high == 0 && pad.interior_padding == 0) {
    return std::nullopt;
  }
  wd.window.padding_low = pad.edge_padding_low;
  wd.window.padding_high = pad.edge_padding_high;
  if (pad.interior_padding != 0) {
    wd.window.base_dilation = pad.interior_padding + 1;
    if (wd.input_size == 0 || !DilatedWindowGeometry(wd).has_value()) return std::nullopt;
  }
  return wd;
}

bool MovesData(const HloInstruction& original, int64_t d) {
  if (original.opcode() == hlo::HloOpcode::kSlice) {
    const hlo::SliceDimension& slice = original.attrs().slice_dimensions[d];
    return slice.start != 0 || slice.stride != 1 ||
           slice.limit != original.operand(0)->shape().dimensions(d);
  }
  const hlo::PaddingDimension& pad = original.attrs().padding_config->dimensions[d];
  return pad.edge_padding_low != 0 || pad.edge_padding_high != 0 || pad.interior_padding != 0;
}

// The window splits of a slice or pad computed in `sharding` (tiled): one per split dim it
// moves data along; such dims that cannot stay split (SlicePadWindow) go to `*whole`.
std::vector<WindowSplit> SlicePadSplits(const HloInstruction& original, const HloSharding& sharding,
                                        std::vector<int64_t>* whole) {
  std::vector<WindowSplit> splits;
  for (int64_t d = 0; d < original.shape().rank(); ++d) {
    const int64_t tiles = sharding.tile_assignment().dim(d);
    if (tiles == 1 || !MovesData(original, d)) {
      continue;
    }
    std::optional<WindowedDim> wd = SlicePadWindow(original, d, tiles);
    if (!wd.has_value()) {
      whole->push_back(d);
      continue;
    }
    WindowSplit split;
    split.wd = *wd;
    split.output_dim = d;
    split.window_index = d;
    splits.push_back(split);
  }
  return splits;
}

// The estimated time of the halo exchanges a slice or pad computed in `tiling` needs along the
// dims it moves data along and `tiling` splits; nullopt when such a dim cannot be split
// (interior padding) or its halos would be as large as gathering it.
std::optional<double> HaloCostUs(const HloInstruction& original, const HloSharding& tiling,
                                 PartitionContext& ctx) {
  std::vector<int64_t> whole;
  std::vector<WindowSplit> splits = SlicePadSplits(original, tiling, &whole);
  if (!whole.empty()) return std::nullopt;
  for (WindowSplit& split : splits) {
    split.halo = true;
    split.geometry = ComputeHaloGeometry(split.wd);
    if (HaloElements(split.geometry) >= GatherElements(split.geometry, split.wd.tiles)) {
      return std::nullopt;
    }
  }
  return HalosReceived(original.operand(0)->shape(), tiling, splits, ctx).us;
}

// How a slice or pad runs when not directly in the wanted sharding: in `tiling`, its result
// resharded to the wanted one after.
struct SliceOrPadPlan {
  HloSharding tiling = HloSharding::Replicate();
  // A slice by masked local windows and one all-reduce (masked_slice.h): its split moved dims.
  std::optional<MaskedSliceDims> masked;
};

// The dims a slice or pad moves data along.
std::vector<int64_t> MovingDims(const HloInstruction& original) {
  std::vector<int64_t> moving;
  for (int64_t d = 0; d < original.shape().rank(); ++d) {
    if (MovesData(original, d)) moving.push_back(d);
  }
  return moving;
}

// A slice whose moved dims its operand (in `current`) splits, taken by masked local windows
// (masked_slice.h): its result in `current` with those dims whole, and what the all-reduce
// receives; nullopt when that does not apply.
std::optional<std::pair<MaskedSliceDims, Received>> MaskedSliceCost(const HloInstruction& original,
                                                                    const HloSharding& current,
                                                                    const HloSharding& whole_moving,
                                                                    PartitionContext& ctx) {
  if (original.opcode() != hlo::HloOpcode::kSlice || original.shape().num_elements() == 0) {
    return std::nullopt;
  }
  std::optional<MaskedSliceDims> dims =
      MaskedSliceApplies(current, MovingDims(original), original.shape().element_type(), ctx);
  if (!dims.has_value()) return std::nullopt;
  absl::StatusOr<Shape> local = LocalShape(whole_moving, original.shape());
  if (!local.ok()) return std::nullopt;
  return std::make_pair(*dims, MaskedSliceReceived(*local, dims->group, ctx));
}

// Computing a slice or pad in the operand's current tiling (the dims it moves data along
// whole) and resharding the result may move less than bringing the operand to the wanted
// `sharding` first: a slice shrinks what travels (a top-k's first columns of a sorted array
// resharded after the slice, not before; the few columns a reflect pad mirrors, sliced from
// each shard and summed, not the whole array gathered). Returns that plan when it is cheaper by
// the planner's estimate than the cheaper of the direct way's operand reshards.
absl::StatusOr<std::optional<SliceOrPadPlan>> CheaperInOperandTiling(const HloInstruction& original,
                                                                     const HloSharding& sharding,
                                                                     PartitionContext& ctx) {
  const int64_t rank = original.shape().IsArray() ? original.shape().rank() : 0;
  if (rank == 0 || !(sharding.IsReplicated() || sharding.IsTiled())) return std::nullopt;
  if (sharding.IsTiled() && !MovesDataInTiling(sharding)) return std::nullopt;
  const std::vector<int64_t> moving = MovingDims(original);
  std::vector<int64_t> split_moving;
  for (int64_t d : moving) {
    if (sharding.IsTiled() && sharding.tile_assignment().dim(d) > 1) split_moving.push_back(d);
  }
  ASSIGN_OR_RETURN(const PartitionedValue* operand, ctx.Get(original.operand(0)));
  const HloSharding& current = operand->sharding;
  if (!MovesDataInTiling(current) || !SameManualGroupsOrNone(current, sharding) ||
      current.TiledDataRank() != rank) {
    return std::nullopt;
  }
  // The direct way brings the operand to the result's tiling, or (a split dim it moves data
  // along) to that tiling whole there; its cheaper reshard is a lower bound of its cost.
  ASSIGN_OR_RETURN(double direct, ReshardCost(original.operand(0), sharding, ctx));
  if (!split_moving.empty()) {
    ASSIGN_OR_RETURN(HloSharding whole, hlo::PartiallyReplicate(sharding, split_moving));
    ASSIGN_OR_RETURN(double whole_cost, ReshardCost(original.operand(0), whole, ctx));
    direct = std::min(direct, whole_cost);
  }
  // The operand's tiling with the dims the op moves data along made whole, or as it is (those
  // dims by halo exchange, XLA's choice for a slice whose result is wanted whole).
  ASSIGN_OR_RETURN(HloSharding whole_moving, hlo::PartiallyReplicate(current, moving));
  std::optional<SliceOrPadPlan> best;
  double in = 0, out = 0, best_us = direct;
  std::string how;
  for (const HloSharding& alt : {whole_moving, current}) {
    if (!MovesDataInTiling(alt) || alt == sharding) continue;
    ASSIGN_OR_RETURN(double alt_in, ReshardCost(original.operand(0), alt, ctx));
    const std::optional<double> halos = HaloCostUs(original, alt, ctx);
    if (!halos.has_value()) continue;
    ASSIGN_OR_RETURN(double alt_out, ResultCost(original.shape(), alt, sharding, ctx));
    if (alt_in + *halos + alt_out >= best_us) continue;
    best = SliceOrPadPlan{alt, std::nullopt};
    in = alt_in + *halos;
    out = alt_out;
    best_us = alt_in + *halos + alt_out;
    how = "computed in its operand's tiling ";
  }
  if (const auto masked = MaskedSliceCost(original, current, whole_moving, ctx)) {
    ASSIGN_OR_RETURN(double masked_out, ResultCost(original.shape(), whole_moving, sharding, ctx));
    if (masked->second.us + masked_out < best_us) {
      best = SliceOrPadPlan{whole_moving, masked->first};
      in = masked->second.us;
      out = masked_out;
      best_us = in + out;
      how = hlo::StrCat("sliced from each shard of its operand, masked and summed (all-reduce of ",
                        masked->second.bytes, " bytes) in ");
    }
  }
  if (!best.has_value()) return std::nullopt;
  if (ctx.log().keep_lines) {
    ctx.log().lines.push_back(
        hlo::StrCat("%", original.name(), ": ", how, best->tiling.ToStringWithoutMetadata(),
                    best->tiling == sharding
                        ? std::string()
                        : hlo::StrCat(" and resharded to ", sharding.ToStringWithoutMetadata()),
                    " (", in + out, " us estimated, against ", direct,
                    " us to bring the operand to the result's tiling)"));
  }
  return best;
}

// The slice `original` by masked local windows (masked_slice.h) over the split moved `dims`,
// in `tiling`: its operand's current one with the moved dims whole.
absl::Status MaskedSlice(const HloInstruction& original, const HloSharding& tiling,
                         const MaskedSliceDims& dims, PartitionContext& ctx) {
  ASSIGN_OR_RETURN(const PartitionedValue* in, ctx.Get(original.operand(0)));
  const std::vector<int64_t> moving = MovingDims(original);
  ASSIGN_OR_RETURN(Shape local, LocalShape(tiling, original.shape()));
  // The window each slice dim reads, from its first position to its last (strides applied
  // after the mask).
  std::vector<int64_t> sizes = local.dimensions();
  std::vector<HloInstruction*> starts(local.rank(), nullptr);
  for (int64_t d : moving) {
    const hlo::SliceDimension& slice = original.attrs().slice_dimensions[d];
    sizes[d] = (original.shape().dimensions(d) - 1) * slice.stride + 1;
    starts[d] = ctx.ScalarConstant(hlo::PrimitiveType::kS32, static_cast<double>(slice.start));
  }
  ASSIGN_OR_RETURN(HloInstruction * window,
                   MaskedLocalWindow(ctx, in->value, in->sharding, original.operand(0)->shape(),
                                     starts, sizes, dims));
  if (window->shape().dimensions() != local.dimensions()) {
    HloInstruction* strided = ctx.Add(hlo::HloOpcode::kSlice, local, {window});
    std::vector<hlo::SliceDimension>& slices = strided->mutable_attrs()->slice_dimensions;
    slices.resize(local.rank());
    for (int64_t d = 0; d < local.rank(); ++d) {
      const bool moved = std::find(moving.begin(), moving.end(), d) != moving.end();
      slices[d] = {0, sizes[d], moved ? original.attrs().slice_dimensions[d].stride : 1};
    }
    window = strided;
  }
  ASSIGN_OR_RETURN(HloInstruction * sum, SumMaskedWindows(ctx, window, in->sharding, dims));
  ctx.Set(&original, {sum, tiling, original.shape()});
  return absl::OkStatus();
}

absl::Status SliceOrPadIn(const HloInstruction& original, const HloSharding& sharding,
                          PartitionContext& ctx);

absl::Status HandleSliceOrPad(const HloInstruction& original, const HloSharding& sharding,
                              PartitionContext& ctx) {
  ASSIGN_OR_RETURN(std::optional<SliceOrPadPlan> plan,
                   CheaperInOperandTiling(original, sharding, ctx));
  if (!plan.has_value()) return SliceOrPadIn(original, sharding, ctx);
  RETURN_IF_ERROR(plan->masked.has_value() ? MaskedSlice(original, plan->tiling, *plan->masked, ctx)
                                           : SliceOrPadIn(original, plan->tiling, ctx));
  if (plan->tiling == sharding) return absl::OkStatus();
  ASSIGN_OR_RETURN(const PartitionedValue* computed, ctx.Get(&original));
  ASSIGN_OR_RETURN(HloInstruction * result,
                   ctx.Reshard(computed->value, original.shape(), plan->tiling, sharding));
  ctx.Set(&original, {result, sharding, original.shape()});
  return absl::OkStatus();
}

// The slice or pad computed in `sharding` (its split dims by halo exchange or window slices).
absl::Status SliceOrPadIn(const HloInstruction& original, const HloSharding& sharding,
                          PartitionContext& ctx) {
  const bool is_slice = original.opcode() == hlo::HloOpcode::kSlice;
  const bool plain = original.shape().IsArray() && original.shape().rank() > 0 &&
                     MovesDataInTiling(sharding) &&
                     (is_slice || original.attrs().padding_config.has_value());
  if (!plain)
    return FallBackToReplicated(original, sharding, ctx,
                                "a slice or pad with partial sums in its sharding");
  const int64_t rank = original.shape().rank();
  std::vector<int64_t> whole;
  std::vector<WindowSplit> splits = SlicePadSplits(original, sharding, &whole);
  ASSIGN_OR_RETURN(HloSharding local, hlo::PartiallyReplicate(sharding, whole));
  if (WholeWhereItLives(local))
    return FallBackToReplicated(original, sharding, ctx,
                                "no sliced or padded dimension can stay split");
  ASSIGN_OR_RETURN(HloSharding operand_sharding,
                   ChooseSameRankOperand(original, local, splits, ctx));
  std::vector<HloInstruction*> operands;
  HloInstruction* fill = nullptr;
  if (is_slice) {
    // A slice's valid blocks read only inside the operand; nothing is ever filled.
    fill = ctx.ScalarConstant(original.shape().element_type(), 0);
  } else {
    ASSIGN_OR_RETURN(fill, GetReplicated(original.operand(1), ctx));
  }
  const bool zero = is_slice || IsZeroConstant(*original.operand(1));
  ASSIGN_OR_RETURN(HloInstruction * operand,
                   BuildWindowInput(ctx, original.operand(0), operand_sharding, local, splits, fill,
                                    zero ? Outside::kZeroPad : Outside::kPad));
  operands.push_back(operand);
  if (!is_slice) operands.push_back(fill);
  ASSIGN_OR_RETURN(Shape local_shape, LocalShape(local, original.shape()));
  local_shape = WithDims(local_shape, WindowOutputDims(local_shape.dimensions(), splits));
  HloInstruction* result = CloneWithOperands(original, local_shape, operands, ctx);
  hlo::InstructionAttributes& attrs = *result->mutable_attrs();
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t tiles = local.tile_assignment().dim(d);
    if (tiles == 1) continue;
    // Split dims: the window input holds exactly this device's block (strided for a slice).
    if (is_slice) {
      attrs.slice_dimensions[d] = {0, operand->shape().dimensions(d),
                                   original.attrs().slice_dimensions[d].stride};
      if (!MovesData(original, d)) attrs.slice_dimensions[d].stride = 1;
    } else {
      hlo::PaddingDimension& pad = attrs.padding_config->dimensions[d];
      pad.edge_padding_low = pad.edge_padding_high = 0;
    }
  }
  // Interior pads: the edges every block shares (DilatedWindow), then each block's positions
  // cut from its own offset.
  for (const WindowSplit& split : splits) {
    if (split.wd.window.base_dilation <= 1) continue;
    std::optional<DilatedWindow> dw = DilatedWindowGeometry(split.wd);
    RET_CHECK(dw.has_value());
    hlo::PaddingDimension& pad = attrs.padding_config->dimensions[split.output_dim];
    pad.edge_padding_low = dw->padding_low;
    pad.edge_padding_high = dw->padding_high;
  }
  ASSIGN_OR_RETURN(result, CutDilatedOutputs(ctx, result, local, splits));
  ctx.Set(&original, {result, local, original.shape()});
  return absl::OkStatus();
}

HloInstruction* S32(PartitionContext& ctx, int64_t value) {
  return ctx.ScalarConstant(hlo::PrimitiveType::kS32, static_cast<double>(value));
}

// Each device's start along `d` of its block under `sharding` (blocks of `block` elements).
HloInstruction* BlockStart(PartitionContext& ctx, const HloSharding& sharding, int64_t d,
                           int64_t block) {
  std::vector<int64_t> table(ctx.num_devices(), 0);
  for (int64_t device = 0; device < ctx.num_devices(); ++device) {
    absl::StatusOr<std::vector<int64_t>> index = hlo::TileIndexForDevice(sharding, device);
    if (index.ok()) table[device] = (*index)[d] * block;
  }
  return ctx.PerDeviceScalar(table);
}

// Bytes received and collectives used by a way to build a concatenate's operands.
struct ConcatCost {
  int64_t bytes = 0;
  int64_t collectives = 0;
  double us = 0;
  void Add(const Received& r, int64_t c) {
    bytes += r.bytes;
    us += r.us;
    collectives += r.bytes > 0 ? c : 0;
  }
};

// The cost of the windowed concatenate (`splits[i]` for operand i, as ChooseWindowInputs chose)
// and of gathering each distinct operand whole along the dim (`whole_d`) to concatenate locally.
absl::StatusOr<std::pair<ConcatCost, ConcatCost>> ConcatCosts(
    const HloInstruction& original, const HloSharding& sharding, const HloSharding& whole_d,
    const std::vector<WindowSplit>& splits, PartitionContext& ctx) {
  ConcatCost windowed, gathered;
  std::vector<const HloInstruction*> seen_whole, seen_split, seen_gathered;
  auto once = [](std::vector<const HloInstruction*>& seen, const HloInstruction* op) {
    if (std::find(seen.begin(), seen.end(), op) != seen.end()) return false;
    seen.push_back(op);
    return true;
  };
  for (size_t i = 0; i < splits.size(); ++i) {
    const HloInstruction* operand = original.operand(i);
    if (once(seen_gathered, operand)) {
      gathered.Add(ReshardReceived(operand, whole_d, ctx), 1);
    }
    const WindowSplit& split = splits[i];
    if (!split.halo) {
      if (!once(seen_whole, operand)) continue;
      windowed.Add(ReshardReceived(operand, whole_d, ctx), 1);
      continue;
    }
    if (once(seen_split, operand)) {
      windowed.Add(ReshardReceived(operand, sharding, ctx), 1);
    }
    windowed.Add(HaloReceived(operand->shape(), sharding, split, ctx), HaloHops(split.geometry));
  }
  return std::make_pair(windowed, gathered);
}

// The concatenate built from its operands' sources (composed_concat.h) when that costs no
// more bytes and no more time than `other`, the way the handler would build it otherwise (ties
// go to the composition: the slices and pads it reads through then feed nothing, so the halos
// they moved, not counted here, are saved too). Returns whether it was.
absl::StatusOr<bool> TryComposedConcat(const HloInstruction& original, const HloSharding& sharding,
                                       const ConcatCost& other, std::string_view other_name,
                                       PartitionContext& ctx) {
  std::optional<ComposedConcat> plan = PlanComposedConcat(original, sharding);
  if (!plan.has_value()) return false;
  const Received composed = ComposedConcatCost(*plan, sharding, ctx);
  if (other.us <= 0 || composed.us > other.us || composed.bytes > other.bytes) return false;
  if (ctx.log().keep_lines) {
    ctx.log().lines.push_back(hlo::StrCat(
        "%", original.name(), ": composed from pieces of its operands' sources along dimension ",
        plan->dim, " (", composed.bytes, " bytes, ", composed.us, " us; ", other_name,
        " would take ", other.bytes, " bytes, ", other.us, " us)"));
  }
  ASSIGN_OR_RETURN(HloInstruction * result,
                   EmitComposedConcat(*plan, original.shape(), sharding, ctx));
  ctx.Set(&original, {result, sharding, original.shape()});
  return true;
}

// Concatenate along a split dimension: operand i is the window of size 1 with padding
// `offset_i` (its place in the result); each device builds its block of every operand's
// window (halo exchange or local slice) and selects, position by position, the operand that
// covers it. When gathering each distinct operand whole along the dimension receives fewer
// bytes in no more collectives (an operand concatenated with itself: XLA's
// DoNotPartitionConcatenate), the concatenate runs whole along it instead and its users take
// their blocks locally. Without a split concatenate dimension the op runs locally.
absl::Status HandleConcatenate(const HloInstruction& original, const HloSharding& sharding,
                               PartitionContext& ctx) {
  const bool plain = original.shape().IsArray() && original.shape().rank() > 0 &&
                     MovesDataInTiling(sharding) && original.dimensions().size() == 1;
  if (!plain)
    return FallBackToReplicated(original, sharding, ctx,
                                "a concatenate with partial sums in its sharding");
  const int64_t d = original.dimensions()[0];
  const int64_t rank = original.shape().rank();
  const int64_t tiles = sharding.tile_assignment().dim(d);
  std::vector<int64_t> whole_d_map(rank);
  for (int64_t k = 0; k < rank; ++k) whole_d_map[k] = k == d ? -1 : k;
  ASSIGN_OR_RETURN(HloSharding whole_d,
                   hlo::OperandShardingFromResult(sharding, rank, whole_d_map));
  auto local_concat = [&](const HloSharding& in) -> absl::Status {
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* operand : original.operands()) {
      ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(operand, in));
      operands.push_back(value);
    }
    ASSIGN_OR_RETURN(Shape local, LocalShape(in, original.shape()));
    ctx.Set(&original, {CloneWithOperands(original, std::move(local), std::move(operands), ctx),
                        in, original.shape()});
    return absl::OkStatus();
  };
  if (tiles == 1) return local_concat(sharding);
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, original.shape()));
  std::vector<WindowSplit> splits;
  int64_t offset = 0;
  for (const HloInstruction* operand : original.operands()) {
    const int64_t size = operand->shape().dimensions(d);
    std::vector<WindowSplit> split(1);
    split[0].wd = {d, tiles, size, original.shape().dimensions(d), hlo::WindowDimension()};
    split[0].wd.window.padding_low = offset;
    split[0].output_dim = d;
    split[0].window_index = d;
    ASSIGN_OR_RETURN(const PartitionedValue* now, ctx.Get(operand));
    ChooseWindowInputs(original, operand->shape(), now->sharding, split, ctx);
    splits.push_back(split[0]);
    offset += size;
  }
  ASSIGN_OR_RETURN(auto costs, ConcatCosts(original, sharding, whole_d, splits, ctx));
  const auto& [windowed, gathered] = costs;
  const bool gather =
      gathered.bytes < windowed.bytes && gathered.collectives <= windowed.collectives;
  ASSIGN_OR_RETURN(const bool composed,
                   TryComposedConcat(original, sharding, gather ? gathered : windowed,
                                     gather ? "gathering operands" : "operand windows", ctx));
  if (composed) return absl::OkStatus();
  if (gather) {
    if (ctx.log().keep_lines) {
      ctx.log().lines.push_back(hlo::StrCat("%", original.name(),
                                            ": operands gathered whole along dimension ", d, " (",
                                            gathered.bytes, " bytes in ", gathered.collectives,
                                            " collectives; windows would receive ", windowed.bytes,
                                            " in ", windowed.collectives, ")"));
    }
    return local_concat(whole_d);
  }
  HloInstruction* zero = ctx.ScalarConstant(original.shape().element_type(), 0);
  HloInstruction* block_start = BlockStart(ctx, sharding, d, local.dimensions(d));
  HloInstruction* result = nullptr;
  offset = 0;
  for (size_t i = 0; i < splits.size(); ++i) {
    const HloInstruction* operand = original.operand(i);
    const int64_t size = operand->shape().dimensions(d);
    ASSIGN_OR_RETURN(HloInstruction * piece,
                     BuildWindowInput(ctx, operand, splits[i].halo ? sharding : whole_d, sharding,
                                      {splits[i]}, zero, Outside::kUnused));
    result = result == nullptr
                 ? piece
                 : ctx.Add(hlo::HloOpcode::kSelect, local,
                           {ctx.PositionInRange(local, d, block_start, S32(ctx, offset),
                                                S32(ctx, offset + size)),
                            piece, result});
    offset += size;
  }
  ctx.Set(&original, {result, sharding, original.shape()});
  return absl::OkStatus();
}

// Reverse along split dimensions: the operand is taken in the mirrored layout (each device
// holding the block its result block reverses; free when it already is, XLA's reversed
// sharding) and reversed locally; with uneven shards (N = t*Is - s) every block then lies s
// positions early, and a halo of s elements from the next block realigns it.
absl::Status HandleReverse(const HloInstruction& original, const HloSharding& sharding,
                           PartitionContext& ctx) {
  const bool plain =
      original.shape().IsArray() && original.shape().rank() > 0 && MovesDataInTiling(sharding);
  if (!plain)
    return FallBackToReplicated(original, sharding, ctx,
                                "a reverse with partial sums in its sharding");
  ASSIGN_OR_RETURN(HloSharding mirrored,
                   hlo::MirrorTiles(sharding.WithoutMetadata(), original.dimensions()));
  ASSIGN_OR_RETURN(HloInstruction * operand, ctx.GetInSharding(original.operand(0), mirrored));
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, original.shape()));
  HloInstruction* value = CloneWithOperands(original, local, {operand}, ctx);
  const hlo::TileAssignment& ta = sharding.tile_assignment();
  for (int64_t d : original.dimensions()) {
    const int64_t tiles = ta.dim(d);
    const int64_t n = original.shape().dimensions(d);
    const int64_t shift = tiles * local.dimensions(d) - n;
    if (tiles == 1 || shift == 0) continue;
    WindowedDim wd{d, tiles, tiles * local.dimensions(d), n, hlo::WindowDimension()};
    wd.window.padding_low = -shift;
    ASSIGN_OR_RETURN(value, ExchangeHalo(ctx, value, sharding, wd, ComputeHaloGeometry(wd),
                                         ctx.ScalarConstant(original.shape().element_type(), 0),
                                         Outside::kUnused));
  }
  ctx.Set(&original, {value, sharding, original.shape()});
  return absl::OkStatus();
}

}  // namespace

absl::Status HandleMultiSliceCustomCall(const HloInstruction& original, const HloSharding& sharding,
                                        PartitionContext& ctx) {
  return HandleMultiSlice(original, sharding, ctx);
}

void RegisterWindowHandlers(HandlerTable& table) {
  table[hlo::HloOpcode::kReduceWindow] = &HandleReduceWindow;
  table[hlo::HloOpcode::kSlice] = &HandleSliceOrPad;
  table[hlo::HloOpcode::kPad] = &HandleSliceOrPad;
  table[hlo::HloOpcode::kConcatenate] = &HandleConcatenate;
  table[hlo::HloOpcode::kReverse] = &HandleReverse;
}

}  // namespace spmd

// Summing strategies of the convolution handler.
//
// Contracting split: when the output is replicated over some devices (a last-tile
// replication dim, or wholly), those devices can instead
// split the contracted dims (the input's feature dim with the kernel's input-feature dim) alike:
// each convolves its slice, padding of uneven slices masked to zero, and an all-reduce over
// them sums the partial results. Weight gradients contract over the activations' batch, split
// on the data axis, so this keeps them from gathering both operands. Plain convolutions only
// (feature_group_count and batch_group_count 1). Split output spatial dims stay split when
// their window inputs come by halo exchange (SummableSplits; the features then split evenly,
// as their padding cannot be zeroed before the exchange).
//
// Kernel-window split (XLA's for an input and kernel both split along a window dim, e.g. a
// weight gradient whose kernel spans the activations): with the output replicated over t
// devices, those devices split window dim k's kernel positions
// into blocks of Ks = ceil(K/t) (kernel padding zeroed); each convolves the input window its
// block reads (halo_exchange.h KernelBlockGeometry: halo exchange from an input split alike,
// or sliced from an input whole along k) with window size Ks and no padding, and an all-reduce
// sums the partial results. Any group counts; no base dilation on k; other output spatial dims
// stay split as for the contracting split (XLA's EinsumNonContractingDimPartitionOnTwoDims:
// a one-position window split with the output). A reversed window's
// kernel block b reads near input shard t-1-b, so with halos the kernel's tiles pair with the
// input's in reverse device order (XLA's ConvolutionLhsTiledRhsTiledWindowReversal).
//
// The two together (KernelWindowShare): the t replication devices split as c x t/c, the
// input features c ways and the kernel window t/c ways, in either order among the devices. A
// weight gradient whose operands are split along the batch (contracted) and the sequence (the
// window the kernel spans) holds both, so nothing moves but halos and the all-reduce.
#include <algorithm>
#include <cmath>
#include <optional>

#include "hlo/sharding/device_groups.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "spmd/cost/collective_cost.h"
#include "spmd/partitioner/conv_strategy.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

std::optional<HloSharding> WithReplicationAsTiles(const HloSharding& local, int64_t rank,
                                                  int64_t num_devices) {
  std::vector<int64_t> ones(rank, 1);
  ones.push_back(num_devices);
  absl::StatusOr<hlo::TileAssignment> ta = hlo::TileAssignment::Iota(ones);
  if (!local.IsReplicated()) {
    if (!local.IsTiled() || !local.replicate_on_last_tile_dim() ||
        !local.subgroup_types().empty()) {
      return std::nullopt;
    }
    ta = local.tile_assignment();
  }
  if (!ta.ok() || ta->rank() != rank + 1 || ta->dim(rank) == 1 ||
      ta->num_devices() != num_devices) {
    return std::nullopt;
  }
  absl::StatusOr<HloSharding> tiled = HloSharding::Tile(*std::move(ta));
  if (!tiled.ok()) return std::nullopt;
  return *std::move(tiled);
}

Received ResultReceived(const ConvSetting& set, const ConvStrategy& s, PartitionContext& ctx) {
  const bool scatter = s.scatter_dim >= 0;
  Received moved =
      ReshardReceived(set.conv.shape(), scatter ? s.produced : set.local, set.requested, ctx);
  if (s.sum_groups.empty()) return moved;
  const int64_t g = static_cast<int64_t>(s.sum_groups[0].size());
  absl::StatusOr<Shape> shape = LocalShape(set.local, set.conv.shape());
  if (!shape.ok()) return Received::Unplannable();
  int64_t bytes = shape->byte_size();
  if (scatter) {  // Padded to whole blocks along the scatter dim.
    const int64_t along = shape->dimensions(s.scatter_dim);
    bytes = bytes / std::max<int64_t>(along, 1) * ((along + g - 1) / g * g);
  }
  const CollectiveCost sum =
      EstimateCollective(scatter ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                         bytes, g, CollectiveLink(ctx));
  return moved + Received::Of(sum);
}

namespace {

// The sharding a reduce-scatter of `set`'s summing strategies along output dim `d` produces:
// the local result's tiles with dim d split further over the sum groups (a device's index in
// its group as the minor part), or nullopt when its blocks would not be that sharding's shards
// (an uneven split inside a tile).
std::optional<HloSharding> ScatterSharding(const ConvSetting& set, int64_t d) {
  const int64_t rank = set.conv.shape().rank();
  absl::StatusOr<HloSharding> moved = hlo::MoveTileDim(*set.tiled, rank, d);
  if (!moved.ok()) return std::nullopt;
  std::vector<int64_t> identity(rank);
  for (int64_t i = 0; i < rank; ++i) identity[i] = i;
  absl::StatusOr<HloSharding> produced = hlo::OperandShardingFromResult(*moved, rank + 1, identity);
  if (!produced.ok()) return std::nullopt;
  const int64_t n = set.conv.shape().dimensions(d);
  const int64_t t = set.local.TilesAlong(d), g = set.tiled->tile_assignment().dim(rank);
  const int64_t block = (n + t - 1) / t;
  if (t > 1 && (block % g != 0 || block / g != (n + t * g - 1) / (t * g))) return std::nullopt;
  return *std::move(produced);
}

// `s` (a summing strategy) and then its variants that reduce-scatter the partial results
// along an output dim the requested sharding splits further than `s`'s result, each costed
// (at equal cost the all-reduce, first, wins: its result is whole on more devices).
void AddWithScatterVariants(const ConvSetting& set, ConvStrategy s, PartitionContext& ctx,
                            std::vector<ConvStrategy>& out) {
  s.moved = s.inputs + ResultReceived(set, s, ctx);
  out.push_back(s);
  for (int64_t d = 0; d < set.conv.shape().rank(); ++d) {
    if (set.requested.TilesAlong(d) <= set.local.TilesAlong(d)) continue;
    std::optional<HloSharding> produced = ScatterSharding(set, d);
    if (!produced.has_value()) continue;
    ConvStrategy v = s;
    v.scatter_dim = d;
    v.produced = *std::move(produced);
    v.moved = v.inputs + ResultReceived(set, v, ctx);
    out.push_back(std::move(v));
  }
}

// A strategy that splits the operand dims `input_map` and `kernel_map` give the extra tiled
// dims (the result's replication devices, as one dim or as two) and sums the partial results
// over them.
absl::StatusOr<ConvStrategy> SummingStrategy(const ConvSetting& set, ConvKind kind,
                                             const std::vector<int64_t>& input_map,
                                             const std::vector<int64_t>& kernel_map) {
  const int64_t rank = set.conv.shape().rank();
  const int64_t tiled_rank = set.tiled->tile_assignment().rank();
  ConvStrategy s;
  s.kind = kind;
  s.local = set.local;
  s.group_tiles = set.group_tiles;
  s.splits = set.splits;
  ASSIGN_OR_RETURN(s.input, hlo::OperandShardingFromResult(*set.tiled, tiled_rank, input_map));
  ASSIGN_OR_RETURN(s.kernel, hlo::OperandShardingFromResult(*set.tiled, tiled_rank, kernel_map));
  std::vector<int64_t> extra;
  for (int64_t d = rank; d < tiled_rank; ++d) extra.push_back(d);
  ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                   hlo::DeviceGroupsAlongDims(set.tiled->tile_assignment(), extra));
  s.sum_groups = hlo::GroupLists(groups);
  return s;
}

// Whether partial results of this convolution may be summed (not pred).
bool Summable(const HloInstruction& conv) {
  return conv.shape().element_type() != hlo::PrimitiveType::kPred;
}

// The contracting split (file comment), or nullopt when it does not apply.
absl::StatusOr<std::optional<ConvStrategy>> ContractingStrategy(const ConvSetting& set,
                                                                PartitionContext& ctx) {
  const HloInstruction& conv = set.conv;
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  const int64_t rank = conv.shape().rank();
  const bool plain = conv.attrs().feature_group_count == 1 && conv.attrs().batch_group_count == 1;
  if (!plain || !Summable(conv) || !set.tiled.has_value()) return std::optional<ConvStrategy>();
  std::vector<int64_t> input_map = set.input_map, kernel_map = set.kernel_map;
  input_map[dn.input_feature_dimension] = rank;
  kernel_map[dn.kernel_input_feature_dimension] = rank;
  ASSIGN_OR_RETURN(ConvStrategy s,
                   SummingStrategy(set, ConvKind::kContracting, input_map, kernel_map));
  s.contracting_tiles = static_cast<int64_t>(s.sum_groups[0].size());
  // With halos the input's feature padding cannot be zeroed before the exchange: even only.
  const int64_t features = conv.operand(0)->shape().dimensions(dn.input_feature_dimension);
  if (!s.splits.empty() && features % static_cast<int64_t>(s.sum_groups[0].size()) != 0) {
    return std::optional<ConvStrategy>();
  }
  s.inputs = ReshardReceived(conv.operand(0), s.input, ctx) +
             HalosReceived(conv.operand(0)->shape(), s.input, s.splits, ctx) +
             ReshardReceived(conv.operand(1), s.kernel, ctx);
  return std::optional<ConvStrategy>(std::move(s));
}

// How a kernel-window split shares the result's replication devices: all of them split the
// kernel window, or `contracting` of them split the input features too (their index the major
// part of a device's place among them when `contracting_major`; a weight gradient's operands
// split along the batch and the sequence hold both).
struct KernelWindowShare {
  int64_t contracting = 1;
  bool contracting_major = true;
};

// The shares of `set`'s replication devices: the kernel window alone, then each way of
// splitting them between the features and the window.
std::vector<KernelWindowShare> Shares(const ConvSetting& set) {
  std::vector<KernelWindowShare> shares = {KernelWindowShare{}};
  if (!set.tiled.has_value()) return shares;
  const hlo::TileAssignment& ta = set.tiled->tile_assignment();
  const int64_t r = ta.dim(ta.rank() - 1);
  for (int64_t c = 2; c < r; ++c) {
    if (r % c != 0) continue;
    shares.push_back({c, true});
    shares.push_back({c, false});
  }
  return shares;
}

// `set` with its replication devices as two tiled dims, [features, window] or [window,
// features] (`share`), or nullopt when the features do not split evenly (their padding could
// not be zeroed before a halo exchange) or the convolution has feature or batch groups.
absl::StatusOr<std::optional<ConvSetting>> SharedSetting(const ConvSetting& set,
                                                         const KernelWindowShare& share) {
  const HloInstruction& conv = set.conv;
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  const bool plain = conv.attrs().feature_group_count == 1 && conv.attrs().batch_group_count == 1;
  const int64_t features = conv.operand(0)->shape().dimensions(dn.input_feature_dimension);
  if (!plain || features % share.contracting != 0) return std::optional<ConvSetting>();
  const hlo::TileAssignment& ta = set.tiled->tile_assignment();
  std::vector<int64_t> dims(ta.dims().begin(), ta.dims().end());
  const int64_t r = dims.back();
  dims.back() = share.contracting_major ? share.contracting : r / share.contracting;
  dims.push_back(share.contracting_major ? r / share.contracting : share.contracting);
  ASSIGN_OR_RETURN(hlo::TileAssignment two, ta.Reshape(dims));
  ConvSetting shared = set;
  ASSIGN_OR_RETURN(shared.tiled, HloSharding::Tile(std::move(two)));
  return std::optional<ConvSetting>(std::move(shared));
}

// The kernel-window split of spatial dim `k` (XLA's for an input and kernel both split along
// a window dim): the kernel's positions along k split over the result's replication devices
// (a 1/share.contracting part of them when the input features split over the rest), each
// convolving the input window its block reads (KernelBlockGeometry; halo exchange, or sliced
// from an input whole along k) with its kernel block, the partial results summed.
absl::StatusOr<std::optional<ConvStrategy>> KernelWindowStrategy(const ConvSetting& base, size_t k,
                                                                 const KernelWindowShare& share,
                                                                 PartitionContext& ctx) {
  const HloInstruction& conv = base.conv;
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  const hlo::WindowDimension& w = conv.attrs().window->dimensions[k];
  const int64_t rank = conv.shape().rank();
  // A reversed window of one position reads what an unreversed one does.
  const bool reversed = w.window_reversal && w.size > 1;
  const bool output_split =
      std::any_of(base.splits.begin(), base.splits.end(),
                  [&](const WindowSplit& s) { return s.window_index == static_cast<int64_t>(k); });
  if (!Summable(conv) || !base.tiled.has_value() || !SplittableWindow(w) || output_split) {
    return std::optional<ConvStrategy>();
  }
  std::optional<ConvSetting> shared;
  int64_t window_slot = rank;  // The tiled dim of `set.tiled` that splits the window.
  std::vector<int64_t> input_map = base.input_map, kernel_map = base.kernel_map;
  if (share.contracting > 1) {
    absl::StatusOr<std::optional<ConvSetting>> made = SharedSetting(base, share);
    if (!made.ok()) return made.status();
    if (!made->has_value()) return std::optional<ConvStrategy>();
    shared.emplace(**std::move(made));
    const int64_t feature_slot = share.contracting_major ? rank : rank + 1;
    window_slot = share.contracting_major ? rank + 1 : rank;
    input_map[dn.input_feature_dimension] = feature_slot;
    kernel_map[dn.kernel_input_feature_dimension] = feature_slot;
  }
  const ConvSetting& set = shared.has_value() ? *shared : base;
  const int64_t tiled_rank = set.tiled->tile_assignment().rank();
  const std::vector<int64_t> whole_map = input_map;  // The input whole along k.
  input_map[dn.input_spatial_dimensions[k]] = window_slot;
  kernel_map[dn.kernel_spatial_dimensions[k]] = window_slot;
  ASSIGN_OR_RETURN(ConvStrategy s,
                   SummingStrategy(set, ConvKind::kKernelWindow, input_map, kernel_map));
  s.contracting_tiles = share.contracting;
  WindowSplit& split = s.kernel_split;
  split.wd.dim = dn.input_spatial_dimensions[k];
  split.wd.tiles = set.tiled->tile_assignment().dim(window_slot);
  split.wd.input_size = conv.operand(0)->shape().dimensions(split.wd.dim);
  split.wd.output_size = conv.shape().dimensions(dn.output_spatial_dimensions[k]);
  split.wd.window = w;
  split.output_dim = dn.kernel_spatial_dimensions[k];
  split.window_index = static_cast<int64_t>(k);
  split.geometry = KernelBlockGeometry(split.wd, reversed);
  split.halo = true;
  // Reversed, kernel block b reads near input shard t-1-b: the kernel's tiles pair with the
  // input's in reverse device order when the input keeps its tiles.
  if (reversed && split.geometry.valid_blocks != split.wd.tiles) {
    return std::optional<ConvStrategy>();
  }
  const HloSharding natural = s.kernel;
  HloSharding paired = natural;
  if (reversed) {
    ASSIGN_OR_RETURN(paired, hlo::MirrorTiles(natural, {dn.kernel_spatial_dimensions[k]}));
  }
  // The input split along k with halos, or whole along k with each window sliced locally.
  ASSIGN_OR_RETURN(HloSharding whole,
                   hlo::OperandShardingFromResult(*set.tiled, tiled_rank, whole_map));
  const Shape& input_shape = conv.operand(0)->shape();
  const Received halo = ReshardReceived(conv.operand(0), s.input, ctx) +
                        HaloReceived(input_shape, s.input, split, ctx) +
                        HalosReceived(input_shape, s.input, s.splits, ctx) +
                        ReshardReceived(conv.operand(1), paired, ctx);
  const Received sliced = ReshardReceived(conv.operand(0), whole, ctx) +
                          HalosReceived(input_shape, whole, s.splits, ctx) +
                          ReshardReceived(conv.operand(1), natural, ctx);
  const bool slice = sliced.us < halo.us || (sliced.us == halo.us && sliced.bytes <= halo.bytes);
  s.kernel = slice ? natural : paired;
  if (slice) {
    split.halo = false;
    s.input = whole;
    split.geometry = KernelBlockGeometry(split.wd);
  }
  s.inputs = slice ? sliced : halo;
  return std::optional<ConvStrategy>(std::move(s));
}

}  // namespace

absl::Status AddSummingStrategies(const ConvSetting& set, PartitionContext& ctx,
                                  std::vector<ConvStrategy>& out) {
  const HloInstruction& conv = set.conv;
  ASSIGN_OR_RETURN(std::optional<ConvStrategy> contracting, ContractingStrategy(set, ctx));
  if (contracting.has_value()) AddWithScatterVariants(set, *std::move(contracting), ctx, out);
  if (!conv.attrs().window.has_value()) return absl::OkStatus();
  // Sharing the devices, the sum groups are the same devices in the same order: the
  // reduce-scatter variants of `set` serve.
  for (size_t k = 0; k < conv.attrs().window->dimensions.size(); ++k) {
    for (const KernelWindowShare& share : Shares(set)) {
      ASSIGN_OR_RETURN(std::optional<ConvStrategy> s, KernelWindowStrategy(set, k, share, ctx));
      if (s.has_value()) AddWithScatterVariants(set, *std::move(s), ctx, out);
    }
  }
  return absl::OkStatus();
}

}  // namespace spmd

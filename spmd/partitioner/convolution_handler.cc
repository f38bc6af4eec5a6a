// Convolution: partitioned along the output's batch, output-feature and spatial dimensions.
//
// The input is tiled like the output's batch dimension, the kernel like the output-feature
// dimension; both are replicated along the other's tiles (OperandShardingFromResult). A split
// output spatial dimension (no base dilation) gives each device a block of output positions,
// computed from its window input (halo_exchange.h): the input split alike plus halos from its
// neighbours by collective-permute, or, when the input is whole along it (or halos would move
// more than gathering), a window sliced locally; the kernel's spatial dims stay whole and the
// local convolution runs without padding on those dimensions. A split base-dilated dim reads
// the same way the inputs its windows need (halo_exchange.h DilatedWindow), convolves them
// base-dilated with one low padding for every device and keeps its outputs from its own
// offset (dynamic-slice); under XLA's 'same start pattern' (DilatedSplit: every block's windows
// start at the same offset within its input shard and read only holes outside it) each device
// convolves its own zero-padded shard with adjusted high padding, no halo. With
// feature_group_count > 1
// the output features split only along whole groups (the input features then split alike and
// each device convolves its fgc/t groups), else they stay whole; with batch_group_count > 1
// likewise, the input batch split alike (each device convolves its bgc/t batch groups, no
// communication), and the output batch stays whole.
//
// Contracting and kernel-window splits (partial results summed): conv_summing.cc.
//
// Aligned results (XLA's 'align with LHS/RHS'): every strategy is also costed for a result
// sharding derived from each operand's current sharding (input batch/feature/spatial and
// kernel output-feature tiles moved to the output), whose result is then resharded to the
// requested one; a small result moved once can beat moving a large operand. Likewise for the
// requested sharding with one split dim made whole: its devices can then split a contracted or
// kernel-window dim and sum, and the result is sliced back locally.
//
// Choice: each candidate's estimated time on the device model: its local convolution's FLOPs
// plus every collective it needs (operand reshards at the planner's cost, cached ones free;
// halos; the all-reduce; the result's reshard to the requested sharding), each paying its
// latency. The fewest bytes win among candidates within 5% of the least time; --explain lists
// every candidate with its bytes and time. On 4 devices:
//
//   %c = f32[8,16,16,32] convolution(f32[8,16,16,3] %x, f32[3,3,3,32] %k), window={size=3x3
//        pad=1_1x1_1}, dim_labels=b01f_01io->b01f, sharding={devices=[1,4,1,1]<=[4]}
//   with %x in {devices=[1,4,1,1]<=[4]} -> each device adds one row from each neighbour
//   (collective-permute) to its f32[8,4,16,3] shard: %c.spmd = f32[8,4,16,32] convolution(
//   f32[8,6,16,3] ..., %k), window={size=3x3 pad=0_0x1_1}
#include <algorithm>
#include <cmath>
#include <optional>

#include "hlo/sharding/device_groups.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/cost/collective_cost.h"
#include "spmd/cost/device_model.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/conv_strategy.h"
#include "spmd/partitioner/halo_exchange.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

// Whether the output features are split along whole groups: with feature_group_count > 1
// each device holds the input features of its own groups, with batch_group_count > 1 the
// input batch of its own groups, and runs a convolution of 1/t of the groups.
bool SplitsGroups(const HloInstruction& conv, const HloSharding& sharding) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  const int64_t fgc = conv.attrs().feature_group_count;
  const int64_t bgc = conv.attrs().batch_group_count;
  const int64_t t = sharding.TilesAlong(dn.output_feature_dimension);
  if (fgc > 1 && bgc == 1) return fgc % t == 0;
  return bgc > 1 && fgc == 1 && bgc % t == 0;
}

// Window dim k of `conv` split `tiles` ways along its output spatial dim.
WindowSplit SplitOf(const HloInstruction& conv, size_t k, int64_t tiles) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  WindowSplit split;
  split.wd.dim = dn.input_spatial_dimensions[k];
  split.wd.tiles = tiles;
  split.wd.input_size = conv.operand(0)->shape().dimensions(split.wd.dim);
  split.wd.output_size = conv.shape().dimensions(dn.output_spatial_dimensions[k]);
  split.wd.window = conv.attrs().window->dimensions[k];
  split.output_dim = dn.output_spatial_dimensions[k];
  split.window_index = static_cast<int64_t>(k);
  return split;
}

// What window dim k of `conv` is as an einsum dim (hlo::ConvolutionEinsumDimOf).
hlo::ConvolutionEinsumDim EinsumDim(const HloInstruction& conv, size_t k) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  return hlo::ConvolutionEinsumDimOf(
      conv.attrs().window->dimensions[k],
      conv.operand(0)->shape().dimensions(dn.input_spatial_dimensions[k]),
      conv.operand(1)->shape().dimensions(dn.kernel_spatial_dimensions[k]));
}

// Whether window dim k, split t ways, splits as an einsum dim (ParallelSplits): evenly.
bool SplitsAsEinsum(const HloInstruction& conv, size_t k, int64_t t) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  const int64_t n = conv.operand(1)->shape().dimensions(dn.kernel_spatial_dimensions[k]);
  return t > 1 && n % t == 0 && EinsumDim(conv, k) != hlo::ConvolutionEinsumDim::kWindow;
}

// The output spatial dims `sharding` splits whose window can be split into blocks.
std::vector<WindowSplit> SpatialSplits(const HloInstruction& conv, const HloSharding& sharding) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  std::vector<WindowSplit> splits;
  if (!conv.attrs().window.has_value()) return splits;
  const hlo::Window& window = *conv.attrs().window;
  for (size_t k = 0; k < dn.output_spatial_dimensions.size(); ++k) {
    const int64_t out_dim = dn.output_spatial_dimensions[k];
    const int64_t tiles = sharding.TilesAlong(out_dim);
    if (tiles == 1 || k >= window.dimensions.size() || SplitsAsEinsum(conv, k, tiles)) continue;
    WindowSplit split = SplitOf(conv, k, tiles);
    if (!SplittableWindow(window.dimensions[k]) && !DilatedWindowGeometry(split.wd).has_value()) {
      continue;
    }
    splits.push_back(std::move(split));
  }
  return splits;
}

// A base-dilated window dim the output splits into t blocks whose windows start at the same
// offset within their input shard ('same start pattern': Os*stride == Is*base_dilation) and
// read no real element of another shard: each device convolves its own (zero-padded) shard
// with the window's low padding and `high` as its high padding, no communication. Only when
// no other output spatial dim is split.
std::optional<WindowSplit> DilatedSplit(const HloInstruction& conv, const HloSharding& sharding,
                                        int64_t& high) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  if (!conv.attrs().window.has_value()) return std::nullopt;
  std::optional<WindowSplit> found;
  for (size_t k = 0; k < dn.output_spatial_dimensions.size(); ++k) {
    const int64_t out_dim = dn.output_spatial_dimensions[k];
    const int64_t t = sharding.TilesAlong(out_dim);
    if (t == 1) continue;
    const hlo::WindowDimension& w = conv.attrs().window->dimensions[k];
    const int64_t d = w.base_dilation;
    const int64_t n = conv.operand(0)->shape().dimensions(dn.input_spatial_dimensions[k]);
    const int64_t m = conv.shape().dimensions(out_dim);
    const int64_t is = (n + t - 1) / t, os = (m + t - 1) / t;
    const int64_t extent = (w.size - 1) * w.window_dilation + 1;
    const int64_t last_read = (os - 1) * w.stride - w.padding_low + extent - 1;
    if (found.has_value() || d <= 1 || w.stride < 1 || os * w.stride != is * d ||
        w.padding_low < 0 || w.padding_low >= d || last_read >= is * d) {
      return std::nullopt;
    }
    found = SplitOf(conv, k, t);
    high = last_read - (is - 1) * d;
  }
  return found;
}

// The output spatial dims `sharding` splits evenly that are an einsum's dims in disguise
// (hlo::ConvolutionEinsumDimOf): split like a batch dim, the kernel (and for kBatch the input)
// alike, each device convolving its own positions with the window rebuilt for its n/t of them.
std::vector<WindowSplit> ParallelSplits(const HloInstruction& conv, const HloSharding& sharding) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  std::vector<WindowSplit> splits;
  if (!conv.attrs().window.has_value()) return splits;
  const hlo::Window& window = *conv.attrs().window;
  for (size_t k = 0; k < dn.output_spatial_dimensions.size() && k < window.dimensions.size(); ++k) {
    const int64_t t = sharding.TilesAlong(dn.output_spatial_dimensions[k]);
    if (SplitsAsEinsum(conv, k, t)) splits.push_back(SplitOf(conv, k, t));
  }
  return splits;
}

// The window dim of a ParallelSplits split for its n/t positions per device.
hlo::WindowDimension LocalPairing(const HloInstruction& conv, const WindowSplit& split) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  const int64_t n =
      conv.operand(1)->shape().dimensions(dn.kernel_spatial_dimensions[split.window_index]);
  return hlo::ConvolutionEinsumWindow(split.wd.window, EinsumDim(conv, split.window_index),
                                      n / split.wd.tiles);
}

// The output dims that must stay whole on every device.
std::vector<int64_t> WholeOutputDims(const HloInstruction& conv, const HloSharding& sharding,
                                     const std::vector<WindowSplit>& splits) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  std::vector<int64_t> whole;
  for (int64_t d : dn.output_spatial_dimensions) {
    const bool split = std::any_of(splits.begin(), splits.end(),
                                   [&](const WindowSplit& s) { return s.output_dim == d; });
    if (!split) whole.push_back(d);
  }
  const bool grouped = conv.attrs().feature_group_count != 1 || conv.attrs().batch_group_count != 1;
  if (grouped && !SplitsGroups(conv, sharding)) {
    whole.push_back(dn.output_feature_dimension);
  }
  if (conv.attrs().batch_group_count != 1) whole.push_back(dn.output_batch_dimension);
  return whole;
}

// Whether a split's window input is sliced from an input whole along it where halos could
// serve (not base-dilated): the input could instead move to the split and exchange halos.
bool HaloCouldServe(const WindowSplit& split) {
  return !split.halo && split.wd.window.base_dilation <= 1;
}

// How the window inputs of an output-tile strategy are built.
enum class WindowInputs {
  kChosen,     // As ChooseWindowInputs chose, split by split.
  kAllHalos,   // Every split HaloCouldServe takes halos from an input resharded to be split alike.
  kAllSliced,  // Every split sliced from an input whole along it (a gather where halos would
               // take more collectives).
};

// The output-tile strategy for the result sharding `sharding`, and the setting the summing
// strategies of that sharding build on, its window inputs built as `inputs` says.
absl::StatusOr<std::pair<ConvStrategy, ConvSetting>> OutputTiles(const HloInstruction& conv,
                                                                 const HloSharding& sharding,
                                                                 const HloSharding& requested,
                                                                 WindowInputs inputs,
                                                                 PartitionContext& ctx) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  ConvStrategy s;
  s.splits = SpatialSplits(conv, sharding);
  s.parallel = ParallelSplits(conv, sharding);
  if (s.parallel.empty()) {
    // The same start pattern needs no halo: it replaces the base-dilated split's window input.
    s.dilated = DilatedSplit(conv, sharding, s.dilated_high);
    if (s.dilated.has_value()) s.splits.clear();
  }
  if (sharding.IsTiled()) {
    std::vector<WindowSplit> split = s.splits;
    split.insert(split.end(), s.parallel.begin(), s.parallel.end());
    if (s.dilated.has_value()) split.push_back(*s.dilated);
    ASSIGN_OR_RETURN(s.local,
                     hlo::PartiallyReplicate(sharding, WholeOutputDims(conv, sharding, split)));
  }
  ASSIGN_OR_RETURN(const PartitionedValue* input_now, ctx.Get(conv.operand(0)));
  ChooseWindowInputs(conv, conv.operand(0)->shape(), input_now->sharding, s.splits, ctx);
  for (WindowSplit& split : s.splits) {
    if (inputs == WindowInputs::kAllHalos && HaloCouldServe(split)) {
      split.halo = true;
      ctx.log().lines.push_back(hlo::StrCat("%", conv.name(), ": window dimension ", split.wd.dim,
                                            " also costed with the input moved to the split and ",
                                            HaloElements(split.geometry), " halo elements"));
    } else if (inputs == WindowInputs::kAllSliced && split.halo) {
      split.halo = false;
      ctx.log().lines.push_back(hlo::StrCat("%", conv.name(), ": window dimension ", split.wd.dim,
                                            " also costed sliced from the input whole along it"));
    }
  }
  const int64_t rank = conv.shape().rank();
  const int64_t feature_tiles = s.local.TilesAlong(dn.output_feature_dimension);
  if (feature_tiles > 1 && SplitsGroups(conv, s.local)) s.group_tiles = feature_tiles;
  ConvSetting set{conv,
                  requested,
                  s.local,
                  std::vector<int64_t>(conv.operand(0)->shape().rank(), -1),
                  std::vector<int64_t>(conv.operand(1)->shape().rank(), -1),
                  std::nullopt};
  set.input_map[dn.input_batch_dimension] = dn.output_batch_dimension;
  if (s.group_tiles > 1) {
    const bool batch_groups = conv.attrs().batch_group_count > 1;
    set.input_map[batch_groups ? dn.input_batch_dimension : dn.input_feature_dimension] =
        dn.output_feature_dimension;
  }
  for (const WindowSplit& split : s.splits) {
    if (split.halo) set.input_map[split.wd.dim] = split.output_dim;
  }
  if (s.dilated.has_value()) set.input_map[s.dilated->wd.dim] = s.dilated->output_dim;
  set.kernel_map[dn.kernel_output_feature_dimension] = dn.output_feature_dimension;
  for (const WindowSplit& split : s.parallel) {
    if (EinsumDim(conv, split.window_index) == hlo::ConvolutionEinsumDim::kBatch) {
      set.input_map[split.wd.dim] = split.output_dim;
    }
    set.kernel_map[dn.kernel_spatial_dimensions[split.window_index]] = split.output_dim;
  }
  ASSIGN_OR_RETURN(s.input, hlo::OperandShardingFromResult(s.local, rank, set.input_map));
  ASSIGN_OR_RETURN(s.kernel, hlo::OperandShardingFromResult(s.local, rank, set.kernel_map));
  set.tiled = WithReplicationAsTiles(s.local, rank, ctx.num_devices());
  set.group_tiles = s.group_tiles;
  set.splits = s.splits;
  s.inputs = ReshardReceived(conv.operand(0), s.input, ctx) +
             ReshardReceived(conv.operand(1), s.kernel, ctx) +
             HalosReceived(conv.operand(0)->shape(), s.input, s.splits, ctx);
  s.moved = s.inputs + ResultReceived(set, s, ctx);
  return std::make_pair(std::move(s), std::move(set));
}

// Whether the summing strategies can keep the output tiles' spatial splits: each by halo
// exchange (the window input is built from the input split alike plus halos; a sliced window
// would need the result's blocks where the kernel-window split slices by the kernel's) and
// without base dilation.
bool SummableSplits(const ConvStrategy& tiles) {
  return tiles.parallel.empty() && !tiles.dilated.has_value() &&
         std::all_of(tiles.splits.begin(), tiles.splits.end(), [](const WindowSplit& s) {
           return s.halo && s.wd.window.base_dilation <= 1;
         });
}

// Appends the strategies of one output tiling: the output tiles, then the summing ones where
// its spatial splits allow them.
absl::Status AddStrategiesOf(ConvStrategy tiles, const ConvSetting& set, bool requested,
                             PartitionContext& ctx, std::vector<ConvStrategy>& out) {
  const bool whole = tiles.local.IsReplicated();
  const bool summable = SummableSplits(tiles);
  if (!whole || requested) out.push_back(std::move(tiles));
  if (!summable) return absl::OkStatus();
  return AddSummingStrategies(set, ctx, out);
}

// Appends the strategies computing the result in `sharding`: with each split's window input
// as ChooseWindowInputs chose it; where some are sliced from an input whole along them, again
// with the input moved to the split and halos exchanged (XLA's for an input split along
// another dim: one all-to-all and halos can move less than gathering the dim); and where some
// halo reaches beyond the two neighbouring shards (more than two permutes), again with every
// window sliced from the input gathered whole (one collective instead of several).
absl::Status AddStrategies(const HloInstruction& conv, const HloSharding& sharding,
                           const HloSharding& requested, PartitionContext& ctx,
                           std::vector<ConvStrategy>& out) {
  ASSIGN_OR_RETURN(auto chosen, OutputTiles(conv, sharding, requested, WindowInputs::kChosen, ctx));
  const std::vector<WindowSplit>& splits = chosen.first.splits;
  const bool sliced = std::any_of(splits.begin(), splits.end(), HaloCouldServe);
  const bool multi_hop = std::any_of(splits.begin(), splits.end(), [](const WindowSplit& split) {
    return split.halo && HaloHops(split.geometry) > 2;
  });
  RETURN_IF_ERROR(
      AddStrategiesOf(std::move(chosen.first), chosen.second, &sharding == &requested, ctx, out));
  for (auto [wanted, inputs] : {std::pair(sliced, WindowInputs::kAllHalos),
                                std::pair(multi_hop, WindowInputs::kAllSliced)}) {
    if (!wanted) continue;
    ASSIGN_OR_RETURN(auto other, OutputTiles(conv, sharding, requested, inputs, ctx));
    RETURN_IF_ERROR(
        AddStrategiesOf(std::move(other.first), other.second, &sharding == &requested, ctx, out));
  }
  return absl::OkStatus();
}

// Result shardings aligned with an operand's current sharding (XLA's 'align with LHS/RHS'):
// computing there and resharding the result can move less than resharding the operands.
std::vector<HloSharding> AlignedShardings(const HloInstruction& conv, PartitionContext& ctx) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  std::vector<HloSharding> out;
  for (int64_t i = 0; i < 2; ++i) {
    absl::StatusOr<const PartitionedValue*> now = ctx.Get(conv.operand(i));
    if (!now.ok() || !(*now)->sharding.IsTiled()) continue;
    std::vector<int64_t> map(conv.shape().rank(), -1);  // Output dim -> operand dim.
    if (i == 1) {
      map[dn.output_feature_dimension] = dn.kernel_output_feature_dimension;
    } else {
      const bool batch_groups = conv.attrs().batch_group_count > 1;
      map[batch_groups ? dn.output_feature_dimension : dn.output_batch_dimension] =
          dn.input_batch_dimension;
      if (conv.attrs().feature_group_count > 1) {
        map[dn.output_feature_dimension] = dn.input_feature_dimension;
      }
      for (size_t k = 0; k < dn.input_spatial_dimensions.size(); ++k) {
        map[dn.output_spatial_dimensions[k]] = dn.input_spatial_dimensions[k];
      }
    }
    absl::StatusOr<HloSharding> aligned =
        hlo::OperandShardingFromResult((*now)->sharding, conv.operand(i)->shape().rank(), map);
    if (aligned.ok() && MovesDataInTiling(*aligned)) {
      out.push_back(*std::move(aligned));
    }
  }
  return out;
}

const char* KindName(ConvKind kind) {
  switch (kind) {
    case ConvKind::kOutputTiles:
      return "output tiles";
    case ConvKind::kContracting:
      return "contracting split";
    case ConvKind::kKernelWindow:
      return "kernel window split";
  }
  return "";
}

std::string Describe(const ConvStrategy& s, const HloSharding& requested) {
  std::string text = KindName(s.kind);
  if (s.kind == ConvKind::kContracting) {
    hlo::StrAppend(&text, " over ", s.sum_groups[0].size(), " devices");
  } else if (s.kind == ConvKind::kKernelWindow) {
    hlo::StrAppend(&text, " of dimension ", s.kernel_split.wd.dim, " over ",
                   s.kernel_split.wd.tiles, " devices (",
                   s.kernel_split.halo ? "halo exchange" : "windows sliced", ")");
    if (s.contracting_tiles > 1) {
      hlo::StrAppend(&text, " and contracting split over ", s.contracting_tiles);
    }
  }
  for (const WindowSplit& split : s.splits) {
    hlo::StrAppend(&text, ", window dimension ", split.wd.dim,
                   split.halo ? " by halo exchange" : " sliced");
  }
  if (s.scatter_dim >= 0) {
    hlo::StrAppend(&text, ", reduce-scattered along dimension ", s.scatter_dim);
  }
  for (const WindowSplit& split : s.parallel) {
    hlo::StrAppend(&text, ", spatial dimension ", split.output_dim,
                   " (an einsum dim in disguise) split like a batch");
  }
  const HloSharding& produced = s.scatter_dim >= 0 ? s.produced : s.local;
  if (produced != requested && !produced.IsReplicated()) {
    hlo::StrAppend(&text, " computed in ", produced.ToString(), " and resharded");
  }
  return text;
}

// The local convolution's FLOPs: 2 per multiply-add, each local output element reading its
// window (a kernel block along a kernel-window split) times the kernel's input features (a
// slice of them under a contracting split).
double LocalFlops(const HloInstruction& conv, const ConvStrategy& s) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  absl::StatusOr<Shape> out = LocalShape(s.local, conv.shape());
  if (!out.ok()) return 0;
  double flops = 2.0 * static_cast<double>(out->num_elements());
  if (conv.attrs().window.has_value()) {
    const std::vector<hlo::WindowDimension>& dims = conv.attrs().window->dimensions;
    for (size_t k = 0; k < dims.size(); ++k) {
      const bool block = s.kind == ConvKind::kKernelWindow &&
                         s.kernel_split.window_index == static_cast<int64_t>(k);
      const auto pairing = std::find_if(
          s.parallel.begin(), s.parallel.end(),
          [&](const WindowSplit& p) { return p.window_index == static_cast<int64_t>(k); });
      int64_t size = block ? s.kernel_split.geometry.out_shard : dims[k].size;
      if (pairing != s.parallel.end()) size = LocalPairing(conv, *pairing).size;
      flops *= static_cast<double>(size);
    }
  }
  double in =
      static_cast<double>(conv.operand(1)->shape().dimensions(dn.kernel_input_feature_dimension));
  in = std::ceil(in / static_cast<double>(s.contracting_tiles));
  return flops * in;
}

// The estimated time of `s`: its local convolution plus each collective it needs.
double TimeUs(const HloInstruction& conv, const ConvStrategy& s, PartitionContext& ctx) {
  return ctx.options().device_model.ComputeTimeUs(s.flops, conv.shape().element_type()) +
         s.moved.us;
}

// All strategies (for the requested sharding, then for result shardings aligned with the
// operands), each logged with its bytes and estimated time; chosen: the fewest bytes (then the
// least time, then the first) among those within kEstimateTolerance of the least estimated time.
absl::StatusOr<ConvStrategy> ChooseStrategy(const HloInstruction& conv, const HloSharding& sharding,
                                            PartitionContext& ctx) {
  std::vector<ConvStrategy> all;
  RETURN_IF_ERROR(AddStrategies(conv, sharding, sharding, ctx, all));
  std::vector<HloSharding> others = AlignedShardings(conv, ctx);
  // The requested tiling with one split dim made whole (XLA's): its devices along that dim can
  // then split a contracted or kernel-window dim instead, and slicing the result back is free.
  if (MovesDataInTiling(sharding)) {
    for (int64_t d = 0; d < conv.shape().rank(); ++d) {
      if (sharding.TilesAlong(d) == 1) continue;
      absl::StatusOr<HloSharding> whole = hlo::PartiallyReplicate(sharding, {d});
      if (whole.ok()) others.push_back(*std::move(whole));
    }
  }
  // Each of those computed only where the way to the requested sharding slices it locally.
  for (size_t i = 0, n = others.size(); i < n; ++i) {
    if (std::optional<HloSharding> sliced = SlicedTowards(conv.shape(), others[i], sharding, ctx)) {
      others.push_back(*std::move(sliced));
    }
  }
  for (size_t i = 0; i < others.size(); ++i) {
    const HloSharding& other = others[i];
    if (other == sharding ||
        std::find(others.begin(), others.begin() + i, other) != others.begin() + i) {
      continue;
    }
    RETURN_IF_ERROR(AddStrategies(conv, other, sharding, ctx, all));
  }
  std::vector<double> us;
  std::vector<int64_t> bytes;
  for (ConvStrategy& s : all) {
    s.flops = LocalFlops(conv, s);
    us.push_back(TimeUs(conv, s, ctx));
    bytes.push_back(s.moved.bytes);
  }
  const size_t best = ChooseNearFastest(us, bytes);
  if (all.size() > 1) {
    std::string line = hlo::StrCat("convolution %", conv.name(), ": ");
    for (size_t i = 0; i < all.size(); ++i) {
      hlo::StrAppend(&line, i == 0 ? "" : "; ", Describe(all[i], sharding), " receives ",
                     all[i].moved.bytes, " bytes per device, ", us[i], " us");
    }
    hlo::StrAppend(&line, ": ", Describe(all[best], sharding));
    ctx.log().lines.push_back(std::move(line));
  }
  return std::move(all[best]);
}

// The operand `i` in `sharding` with the padding of uneven shards zeroed.
absl::StatusOr<HloInstruction*> ZeroPadded(const HloInstruction& conv, int64_t i,
                                           const HloSharding& sharding, PartitionContext& ctx) {
  const HloInstruction* operand = conv.operand(i);
  ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(operand, sharding));
  return ctx.MaskPadding(value, operand->shape(), sharding);
}

// The local convolution of a strategy's operands, its partial results summed when it has
// sum groups.
absl::Status EmitLocal(const HloInstruction& original, const ConvStrategy& s, HloInstruction* input,
                       HloInstruction* kernel, PartitionContext& ctx) {
  ASSIGN_OR_RETURN(Shape local_shape, LocalShape(s.local, original.shape()));
  local_shape = WithDims(local_shape, WindowOutputDims(local_shape.dimensions(), s.splits));
  HloInstruction* conv = CloneWithOperands(original, local_shape, {input, kernel}, ctx);
  if (s.group_tiles > 1) {
    int64_t& count = original.attrs().batch_group_count > 1
                         ? conv->mutable_attrs()->batch_group_count
                         : conv->mutable_attrs()->feature_group_count;
    count /= s.group_tiles;
  }
  if (!s.splits.empty()) {
    conv->mutable_attrs()->window = WithoutPadding(*original.attrs().window, s.splits);
  }
  if (s.dilated.has_value()) {
    conv->mutable_attrs()->window->dimensions[s.dilated->window_index].padding_high =
        s.dilated_high;
  }
  for (const WindowSplit& split : s.parallel) {
    conv->mutable_attrs()->window->dimensions[split.window_index] = LocalPairing(original, split);
  }
  if (s.kind == ConvKind::kKernelWindow) {
    hlo::WindowDimension& w =
        conv->mutable_attrs()->window->dimensions[s.kernel_split.window_index];
    w.size = s.kernel_split.geometry.out_shard;
    w.padding_low = 0;
    w.padding_high = 0;
  }
  ASSIGN_OR_RETURN(HloInstruction * result, CutDilatedOutputs(ctx, conv, s.local, s.splits));
  if (s.scatter_dim >= 0) {
    ASSIGN_OR_RETURN(result, ctx.ReduceScatterSum(conv, s.sum_groups, s.scatter_dim));
  } else if (!s.sum_groups.empty()) {
    ASSIGN_OR_RETURN(result, ctx.AllReduceSum(conv, s.sum_groups));
  }
  ctx.Set(&original, {result, s.scatter_dim >= 0 ? s.produced : s.local, original.shape()});
  return absl::OkStatus();
}

absl::Status Emit(const HloInstruction& original, const ConvStrategy& s, PartitionContext& ctx) {
  auto zero = [&] { return ctx.ScalarConstant(original.operand(0)->shape().element_type(), 0); };
  HloInstruction* input = nullptr;
  HloInstruction* kernel = nullptr;
  switch (s.kind) {
    case ConvKind::kContracting: {
      if (s.splits.empty()) {
        ASSIGN_OR_RETURN(input, ZeroPadded(original, 0, s.input, ctx));
      } else {  // Halos only (SummableSplits), the features split evenly.
        ASSIGN_OR_RETURN(input, BuildWindowInput(ctx, original.operand(0), s.input, s.local,
                                                 s.splits, zero(), Outside::kZeroPad));
      }
      ASSIGN_OR_RETURN(kernel, ZeroPadded(original, 1, s.kernel, ctx));
      break;
    }
    case ConvKind::kKernelWindow: {
      // The output's spatial splits exchange halos first; a sliced kernel window is cut by the
      // kernel's blocks.
      std::vector<WindowSplit> splits = s.splits;
      splits.push_back(s.kernel_split);
      ASSIGN_OR_RETURN(input, BuildWindowInput(ctx, original.operand(0), s.input, s.kernel, splits,
                                               zero(), Outside::kZeroSummed));
      ASSIGN_OR_RETURN(kernel, ZeroPadded(original, 1, s.kernel, ctx));
      break;
    }
    case ConvKind::kOutputTiles: {
      if (s.dilated.has_value()) {
        ASSIGN_OR_RETURN(input, ZeroPadded(original, 0, s.input, ctx));
        ASSIGN_OR_RETURN(kernel, ctx.GetInSharding(original.operand(1), s.kernel));
        break;
      }
      ASSIGN_OR_RETURN(input, BuildWindowInput(ctx, original.operand(0), s.input, s.local, s.splits,
                                               zero(), Outside::kZeroPad));
      ASSIGN_OR_RETURN(kernel, ctx.GetInSharding(original.operand(1), s.kernel));
      break;
    }
  }
  return EmitLocal(original, s, input, kernel, ctx);
}

absl::Status HandleConvolution(const HloInstruction& original, const HloSharding& sharding,
                               PartitionContext& ctx) {
  const bool plain =
      original.shape().IsArray() && (sharding.IsTiled() || sharding.IsReplicated()) &&
      (sharding.IsReplicated() || MovesDataInTiling(sharding)) &&
      original.attrs().convolution_dimension_numbers.has_value() && original.operand_count() == 2;
  if (!plain)
    return FallBackToReplicated(
        original, sharding, ctx,
        "a sharding with partial sums, or a convolution other than two array "
        "operands with dimension numbers");
  ASSIGN_OR_RETURN(ConvStrategy strategy, ChooseStrategy(original, sharding, ctx));
  if (strategy.kind == ConvKind::kOutputTiles && WholeWhereItLives(strategy.local)) {
    return FallBackToReplicated(original, sharding, ctx,
                                "no output dimension of this convolution can stay split");
  }
  return Emit(original, strategy, ctx);
}

}  // namespace

void RegisterConvolutionHandler(HandlerTable& table) {
  table[hlo::HloOpcode::kConvolution] = &HandleConvolution;
}

}  // namespace spmd

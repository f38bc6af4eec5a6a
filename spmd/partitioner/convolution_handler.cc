// Convolution: partitioned along the output's batch, output-feature and spatial dimensions.
//
// The input is tiled like the output's batch dimension, the kernel like the output-feature
// dimension; both are replicated along the other's tiles (OperandShardingFromResult). A split
// output spatial dimension (no base dilation) gives each device a block of output positions,
// computed from its window input (halo_exchange.h): the input split alike plus halos from its
// neighbours by collective-permute, or, when the input is whole along it (or halos would move
// more than gathering), a window sliced locally; the kernel's spatial dims stay whole and the
// local convolution runs without padding on those dimensions. With feature_group_count > 1
// the output features split only along whole groups (the input features then split alike and
// each device convolves its fgc/t groups), else they stay whole; with batch_group_count > 1
// the batch and feature dimensions both stay whole. On 4 devices:
//
//   %c = f32[8,16,16,32] convolution(f32[8,16,16,3] %x, f32[3,3,3,32] %k), window={size=3x3
//        pad=1_1x1_1}, dim_labels=b01f_01io->b01f, sharding={devices=[1,4,1,1]<=[4]}
//   with %x in {devices=[1,4,1,1]<=[4]} -> each device adds one row from each neighbour
//   (collective-permute) to its f32[8,4,16,3] shard: %c.spmd = f32[8,4,16,32] convolution(
//   f32[8,6,16,3] ..., %k), window={size=3x3 pad=0_0x1_1}
#include <algorithm>

#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "spmd/partitioner/halo_exchange.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

// The number of tiles `sharding` splits output dim `d` into.
int64_t Tiles(const HloSharding& sharding, int64_t d) {
  return sharding.IsTiled() ? sharding.tile_assignment().dim(d) : 1;
}

// Whether the output features are split along whole feature groups: each device then holds
// the input features of its own groups and runs a convolution of fgc/t groups.
bool SplitsFeatureGroups(const HloInstruction& conv, const HloSharding& sharding) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  const int64_t fgc = conv.attrs().feature_group_count;
  const int64_t t = Tiles(sharding, dn.output_feature_dimension);
  return fgc > 1 && conv.attrs().batch_group_count == 1 && fgc % t == 0;
}

// The output spatial dims `sharding` splits whose window can be split into blocks.
std::vector<WindowSplit> SpatialSplits(const HloInstruction& conv, const HloSharding& sharding) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  std::vector<WindowSplit> splits;
  if (!conv.attrs().window.has_value()) return splits;
  const hlo::Window& window = *conv.attrs().window;
  for (size_t k = 0; k < dn.output_spatial_dimensions.size(); ++k) {
    const int64_t out_dim = dn.output_spatial_dimensions[k];
    const int64_t tiles = Tiles(sharding, out_dim);
    if (tiles == 1 || k >= window.dimensions.size() || !SplittableWindow(window.dimensions[k])) {
      continue;
    }
    WindowSplit split;
    split.wd.dim = dn.input_spatial_dimensions[k];
    split.wd.tiles = tiles;
    split.wd.input_size = conv.operand(0)->shape().dimensions(split.wd.dim);
    split.wd.output_size = conv.shape().dimensions(out_dim);
    split.wd.window = window.dimensions[k];
    split.output_dim = out_dim;
    split.window_index = static_cast<int64_t>(k);
    splits.push_back(split);
  }
  return splits;
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
  if (grouped && !SplitsFeatureGroups(conv, sharding)) {
    whole.push_back(dn.output_feature_dimension);
  }
  if (conv.attrs().batch_group_count != 1) whole.push_back(dn.output_batch_dimension);
  return whole;
}

absl::Status HandleConvolution(const HloInstruction& original, const HloSharding& sharding,
                               PartitionContext& ctx) {
  const bool plain = original.shape().IsArray() && sharding.IsTiled() &&
                     sharding.subgroup_types().empty() &&
                     original.attrs().convolution_dimension_numbers.has_value() &&
                     original.operand_count() == 2;
  if (!plain)
    return FallBackToReplicated(original, sharding, ctx,
                                "a sharding with subgroups, or a convolution other than two array "
                                "operands with dimension numbers");
  const hlo::ConvolutionDimensionNumbers& dn = *original.attrs().convolution_dimension_numbers;
  std::vector<WindowSplit> splits = SpatialSplits(original, sharding);
  ASSIGN_OR_RETURN(HloSharding local, hlo::PartiallyReplicate(
                                          sharding, WholeOutputDims(original, sharding, splits)));
  if (local.IsReplicated())
    return FallBackToReplicated(original, sharding, ctx,
                                "no output dimension of this convolution can stay split");
  ASSIGN_OR_RETURN(const PartitionedValue* input_now, ctx.Get(original.operand(0)));
  ChooseWindowInputs(original, input_now->sharding, splits, ctx);
  const int64_t rank = original.shape().rank();
  const int64_t feature_tiles = Tiles(local, dn.output_feature_dimension);
  const bool split_groups = feature_tiles > 1 && SplitsFeatureGroups(original, local);
  std::vector<int64_t> input_map(original.operand(0)->shape().rank(), -1);
  input_map[dn.input_batch_dimension] = dn.output_batch_dimension;
  if (split_groups) input_map[dn.input_feature_dimension] = dn.output_feature_dimension;
  for (const WindowSplit& split : splits) {
    if (split.halo) input_map[split.wd.dim] = split.output_dim;
  }
  std::vector<int64_t> kernel_map(original.operand(1)->shape().rank(), -1);
  kernel_map[dn.kernel_output_feature_dimension] = dn.output_feature_dimension;
  ASSIGN_OR_RETURN(HloSharding input_sharding, OperandShardingFromResult(local, rank, input_map));
  ASSIGN_OR_RETURN(HloSharding kernel_sharding,
                   OperandShardingFromResult(local, rank, kernel_map));
  HloInstruction* zero =
      ctx.ScalarConstant(original.operand(0)->shape().element_type(), 0);
  ASSIGN_OR_RETURN(HloInstruction * input, BuildWindowInput(ctx, original.operand(0),
                                                            input_sharding, local, splits, zero,
                                                            Outside::kZeroPad));
  ASSIGN_OR_RETURN(HloInstruction * kernel,
                   ctx.GetInSharding(original.operand(1), kernel_sharding));
  ASSIGN_OR_RETURN(Shape local_shape, LocalShape(local, original.shape()));
  HloInstruction* conv = CloneWithOperands(original, local_shape, {input, kernel}, ctx);
  if (split_groups) conv->mutable_attrs()->feature_group_count /= feature_tiles;
  if (!splits.empty()) conv->mutable_attrs()->window = WithoutPadding(*original.attrs().window, splits);
  ctx.Set(&original, {conv, local, original.shape()});
  return absl::OkStatus();
}

}  // namespace

void RegisterConvolutionHandler(HandlerTable& table) {
  table[hlo::HloOpcode::kConvolution] = &HandleConvolution;
}

}  // namespace spmd

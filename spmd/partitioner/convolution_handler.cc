// Convolution: partitioned along the output's batch and output-feature dimensions.
//
// The convolution runs locally in the requested tiling with its spatial dimensions made whole
// (a halo exchange would be needed to split them; here those tiles become replication and the
// consumer's reshard slices them off again, which moves no data). The input is tiled like the
// output's batch dimension and whole elsewhere, the kernel like the output-feature dimension;
// both are replicated along the other's tiles (OperandShardingFromResult). With
// feature_group_count > 1 the output features split only along whole groups (the input
// features then split alike and each device convolves its fgc/t groups), else they stay
// whole; with batch_group_count > 1 the batch and feature dimensions both stay whole. On 4
// devices:
//
//   %c = f32[8,16,16,32] convolution(f32[8,16,16,3] %x, f32[3,3,3,32] %k), dim_labels=b01f_01io->b01f,
//        sharding={devices=[2,1,1,2]<=[4]}
//   -> %x in {devices=[2,1,1,1,2]<=[4] last_tile_dim_replicate}, %k in {devices=[1,1,1,2,2]
//      <=[2,2]T(1,0) last_tile_dim_replicate}, %c.spmd = f32[4,16,16,16] convolution(...)
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
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

// The output dims that must stay whole on every device.
std::vector<int64_t> WholeOutputDims(const HloInstruction& conv, const HloSharding& sharding) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  std::vector<int64_t> whole = dn.output_spatial_dimensions;
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
  if (!plain) return HandleReplicated(original, sharding, ctx);
  const hlo::ConvolutionDimensionNumbers& dn = *original.attrs().convolution_dimension_numbers;
  ASSIGN_OR_RETURN(HloSharding local,
                   hlo::PartiallyReplicate(sharding, WholeOutputDims(original, sharding)));
  if (local.IsReplicated()) return HandleReplicated(original, sharding, ctx);
  const int64_t rank = original.shape().rank();
  const int64_t feature_tiles = Tiles(local, dn.output_feature_dimension);
  const bool split_groups = feature_tiles > 1 && SplitsFeatureGroups(original, local);
  std::vector<int64_t> input_map(original.operand(0)->shape().rank(), -1);
  input_map[dn.input_batch_dimension] = dn.output_batch_dimension;
  if (split_groups) input_map[dn.input_feature_dimension] = dn.output_feature_dimension;
  std::vector<int64_t> kernel_map(original.operand(1)->shape().rank(), -1);
  kernel_map[dn.kernel_output_feature_dimension] = dn.output_feature_dimension;
  ASSIGN_OR_RETURN(HloSharding input_sharding, OperandShardingFromResult(local, rank, input_map));
  ASSIGN_OR_RETURN(HloSharding kernel_sharding,
                   OperandShardingFromResult(local, rank, kernel_map));
  ASSIGN_OR_RETURN(HloInstruction * input, ctx.GetInSharding(original.operand(0), input_sharding));
  ASSIGN_OR_RETURN(HloInstruction * kernel,
                   ctx.GetInSharding(original.operand(1), kernel_sharding));
  ASSIGN_OR_RETURN(Shape local_shape, LocalShape(local, original.shape()));
  HloInstruction* conv = CloneWithOperands(original, local_shape, {input, kernel}, ctx);
  if (split_groups) conv->mutable_attrs()->feature_group_count /= feature_tiles;
  ctx.Set(&original, {conv, local, original.shape()});
  return absl::OkStatus();
}

}  // namespace

void RegisterConvolutionHandler(HandlerTable& table) {
  table[hlo::HloOpcode::kConvolution] = &HandleConvolution;
}

}  // namespace spmd

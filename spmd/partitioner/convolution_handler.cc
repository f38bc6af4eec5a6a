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
// the batch and feature dimensions both stay whole.
//
// Contracting split: when the output is replicated over some devices (a last-tile
// replication dim, or wholly) and no output spatial dim is split, those devices can instead
// split the contracted dims (the input's feature dim with the kernel's input-feature dim) alike:
// each convolves its slice, padding of uneven slices masked to zero, and an all-reduce over
// them sums the partial results. Weight gradients contract over the activations' batch, split
// on the data axis, so this keeps them from gathering both operands. Plain convolutions only
// (feature_group_count and batch_group_count 1). Both strategies are costed by the bytes each
// device receives (operand reshards, plus the all-reduce) and the cheaper one is emitted
// (--explain logs both). On 4 devices:
//
//   %c = f32[8,16,16,32] convolution(f32[8,16,16,3] %x, f32[3,3,3,32] %k), window={size=3x3
//        pad=1_1x1_1}, dim_labels=b01f_01io->b01f, sharding={devices=[1,4,1,1]<=[4]}
//   with %x in {devices=[1,4,1,1]<=[4]} -> each device adds one row from each neighbour
//   (collective-permute) to its f32[8,4,16,3] shard: %c.spmd = f32[8,4,16,32] convolution(
//   f32[8,6,16,3] ..., %k), window={size=3x3 pad=0_0x1_1}
#include <algorithm>
#include <limits>
#include <optional>

#include "hlo/sharding/device_groups.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/cost/collective_cost.h"
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

// Operand shardings of one strategy and the bytes each device receives for it.
struct ConvStrategy {
  HloSharding input = HloSharding::Replicate();
  HloSharding kernel = HloSharding::Replicate();
  std::vector<std::vector<int64_t>> sum_groups;  // Contracting split: the all-reduce's groups.
  int64_t bytes = 0;
};

constexpr int64_t kUnplannable = std::numeric_limits<int64_t>::max() / 4;

// Bytes each device receives to bring `operand` into `target` (kUnplannable when the planner
// cannot reshard it).
int64_t ReshardBytes(const HloInstruction* operand, const HloSharding& target,
                     PartitionContext& ctx) {
  absl::StatusOr<const PartitionedValue*> now = ctx.Get(operand);
  if (!now.ok()) return kUnplannable;
  if ((*now)->sharding == target) return 0;
  auto plan = ctx.planner().Plan(operand->shape(), (*now)->sharding, target, ctx.num_devices());
  return plan.ok() ? (*plan)->bytes_received_per_device : kUnplannable;
}

// The output's replication devices as one more tiled dim (index `rank`), or nullopt when
// there are none or they do not cover every device (the all-reduce needs them all).
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

// The contracting split (file comment) for a result in `local`, or nullopt when it does not
// apply. `input_map` and `kernel_map` map operand dims to output dims as for the output tiles.
absl::StatusOr<std::optional<ConvStrategy>> ContractingStrategy(const HloInstruction& conv,
                                                                const HloSharding& local,
                                                                std::vector<int64_t> input_map,
                                                                std::vector<int64_t> kernel_map,
                                                                PartitionContext& ctx) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  const int64_t rank = conv.shape().rank();
  const bool plain = conv.attrs().feature_group_count == 1 && conv.attrs().batch_group_count == 1 &&
                     conv.shape().element_type() != hlo::PrimitiveType::kPred;
  std::optional<HloSharding> tiled = WithReplicationAsTiles(local, rank, ctx.num_devices());
  if (!plain || !tiled.has_value()) return std::optional<ConvStrategy>();
  input_map[dn.input_feature_dimension] = rank;
  kernel_map[dn.kernel_input_feature_dimension] = rank;
  ConvStrategy s;
  ASSIGN_OR_RETURN(s.input, hlo::OperandShardingFromResult(*tiled, rank + 1, input_map));
  ASSIGN_OR_RETURN(s.kernel, hlo::OperandShardingFromResult(*tiled, rank + 1, kernel_map));
  ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                   hlo::DeviceGroupsAlongDims(tiled->tile_assignment(), {rank}));
  s.sum_groups = hlo::GroupLists(groups);
  ASSIGN_OR_RETURN(Shape shape, LocalShape(local, conv.shape()));
  s.bytes = ReshardBytes(conv.operand(0), s.input, ctx) +
            ReshardBytes(conv.operand(1), s.kernel, ctx) +
            CollectiveBytesReceived(CollectiveKind::kAllReduce, shape.byte_size(),
                                    tiled->tile_assignment().dim(rank));
  return std::optional<ConvStrategy>(std::move(s));
}

// Picks the cheaper of the output tiles (`tiles`) and the contracting split, logging both.
absl::StatusOr<ConvStrategy> ChooseStrategy(const HloInstruction& conv, const HloSharding& local,
                                            ConvStrategy tiles,
                                            const std::vector<int64_t>& input_map,
                                            const std::vector<int64_t>& kernel_map,
                                            PartitionContext& ctx) {
  ASSIGN_OR_RETURN(std::optional<ConvStrategy> contracting,
                   ContractingStrategy(conv, local, input_map, kernel_map, ctx));
  if (!contracting.has_value()) return tiles;
  tiles.bytes = ReshardBytes(conv.operand(0), tiles.input, ctx) +
                ReshardBytes(conv.operand(1), tiles.kernel, ctx);
  const bool split = contracting->bytes < tiles.bytes;
  ctx.log().lines.push_back(
      hlo::StrCat("convolution %", conv.name(), ": the output tiles alone receive ", tiles.bytes,
                  " bytes per device, splitting the contracted dims over ",
                  contracting->sum_groups[0].size(), " devices and summing receives ",
                  contracting->bytes, split ? ": contracting split" : ": output tiles"));
  return split ? *std::move(contracting) : tiles;
}

// The contracting split: operands with uneven contracted slices masked to zero, the local
// convolution, and the all-reduce of its partial sums.
absl::Status EmitContracting(const HloInstruction& original, const HloSharding& local,
                             const ConvStrategy& s, PartitionContext& ctx) {
  std::vector<HloInstruction*> operands;
  for (int64_t i = 0; i < 2; ++i) {
    const HloInstruction* operand = original.operand(i);
    const HloSharding& sharding = i == 0 ? s.input : s.kernel;
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(operand, sharding));
    HloInstruction* zero = ctx.ScalarConstant(operand->shape().element_type(), 0);
    ASSIGN_OR_RETURN(value, ctx.MaskPadding(value, operand->shape(), sharding, zero));
    operands.push_back(value);
  }
  ASSIGN_OR_RETURN(Shape local_shape, LocalShape(local, original.shape()));
  HloInstruction* partial = CloneWithOperands(original, local_shape, operands, ctx);
  ASSIGN_OR_RETURN(HloInstruction * sum, ctx.AllReduceSum(partial, s.sum_groups));
  ctx.Set(&original, {sum, local, original.shape()});
  return absl::OkStatus();
}

absl::Status HandleConvolution(const HloInstruction& original, const HloSharding& sharding,
                               PartitionContext& ctx) {
  const bool plain =
      original.shape().IsArray() && (sharding.IsTiled() || sharding.IsReplicated()) &&
      (sharding.IsReplicated() || sharding.subgroup_types().empty()) &&
      original.attrs().convolution_dimension_numbers.has_value() && original.operand_count() == 2;
  if (!plain)
    return FallBackToReplicated(original, sharding, ctx,
                                "a sharding with subgroups, or a convolution other than two array "
                                "operands with dimension numbers");
  const hlo::ConvolutionDimensionNumbers& dn = *original.attrs().convolution_dimension_numbers;
  std::vector<WindowSplit> splits = SpatialSplits(original, sharding);
  HloSharding local = HloSharding::Replicate();
  if (sharding.IsTiled()) {
    ASSIGN_OR_RETURN(
        local, hlo::PartiallyReplicate(sharding, WholeOutputDims(original, sharding, splits)));
  }
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
  ConvStrategy strategy;
  ASSIGN_OR_RETURN(strategy.input, hlo::OperandShardingFromResult(local, rank, input_map));
  ASSIGN_OR_RETURN(strategy.kernel, hlo::OperandShardingFromResult(local, rank, kernel_map));
  if (splits.empty()) {
    ASSIGN_OR_RETURN(strategy,
                     ChooseStrategy(original, local, strategy, input_map, kernel_map, ctx));
  }
  if (!strategy.sum_groups.empty()) return EmitContracting(original, local, strategy, ctx);
  if (local.IsReplicated())
    return FallBackToReplicated(original, sharding, ctx,
                                "no output dimension of this convolution can stay split");
  HloInstruction* zero =
      ctx.ScalarConstant(original.operand(0)->shape().element_type(), 0);
  ASSIGN_OR_RETURN(HloInstruction * input,
                   BuildWindowInput(ctx, original.operand(0), strategy.input, local, splits, zero,
                                    Outside::kZeroPad));
  ASSIGN_OR_RETURN(HloInstruction * kernel,
                   ctx.GetInSharding(original.operand(1), strategy.kernel));
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

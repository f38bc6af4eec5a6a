// Select-and-scatter (a max-pool's gradient): each window of the operand selects one position
// and the window's source value is scattered (combined) there; the result is operand-shaped.
//
// A dim whose windows stay inside shards (WindowsStayInShards: a trivial window, or unpadded
// windows no longer than their stride over shards of whole strides) runs locally: operand,
// source and result split alike, nothing moves.
//
// A dim whose windows cross shard boundaries (unpadded, undilated: JAX pads the operand
// explicitly) runs by halo exchange (XLA's): result block i, positions [a_i, b_i), receives
// from the windows that touch it, w in [ceil((a_i - K + 1)/s), floor((b_i - 1)/s)] for window
// K and stride s. Every device runs the same number Wn of consecutive windows from its first,
// start_i: the source's [start_i, start_i + Wn) and the operand's [start_i*s, start_i*s +
// (Wn-1)*s + K), fetched by halo exchange from shards split like the result. The local
// select-and-scatter then computes every window touching the block whole, so the block's
// positions are exact, and the device keeps its block (a dynamic-slice from its offset, the
// local result padded with the init value where the block reaches past its windows). The windows
// after its own last begin at or after b_i, so their operand and source positions are not fetched
// (whatever they hold, what they select and scatter lands past the block). Chosen when the halos of
// both are fewer elements than gathering the dim.
//
// Otherwise the crossing dims are made whole (SelectAndScatterTiling: their tiles moved to a
// dim whose windows stay in shards, else replicated), the other dims keep their tiles and the
// result is resharded by its users; only when nothing stays split does it fall back.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/halo_exchange.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/partitioner/partition_context.h"
#include "spmd/partitioner/window_pieces.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

// Whether select-and-scatter's windows along `d` never cross a shard boundary when `d` is split
// `tiles` ways: a trivial window, or (XLA's RetinaNet case) unpadded, undilated windows no
// longer than their stride over even shards holding whole strides. Each shard then holds
// exactly its source shard's windows (source size = operand size / stride, split alike).
bool WindowsStayInShards(const HloInstruction& original, int64_t d, int64_t tiles) {
  const hlo::WindowDimension& w = original.attrs().window->dimensions[d];
  if (tiles == 1 || TrivialWindow(w)) return true;
  const int64_t size = original.operand(0)->shape().dimensions(d);
  const int64_t source = original.operand(1)->shape().dimensions(d);
  const bool plain_window = w.padding_low == 0 && w.padding_high == 0 && w.window_dilation == 1 &&
                            w.base_dilation == 1 && w.size <= w.stride;
  return plain_window && size % tiles == 0 && (size / tiles) % w.stride == 0 &&
         source * w.stride == size;
}

// The tiling a select-and-scatter wanted in `sharding` runs in: each split dim whose windows
// cross shard boundaries made whole, its tiles moved to another dim when there they stay in
// shards (WholeDimsTiling's choice, e.g. a max-pool's spatial split onto its features), else
// replicated.
absl::StatusOr<HloSharding> SelectAndScatterTiling(const HloInstruction& original,
                                                   const HloSharding& sharding,
                                                   const std::vector<int64_t>& crossing) {
  const int64_t rank = original.shape().rank();
  ASSIGN_OR_RETURN(HloSharding moved, WholeDimsTiling(sharding, original.shape(), crossing));
  if (!moved.IsTiled()) return moved;  // Replicated: no dim took the tiles.
  for (int64_t d = 0; d < rank; ++d) {
    const bool stays = WindowsStayInShards(original, d, moved.TilesAlong(d)) &&
                       original.operand(1)->shape().dimensions(d) % moved.TilesAlong(d) == 0;
    if (!stays) return hlo::PartiallyReplicate(sharding, crossing);
  }
  return moved;
}

// A crossing dim by halo exchange (file comment): the operand's and the source's window
// inputs, and where each block's positions begin in the local result padded by `pad_low` and
// `pad_high`.
struct HaloSplit {
  int64_t dim = 0;
  int64_t shard = 0;  // Of the result (and operand) along `dim`.
  WindowedDim operand_wd, source_wd;
  HaloGeometry operand, source;
  int64_t pad_low = 0, pad_high = 0;
  std::vector<int64_t> offsets;  // Per block.
};

// Dim `d` split `tiles` ways by halo exchange, or nullopt when its windows are padded or
// dilated or the halos would move as much as gathering it.
std::optional<HaloSplit> PlanHaloSplit(const HloInstruction& original, int64_t d, int64_t tiles) {
  const hlo::WindowDimension& w = original.attrs().window->dimensions[d];
  const int64_t n = original.operand(0)->shape().dimensions(d);
  const int64_t windows = original.operand(1)->shape().dimensions(d);
  const bool plain = w.padding_low == 0 && w.padding_high == 0 && w.window_dilation == 1 &&
                     w.base_dilation == 1 && !w.window_reversal && w.size >= 1 && w.stride >= 1;
  if (!plain || n == 0 || windows < 1 || (windows - 1) * w.stride + w.size > n) {
    return std::nullopt;
  }
  HaloSplit split;
  split.dim = d;
  split.shard = CeilDiv(n, tiles);
  const int64_t valid = CeilDiv(n, split.shard);
  // Block i's windows: [first_i, last_i]. Every device runs wn windows from start_i; those
  // past last_i begin at or after b_i (when last_i is the block's own last), so their inputs
  // are not fetched (HaloGeometry::reads) and may hold anything: what they select and scatter
  // lands past the block. A block whose windows end with the array's (last_i clamped to the
  // last window) would run windows past the array that overlap it, so it starts early
  // instead (start_i = W - wn): the windows before first_i end before a_i, so their inputs are
  // not fetched either (HaloGeometry::skips).
  std::vector<int64_t> firsts(tiles, 0), lasts(tiles, -1);
  int64_t wn = 1;
  for (int64_t i = 0; i < valid; ++i) {
    const int64_t a = i * split.shard, b = std::min(a + split.shard, n);
    const int64_t lo = a - w.size + 1;
    firsts[i] = lo <= 0 ? 0 : CeilDiv(lo, w.stride);
    lasts[i] = std::min(windows - 1, (b - 1) / w.stride);
    wn = std::max(wn, lasts[i] - firsts[i] + 1);
  }
  std::vector<int64_t> starts(tiles, 0), operand_starts(tiles, 0);
  std::vector<int64_t> source_reads(tiles, 0), operand_reads(tiles, 0);
  std::vector<int64_t> source_skips(tiles, 0), operand_skips(tiles, 0);
  for (int64_t i = 0; i < valid; ++i) {
    const int64_t b = std::min((i + 1) * split.shard, n);
    const bool clamped = lasts[i] < (b - 1) / w.stride;
    starts[i] = clamped ? std::min(firsts[i], windows - wn) : firsts[i];
    const int64_t count = std::max<int64_t>(0, lasts[i] - starts[i] + 1);
    source_reads[i] = count;
    operand_reads[i] = count == 0 ? 0 : (count - 1) * w.stride + w.size;
    source_skips[i] = std::max<int64_t>(0, firsts[i] - starts[i]);
    operand_skips[i] = source_skips[i] * w.stride;
  }
  for (int64_t i = valid; i < tiles; ++i) starts[i] = starts[valid - 1];
  for (int64_t i = 0; i < tiles; ++i) operand_starts[i] = starts[i] * w.stride;
  const int64_t length = (wn - 1) * w.stride + w.size;
  for (int64_t i = 0; i < valid; ++i) {
    const int64_t a = i * split.shard;
    split.pad_low = std::max(split.pad_low, operand_starts[i] - a);
    split.pad_high = std::max(split.pad_high, a + split.shard - (operand_starts[i] + length));
  }
  split.offsets.assign(tiles, 0);
  for (int64_t i = 0; i < tiles; ++i) {
    split.offsets[i] = std::max<int64_t>(
        0, std::min(i, valid - 1) * split.shard - operand_starts[i] + split.pad_low);
  }
  split.operand_wd = WindowedDim{d, tiles, n, n, w};
  split.source_wd = WindowedDim{d, tiles, windows, windows, w};
  split.operand = GeometryFromStarts(split.operand_wd, std::move(operand_starts), length, valid,
                                     std::move(operand_reads), std::move(operand_skips));
  split.source = GeometryFromStarts(split.source_wd, std::move(starts), wn, valid,
                                    std::move(source_reads), std::move(source_skips));
  if (HaloElements(split.operand) >= GatherElements(split.operand, tiles) ||
      HaloElements(split.source) >= GatherElements(split.source, tiles)) {
    return std::nullopt;
  }
  return split;
}

// Every crossing dim of `sharding` by halo exchange, or nullopt when one cannot be.
std::optional<std::vector<HaloSplit>> PlanHalos(const HloInstruction& original,
                                                const HloSharding& sharding,
                                                const std::vector<int64_t>& crossing) {
  std::vector<HaloSplit> splits;
  for (int64_t d : crossing) {
    std::optional<HaloSplit> split = PlanHaloSplit(original, d, sharding.TilesAlong(d));
    if (!split.has_value()) return std::nullopt;
    splits.push_back(*std::move(split));
  }
  return splits;
}

// The select-and-scatter in `sharding`, its crossing dims by halo exchange (`splits`, possibly
// none).
absl::Status Emit(const HloInstruction& original, const HloSharding& sharding,
                  const std::vector<HaloSplit>& splits, PartitionContext& ctx) {
  ASSIGN_OR_RETURN(HloInstruction * operand, ctx.GetInSharding(original.operand(0), sharding));
  ASSIGN_OR_RETURN(HloInstruction * source, ctx.GetInSharding(original.operand(1), sharding));
  ASSIGN_OR_RETURN(HloInstruction * init, GetReplicated(original.operand(2), ctx));
  for (const HaloSplit& split : splits) {
    ASSIGN_OR_RETURN(operand, ExchangeHalo(ctx, operand, sharding, split.operand_wd, split.operand,
                                           init, Outside::kUnused));
    ASSIGN_OR_RETURN(source, ExchangeHalo(ctx, source, sharding, split.source_wd, split.source,
                                          init, Outside::kUnused));
  }
  HloInstruction* result =
      CloneWithOperands(original, operand->shape(), {operand, source, init}, ctx);
  for (const HaloSplit& split : splits) {
    const int64_t d = split.dim;
    if (split.pad_low > 0 || split.pad_high > 0) {
      std::vector<int64_t> dims = result->shape().dimensions();
      dims[d] += split.pad_low + split.pad_high;
      hlo::PaddingConfig config;
      config.dimensions.resize(dims.size());
      config.dimensions[d] = {split.pad_low, split.pad_high, 0};
      result = ctx.Add(hlo::HloOpcode::kPad, Shape::Array(result->shape().element_type(), dims),
                       {result, init});
      result->mutable_attrs()->padding_config = std::move(config);
    }
    const std::vector<int64_t> block = BlockOfDevice(sharding, d, ctx.num_devices());
    HloInstruction* start = PerBlockScalar(ctx, block, [&](int64_t i) { return split.offsets[i]; });
    result = DynamicSliceDim(ctx, result, d, start, split.shard);
  }
  ctx.Set(&original, {result, sharding, original.shape()});
  return absl::OkStatus();
}

absl::Status HandleSelectAndScatter(const HloInstruction& original, const HloSharding& wanted,
                                    PartitionContext& ctx) {
  const int64_t rank = original.shape().rank();
  const bool plain = original.shape().IsArray() && original.operand_count() == 3 &&
                     MovesDataInTiling(wanted) && original.attrs().window.has_value() &&
                     static_cast<int64_t>(original.attrs().window->dimensions.size()) == rank &&
                     original.operand(1)->shape().rank() == rank;
  if (!plain)
    return FallBackToReplicated(original, wanted, ctx,
                                "a select-and-scatter with partial sums in its sharding");
  std::vector<int64_t> crossing;
  for (int64_t d = 0; wanted.IsTiled() && d < rank; ++d) {
    if (!WindowsStayInShards(original, d, wanted.TilesAlong(d))) crossing.push_back(d);
  }
  if (crossing.empty()) return Emit(original, wanted, {}, ctx);
  if (std::optional<std::vector<HaloSplit>> splits = PlanHalos(original, wanted, crossing)) {
    if (ctx.log().keep_lines) {
      for (const HaloSplit& s : *splits) {
        ctx.log().lines.push_back(hlo::StrCat(
            "%", original.name(), ": select-and-scatter window dimension ", s.dim, " split ",
            s.operand_wd.tiles, " ways: halo exchange (operand ", HaloElements(s.operand),
            " and source ", HaloElements(s.source), " elements; gathering them would receive ",
            GatherElements(s.operand, s.operand_wd.tiles), " and ",
            GatherElements(s.source, s.source_wd.tiles), ")"));
      }
    }
    return Emit(original, wanted, *splits, ctx);
  }
  ASSIGN_OR_RETURN(const HloSharding sharding, SelectAndScatterTiling(original, wanted, crossing));
  if (WholeWhereItLives(sharding) && !WholeWhereItLives(wanted)) {
    return FallBackToReplicated(original, wanted, ctx,
                                "a select-and-scatter split along a dimension with a real "
                                "window whose windows cross shard boundaries, and no other dim "
                                "to keep split");
  }
  if (ctx.log().keep_lines) {
    ctx.log().lines.push_back(
        hlo::StrCat("%", original.name(), ": select-and-scatter computed in ",
                    sharding.ToStringWithoutMetadata(), " (its windows cross the shards of ",
                    wanted.ToStringWithoutMetadata(), ") and resharded by its users"));
  }
  return Emit(original, sharding, {}, ctx);
}

}  // namespace

void RegisterSelectAndScatterHandler(HandlerTable& table) {
  table[hlo::HloOpcode::kSelectAndScatter] = &HandleSelectAndScatter;
}

}  // namespace spmd

#include "spmd/partitioner/halo_exchange.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "hlo/sharding/shard_geometry.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/cost/collective_cost.h"
#include "spmd/partitioner/window_pieces.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::PrimitiveType;
using hlo::Shape;

// a / b rounded down, for negative a too (b > 0).
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The effective extent of one window: its first to its last element read.
int64_t Extent(const hlo::WindowDimension& w) { return (w.size - 1) * w.window_dilation + 1; }

// Whether block `i` computes at least one output inside the result (the others only compute
// padding, which no consumer reads; their window inputs may be anything).
bool ValidBlock(const HaloGeometry& g, int64_t i) { return i < g.valid_blocks; }

// The input positions inside [0, N) block i's outputs read: its window input's [skips[i],
// reads[i]) (HaloGeometry::skips, reads); only they travel, the rest is padding added locally.
std::pair<int64_t, int64_t> ReadRange(const WindowedDim& wd, const HaloGeometry& g, int64_t i) {
  const int64_t read = g.reads.empty() ? g.needed : g.reads[i];
  const int64_t skip = g.skips.empty() ? 0 : g.skips[i];
  return {std::max<int64_t>(g.starts[i] + skip, 0), std::min(g.starts[i] + read, wd.input_size)};
}

// `value` on each device replaced by the value of the device `hops` blocks away along `dim`
// (negative: lower blocks); devices with no such neighbour receive zeros.
HloInstruction* FromNeighbour(PartitionContext& ctx, HloInstruction* value,
                              const HloSharding& sharding, int64_t dim, int64_t hops) {
  const int64_t tiles = sharding.tile_assignment().dim(dim);
  std::vector<int64_t> from(tiles, -1);
  for (int64_t i = 0; i < tiles; ++i) {
    if (i + hops >= 0 && i + hops < tiles) from[i] = i + hops;
  }
  return FromBlocks(ctx, value, sharding, dim, from);
}

// Replaces the elements of each device's window input whose position (start of the device's
// block + index along wd.dim) lies outside [0, N) by `pad`.
HloInstruction* MaskOutside(PartitionContext& ctx, HloInstruction* window, const WindowedDim& wd,
                            const HaloGeometry& g, const std::vector<int64_t>& block,
                            HloInstruction* pad) {
  const Shape& shape = window->shape();
  HloInstruction* inside = ctx.PositionInRange(
      shape, wd.dim, PerBlockScalar(ctx, block, [&](int64_t i) { return g.starts[i]; }),
      ctx.ScalarConstant(PrimitiveType::kS32, 0),
      ctx.ScalarConstant(PrimitiveType::kS32, static_cast<double>(wd.input_size)));
  HloInstruction* fill = ctx.Add(HloOpcode::kBroadcast, shape, {pad});
  return ctx.Add(HloOpcode::kSelect, shape, {inside, window, fill});
}

// Whether some block that computes real outputs (`valid`), or some padding block, reads a
// position outside [0, N).
bool ReadsOutside(const WindowedDim& wd, const HaloGeometry& g, bool valid) {
  for (int64_t i = 0; i < wd.tiles; ++i) {
    if (ValidBlock(g, i) != valid) continue;
    if (g.starts[i] < 0 || g.starts[i] + g.needed > wd.input_size) return true;
  }
  return false;
}

// Whether some block's window (padding blocks too) reads positions [N, tiles*shard) that its
// device assembled from shards: the last shards' padding, which holds whatever the operand's
// producer left there. Block i assembles [i*Is - left, (i+1)*Is + right); every other position
// outside [0, N) is explicit padding or zeros received from no neighbour.
bool ReadsShardPadding(const WindowedDim& wd, const HaloGeometry& g) {
  const int64_t end = wd.tiles * g.shard;
  for (int64_t i = 0; i < static_cast<int64_t>(g.starts.size()); ++i) {
    const int64_t lo = std::max({wd.input_size, g.starts[i], i * g.shard - g.left});
    const int64_t hi = std::min({end, g.starts[i] + g.needed, (i + 1) * g.shard + g.right});
    if (lo < hi) return true;
  }
  return false;
}

// The rounds that fetch `g`'s windows (valid blocks only), or nullopt when a piece would reach
// into its sender's shard padding. Of two packings, the one with fewer permutes (then elements):
// one round per hop, and widest first into the first round where neither their sender nor their
// receiver is busy (a greedy edge colouring of the sender-receiver graph: pieces from shards
// many hops apart share a round). A narrower piece rides in a wider round as a longer piece of
// its sender's shard, which lands at its true positions (it carries only real data).
std::optional<std::vector<FetchRound>> WindowFetches(const WindowedDim& wd, const HaloGeometry& g) {
  if (g.shard == 0) return std::nullopt;
  std::vector<Piece> pieces;
  for (int64_t i = 0; i < wd.tiles; ++i) {
    if (!ValidBlock(g, i)) continue;
    const auto [lo, hi] = ReadRange(wd, g, i);
    for (int64_t j = lo / g.shard; lo < hi && j * g.shard < hi; ++j) {
      const int64_t rs = std::max(lo, j * g.shard) - j * g.shard;
      const int64_t re = std::min(hi, (j + 1) * g.shard) - j * g.shard;
      const int64_t valid = std::min(g.shard, wd.input_size - j * g.shard);
      if (re - rs > valid) return std::nullopt;
      pieces.push_back({i, j, rs, re - rs, valid});
    }
  }
  std::optional<std::vector<FetchRound>> by_hop = PackByHop(pieces, wd.tiles);
  std::vector<FetchRound> widest = PackWidestFirst(std::move(pieces), wd.tiles);
  if (!by_hop || RemoteCost(widest) < RemoteCost(*by_hop)) return widest;
  return by_hop;
}

// Elements a device receives when it assembles the span [-left, shard + right) around its
// shard.
int64_t SpanElements(const HaloGeometry& g) {
  const int64_t from = -g.left, to = g.shard + g.right;
  const int64_t own = std::max<int64_t>(0, std::min(to, g.shard) - std::max<int64_t>(from, 0));
  return (to - from) - own;
}

// The collective-permutes that assemble the span: one per neighbour shard it reaches.
int64_t SpanHops(const HaloGeometry& g) {
  const int64_t from = -g.left, to = g.shard + g.right;
  int64_t hops = 0;
  for (int64_t h = FloorDiv(from, g.shard); h * g.shard < to; ++h) hops += h != 0 ? 1 : 0;
  return hops;
}

// Whether ExchangeHalo fetches `g`'s windows piece by piece (FetchWindow): fewer elements in no
// more permutes than assembling the span.
bool FetchesPieces(const HaloGeometry& g) {
  return g.fetched >= 0 && g.fetched < SpanElements(g) && g.fetch_rounds <= SpanHops(g);
}

// Where FetchWindow writes each round's piece: buffer [low | window (needed) | high], at[r][i]
// the first position of block i's piece in round r.
struct PiecePlacement {
  int64_t low = 0, high = 0;
  std::vector<std::vector<int64_t>> at;
};

using Span = std::pair<int64_t, int64_t>;  // [first, limit) of buffer positions.

// The parts of [a, b) that none of `spans` covers.
std::vector<Span> Uncovered(int64_t a, int64_t b, std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<Span> gaps;
  for (const auto& [first, limit] : spans) {
    if (limit <= a || first >= b) continue;
    if (first > a) gaps.push_back({a, first});
    a = std::max(a, limit);
  }
  if (a < b) gaps.push_back({a, b});
  return gaps;
}

// Whether writing a piece of `width` at `at` leaves block i's window [low, low + needed) as the
// real writes make it: every window position the piece covers is written again later, or the
// piece is zeros (`zero`) and nothing real was written there before.
bool HarmlessPark(int64_t at, int64_t width, bool zero, int64_t low, int64_t needed,
                  const std::vector<Span>& earlier, const std::vector<Span>& later) {
  const int64_t a = std::max(at, low), b = std::min(at + width, low + needed);
  if (a >= b) return true;
  for (const auto& [first, limit] : Uncovered(a, b, later)) {
    if (!zero || Uncovered(first, limit, earlier) != std::vector<Span>{{first, limit}}) {
      return false;
    }
  }
  return true;
}

// Real pieces land at their window positions, which may reach before or past the window (a
// narrower piece riding a wider round as a longer piece of its sender's shard): the slack on
// each side is what they reach. A block that receives nothing in a round still writes the
// round's piece (one dynamic-update-slice serves every device): a remote round's piece is
// zeros there, a local round's the block's own data. It goes where it changes nothing the
// window keeps (HarmlessPark: overwritten later, or zeros over zeros), else past the buffer,
// whose high slack then grows to hold it.
PiecePlacement PlacePieces(const std::vector<FetchRound>& rounds, const HaloGeometry& g) {
  PiecePlacement p;
  const int64_t tiles = rounds.empty() ? 0 : static_cast<int64_t>(rounds[0].from.size());
  auto rel = [&](const FetchRound& r, int64_t i) {
    return r.from[i] * g.shard + r.start[i] - g.starts[i];
  };
  for (const FetchRound& r : rounds) {
    for (int64_t i = 0; i < tiles; ++i) {
      if (r.from[i] < 0) continue;
      p.low = std::max(p.low, -rel(r, i));
      p.high = std::max(p.high, rel(r, i) + r.width - g.needed);
    }
  }
  const int64_t size = p.low + g.needed + p.high;
  p.at.assign(rounds.size(), std::vector<int64_t>(tiles, 0));
  for (size_t k = 0; k < rounds.size(); ++k) {
    for (int64_t i = 0; i < tiles; ++i) {
      if (rounds[k].from[i] >= 0) p.at[k][i] = p.low + rel(rounds[k], i);
    }
  }
  std::vector<std::pair<size_t, int64_t>> overflow;  // Parks with no place in the buffer.
  for (size_t k = 0; k < rounds.size(); ++k) {
    const FetchRound& r = rounds[k];
    for (int64_t i = 0; i < tiles; ++i) {
      if (r.from[i] >= 0) continue;
      std::vector<Span> earlier, later;
      std::vector<int64_t> starts = {0, size - r.width, p.low, p.low + g.needed};
      for (size_t q = 0; q < rounds.size(); ++q) {
        if (q == k || rounds[q].from[i] < 0) continue;
        const Span w{p.at[q][i], p.at[q][i] + rounds[q].width};
        (q < k ? earlier : later).push_back(w);
        for (int64_t edge : {w.first, w.second}) {
          starts.push_back(edge);
          starts.push_back(edge - r.width);
        }
      }
      std::sort(starts.begin(), starts.end());
      const auto place = std::find_if(starts.begin(), starts.end(), [&](int64_t at) {
        return at >= 0 && at + r.width <= size &&
               HarmlessPark(at, r.width, !r.local, p.low, g.needed, earlier, later);
      });
      if (place != starts.end()) {
        p.at[k][i] = *place;
      } else {
        overflow.push_back({k, i});
      }
    }
  }
  int64_t extra = 0;
  for (const auto& [k, i] : overflow) extra = std::max(extra, rounds[k].width);
  p.high += extra;
  for (const auto& [k, i] : overflow) p.at[k][i] = size + extra - rounds[k].width;
  return p;
}

// A device that receives nothing in a local round still writes its own data there (one
// dynamic-update-slice serves every device). Where its own piece of another local round is at
// least as wide, it writes the start of that piece instead, at that piece's place: the same
// values at the same positions, so it needs no park of its own (PlacePieces).
void RepeatOwnPieces(std::vector<FetchRound>& rounds) {
  for (FetchRound& r : rounds) {
    if (!r.local) continue;
    for (size_t i = 0; i < r.from.size(); ++i) {
      if (r.from[i] >= 0) continue;
      for (const FetchRound& q : rounds) {
        if (q.local && q.width >= r.width && q.from[i] == static_cast<int64_t>(i)) {
          r.from[i] = q.from[i];
          r.start[i] = q.start[i];
          break;
        }
      }
    }
  }
}

// Parks are easiest early (own data that later real pieces overwrite, zeros where nothing was
// written yet), so the order of the rounds decides the buffer's slack: every order of up to
// kMaxOrderedRounds rounds is placed and the first with the least slack kept; more rounds keep
// their order, or take the fewest receivers first when that asks for less.
constexpr size_t kMaxOrderedRounds = 5;

std::pair<std::vector<FetchRound>, PiecePlacement> SmallestPlacement(
    const std::vector<FetchRound>& rounds, const HaloGeometry& g) {
  std::vector<std::vector<size_t>> orders(1, std::vector<size_t>(rounds.size()));
  for (size_t k = 0; k < rounds.size(); ++k) orders[0][k] = k;
  if (rounds.size() <= kMaxOrderedRounds) {
    std::vector<size_t> perm = orders[0];
    while (std::next_permutation(perm.begin(), perm.end())) orders.push_back(perm);
  } else {
    auto receivers = [&](size_t k) {
      return std::count_if(rounds[k].from.begin(), rounds[k].from.end(),
                           [](int64_t f) { return f >= 0; });
    };
    orders.push_back(orders[0]);
    std::stable_sort(orders[1].begin(), orders[1].end(),
                     [&](size_t a, size_t b) { return receivers(a) < receivers(b); });
  }
  std::optional<std::pair<std::vector<FetchRound>, PiecePlacement>> best;
  for (const std::vector<size_t>& order : orders) {
    std::vector<FetchRound> ordered;
    for (size_t k : order) ordered.push_back(rounds[k]);
    PiecePlacement placed = PlacePieces(ordered, g);
    if (!best || placed.high < best->second.high)
      best.emplace(std::move(ordered), std::move(placed));
  }
  return *std::move(best);
}

// ExchangeHalo by pieces: each device slices the positions its receivers' windows read from its
// shard, the pieces travel in rounds (WindowFetches, one collective-permute each), and each
// device writes them at their places in a zero buffer around the window (PlacePieces) and
// keeps the window. Positions outside [0, N) stay zero (no piece carries shard padding).
absl::StatusOr<HloInstruction*> FetchWindow(PartitionContext& ctx, HloInstruction* value,
                                            const HloSharding& sharding, const WindowedDim& wd,
                                            const HaloGeometry& g, HloInstruction* pad,
                                            Outside outside) {
  std::optional<std::vector<FetchRound>> rounds = WindowFetches(wd, g);
  if (!rounds) return absl::InternalError("halo exchange: the window pieces carry padding");
  const int64_t d = wd.dim;
  const std::vector<int64_t> block = BlockOfDevice(sharding, d, ctx.num_devices());
  RepeatOwnPieces(*rounds);
  std::pair<std::vector<FetchRound>, PiecePlacement> smallest = SmallestPlacement(*rounds, g);
  rounds = std::move(smallest.first);
  const PiecePlacement& placed = smallest.second;
  std::vector<int64_t> dims = value->shape().dimensions();
  dims[d] = placed.low + g.needed + placed.high;
  HloInstruction* buffer = ctx.builder().Zeros(Shape::Array(value->shape().element_type(), dims));
  for (size_t k = 0; k < rounds->size(); ++k) {
    HloInstruction* piece = SendRound(ctx, value, sharding, d, block, (*rounds)[k]);
    HloInstruction* at = PerBlockScalar(ctx, block, [&](int64_t i) { return placed.at[k][i]; });
    buffer = ctx.builder().UpdateDim(buffer, piece, d, at);
  }
  HloInstruction* window = SliceDim(ctx, buffer, d, placed.low, placed.low + g.needed);
  if (outside != Outside::kPad || !ReadsOutside(wd, g, /*valid=*/true)) return window;
  return MaskOutside(ctx, window, wd, g, block, pad);
}

}  // namespace

bool IsZeroConstant(const HloInstruction& value) {
  if (value.opcode() != hlo::HloOpcode::kConstant || !value.attrs().literal.has_value()) {
    return false;
  }
  const std::vector<uint8_t>& bytes = value.attrs().literal->data();
  return !bytes.empty() &&
         std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; });
}

bool SplittableWindow(const hlo::WindowDimension& window) {
  return window.base_dilation == 1 && window.size >= 1 && window.stride >= 1;
}

// Fills the halos and padding of `g` from its blocks' starts and window length. The range a
// device assembles, relative to its shard's start, is [-left, shard + right): its own shard and
// the halos around it, or, when every block reads only beyond its own shard (or only before
// it), just the windows' span there (left or right negative: the shards between are skipped).
void FillHalos(const WindowedDim& wd, HaloGeometry& g) {
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  for (int64_t i = 0; i < wd.tiles; ++i) {
    if (!ValidBlock(g, i)) continue;
    const auto [lo, hi] = ReadRange(wd, g, i);
    if (lo >= hi) continue;
    first = std::min(first, lo - i * g.shard);
    last = std::max(last, hi - i * g.shard);
  }
  if (first <= last) {
    g.left = first < g.shard ? std::max<int64_t>(0, -first) : -first;
    g.right = last > 0 ? std::max<int64_t>(0, last - g.shard) : last - g.shard;
  }
  if (std::optional<std::vector<FetchRound>> rounds = WindowFetches(wd, g)) {
    std::tie(g.fetch_rounds, g.fetched) = RemoteCost(*rounds);
  }
  for (int64_t i = 0; i < wd.tiles; ++i) {
    if (!ValidBlock(g, i)) continue;
    g.pad_low = std::max(g.pad_low, i * g.shard - g.left - g.starts[i]);
    g.pad_high = std::max(g.pad_high, g.starts[i] + g.needed - (i + 1) * g.shard - g.right);
  }
}

bool TrivialWindow(const hlo::WindowDimension& w) {
  return w.size == 1 && w.stride == 1 && w.padding_low == 0 && w.padding_high == 0 &&
         w.window_dilation == 1 && w.base_dilation == 1;
}

HaloGeometry GeometryFromStarts(const WindowedDim& wd, std::vector<int64_t> starts, int64_t needed,
                                int64_t valid_blocks, std::vector<int64_t> reads,
                                std::vector<int64_t> skips) {
  HaloGeometry g;
  g.shard = CeilDiv(wd.input_size, wd.tiles);
  g.out_shard = g.shard;
  g.valid_blocks = valid_blocks;
  g.needed = needed;
  g.starts = std::move(starts);
  g.reads = std::move(reads);
  g.skips = std::move(skips);
  FillHalos(wd, g);
  return g;
}

HaloGeometry ComputeHaloGeometry(const WindowedDim& wd) {
  if (wd.window.base_dilation > 1) {
    if (std::optional<DilatedWindow> dw = DilatedWindowGeometry(wd)) return dw->geometry;
  }
  HaloGeometry g;
  const hlo::WindowDimension& w = wd.window;
  g.shard = CeilDiv(wd.input_size, wd.tiles);
  g.out_shard = CeilDiv(wd.output_size, wd.tiles);
  g.valid_blocks = g.out_shard == 0 ? 0 : CeilDiv(wd.output_size, g.out_shard);
  g.needed = std::max<int64_t>(0, g.out_shard - 1) * w.stride + Extent(w);
  for (int64_t i = 0; i < wd.tiles; ++i) {
    g.starts.push_back(i * g.out_shard * w.stride - w.padding_low);
  }
  FillHalos(wd, g);
  return g;
}

std::optional<DilatedWindow> DilatedWindowGeometry(const WindowedDim& wd) {
  const hlo::WindowDimension& w = wd.window;
  const int64_t d = w.base_dilation;
  if (d <= 1 || w.size < 1 || w.stride < 1 || w.window_dilation < 1 || wd.tiles < 1 ||
      wd.output_size < 1) {
    return std::nullopt;
  }
  DilatedWindow dw;
  HaloGeometry& g = dw.geometry;
  g.shard = CeilDiv(wd.input_size, wd.tiles);
  g.out_shard = CeilDiv(wd.output_size, wd.tiles);
  g.valid_blocks = CeilDiv(wd.output_size, g.out_shard);
  const int64_t extent = Extent(w);
  std::vector<int64_t> low(wd.tiles, 0);
  g.needed = 1;
  for (int64_t i = 0; i < wd.tiles; ++i) {
    // Block i's first window starts at dilated position `first`; its first real input
    // position at or after it is lo_i, `low` dilated positions later.
    const int64_t first = i * g.out_shard * w.stride - w.padding_low;
    const int64_t lo = -FloorDiv(-first, d);
    g.starts.push_back(lo);
    low[i] = lo * d - first;
    if (i >= g.valid_blocks) {
      g.reads.push_back(0);
      continue;
    }
    const int64_t last = first + (g.out_shard - 1) * w.stride + extent - 1;
    g.reads.push_back(std::max<int64_t>(0, FloorDiv(last, d) - lo + 1));
    g.needed = std::max(g.needed, g.reads.back());
    dw.padding_low = std::max(dw.padding_low, low[i]);
  }
  // Block i computes from padding_low: its outputs begin (padding_low - low_i) / stride later.
  dw.offsets.assign(wd.tiles, 0);
  int64_t most = 0;
  for (int64_t i = 0; i < g.valid_blocks; ++i) {
    if ((dw.padding_low - low[i]) % w.stride != 0) return std::nullopt;
    dw.offsets[i] = (dw.padding_low - low[i]) / w.stride;
    most = std::max(most, dw.offsets[i]);
  }
  dw.outputs = g.out_shard + most;
  dw.padding_high =
      (dw.outputs - 1) * w.stride + extent - dw.padding_low - ((g.needed - 1) * d + 1);
  FillHalos(wd, g);
  return dw;
}

HaloGeometry KernelBlockGeometry(const WindowedDim& wd, bool paired_reversed) {
  HaloGeometry g;
  const hlo::WindowDimension& w = wd.window;
  g.shard = CeilDiv(wd.input_size, wd.tiles);
  g.out_shard = CeilDiv(w.size, wd.tiles);
  g.valid_blocks = CeilDiv(w.size, g.out_shard);
  g.needed = std::max<int64_t>(0, wd.output_size - 1) * w.stride +
             (g.out_shard - 1) * w.window_dilation + 1;
  for (int64_t i = 0; i < wd.tiles; ++i) {
    const int64_t b = paired_reversed ? wd.tiles - 1 - i : i;
    const int64_t offset = w.window_reversal ? w.size - (b + 1) * g.out_shard : b * g.out_shard;
    g.starts.push_back(offset * w.window_dilation - w.padding_low);
  }
  FillHalos(wd, g);
  return g;
}

int64_t HaloElements(const HaloGeometry& g) {
  return FetchesPieces(g) ? g.fetched : SpanElements(g);
}

int64_t GatherElements(const HaloGeometry& g, int64_t tiles) { return (tiles - 1) * g.shard; }

int64_t HaloHops(const HaloGeometry& g) {
  if (g.shard == 0) return 0;
  return FetchesPieces(g) ? g.fetch_rounds : SpanHops(g);
}

double HaloTimeUs(const HaloGeometry& g, int64_t bytes, const LinkModel& link) {
  if (bytes <= 0) return 0;
  const int64_t permutes = std::max<int64_t>(1, HaloHops(g));
  return TransferTimeUs(bytes, link) + static_cast<double>(permutes - 1) * link.latency_us;
}

absl::StatusOr<HloInstruction*> ExchangeHalo(PartitionContext& ctx, HloInstruction* value,
                                             const HloSharding& sharding, const WindowedDim& wd,
                                             const HaloGeometry& g, HloInstruction* pad,
                                             Outside outside) {
  const int64_t d = wd.dim;
  if (!sharding.IsTiled() || sharding.tile_assignment().dim(d) != wd.tiles ||
      value->shape().dimensions(d) != g.shard) {
    return absl::InternalError(hlo::StrCat("halo exchange: operand ", value->name(),
                                           " is not split into ", wd.tiles, " shards of ", g.shard,
                                           " along dimension ", d));
  }
  if (FetchesPieces(g)) return FetchWindow(ctx, value, sharding, wd, g, pad, outside);
  // [-left, shard + right) relative to each device's shard: the part of it in the shard `h`
  // blocks away comes from that neighbour (h = 0: the device's own).
  std::vector<HloInstruction*> parts;
  const int64_t from = -g.left, to = g.shard + g.right;
  for (int64_t h = FloorDiv(from, g.shard); h * g.shard < to; ++h) {
    const int64_t lo = std::max<int64_t>(from - h * g.shard, 0);
    const int64_t hi = std::min(to - h * g.shard, g.shard);
    HloInstruction* piece = lo == 0 && hi == g.shard ? value : SliceDim(ctx, value, d, lo, hi);
    parts.push_back(h == 0 ? piece : FromNeighbour(ctx, piece, sharding, d, h));
  }
  HloInstruction* extended = parts.front();
  std::vector<int64_t> dims = value->shape().dimensions();
  dims[d] = g.left + g.shard + g.right;
  if (parts.size() > 1) {
    extended =
        ctx.Add(HloOpcode::kConcatenate, Shape::Array(value->shape().element_type(), dims), parts);
    extended->mutable_attrs()->dimensions = {d};
  }
  if (g.pad_low > 0 || g.pad_high > 0) {
    dims[d] += g.pad_low + g.pad_high;
    hlo::PaddingConfig config;
    config.dimensions.resize(dims.size());
    config.dimensions[d] = {g.pad_low, g.pad_high, 0};
    extended = ctx.Add(HloOpcode::kPad, Shape::Array(value->shape().element_type(), dims),
                       {extended, pad});
    extended->mutable_attrs()->padding_config = std::move(config);
  }
  // Device in block i keeps [pad_low + left - (i*Is - lo_i), ... + needed) of
  // [pad_low | left | shard | right | pad_high].
  const std::vector<int64_t> block = BlockOfDevice(sharding, d, ctx.num_devices());
  auto start_of = [&](int64_t i) { return g.pad_low + g.left - i * g.shard + g.starts[i]; };
  const int64_t extended_size = dims[d];
  const bool in_place =
      g.needed == extended_size &&
      std::all_of(block.begin(), block.end(), [&](int64_t i) { return start_of(i) == 0; });
  HloInstruction* window =
      in_place ? extended
               : DynamicSliceDim(ctx, extended, d, PerBlockScalar(ctx, block, start_of), g.needed);
  // Devices with no neighbour at some hop receive zeros (collective-permute), which is the
  // padding already when `pad` is zero and no window reads a shard's padding.
  if (outside == Outside::kUnused) return window;
  // A padding block's window need not fit the assembled buffer (its slice start clamps), so
  // when its result is summed only a mask makes it zero.
  const bool summed = outside == Outside::kZeroSummed;
  const bool padding_reads = summed && ReadsOutside(wd, g, /*valid=*/false);
  const bool zeros_suffice =
      (outside == Outside::kZeroPad || summed) && !padding_reads && !ReadsShardPadding(wd, g);
  if (zeros_suffice || (!ReadsOutside(wd, g, /*valid=*/true) && !padding_reads)) return window;
  return MaskOutside(ctx, window, wd, g, block, pad);
}

absl::StatusOr<HloInstruction*> SliceWindow(PartitionContext& ctx, HloInstruction* value,
                                            const HloSharding& blocks, int64_t blocks_dim,
                                            const WindowedDim& wd, const HaloGeometry& g,
                                            HloInstruction* pad) {
  const int64_t d = wd.dim;
  if (value->shape().dimensions(d) != wd.input_size) {
    return absl::InternalError(
        hlo::StrCat("window slice: operand ", value->name(), " is not whole along dimension ", d));
  }
  // Pad so that every block's window lies inside; positions outside [0, N) become `pad`.
  int64_t low = 0, high = 0;
  for (int64_t i = 0; i < wd.tiles; ++i) {
    if (!ValidBlock(g, i)) continue;
    low = std::max(low, -g.starts[i]);
    high = std::max(high, g.starts[i] + g.needed - wd.input_size);
  }
  HloInstruction* padded = value;
  if (low > 0 || high > 0) {
    std::vector<int64_t> dims = value->shape().dimensions();
    dims[d] += low + high;
    hlo::PaddingConfig config;
    config.dimensions.resize(dims.size());
    config.dimensions[d] = {low, high, 0};
    padded =
        ctx.Add(HloOpcode::kPad, Shape::Array(value->shape().element_type(), dims), {value, pad});
    padded->mutable_attrs()->padding_config = std::move(config);
  }
  const std::vector<int64_t> block = BlockOfDevice(blocks, blocks_dim, ctx.num_devices());
  HloInstruction* start = PerBlockScalar(ctx, block, [&](int64_t i) { return g.starts[i] + low; });
  return DynamicSliceDim(ctx, padded, d, start, g.needed);
}

// How many slices of `op`'s operand along `dim` (`op` included, when it is a slice) would share
// one gather of that dimension.
int64_t SlicesSharingAGather(const HloInstruction& op, int64_t dim) {
  if (op.opcode() != hlo::HloOpcode::kSlice) return 1;
  const HloInstruction* operand = op.operand(0);
  int64_t count = 0;
  for (const HloInstruction* user : operand->users()) {
    if (user->opcode() != hlo::HloOpcode::kSlice || user->operand(0) != operand) continue;
    const hlo::SliceDimension& s = user->attrs().slice_dimensions[dim];
    if (s.limit - s.start < operand->shape().dimensions(dim)) ++count;
  }
  return std::max<int64_t>(count, 1);
}

// Whether halos that take more than two collective-permutes (beyond the neighbouring shards)
// beat one gather of the dimension in estimated time (each permute pays its latency), for an
// operand of `shape` split as `sharding`; the gather's time is shared by `sharing` slices.
bool FarHalosBeatAGather(const Shape& shape, const HloSharding& sharding, const HaloGeometry& g,
                         int64_t tiles, int64_t sharing, PartitionContext& ctx) {
  const int64_t permutes = HaloHops(g);
  if (permutes <= 2) return true;
  absl::StatusOr<Shape> local = hlo::PaddedShardShape(sharding, shape);
  if (!local.ok() || g.shard == 0) return true;
  const int64_t row = local->byte_size() / g.shard;
  const LinkModel& link = ctx.planner().link();
  return HaloTimeUs(g, HaloElements(g) * row, link) * static_cast<double>(sharing) <
         TransferTimeUs(GatherElements(g, tiles) * row, link);
}

void ChooseWindowInputs(const HloInstruction& op, const Shape& operand_shape,
                        const HloSharding& operand_current, std::vector<WindowSplit>& splits,
                        PartitionContext& ctx) {
  for (WindowSplit& split : splits) {
    const WindowedDim& wd = split.wd;
    split.geometry = ComputeHaloGeometry(wd);
    const bool split_alike = operand_current.IsTiled() &&
                             wd.dim < operand_current.TiledDataRank() &&
                             operand_current.tile_assignment().dim(wd.dim) == wd.tiles;
    const int64_t halo = HaloElements(split.geometry);
    const int64_t gather = GatherElements(split.geometry, wd.tiles);
    const int64_t sharing = SlicesSharingAGather(op, wd.dim);
    split.halo =
        split_alike && halo * sharing < gather &&
        FarHalosBeatAGather(operand_shape, operand_current, split.geometry, wd.tiles, sharing, ctx);
    std::string line =
        hlo::StrCat("%", op.name(), ": window dimension ", wd.dim, " split ", wd.tiles, " ways: ");
    const std::string shared =
        sharing > 1 ? hlo::StrCat(", shared by ", sharing, " slices of the operand") : "";
    if (split.halo) {
      const HaloGeometry& g = split.geometry;
      if (g.left >= 0 && g.right >= 0) {
        hlo::StrAppend(&line, "halo exchange (", g.left, " before + ", g.right,
                       " after each shard by collective-permute; gathering ",
                       "the dimension would receive ", gather, shared, ")");
      } else {
        hlo::StrAppend(&line, "window fetch (positions [", -g.left, ", ", g.shard + g.right,
                       ") from each shard's start, outside it: ", halo,
                       " elements by collective-permute; gathering the dimension would receive ",
                       gather, shared, ")");
      }
    } else {
      hlo::StrAppend(
          &line, "each device slices its window from the operand whole along it (",
          !split_alike ? std::string("the operand is not split alike")
          : halo * sharing < gather
              ? hlo::StrCat("halos of ", halo, " elements in ", HaloHops(split.geometry),
                            " collective-permutes take longer than one gather of ", gather, shared)
              : hlo::StrCat("halos of ", halo, " are not fewer than the ", gather,
                            " a gather receives", shared),
          ")");
    }
    ctx.log().lines.push_back(std::move(line));
  }
}

absl::StatusOr<HloInstruction*> BuildWindowInput(PartitionContext& ctx,
                                                 const HloInstruction* operand,
                                                 const HloSharding& operand_sharding,
                                                 const HloSharding& result,
                                                 const std::vector<WindowSplit>& splits,
                                                 HloInstruction* pad, Outside outside) {
  ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(operand, operand_sharding));
  // Halos first: a neighbour along one dimension holds another block along the others, so
  // what it sends must not have been cut to its own window there yet.
  for (const WindowSplit& split : splits) {
    if (!split.halo) continue;
    ASSIGN_OR_RETURN(
        value, ExchangeHalo(ctx, value, operand_sharding, split.wd, split.geometry, pad, outside));
  }
  for (const WindowSplit& split : splits) {
    if (split.halo) continue;
    ASSIGN_OR_RETURN(
        value, SliceWindow(ctx, value, result, split.output_dim, split.wd, split.geometry, pad));
  }
  return value;
}

hlo::Window WithoutPadding(hlo::Window window, const std::vector<WindowSplit>& splits) {
  for (const WindowSplit& split : splits) {
    hlo::WindowDimension& w = window.dimensions[split.window_index];
    const std::optional<DilatedWindow> dw =
        w.base_dilation > 1 ? DilatedWindowGeometry(split.wd) : std::nullopt;
    w.padding_low = dw.has_value() ? dw->padding_low : 0;
    w.padding_high = dw.has_value() ? dw->padding_high : 0;
  }
  return window;
}

std::vector<int64_t> WindowOutputDims(std::vector<int64_t> local,
                                      const std::vector<WindowSplit>& splits) {
  for (const WindowSplit& split : splits) {
    if (split.wd.window.base_dilation <= 1) continue;
    if (std::optional<DilatedWindow> dw = DilatedWindowGeometry(split.wd)) {
      local[split.output_dim] = dw->outputs;
    }
  }
  return local;
}

absl::StatusOr<HloInstruction*> CutDilatedOutputs(PartitionContext& ctx, HloInstruction* value,
                                                  const HloSharding& result,
                                                  const std::vector<WindowSplit>& splits) {
  for (const WindowSplit& split : splits) {
    if (split.wd.window.base_dilation <= 1) continue;
    std::optional<DilatedWindow> dw = DilatedWindowGeometry(split.wd);
    RET_CHECK(dw.has_value());
    // Every block's outputs begin at 0 when there are no more than a block's (offsets are at
    // most outputs - Os): nothing to cut.
    if (dw->outputs == dw->geometry.out_shard) continue;
    std::vector<int64_t> offset = BlockOfDevice(result, split.output_dim, ctx.num_devices());
    for (int64_t& o : offset) o = dw->offsets[o];
    value = ctx.builder().SliceDim(value, split.output_dim, ctx.PerDeviceScalar(offset),
                                   dw->geometry.out_shard);
  }
  return value;
}

}  // namespace spmd

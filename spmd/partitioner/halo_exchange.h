// Windowed ops (convolution, reduce-window) on a dimension split across devices.
//
// With the output split into t blocks of Os = ceil(M/t) along a window dimension, device i
// computes outputs [i*Os, (i+1)*Os) and reads input positions [lo_i, lo_i + needed) with
// lo_i = i*Os*stride - padding_low and needed = (Os-1)*stride + (size-1)*dilation + 1. Each
// device builds exactly that window input — positions outside [0, N) hold the op's padding
// value — and runs the op locally with no padding on that dimension. Two ways to build it:
//
//  * ExchangeHalo: the input is split like the output (shards of Is = ceil(N/t)); a device
//    adds the `left` elements before its shard and the `right` elements after it from its
//    neighbours along the dimension by collective-permute (several hops when a halo is longer
//    than a shard), then dynamic-slices its window out of [left halo | shard | right halo].
//  * SliceWindow: the input is whole along the dimension; each device pads it and
//    dynamic-slices its own window (no communication).
//
// Example: f32[16] split 4 ways, window 3, stride 1, padding 1/1 (Os = Is = 4): device i needs
// positions [4i-1, 4i+3), so left = right = 1: one element from each neighbour, 2 elements
// received per device where gathering the dimension would receive 12.
#ifndef SPMD_PARTITIONER_HALO_EXCHANGE_H_
#define SPMD_PARTITIONER_HALO_EXCHANGE_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_attributes.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/cost/collective_cost.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {

// One window dimension of a windowed op split `tiles` ways.
struct WindowedDim {
  int64_t dim = 0;          // The operand dimension the window slides along.
  int64_t tiles = 1;        // How many blocks the output (and a split input) has.
  int64_t input_size = 0;   // N, the operand's size along `dim`.
  int64_t output_size = 0;  // M, the op's result size along the matching dimension.
  hlo::WindowDimension window;
};

// Where each block's window input lies along one dimension.
struct HaloGeometry {
  int64_t shard = 0;         // Is = ceil(N/tiles): an input shard.
  int64_t out_shard = 0;     // Os = ceil(M/tiles): an output block (KernelBlockGeometry: Ks).
  int64_t valid_blocks = 0;  // Blocks holding real outputs (kernel positions); the rest pad.
  int64_t needed = 0;        // The window input length of one output block.
  int64_t left = 0;          // Elements of [0, N) before its shard the neediest block reads.
  int64_t right = 0;         // Elements of [0, N) after its shard the neediest block reads.
  // Positions outside [0, N) added below and above [left halo | shard | right halo] so that
  // every block's window fits (only their padding value matters).
  int64_t pad_low = 0;
  int64_t pad_high = 0;
  std::vector<int64_t> starts;  // lo_i per block: its first input position (may be < 0).
  // Per block, how many of its `needed` positions its outputs read (empty: all); the rest
  // only pad the window input to one length, so they are not fetched.
  std::vector<int64_t> reads;
  // Per block, how many of its first positions its outputs do not read (empty: none); like
  // the positions past `reads`, they are not fetched and may hold anything.
  std::vector<int64_t> skips;
  // Elements a device receives, and collective-permutes, when it fetches from other shards
  // only the positions its window reads there (a slice far from its shard reads a few elements
  // many shards away, not the whole span between), the pieces packed into as few permutes as
  // no device sends or receives twice in; -1 when some such piece would carry a shard's
  // padding. ExchangeHalo fetches so when that receives fewer elements.
  int64_t fetched = -1;
  int64_t fetch_rounds = 0;
};

// What the positions of a window input outside [0, N) must hold.
enum class Outside {
  kPad,         // The scalar `pad` (masked in where needed).
  kZeroPad,     // `pad` is zero: the zeros received from missing neighbours already are, so
                // only windows over the last shards' padding need a mask.
  kZeroSummed,  // As kZeroPad, and every block's result is summed (a kernel-window split):
                // the windows of blocks past the kernel (zeroed) must hold no garbage either.
  kUnused,      // Nothing: the caller overwrites them (concatenate).
};

// Whether `value` is a constant whose every byte is zero (+0 for floats): the zeros a
// collective-permute delivers from no source, so Outside::kZeroPad applies.
bool IsZeroConstant(const hlo::HloInstruction& value);

// Whether `window` may be split into blocks here: no base (lhs) dilation.
bool SplittableWindow(const hlo::WindowDimension& window);

// Whether `window` reads one position per output: size 1, stride 1, no padding or dilation.
bool TrivialWindow(const hlo::WindowDimension& window);

// The geometry of `wd` (see the file comment; a base-dilated window's is DilatedWindow's).
HaloGeometry ComputeHaloGeometry(const WindowedDim& wd);

// The geometry of window inputs of `needed` positions from `starts[i]` for block i (blocks at
// and past `valid_blocks` compute only padding), of which block i reads [skips[i], reads[i])
// (empty: all; the rest may hold anything), of an input of wd.input_size positions split wd.tiles
// ways: for ops whose blocks' inputs are not one stride of output blocks apart
// (select-and-scatter's windows touching each result block).
HaloGeometry GeometryFromStarts(const WindowedDim& wd, std::vector<int64_t> starts, int64_t needed,
                                int64_t valid_blocks, std::vector<int64_t> reads = {},
                                std::vector<int64_t> skips = {});

// A base-dilated window dimension (base_dilation d > 1) split into output blocks of Os, the
// input tiled along it (XLA's halo for a base-dilated convolution). Block i's windows read
// input positions from lo_i = ceil((i*Os*stride - padding_low) / d), the first real input at
// or after its first window's start; `geometry` fetches [lo_i, lo_i + needed) on each device
// like any window input. The local op reads it base-dilated with `padding_low` and
// `padding_high` (the same on every device) and computes `outputs` = Os + max(offsets)
// positions, of which block i's begin at `offsets[i]`: its first window starts that many
// strides after the one the shared low padding gives. nullopt when some offset is not a whole
// number of strides.
//
// Example: 7 inputs split 2, base dilation 2, window 3, padding 1/2 (14 outputs, Os = 7):
// block 0 reads inputs [0, 5) (a 1-element halo from device 1), block 1 inputs [3, 7) (one
// from device 0); each convolves with padding 1/0 -> 8 outputs and keeps [0, 7) or [1, 8).
struct DilatedWindow {
  HaloGeometry geometry;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t outputs = 0;
  std::vector<int64_t> offsets;  // Per block.
};
std::optional<DilatedWindow> DilatedWindowGeometry(const WindowedDim& wd);

// The geometry when the kernel (not the output) is split into `wd.tiles` blocks of
// Ks = ceil(K/tiles) positions along the window dimension, K = wd.window.size: block i applies
// kernel positions [i*Ks, (i+1)*Ks) to every one of the M outputs, so it reads input
// positions from lo_i = i*Ks*dilation - padding_low, needed = (M-1)*stride + (Ks-1)*dilation + 1
// of them. Summing the blocks' convolutions gives the whole one. With window reversal, kernel
// block b applies window offsets [K-(b+1)*Ks, K-b*Ks) and starts there; with
// `paired_reversed`, the geometry's block i (a device's input tile i) holds kernel block t-1-i
// (the kernel's tiles in reverse device order), so each reversed block reads near its own input
// shard. REQUIRES for `paired_reversed`: every block holds kernel positions (valid_blocks = t).
// Example: N = 56 split 2, K = 28, dilation 2, M = 1: blocks read [0, 27) and [28, 55), inside
// their own shards, so no halo moves.
HaloGeometry KernelBlockGeometry(const WindowedDim& wd, bool paired_reversed = false);

// Elements along the dimension a device receives by halo exchange, and by gathering the
// dimension instead ((tiles-1) shards).
int64_t HaloElements(const HaloGeometry& g);
int64_t GatherElements(const HaloGeometry& g, int64_t tiles);
// The collective-permutes ExchangeHalo uses for `g`: one per neighbour hop, or per round of
// window pieces.
int64_t HaloHops(const HaloGeometry& g);
// The estimated time of `g`'s halo exchange when it moves `bytes` to a device: one latency per
// collective-permute plus the transfer on `link` (0 when nothing moves).
double HaloTimeUs(const HaloGeometry& g, int64_t bytes, const LinkModel& link);

// `value` is the per-device shard of an operand tiled by `sharding`, with `wd.tiles` blocks
// along wd.dim. Returns each device's window input (g.needed elements along wd.dim from
// g.starts[block]); positions outside [0, N) as `outside` says.
absl::StatusOr<hlo::HloInstruction*> ExchangeHalo(PartitionContext& ctx, hlo::HloInstruction* value,
                                                  const hlo::HloSharding& sharding,
                                                  const WindowedDim& wd, const HaloGeometry& g,
                                                  hlo::HloInstruction* pad, Outside outside);

// The same window input from a `value` that holds all N elements along wd.dim; `blocks`
// (tiled, wd.tiles blocks along `blocks_dim`) says which block each device computes.
absl::StatusOr<hlo::HloInstruction*> SliceWindow(PartitionContext& ctx, hlo::HloInstruction* value,
                                                 const hlo::HloSharding& blocks, int64_t blocks_dim,
                                                 const WindowedDim& wd, const HaloGeometry& g,
                                                 hlo::HloInstruction* pad);

// One split window dimension of a windowed op and how its window input is built.
struct WindowSplit {
  WindowedDim wd;
  int64_t output_dim = 0;    // The result dimension split into the blocks.
  int64_t window_index = 0;  // Index into the op's window.dimensions.
  bool halo = false;         // ExchangeHalo (operand split alike) or SliceWindow (whole).
  HaloGeometry geometry;
};

// Fills geometry and chooses, per split: halo exchange when the operand (of `operand_shape`) is
// already split wd.tiles ways along wd.dim (`operand_current`, its sharding now), the halos are
// fewer elements than the rest of the dimension and, when they take more than two
// collective-permutes, less time than one gather of it; else the operand is taken whole along the
// dimension (free when it is whole already) and each device slices its window. When `op` is
// one of several slices of one operand along the dimension (q, k and v cut from one
// projection), one gather serves them all (the reshard is cached), so each counts its share
// of it. Appends one --explain line per split to the log.
void ChooseWindowInputs(const hlo::HloInstruction& op, const hlo::Shape& operand_shape,
                        const hlo::HloSharding& operand_current, std::vector<WindowSplit>& splits,
                        PartitionContext& ctx);

// The local window input of `operand`: fetched in `operand_sharding` (split like the result
// along halo splits, whole along slice splits), then each split applied; positions outside
// the operand as `outside` says. `result` is the op's (local) result sharding.
absl::StatusOr<hlo::HloInstruction*> BuildWindowInput(PartitionContext& ctx,
                                                      const hlo::HloInstruction* operand,
                                                      const hlo::HloSharding& operand_sharding,
                                                      const hlo::HloSharding& result,
                                                      const std::vector<WindowSplit>& splits,
                                                      hlo::HloInstruction* pad, Outside outside);

// The window the local op runs with on prepared window inputs: no padding along every split
// dimension, or a base-dilated one's DilatedWindow padding.
hlo::Window WithoutPadding(hlo::Window window, const std::vector<WindowSplit>& splits);

// The local op's result dims: `local` (its shard of the result) with the output dim of every
// base-dilated split lengthened to DilatedWindow::outputs.
std::vector<int64_t> WindowOutputDims(std::vector<int64_t> local,
                                      const std::vector<WindowSplit>& splits);

// `value`, the local op's result in WindowOutputDims, cut along every base-dilated split's
// output dim to each device's Os outputs from its block's offset (`result`: the op's local
// result sharding, which says each device's block).
absl::StatusOr<hlo::HloInstruction*> CutDilatedOutputs(PartitionContext& ctx,
                                                       hlo::HloInstruction* value,
                                                       const hlo::HloSharding& result,
                                                       const std::vector<WindowSplit>& splits);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_HALO_EXCHANGE_H_

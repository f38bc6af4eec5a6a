// Window pieces: the positions a block reads from other devices' shards along one split
// dimension, packed into rounds of collective-permutes in which no device sends or receives
// twice, and the small index helpers that emit them. Shared by the halo exchange
// (halo_exchange.h: FetchWindow) and the composed concatenate (composed_concat.h).
#ifndef SPMD_PARTITIONER_WINDOW_PIECES_H_
#define SPMD_PARTITIONER_WINDOW_PIECES_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "hlo/ir/hlo_instruction.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {

// a / b rounded up (a >= 0, b > 0): the shard length of `a` positions split `b` ways.
inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Each device's block index along `dim` of `sharding` (0 for devices it does not use).
std::vector<int64_t> BlockOfDevice(const hlo::HloSharding& sharding, int64_t dim, int64_t devices);

// The per-device scalar f(block of the device).
template <typename F>
hlo::HloInstruction* PerBlockScalar(PartitionContext& ctx, const std::vector<int64_t>& block, F f) {
  std::vector<int64_t> table(block.size());
  for (size_t device = 0; device < block.size(); ++device) table[device] = f(block[device]);
  return ctx.PerDeviceScalar(table);
}

// value[start:limit) along `dim`.
hlo::HloInstruction* SliceDim(PartitionContext& ctx, hlo::HloInstruction* value, int64_t dim,
                              int64_t start, int64_t limit);
// `size` elements of `value` along `dim` from the s32 scalar `start`.
hlo::HloInstruction* DynamicSliceDim(PartitionContext& ctx, hlo::HloInstruction* value, int64_t dim,
                                     hlo::HloInstruction* start, int64_t size);
// `value` on each device replaced by the value of the device in block `from[i]` along `dim`
// (i: the device's own block; from[i] < 0: zeros), the other tile coordinates the same.
hlo::HloInstruction* FromBlocks(PartitionContext& ctx, hlo::HloInstruction* value,
                                const hlo::HloSharding& sharding, int64_t dim,
                                const std::vector<int64_t>& from);

// One step of fetching window pieces (FetchWindow): each receiving block gets at most one piece
// of `width` elements, and each sending block sends at most one, so a round is one
// collective-permute (or, when every piece is the receiver's own, a local slice).
struct FetchRound {
  int64_t width = 0;
  bool local = false;         // Every piece comes from the receiver's own shard.
  std::vector<int64_t> from;  // Per receiving block: the sending block, or -1 (none).
  // Per receiving block: its piece's first element in the sender's shard.
  std::vector<int64_t> start;
  // Per receiving block: the index of its piece in the packed list, or -1.
  std::vector<int64_t> piece;
};

// A window piece: what receiving block `receiver` reads from block `sender`'s shard, from
// element `rs` on (`valid`: the sender's real elements).
struct Piece {
  int64_t receiver, sender, rs, width, valid;
  bool local() const { return receiver == sender; }
};

// What each device receives in round `r` of pieces cut along `dim` from `value` (tiled by
// `sharding`; `block` is each device's block index, BlockOfDevice): every sending block's
// piece starts where its receiver's does; a local round is each device's own slice.
hlo::HloInstruction* SendRound(PartitionContext& ctx, hlo::HloInstruction* value,
                               const hlo::HloSharding& sharding, int64_t dim,
                               const std::vector<int64_t>& block, const FetchRound& r);

// The pieces packed widest first into the first round where neither their sender nor their
// receiver is busy and whose width the sender's shard can give (a greedy edge colouring of the
// sender-receiver graph), else into a new one. A narrower piece rides in a wider round as a
// longer piece of its sender's shard (its start moved back when the shard ends first).
std::vector<FetchRound> PackWidestFirst(const std::vector<Piece>& pieces, int64_t tiles);
// One round per hop, as wide as its widest piece; nullopt when a sender's shard cannot give
// that width or a receiver would get two pieces in one round.
std::optional<std::vector<FetchRound>> PackByHop(const std::vector<Piece>& pieces, int64_t tiles);
// Remote rounds and the elements they carry to each device.
std::pair<int64_t, int64_t> RemoteCost(const std::vector<FetchRound>& rounds);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_WINDOW_PIECES_H_

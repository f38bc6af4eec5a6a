#include "spmd/partitioner/window_pieces.h"

#include <algorithm>
#include <map>

#include "hlo/sharding/shard_geometry.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::PrimitiveType;
using hlo::Shape;

// Places `p` in the first of `rounds` (local pieces only with local ones) where neither its
// sender nor its receiver is busy and whose width the sender's shard can give, else in a new one.
void Place(const Piece& p, int64_t id, int64_t tiles, std::vector<FetchRound>& rounds,
           std::vector<std::vector<bool>>& sending) {
  size_t r = 0;
  for (; r < rounds.size(); ++r) {
    const FetchRound& round = rounds[r];
    if (round.local == p.local() && round.from[p.receiver] < 0 && !sending[r][p.sender] &&
        p.width <= round.width && round.width <= p.valid) {
      break;
    }
  }
  if (r == rounds.size()) {
    rounds.push_back({p.width, p.local(), std::vector<int64_t>(tiles, -1),
                      std::vector<int64_t>(tiles, -1), std::vector<int64_t>(tiles, -1)});
    sending.emplace_back(tiles, false);
  }
  FetchRound& round = rounds[r];
  round.from[p.receiver] = p.sender;
  round.start[p.receiver] = std::min(p.rs, p.valid - round.width);
  round.piece[p.receiver] = id;
  sending[r][p.sender] = true;
}

}  // namespace

// Each device's block index along `dim` of `sharding` (0 for devices it does not use).
std::vector<int64_t> BlockOfDevice(const HloSharding& sharding, int64_t dim, int64_t devices) {
  std::vector<int64_t> block(devices, 0);
  for (int64_t device = 0; device < devices; ++device) {
    absl::StatusOr<std::vector<int64_t>> index = hlo::TileIndexForDevice(sharding, device);
    if (index.ok()) block[device] = (*index)[dim];
  }
  return block;
}

HloInstruction* SliceDim(PartitionContext& ctx, HloInstruction* value, int64_t dim, int64_t start,
                         int64_t limit) {
  std::vector<int64_t> dims = value->shape().dimensions();
  std::vector<hlo::SliceDimension> slice(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) slice[d] = {0, dims[d], 1};
  slice[dim] = {start, limit, 1};
  dims[dim] = limit - start;
  HloInstruction* out =
      ctx.Add(HloOpcode::kSlice, Shape::Array(value->shape().element_type(), dims), {value});
  out->mutable_attrs()->slice_dimensions = std::move(slice);
  return out;
}

HloInstruction* DynamicSliceDim(PartitionContext& ctx, HloInstruction* value, int64_t dim,
                                HloInstruction* start, int64_t size) {
  std::vector<int64_t> dims = value->shape().dimensions();
  dims[dim] = size;
  std::vector<HloInstruction*> operands = {value};
  HloInstruction* zero = nullptr;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (d == dim) {
      operands.push_back(start);
    } else {
      if (zero == nullptr) zero = ctx.ScalarConstant(PrimitiveType::kS32, 0);
      operands.push_back(zero);
    }
  }
  HloInstruction* out = ctx.Add(HloOpcode::kDynamicSlice,
                                Shape::Array(value->shape().element_type(), dims), operands);
  out->mutable_attrs()->dynamic_slice_sizes = dims;
  return out;
}

HloInstruction* FromBlocks(PartitionContext& ctx, HloInstruction* value,
                           const HloSharding& sharding, int64_t dim,
                           const std::vector<int64_t>& from) {
  const hlo::TileAssignment& ta = sharding.tile_assignment();
  std::vector<std::pair<int64_t, int64_t>> pairs;
  ta.ForEach([&](absl::Span<const int64_t> index, int64_t device) {
    const int64_t source_block = from[index[dim]];
    if (source_block < 0) return;
    std::vector<int64_t> source(index.begin(), index.end());
    source[dim] = source_block;
    pairs.emplace_back(ta.device(source), device);
  });
  return ctx.builder().CollectivePermute(value, std::move(pairs));
}

// The pieces packed widest first, each placed as Place says.
std::vector<FetchRound> PackWidestFirst(const std::vector<Piece>& pieces, int64_t tiles) {
  std::vector<int64_t> order(pieces.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    if (pieces[a].local() != pieces[b].local()) return pieces[a].local();
    return pieces[a].width > pieces[b].width;
  });
  std::vector<FetchRound> rounds;
  std::vector<std::vector<bool>> sending;
  for (int64_t id : order) Place(pieces[id], id, tiles, rounds, sending);
  return rounds;
}

// One round per hop (pieces that travel equally far never collide), as wide as its widest
// piece; nullopt when a sender's shard cannot give that width or a receiver would get two
// pieces in one round (pieces of several windows).
std::optional<std::vector<FetchRound>> PackByHop(const std::vector<Piece>& pieces, int64_t tiles) {
  std::map<int64_t, FetchRound> hops;
  for (const Piece& p : pieces) {
    FetchRound& round = hops[p.sender - p.receiver];
    round.local = p.local();
    round.width = std::max(round.width, p.width);
    round.from.resize(tiles, -1);
    round.start.resize(tiles, -1);
    round.piece.resize(tiles, -1);
  }
  for (size_t id = 0; id < pieces.size(); ++id) {
    const Piece& p = pieces[id];
    FetchRound& round = hops[p.sender - p.receiver];
    if (round.width > p.valid || round.from[p.receiver] >= 0) return std::nullopt;
    round.from[p.receiver] = p.sender;
    round.start[p.receiver] = std::min(p.rs, p.valid - round.width);
    round.piece[p.receiver] = static_cast<int64_t>(id);
  }
  std::vector<FetchRound> rounds;
  for (auto& [hop, round] : hops) rounds.push_back(std::move(round));
  return rounds;
}

// Remote rounds and the elements they carry to each device.
std::pair<int64_t, int64_t> RemoteCost(const std::vector<FetchRound>& rounds) {
  std::pair<int64_t, int64_t> cost{0, 0};
  for (const FetchRound& r : rounds) {
    if (r.local) continue;
    ++cost.first;
    cost.second += r.width;
  }
  return cost;
}

HloInstruction* SendRound(PartitionContext& ctx, HloInstruction* value, const HloSharding& sharding,
                          int64_t dim, const std::vector<int64_t>& block, const FetchRound& r) {
  const int64_t tiles = static_cast<int64_t>(r.from.size());
  std::vector<int64_t> sent(tiles, 0);
  for (int64_t i = 0; i < tiles; ++i) {
    if (r.from[i] >= 0) sent[r.from[i]] = r.start[i];
  }
  HloInstruction* offset = PerBlockScalar(ctx, block, [&](int64_t j) { return sent[j]; });
  HloInstruction* piece = DynamicSliceDim(ctx, value, dim, offset, r.width);
  return r.local ? piece : FromBlocks(ctx, piece, sharding, dim, r.from);
}

}  // namespace spmd

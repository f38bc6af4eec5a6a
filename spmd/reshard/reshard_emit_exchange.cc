// Emission of the direct reshards.
//
// The exchange (reshard_exchange.h): the new shard starts as zeros; each round slices one cell
// per device from the old shard (at a per-device offset), moves it by collective-permute in
// permute rounds, and writes it at the device's offset. A device that takes no part in a round
// writes back what its new shard already holds there, so the update is a no-op for it.
//
// The direct all-to-all (reshard_direct.h): reshape each target split dim k of the shard into
// [t_k, L_k / t_k] -> transpose those t_k factors to the front (send order) -> reshape them
// into one dim of N pieces -> all-to-all on it -> reshape the N arrivals into the source's
// tile counts (receive order) -> transpose each s_k just major of its dim k -> reshape into
// the new shard.
#include <algorithm>

#include "hlo/status_macros.h"
#include "spmd/reshard/reshard_direct.h"
#include "spmd/reshard/reshard_emitter.h"
#include "spmd/reshard/reshard_exchange.h"
#include "spmd/reshard/reshard_state.h"

namespace spmd {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

std::vector<HloInstruction*> ReshardEmitter::DeviceStarts(
    const std::vector<std::vector<int64_t>>& offsets, int64_t rank) {
  std::vector<HloInstruction*> starts;
  for (int64_t d = 0; d < rank; ++d) {
    std::vector<int64_t> table;
    for (const std::vector<int64_t>& device : offsets) table.push_back(device[d]);
    starts.push_back(builder_.PerDeviceScalar(table));
  }
  return starts;
}

absl::StatusOr<HloInstruction*> ReshardEmitter::EmitExchange(const StepContext& context) {
  const int64_t rank = context.base_shape.rank();
  ASSIGN_OR_RETURN(TileState from,
                   TileState::FromSharding(context.before, rank, context.num_devices));
  ASSIGN_OR_RETURN(TileState to,
                   TileState::FromSharding(context.step.sharding, rank, context.num_devices));
  ASSIGN_OR_RETURN(ExchangeSchedule schedule,
                   PlanExchange(from, to, context.base_shape.dimensions()));
  RET_CHECK(schedule.new_shard_dims == context.after_dims);
  const PrimitiveType type = context.value->shape().element_type();
  const Shape cell_shape = Shape::Array(type, schedule.cell_dims);
  const Shape pred = Shape::Array(PrimitiveType::kPred, schedule.cell_dims);
  auto slice = [&](HloInstruction* from_value, const std::vector<HloInstruction*>& starts) {
    std::vector<HloInstruction*> operands = {from_value};
    operands.insert(operands.end(), starts.begin(), starts.end());
    HloInstruction* s = builder_.Add(HloOpcode::kDynamicSlice, cell_shape, operands);
    s->mutable_attrs()->dynamic_slice_sizes = schedule.cell_dims;
    return s;
  };
  HloInstruction* out = builder_.Add(HloOpcode::kBroadcast, Shape::Array(type, context.after_dims),
                                     {builder_.ScalarConstant(type, 0)});
  auto round = [&](const ExchangeRound& r, bool permute) {
    HloInstruction* cell = slice(context.value, DeviceStarts(r.read_offset, rank));
    if (permute) {
      cell = builder_.CollectivePermute(cell, r.pairs);  // `cell` is cell_shape.
    }
    const std::vector<HloInstruction*> write = DeviceStarts(r.write_offset, rank);
    const bool everyone = std::all_of(r.writes.begin(), r.writes.end(), [](bool w) { return w; });
    if (!everyone) {
      HloInstruction* flag =
          builder_.PerDeviceFlag(std::vector<int64_t>(r.writes.begin(), r.writes.end()));
      HloInstruction* mask = builder_.Add(HloOpcode::kBroadcast, pred, {flag});
      cell = builder_.Add(HloOpcode::kSelect, cell_shape, {mask, cell, slice(out, write)});
    }
    std::vector<HloInstruction*> operands = {out, cell};
    operands.insert(operands.end(), write.begin(), write.end());
    out = builder_.Add(HloOpcode::kDynamicUpdateSlice, out->shape(), operands);
  };
  for (const ExchangeRound& r : schedule.local_rounds) round(r, false);
  for (const ExchangeRound& r : schedule.permute_rounds) round(r, true);
  return out;
}

absl::StatusOr<HloInstruction*> ReshardEmitter::EmitDirectAllToAll(const StepContext& context) {
  const int64_t rank = context.base_shape.rank();
  const std::vector<int64_t>& shape_dims = context.base_shape.dimensions();
  ASSIGN_OR_RETURN(TileState from,
                   TileState::FromSharding(context.before, rank, context.num_devices));
  ASSIGN_OR_RETURN(TileState to,
                   TileState::FromSharding(context.step.sharding, rank, context.num_devices));
  std::optional<DirectAllToAll> direct = PlanDirectAllToAll(from, to, shape_dims);
  RET_CHECK(direct.has_value());
  const Shape& like = context.value->shape();
  const std::vector<int64_t> old_shard = like.dimensions();
  // The piece: the old shard cut along the dims whose tiles grow.
  std::vector<int64_t> piece = old_shard;
  for (int64_t d : direct->send_dims) piece[d] /= direct->send_counts[d];
  // 1. Cut: [.., t_k, L_k/t_k, ..] with the factors moved to the front in send order.
  std::vector<int64_t> cut;
  std::vector<int64_t> factor_axis(rank, -1), piece_axis(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (direct->send_counts[d] > 1) {
      factor_axis[d] = static_cast<int64_t>(cut.size());
      cut.push_back(direct->send_counts[d]);
    }
    piece_axis[d] = static_cast<int64_t>(cut.size());
    cut.push_back(piece[d]);
  }
  HloInstruction* value = builder_.Add(HloOpcode::kReshape, WithDims(like, cut), {context.value});
  std::vector<int64_t> perm;
  for (int64_t d : direct->send_dims) perm.push_back(factor_axis[d]);
  for (int64_t d = 0; d < rank; ++d) perm.push_back(piece_axis[d]);
  std::vector<int64_t> sent_dims;
  for (int64_t axis : perm) sent_dims.push_back(cut[axis]);
  HloInstruction* transpose =
      builder_.Add(HloOpcode::kTranspose, WithDims(like, sent_dims), {value});
  transpose->mutable_attrs()->dimensions = perm;
  std::vector<int64_t> pieces = {static_cast<int64_t>(direct->groups.front().size())};
  pieces.insert(pieces.end(), piece.begin(), piece.end());
  value = builder_.Add(HloOpcode::kReshape, WithDims(like, pieces), {transpose});
  // 2. Exchange: piece j goes to group member j; arrivals stack in member order.
  HloInstruction* exchange = builder_.Add(HloOpcode::kAllToAll, value->shape(), {value});
  exchange->mutable_attrs()->dimensions = {0};
  exchange->mutable_attrs()->replica_groups = context.step.replica_groups;
  exchange->mutable_attrs()->channel_id = builder_.channel_ids().Next();
  // 3. Place: split the arrivals by their counts along the dims whose tiles shrink (receive
  // order), move each factor just major of its dim, and merge.
  std::vector<int64_t> arrived;
  for (int64_t d : direct->recv_dims) arrived.push_back(direct->recv_counts[d]);
  arrived.insert(arrived.end(), piece.begin(), piece.end());
  value = builder_.Add(HloOpcode::kReshape, WithDims(like, arrived), {exchange});
  const int64_t factors = static_cast<int64_t>(direct->recv_dims.size());
  std::vector<int64_t> place;
  for (int64_t d = 0; d < rank; ++d) {
    const auto at = std::find(direct->recv_dims.begin(), direct->recv_dims.end(), d);
    if (at != direct->recv_dims.end()) place.push_back(at - direct->recv_dims.begin());
    place.push_back(factors + d);
  }
  std::vector<int64_t> placed_dims;
  for (int64_t axis : place) placed_dims.push_back(arrived[axis]);
  transpose = builder_.Add(HloOpcode::kTranspose, WithDims(like, placed_dims), {value});
  transpose->mutable_attrs()->dimensions = place;
  return builder_.Add(HloOpcode::kReshape, WithDims(like, context.after_dims), {transpose});
}

}  // namespace spmd

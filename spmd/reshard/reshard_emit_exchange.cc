// Emission of the direct exchange (reshard_exchange.h): the new shard starts as zeros; each
// round slices one cell per device from the old shard (at a per-device offset), moves it by
// collective-permute in permute rounds, and writes it at the device's offset. A device that
// takes no part in a round writes back what its new shard already holds there, so the update
// is a no-op for it.
#include <algorithm>

#include "hlo/status_macros.h"
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
  ASSIGN_OR_RETURN(TileState from, TileState::FromSharding(context.before, rank,
                                                           context.num_devices));
  ASSIGN_OR_RETURN(TileState to, TileState::FromSharding(context.step.sharding, rank,
                                                         context.num_devices));
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

}  // namespace spmd

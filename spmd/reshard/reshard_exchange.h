// The direct exchange: a reshard in which every device receives exactly the parts of its new
// region that it does not hold, from devices that hold them, by collective-permutes.
//
// The array is cut into the cells of both tile grids (lcm(t_from, t_to) cells per dim; only
// offered when every dim divides evenly into cells). A device's new region is a block of
// cells, each of which it either holds already (a local copy) or receives from a holder
// (chosen by fewest sends so far, then lowest id). The transfers form a bipartite multigraph
// between senders and receivers; coloring its edges with as many colors as its largest degree
// (always possible for bipartite graphs) gives rounds in which no device sends or receives
// twice: one collective-permute of one cell per round, each device writing what it receives
// at its own offset. A device thus receives exactly the cells it lacks -- the least any plan
// can move to it -- in max(cells sent, cells received) rounds.
//
//   f32[8192,8192] {devices=[4,2]<=[8]} -> {devices=[2,4]<=[8]}: cells 2048x2048, 2 per new
//   region; a device receives at most 2 cells (32 MiB) in 2 collective-permutes, where two
//   all-to-alls would deliver 40 MiB.
#ifndef SPMD_RESHARD_RESHARD_EXCHANGE_H_
#define SPMD_RESHARD_RESHARD_EXCHANGE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "spmd/reshard/reshard_state.h"

namespace spmd {

// One round: every device copies at most one cell from its old shard (`read_offset`) to its
// new shard (`write_offset`); in a permute round the cell travels by `pairs` first.
struct ExchangeRound {
  std::vector<std::pair<int64_t, int64_t>> pairs;  // (source, target); empty: local copies.
  std::vector<std::vector<int64_t>> read_offset;   // [device][dim] in the old shard (sender).
  std::vector<std::vector<int64_t>> write_offset;  // [device][dim] in the new shard (writer).
  std::vector<bool> writes;                        // [device]: receives / copies this round.
};

struct ExchangeSchedule {
  std::vector<int64_t> cell_dims;
  std::vector<int64_t> new_shard_dims;
  std::vector<ExchangeRound> local_rounds;    // Cells devices already hold.
  std::vector<ExchangeRound> permute_rounds;  // One collective-permute each.
  int64_t max_cells_received = 0;             // Over devices.
};

// The schedule from `from` to `to` (both over the same devices) for an array of `shape_dims`;
// FailedPrecondition when some dim does not divide into whole cells.
absl::StatusOr<ExchangeSchedule> PlanExchange(const TileState& from, const TileState& to,
                                              absl::Span<const int64_t> shape_dims);

// What the planner costs an exchange by, without building the rounds: the same cells, senders
// and counts as PlanExchange (rounds == its permute_rounds.size()).
struct ExchangeSize {
  std::vector<int64_t> cell_dims;
  int64_t max_cells_received = 0;  // Over devices.
  int64_t rounds = 0;              // Collective-permutes: max(cells sent, cells received).
};
absl::StatusOr<ExchangeSize> SizeExchange(const TileState& from, const TileState& to,
                                          absl::Span<const int64_t> shape_dims);

}  // namespace spmd

#endif  // SPMD_RESHARD_RESHARD_EXCHANGE_H_

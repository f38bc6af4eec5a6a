// The direct all-to-all: a reshard between two full tilings (no replication) in ONE
// all-to-all within groups of devices. Along each dim the two tile counts are equal or one is a
// multiple of the other; the devices that share the coarser tile along every dim form a group
// (all devices when no dim is split in both). Each device cuts its shard along the dims whose
// tiles grow into one piece per group member and receives one piece from every member, which
// it places along the dims whose tiles shrink. (XLA does the same for a reshard that moves
// several dims at once.) The planner's stepwise all-to-alls move one dim pair each, so they
// need one collective per pair and deliver more bytes in total.
//
//   s32[64,64,64,64] {devices=[1,4,2,1]<=[8]} -> {devices=[2,1,1,4]<=[4,2]T(1,0)}: one
//   all-to-all of an s32[8,32,16,32,16] buffer (7 MiB per device received) where two stepwise
//   all-to-alls receive 10 MiB.
//   f32[64,64,64,64] {devices=[2,4,8,1]<=[64]} -> {devices=[4,2,1,8]<=[2,2,2,8]T(0,2,1,3)}:
//   groups of 16 devices sharing their tile of 2 along dim 0 and of 2 along dim 1; 15/16 of
//   the 1 MiB shard received where two stepwise all-to-alls receive 1.375 MiB.
//
// The pieces travel in each group's order, which must be both a row-major order of its
// devices' target tile coordinates within the coarser tiles (over some order of the dims whose
// tiles grow, so one reshape and transpose cuts them) and a row-major order of their source
// ones (so one reshape and transpose places them), the same orders for every group. Offered
// only when such orders exist, every device's coarser tiles agree in both shardings, and every
// split dim divides evenly.
#ifndef SPMD_RESHARD_RESHARD_DIRECT_H_
#define SPMD_RESHARD_RESHARD_DIRECT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "spmd/reshard/reshard_state.h"

namespace spmd {

struct DirectAllToAll {
  std::vector<int64_t> send_dims;    // The dims whose tiles grow, major first: the pieces' order.
  std::vector<int64_t> recv_dims;    // The dims whose tiles shrink, major first: arrival order.
  std::vector<int64_t> send_counts;  // Per dim: the pieces a shard is cut into along it.
  std::vector<int64_t> recv_counts;  // Per dim: the pieces a new shard is placed from along it.
  std::vector<std::vector<int64_t>> groups;  // Each group's devices, in piece order.
};

// The direct all-to-all from `from` to `to` for an array of `shape_dims`, or nullopt when it
// does not apply (file comment).
std::optional<DirectAllToAll> PlanDirectAllToAll(const TileState& from, const TileState& to,
                                                 absl::Span<const int64_t> shape_dims);

}  // namespace spmd

#endif  // SPMD_RESHARD_RESHARD_DIRECT_H_

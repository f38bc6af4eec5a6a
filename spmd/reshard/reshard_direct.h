// The direct all-to-all: a reshard between two full tilings (no replication) that split
// disjoint sets of dims, in ONE all-to-all among all devices. Each device cuts its shard along
// the target's split dims into one piece per device and receives one piece from every device,
// which it places along the source's split dims. (XLA does the same for a reshard that moves
// several dims at once.) The planner's stepwise all-to-alls move one dim pair each, so they need
// one collective per pair and deliver more bytes in total.
//
//   s32[64,64,64,64] {devices=[1,4,2,1]<=[8]} -> {devices=[2,1,1,4]<=[4,2]T(1,0)}: one
//   all-to-all of an s32[8,32,16,32,16] buffer (7 MiB per device received) where two stepwise
//   all-to-alls receive 10 MiB.
//
// The pieces travel in the group's order, which must be both a row-major order of the devices'
// target tile coordinates (over some order of the target's split dims, so one reshape and
// transpose cuts them) and a row-major order of their source tile coordinates (so one reshape
// and transpose places them). Offered only when such an order exists and every split dim
// divides evenly.
#ifndef SPMD_RESHARD_RESHARD_DIRECT_H_
#define SPMD_RESHARD_RESHARD_DIRECT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "spmd/reshard/reshard_state.h"

namespace spmd {

struct DirectAllToAll {
  std::vector<int64_t> send_dims;  // The target's split dims, major first: the pieces' order.
  std::vector<int64_t> recv_dims;  // The source's split dims, major first: the arrivals' order.
  std::vector<int64_t> group;      // Every device, in piece order.
};

// The direct all-to-all from `from` to `to` for an array of `shape_dims`, or nullopt when it
// does not apply (file comment).
std::optional<DirectAllToAll> PlanDirectAllToAll(const TileState& from, const TileState& to,
                                                 absl::Span<const int64_t> shape_dims);

}  // namespace spmd

#endif  // SPMD_RESHARD_RESHARD_DIRECT_H_

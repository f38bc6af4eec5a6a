// Collective costs: the received-bytes factor of each algorithm (ring all-gather and
// reduce-scatter, all-reduce as reduce-scatter + all-gather, pairwise all-to-all, one-hop
// permute) applied to the named buffer, then the α-β time. Example: an all-gather to an 8 KiB
// output among 4 devices receives 8192·3/4 = 6144 bytes, costing 5 + 6144/1e5 ≈ 5.06 µs on the
// default link.
#include "spmd/cost/collective_cost.h"

namespace spmd {

std::string_view CollectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllGather:
      return "all-gather";
    case CollectiveKind::kReduceScatter:
      return "reduce-scatter";
    case CollectiveKind::kAllReduce:
      return "all-reduce";
    case CollectiveKind::kAllToAll:
      return "all-to-all";
    case CollectiveKind::kCollectivePermute:
      return "collective-permute";
  }
  return "unknown-collective";
}

int64_t CollectiveBytesReceived(CollectiveKind kind, int64_t buffer_bytes, int64_t group_size) {
  if (group_size <= 1 || buffer_bytes <= 0) return 0;
  const int64_t g = group_size;
  switch (kind) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return buffer_bytes * (g - 1) / g;
    case CollectiveKind::kAllReduce:
      return 2 * buffer_bytes * (g - 1) / g;
    case CollectiveKind::kCollectivePermute:
      return buffer_bytes;
  }
  return 0;
}

double TransferTimeUs(int64_t bytes, const LinkModel& link) {
  if (bytes <= 0) return 0;
  return link.latency_us + static_cast<double>(bytes) / link.bandwidth_bytes_per_us;
}

CollectiveCost EstimateCollective(CollectiveKind kind, int64_t buffer_bytes, int64_t group_size,
                                  const LinkModel& link) {
  CollectiveCost cost;
  cost.bytes_received = CollectiveBytesReceived(kind, buffer_bytes, group_size);
  cost.time_us = TransferTimeUs(cost.bytes_received, link);
  return cost;
}

}  // namespace spmd

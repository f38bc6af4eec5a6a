// The α-β cost of one collective: a fixed latency plus the bytes one device receives over the
// link bandwidth. The byte counts follow ../shared/docs/cli-contract.md exactly, with g the size
// of the device's replica group and S the per-device buffer named for each kind:
//
//   all-gather          S_out·(g−1)/g      (S_out: the gathered output)
//   reduce-scatter      S_in·(g−1)/g       (S_in: the unscattered input)
//   all-reduce          2·S·(g−1)/g
//   all-to-all          S·(g−1)/g          (S: the input, equal to the output)
//   collective-permute  S                  (when the device receives from another device)
//
// This is the seed of the cost model; the dot-strategy work extends it with compute time,
// per-mesh-level links and named device presets.
#ifndef SPMD_COST_COLLECTIVE_COST_H_
#define SPMD_COST_COLLECTIVE_COST_H_

#include <cstdint>
#include <string_view>

namespace spmd {

// One link class: `latency_us` per collective plus `bandwidth_bytes_per_us` for its payload.
// The defaults are a placeholder for a fast intra-node link (5 µs, 100 GB/s) until named
// device models exist.
struct LinkModel {
  double latency_us = 5.0;
  double bandwidth_bytes_per_us = 100000.0;
};

enum class CollectiveKind {
  kAllGather,
  kReduceScatter,
  kAllReduce,
  kAllToAll,
  kCollectivePermute,
};

// The HLO opcode text of `kind` ("all-gather", ...).
std::string_view CollectiveKindName(CollectiveKind kind);

// What one device pays for one collective.
struct CollectiveCost {
  int64_t bytes_received = 0;  // Per device, by the conventions above (rounded down).
  double time_us = 0;          // latency + bytes_received / bandwidth; 0 when nothing moves.
};

// The cost of a collective of `kind` whose named buffer (see the file comment) has
// `buffer_bytes` bytes, among groups of `group_size` devices, on `link`. A group of one device,
// or an empty buffer, costs nothing. For a collective-permute, `group_size` > 1 means "the
// device receives from another device" and 1 means it keeps its own data.
// REQUIRES: buffer_bytes >= 0, group_size >= 1.
CollectiveCost EstimateCollective(CollectiveKind kind, int64_t buffer_bytes, int64_t group_size,
                                  const LinkModel& link);

// The bytes part of EstimateCollective alone.
int64_t CollectiveBytesReceived(CollectiveKind kind, int64_t buffer_bytes, int64_t group_size);

// latency + bytes / bandwidth for `bytes` > 0; 0 for no bytes.
double TransferTimeUs(int64_t bytes, const LinkModel& link);

}  // namespace spmd

#endif  // SPMD_COST_COLLECTIVE_COST_H_

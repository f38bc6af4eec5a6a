// Per-module statistics in the schema of ../shared/docs/cli-contract.md: instruction counts,
// per-device FLOPs, bytes each collective makes one device receive, and peak live memory.
#ifndef HLO_ANALYSIS_MODULE_STATS_H_
#define HLO_ANALYSIS_MODULE_STATS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hlo/analysis/collectives.h"
#include "hlo/ir/hlo_module.h"

namespace hlo {

struct CollectiveStats {
  int64_t count = 0;
  int64_t bytes = 0;  // Received by one device, maximum over devices.
};

// One while body's work that an iteration may overlap (ComputeModuleStats), per iteration: the
// collectives whose values only later iterations read (they feed the body's root tuple and
// nothing else: a windowed loop's block for the next step, or its partial sum passed on), and
// the FLOPs that can run while they are in flight (work that does not wait for them; see
// OverlappableFlops in module_stats.cc).
struct LoopOverlap {
  int64_t iterations = 0;  // The body's executions (its loop's trip count times the enclosing).
  int64_t flops = 0;
  int64_t carried_collectives = 0;
  int64_t carried_bytes = 0;  // Received by one device.
};

struct ModuleStats {
  std::string module_name;
  std::string input;
  // spmd-partition's stable key for the input (batch mode: the path below the directory it was
  // found in, else the normalised path); printed after "input" when set.
  std::string key;
  int64_t num_partitions = 1;
  int64_t instructions_before = 0;
  int64_t instructions_after = 0;
  double time_ms_parse = 0;
  double time_ms_propagation = 0;
  double time_ms_partition = 0;
  double time_ms_total = 0;
  int64_t flops = 0;
  int64_t comm_bytes = 0;
  int64_t peak_memory_bytes = 0;
  std::array<CollectiveStats, kNumCollectiveKinds> collectives{};
  int64_t full_rematerializations = 0;
  // Split instructions computed whole on every device (the partitioner had no strategy for
  // their sharding), and the bytes of their full results.
  int64_t replicated_fallbacks = 0;
  int64_t replicated_fallback_bytes = 0;
  // Per executed while body with a loop-carried collective (not printed; for the step time).
  std::vector<LoopOverlap> loop_overlaps;
  double estimated_step_time_us = 0;
};

// Counts over the entry computation and everything it executes (ForEachExecutedInstruction:
// each call site once; FLOPs and collectives inside a while loop once per iteration when its
// trip count is known statically). An async collective pair counts once. `num_partitions` of
// the module config is the group size of collectives without replica_groups. Sets
// instructions_after (instructions at every call site, each once), flops, comm_bytes,
// peak_memory_bytes (the entry computation's, ComputePeakMemory), collectives and
// loop_overlaps.
ModuleStats ComputeModuleStats(const HloModule& module);

// The largest device id named by any instruction's sharding, or -1 if none.
int64_t MaxDeviceIdInShardings(const HloModule& module);

// `s` as a JSON string literal, quotes included.
std::string JsonQuoted(std::string_view s);

// One JSON object on one line, keys in the contract's order.
std::string StatsToJson(const ModuleStats& stats);
// Human-readable, in human units (HumanBytes, HumanFlops).
std::string StatsToText(const ModuleStats& stats);

// `bytes` in binary units with one decimal: "512 bytes", "2.0 KiB", "32.0 MiB", "1.5 GiB".
std::string HumanBytes(double bytes);
// `flops` in decimal units: "5 FLOP", "1.2 kFLOP", "137.4 GFLOP".
std::string HumanFlops(double flops);

}  // namespace hlo

#endif  // HLO_ANALYSIS_MODULE_STATS_H_

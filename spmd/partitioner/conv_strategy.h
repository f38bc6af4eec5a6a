// The strategies of the convolution handler (convolution_handler.cc) and the summing ones
// (conv_summing.cc), which split what the result's replication devices contract.
#ifndef SPMD_PARTITIONER_CONV_STRATEGY_H_
#define SPMD_PARTITIONER_CONV_STRATEGY_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/halo_exchange.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {

enum class ConvKind {
  kOutputTiles,   // Each device computes its tile of the output (window inputs by halo).
  kContracting,   // The input features split with the kernel's; partial sums all-reduced.
  kKernelWindow,  // One spatial dim's kernel positions split; partial sums all-reduced.
};

// One way to compute the convolution: the result sharding it computes in, its operands'
// shardings and what each device receives for it (operand reshards, halos, the all-reduce of
// partial sums and the reshard of its result to the requested sharding).
struct ConvStrategy {
  ConvKind kind = ConvKind::kOutputTiles;
  hlo::HloSharding local = hlo::HloSharding::Replicate();
  hlo::HloSharding input = hlo::HloSharding::Replicate();
  hlo::HloSharding kernel = hlo::HloSharding::Replicate();
  std::vector<WindowSplit> splits;     // kOutputTiles: split output spatial dims.
  std::vector<WindowSplit> parallel;   // kOutputTiles: ParallelSplits (input and kernel split).
  std::optional<WindowSplit> dilated;  // kOutputTiles: DilatedSplit, with its high padding.
  int64_t dilated_high = 0;
  int64_t group_tiles = 1;  // kOutputTiles: output features split along whole groups.
  std::vector<std::vector<int64_t>> sum_groups;  // The all-reduce's (reduce-scatter's) groups.
  int64_t scatter_dim = -1;  // Partial results reduce-scattered along this output dim, which
                             // `produced` splits further (-1: all-reduced, produced == local).
  hlo::HloSharding produced = hlo::HloSharding::Replicate();
  WindowSplit kernel_split;       // kKernelWindow: the split window dim (output_dim: the
                                  // kernel's spatial dim).
  int64_t contracting_tiles = 1;  // kContracting, kKernelWindow: the input features split
                                  // this many ways (partial sums over them too).
  Received inputs;                // Operand reshards and halos.
  Received moved;                 // `inputs`, the all-reduce and the result's reshard.
  double flops = 0;               // Of the local convolution, per device.
};

// What the strategies of one result sharding share: the convolution, its local result
// sharding, the operand dim -> output dim maps of the output tiles, and the requested sharding
// (a strategy's result is resharded to it).
struct ConvSetting {
  const hlo::HloInstruction& conv;
  const hlo::HloSharding& requested;
  hlo::HloSharding local;
  std::vector<int64_t> input_map;
  std::vector<int64_t> kernel_map;
  std::optional<hlo::HloSharding> tiled;  // WithReplicationAsTiles(local).
  int64_t group_tiles = 1;                // As ConvStrategy::group_tiles.
  std::vector<WindowSplit> splits;        // The output tiles' spatial splits, all by halo exchange.
};

// The output's replication devices as one more tiled dim (index `rank`), or nullopt when
// there are none or they do not cover every device (the all-reduce needs them all).
std::optional<hlo::HloSharding> WithReplicationAsTiles(const hlo::HloSharding& local, int64_t rank,
                                                       int64_t num_devices);

// The result's communication: the all-reduce (or reduce-scatter) of partial sums over `s`'s sum
// groups and the reshard of what it produces to the requested sharding.
Received ResultReceived(const ConvSetting& set, const ConvStrategy& s, PartitionContext& ctx);

// Appends the summing strategies of `set`: the contracting split, then each window dim's
// kernel-window split (alone, and sharing the devices with a contracting split), each with
// its reduce-scatter variants. REQUIRES: the output tiles' splits are summable (all by halo
// exchange, no base dilation, no einsum pairing).
absl::Status AddSummingStrategies(const ConvSetting& set, PartitionContext& ctx,
                                  std::vector<ConvStrategy>& out);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_CONV_STRATEGY_H_

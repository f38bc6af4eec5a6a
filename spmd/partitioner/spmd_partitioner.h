// The partition pass: turns a module whose instructions carry shardings into one SPMD program
// that each of `num_partitions` devices runs (XLA's `*_spmd` form).
//
// Must run after propagation when shardings are to be inferred; without it, an instruction with
// no sharding is replicated (XLA's rule). The entry computation is rebuilt with per-device
// (padded shard) shapes; parameters and the root take per-device shapes and the
// entry_computation_layout is updated. The computations that while, conditional and call run
// are partitioned too (a new computation per call site; control_flow_handlers.cc); those
// that ops apply per element (reducers, comparators) are kept as they are. The originals
// stay in the module, unreferenced: follow with `cleanup`.
#ifndef SPMD_PARTITIONER_SPMD_PARTITIONER_H_
#define SPMD_PARTITIONER_SPMD_PARTITIONER_H_

#include <string>
#include <vector>

#include "hlo/pass/hlo_pass_interface.h"
#include "spmd/partitioner/partition_context.h"
#include "spmd/partitioner/partitioner_options.h"

namespace spmd {

class SpmdPartitioner : public hlo::HloModulePass {
 public:
  explicit SpmdPartitioner(PartitionerOptions options = {}) : options_(std::move(options)) {}
  std::string_view name() const override { return "partition"; }
  // Decisions and counters of the last run (for --explain and statistics).
  const PartitionLog& log() const { return log_; }

 protected:
  absl::StatusOr<bool> RunImpl(hlo::HloModule* module) override;

 private:
  // Rewrites before partitioning, logged for --explain: window compositions merged
  // (merge_windows.h), convolutions that are einsums made dots (conv_as_dot.h).
  absl::Status Preprocess(hlo::HloModule& module);

  PartitionerOptions options_;
  PartitionLog log_;
};

}  // namespace spmd

#endif  // SPMD_PARTITIONER_SPMD_PARTITIONER_H_

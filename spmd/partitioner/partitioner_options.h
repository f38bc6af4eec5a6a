// What the partition pass is told from outside: the device model its costs use and the dot
// strategy controls (spmd-partition's --device-model, --dot-strategy, --no-windowed-einsum,
// --windowed-einsum-threshold).
#ifndef SPMD_PARTITIONER_PARTITIONER_OPTIONS_H_
#define SPMD_PARTITIONER_PARTITIONER_OPTIONS_H_

#include "spmd/cost/device_model.h"
#include "spmd/dot/dot_strategy.h"

namespace spmd {

struct PartitionerOptions {
  DeviceModel device_model = DefaultDeviceModel();
  DotStrategyOptions dot;
  // A split instruction computed whole (a replicated fallback) is an error, not a logged cost.
  bool strict = false;
  // A narrow float scatter-add split across devices sums its partials in f32 and rounds once
  // (twice the bytes of bf16 partials), instead of rounding each device's f32 partial to the
  // scatter's type and summing those in it, as XLA and our dots do.
  bool wide_partial_sums = false;
  // Keep the --explain decision log (PartitionLog::lines). Off, the hot paths (reshard plans,
  // dot tables) do not build their lines: a run without --explain spends nothing on them.
  bool explain = true;
  // Record where each value of the SPMD program comes from (PartitionLog::origins, for modular
  // verification). Off, nothing is recorded.
  bool record_origins = false;
};

}  // namespace spmd

#endif  // SPMD_PARTITIONER_PARTITIONER_OPTIONS_H_

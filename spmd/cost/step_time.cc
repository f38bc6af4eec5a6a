#include "spmd/cost/step_time.h"

#include <algorithm>

namespace spmd {

double EstimateStepTimeUs(const hlo::ModuleStats& stats, const DeviceModel& model) {
  double us = model.ComputeTimeUs(static_cast<double>(stats.flops), hlo::PrimitiveType::kF32);
  const LinkModel& link = model.levels.front().link;
  for (const hlo::CollectiveStats& c : stats.collectives) {
    us += static_cast<double>(c.count) * link.latency_us +
          static_cast<double>(c.bytes) / link.bandwidth_bytes_per_us;
  }
  // Counted twice above for an overlapping loop: once as compute, once as communication.
  for (const hlo::LoopOverlap& loop : stats.loop_overlaps) {
    const double compute =
        model.ComputeTimeUs(static_cast<double>(loop.flops), hlo::PrimitiveType::kF32);
    const double carried = static_cast<double>(loop.carried_collectives) * link.latency_us +
                           static_cast<double>(loop.carried_bytes) / link.bandwidth_bytes_per_us;
    us -= static_cast<double>(loop.iterations) * std::min(compute, carried);
  }
  return us;
}

}  // namespace spmd

#include "spmd/cost/step_time.h"

namespace spmd {

double EstimateStepTimeUs(const hlo::ModuleStats& stats, const DeviceModel& model) {
  double us = model.ComputeTimeUs(static_cast<double>(stats.flops), hlo::PrimitiveType::kF32);
  const LinkModel& link = model.levels.front().link;
  for (const hlo::CollectiveStats& c : stats.collectives) {
    us += static_cast<double>(c.count) * link.latency_us +
          static_cast<double>(c.bytes) / link.bandwidth_bytes_per_us;
  }
  return us;
}

}  // namespace spmd

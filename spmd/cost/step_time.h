// A whole-program step-time estimate for statistics (`estimated_step_time_us`): the per-device
// FLOPs at the device model's f32 rate plus every collective's α-β cost on the innermost link
// (latency per collective plus the bytes one device receives over the bandwidth). It adds
// compute and communication without overlap, so it is an upper bound for programs whose
// windowed loops overlap them.
#ifndef SPMD_COST_STEP_TIME_H_
#define SPMD_COST_STEP_TIME_H_

#include "hlo/analysis/module_stats.h"
#include "spmd/cost/device_model.h"

namespace spmd {

double EstimateStepTimeUs(const hlo::ModuleStats& stats, const DeviceModel& model);

}  // namespace spmd

#endif  // SPMD_COST_STEP_TIME_H_

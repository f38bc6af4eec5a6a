// A whole-program step-time estimate for statistics (`estimated_step_time_us`): the per-device
// FLOPs at the device model's f32 rate plus every collective's α-β cost on the innermost link
// (latency per collective plus the bytes one device receives over the bandwidth), less what
// while loops overlap: a collective whose value only later iterations read (a windowed loop's
// next block, or its partial sum passed on; hlo::LoopOverlap) runs beside the iteration's
// compute, so each iteration costs the larger of the two rather than their sum -- the dot
// handler's windowed-einsum cost (spmd/dot/dot_windowed.h). Everything else adds without
// overlap, so the estimate is an upper bound wherever a runtime overlaps more.
#ifndef SPMD_COST_STEP_TIME_H_
#define SPMD_COST_STEP_TIME_H_

#include "hlo/analysis/module_stats.h"
#include "spmd/cost/device_model.h"

namespace spmd {

double EstimateStepTimeUs(const hlo::ModuleStats& stats, const DeviceModel& model);

}  // namespace spmd

#endif  // SPMD_COST_STEP_TIME_H_

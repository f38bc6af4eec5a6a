// The geometry of one convolution: dimension numbers, groups, window coordinates and kernel
// positions, checked against the operand shapes. Shared by the CPU executor (im2col + GEMM,
// runtime/cpu/ops/convolution_ops.cc, whose file comment gives the semantics), its point
// evaluator and the CUDA executor (runtime/cuda/ops/convolution_ops.cc).
#ifndef RUNTIME_COMMON_CONVOLUTION_PLAN_H_
#define RUNTIME_COMMON_CONVOLUTION_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/shape.h"
#include "runtime/common/strided_index.h"

namespace runtime {

struct ConvPlan {
  hlo::ConvolutionDimensionNumbers dn;
  int64_t groups = 1;
  bool batch_grouped = false;  // batch_group_count > 1.
  int64_t out_batch = 0;       // Output batch (= input batch / batch_group_count).
  int64_t in_features = 0;     // I: kernel input features (per group).
  int64_t out_features = 0;    // O_g: output features per group.
  std::vector<int64_t> kernel_sizes, out_sizes;  // Spatial, in dimension-number order.
  std::vector<bool> reversed;                    // window_reversal per spatial dimension.
  std::vector<int64_t> lhs_strides, rhs_strides, out_strides;
  std::vector<std::vector<int64_t>> coords;  // WindowCoordinates per spatial dimension.
  int64_t kernel_positions() const { return ElementCount(kernel_sizes); }
  int64_t columns() const { return kernel_positions() * in_features; }
};

// Checks `instr`'s dimension numbers, groups and window against the operand shapes.
absl::StatusOr<ConvPlan> PlanConvolution(const hlo::HloInstruction& instr, const hlo::Shape& lhs,
                                         const hlo::Shape& rhs);

}  // namespace runtime

#endif  // RUNTIME_COMMON_CONVOLUTION_PLAN_H_

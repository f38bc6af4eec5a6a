#include "runtime/common/convolution_plan.h"

#include <algorithm>
#include <string>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/window_geometry.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Shape;

absl::Status InvalidArgument(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

absl::Status CheckDimensionNumbers(const hlo::ConvolutionDimensionNumbers& dn, int64_t rank) {
  const size_t spatial = static_cast<size_t>(std::max<int64_t>(rank - 2, 0));
  if (dn.input_spatial_dimensions.size() != spatial ||
      dn.kernel_spatial_dimensions.size() != spatial ||
      dn.output_spatial_dimensions.size() != spatial) {
    return InvalidArgument("convolution dimension numbers do not match the operands' rank");
  }
  auto check = [&](int64_t a, int64_t b, const std::vector<int64_t>& rest) {
    std::vector<int64_t> all = rest;
    all.push_back(a);
    all.push_back(b);
    std::sort(all.begin(), all.end());
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  };
  if (!check(dn.input_batch_dimension, dn.input_feature_dimension, dn.input_spatial_dimensions) ||
      !check(dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension,
             dn.kernel_spatial_dimensions) ||
      !check(dn.output_batch_dimension, dn.output_feature_dimension,
             dn.output_spatial_dimensions)) {
    return InvalidArgument("convolution dimension numbers must be permutations of the dimensions");
  }
  return absl::OkStatus();
}

absl::Status PlanGroups(const HloInstruction& instr, const Shape& lhs, const Shape& rhs,
                        const Shape& out, ConvPlan& plan) {
  const hlo::ConvolutionDimensionNumbers& dn = plan.dn;
  const int64_t fgc = instr.attrs().feature_group_count;
  const int64_t bgc = instr.attrs().batch_group_count;
  const int64_t batch = lhs.dimensions(dn.input_batch_dimension);
  const int64_t features = lhs.dimensions(dn.input_feature_dimension);
  const int64_t kernel_in = rhs.dimensions(dn.kernel_input_feature_dimension);
  const int64_t kernel_out = rhs.dimensions(dn.kernel_output_feature_dimension);
  if (fgc < 1 || bgc < 1 || (fgc > 1 && bgc > 1) || features % fgc != 0 ||
      kernel_in * fgc != features || kernel_out % (fgc * bgc) != 0 || batch % bgc != 0) {
    return InvalidArgument(hlo::StrCat("convolution group counts (feature ", fgc, ", batch ", bgc,
                                       ") do not divide the operands' features and batch"));
  }
  if (out.dimensions(dn.output_batch_dimension) != batch / bgc ||
      out.dimensions(dn.output_feature_dimension) != kernel_out) {
    return InvalidArgument("convolution result batch or feature size is wrong");
  }
  plan.groups = fgc * bgc;
  plan.batch_grouped = bgc > 1;
  plan.out_batch = batch / bgc;
  plan.in_features = kernel_in;
  plan.out_features = kernel_out / plan.groups;
  return absl::OkStatus();
}

absl::Status PlanWindow(const HloInstruction& instr, const Shape& lhs, const Shape& rhs,
                        const Shape& out, ConvPlan& plan) {
  const hlo::ConvolutionDimensionNumbers& dn = plan.dn;
  const size_t spatial = dn.input_spatial_dimensions.size();
  std::vector<hlo::WindowDimension> window;
  if (instr.attrs().window.has_value()) window = instr.attrs().window->dimensions;
  if (window.size() != spatial) {
    return InvalidArgument(
        hlo::StrCat("convolution window has ", window.size(), " dimensions, expected ", spatial));
  }
  for (size_t d = 0; d < spatial; ++d) {
    hlo::WindowDimension w = window[d];
    const int64_t input = lhs.dimensions(dn.input_spatial_dimensions[d]);
    const int64_t kernel = rhs.dimensions(dn.kernel_spatial_dimensions[d]);
    const int64_t output = out.dimensions(dn.output_spatial_dimensions[d]);
    if (w.size != kernel || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return InvalidArgument(hlo::StrCat("convolution window dimension ", d, " has size ", w.size,
                                         " for a kernel of ", kernel,
                                         ", or a non-positive stride or dilation"));
    }
    if (output != WindowedOutputSize(w, input)) {
      return InvalidArgument(hlo::StrCat("convolution output spatial dimension ", d, " is ", output,
                                         ", the window gives ", WindowedOutputSize(w, input)));
    }
    plan.kernel_sizes.push_back(kernel);
    plan.out_sizes.push_back(output);
    plan.reversed.push_back(w.window_reversal);
    plan.coords.push_back(WindowCoordinates(w, input, output));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConvPlan> PlanConvolution(const HloInstruction& instr, const Shape& lhs,
                                         const Shape& rhs) {
  const Shape& out = instr.shape();
  if (!instr.attrs().convolution_dimension_numbers.has_value() || !lhs.IsArray() ||
      !rhs.IsArray() || !out.IsArray() || lhs.rank() < 2 || rhs.rank() != lhs.rank() ||
      out.rank() != lhs.rank()) {
    return InvalidArgument("convolution needs dimension numbers and arrays of one rank >= 2");
  }
  ConvPlan plan;
  plan.dn = *instr.attrs().convolution_dimension_numbers;
  RETURN_IF_ERROR(CheckDimensionNumbers(plan.dn, lhs.rank()));
  RETURN_IF_ERROR(PlanGroups(instr, lhs, rhs, out, plan));
  RETURN_IF_ERROR(PlanWindow(instr, lhs, rhs, out, plan));
  plan.lhs_strides = RowMajorStrides(lhs.dimensions());
  plan.rhs_strides = RowMajorStrides(rhs.dimensions());
  plan.out_strides = RowMajorStrides(out.dimensions());
  return plan;
}

}  // namespace runtime

// Shape inference for the linear-algebra ops: dot, convolution, fft, triangular-solve,
// cholesky and the batch-norm family.
#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/algorithm/container.h"
#include "hlo/ir/shape_inference.h"
#include "hlo/ir/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hlo {

using shape_inference_internal::CheckDimensionList;
using shape_inference_internal::DimsStr;
using shape_inference_internal::ExpectArray;
using shape_inference_internal::InvalidArg;
using shape_inference_internal::ShapeStr;
using shape_inference_internal::TypeStr;
using shape_inference_internal::WiderType;
using shape_inference_internal::WithElementType;

namespace {

// XLA's MaybeUpcast: the preferred type wins, but may not narrow an integral input.
absl::StatusOr<PrimitiveType> ResultType(std::string_view op, PrimitiveType from,
                                         std::optional<PrimitiveType> preferred) {
  if (!preferred.has_value() || *preferred == from) return from;
  if (!IsFloatingPointType(from) && BitWidth(*preferred) < BitWidth(from)) {
    return InvalidArg(op, ": result type ", TypeStr(*preferred),
                      " must not be narrower than the operand type ", TypeStr(from));
  }
  return *preferred;
}

// Checks one side's contracting + batch dims: in range and distinct across both lists.
absl::Status CheckDotSide(std::string_view side, const Shape& shape,
                          absl::Span<const int64_t> contracting, absl::Span<const int64_t> batch) {
  std::vector<int64_t> all(contracting.begin(), contracting.end());
  all.insert(all.end(), batch.begin(), batch.end());
  return CheckDimensionList("dot",
                            shape_inference_internal::Cat(side, " contracting+batch dimensions"),
                            all, shape.rank());
}

// Checks that the paired dimension lists have equal lengths and sizes.
absl::Status CheckDotPairs(std::string_view kind, const Shape& lhs, const Shape& rhs,
                           absl::Span<const int64_t> lhs_dims, absl::Span<const int64_t> rhs_dims) {
  if (lhs_dims.size() != rhs_dims.size()) {
    return InvalidArg("dot: lhs has ", lhs_dims.size(), " ", kind, " dimensions ",
                      DimsStr(lhs_dims), " but rhs has ", rhs_dims.size(), " ", DimsStr(rhs_dims));
  }
  for (size_t i = 0; i < lhs_dims.size(); ++i) {
    const int64_t l = lhs.dimensions(lhs_dims[i]);
    const int64_t r = rhs.dimensions(rhs_dims[i]);
    if (l != r) {
      return InvalidArg("dot: lhs ", kind, " dimension ", lhs_dims[i], " has size ", l, " but rhs ",
                        kind, " dimension ", rhs_dims[i], " has size ", r);
    }
  }
  return absl::OkStatus();
}

void AppendFreeDims(const Shape& s, absl::Span<const int64_t> contracting,
                    absl::Span<const int64_t> batch, std::vector<int64_t>* dims) {
  for (int64_t i = 0; i < s.rank(); ++i) {
    if (!absl::c_linear_search(contracting, i) && !absl::c_linear_search(batch, i)) {
      dims->push_back(s.dimensions(i));
    }
  }
}

// Sorted copy of {first, second, rest...}: must be 0..n-1 for a valid dimension labeling.
bool IsLabeling(int64_t first, int64_t second, absl::Span<const int64_t> rest, int64_t rank) {
  std::vector<int64_t> all = {first, second};
  all.insert(all.end(), rest.begin(), rest.end());
  return shape_inference_internal::IsPermutation(all, rank);
}

absl::Status CheckConvLabels(const Shape& lhs, const Shape& rhs,
                             const ConvolutionDimensionNumbers& d, int64_t num_spatial) {
  if (d.kernel_spatial_dimensions.size() != static_cast<size_t>(num_spatial) ||
      d.output_spatial_dimensions.size() != static_cast<size_t>(num_spatial)) {
    return InvalidArg("convolution: input, kernel and output must have the same number of ",
                      "spatial dimensions");
  }
  const int64_t rank = num_spatial + 2;
  if (lhs.rank() != rank || rhs.rank() != rank) {
    return InvalidArg("convolution: lhs ", ShapeStr(lhs), " and rhs ", ShapeStr(rhs),
                      " must have rank ", rank, " (", num_spatial, " spatial dimensions + 2)");
  }
  if (!IsLabeling(d.input_batch_dimension, d.input_feature_dimension, d.input_spatial_dimensions,
                  rank)) {
    return InvalidArg("convolution: input dimension labels must be a permutation of 0..", rank - 1);
  }
  if (!IsLabeling(d.kernel_input_feature_dimension, d.kernel_output_feature_dimension,
                  d.kernel_spatial_dimensions, rank)) {
    return InvalidArg("convolution: kernel dimension labels must be a permutation of 0..",
                      rank - 1);
  }
  if (!IsLabeling(d.output_batch_dimension, d.output_feature_dimension, d.output_spatial_dimensions,
                  rank)) {
    return InvalidArg("convolution: output dimension labels must be a permutation of 0..",
                      rank - 1);
  }
  return absl::OkStatus();
}

absl::Status CheckConvGroups(const Shape& lhs, const Shape& rhs, const ConvolutionConfig& c) {
  const ConvolutionDimensionNumbers& d = c.dnums;
  const int64_t fgc = c.feature_group_count;
  const int64_t bgc = c.batch_group_count;
  if (fgc <= 0 || bgc <= 0) {
    return InvalidArg("convolution: feature_group_count (", fgc, ") and batch_group_count (", bgc,
                      ") must be positive");
  }
  if (fgc > 1 && bgc > 1) {
    return InvalidArg(
        "convolution: feature_group_count and batch_group_count cannot both "
        "exceed 1");
  }
  const int64_t input_features = lhs.dimensions(d.input_feature_dimension);
  const int64_t kernel_in = rhs.dimensions(d.kernel_input_feature_dimension);
  const int64_t kernel_out = rhs.dimensions(d.kernel_output_feature_dimension);
  const int64_t batch = lhs.dimensions(d.input_batch_dimension);
  if (input_features % fgc != 0 || input_features / fgc != kernel_in) {
    return InvalidArg("convolution: input feature dimension has size ", input_features,
                      " but kernel input feature dimension has size ", kernel_in,
                      " and feature_group_count is ", fgc);
  }
  if (kernel_out % fgc != 0 || kernel_out % bgc != 0) {
    return InvalidArg("convolution: kernel output feature size ", kernel_out,
                      " must be divisible by feature_group_count ", fgc, " and batch_group_count ",
                      bgc);
  }
  if (batch % bgc != 0) {
    return InvalidArg("convolution: input batch size ", batch,
                      " must be divisible by batch_group_count ", bgc);
  }
  return absl::OkStatus();
}

absl::Status CheckFeatureVector(std::string_view op, std::string_view what, const Shape& s,
                                const Shape& operand, int64_t feature_count) {
  RETURN_IF_ERROR(ExpectArray(op, what, s));
  if (s.rank() != 1 || s.dimensions(0) != feature_count ||
      s.element_type() != operand.element_type()) {
    return InvalidArg(op, ": ", what, " must be ", TypeStr(operand.element_type()), "[",
                      feature_count, "] (the feature dimension), got ", ShapeStr(s));
  }
  return absl::OkStatus();
}

// Checks the operand of a batch-norm op and returns its feature count.
absl::StatusOr<int64_t> BatchNormFeatures(std::string_view op, const Shape& operand,
                                          int64_t feature_index) {
  RETURN_IF_ERROR(ExpectArray(op, "operand", operand));
  if (!IsFloatingPointType(operand.element_type())) {
    return InvalidArg(op, ": operand must be floating-point, got ", ShapeStr(operand));
  }
  if (feature_index < 0 || feature_index >= operand.rank()) {
    return InvalidArg(op, ": feature_index ", feature_index, " is out of range for ",
                      ShapeStr(operand));
  }
  return operand.dimensions(feature_index);
}

absl::Status CheckSquareMinor(std::string_view op, const Shape& a) {
  RETURN_IF_ERROR(ExpectArray(op, "a", a));
  if (!IsFloatingPointType(a.element_type()) && !IsComplexType(a.element_type())) {
    return InvalidArg(op, ": a must be floating-point or complex, got ", ShapeStr(a));
  }
  if (a.rank() < 2 || a.dimensions(a.rank() - 1) != a.dimensions(a.rank() - 2)) {
    return InvalidArg(op, ": a must have rank >= 2 and square minor dimensions, got ", ShapeStr(a));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> InferDotShape(const Shape& lhs, const Shape& rhs,
                                    const DotDimensionNumbers& dnums,
                                    std::optional<PrimitiveType> preferred_element_type) {
  RETURN_IF_ERROR(ExpectArray("dot", "lhs", lhs));
  RETURN_IF_ERROR(ExpectArray("dot", "rhs", rhs));
  RETURN_IF_ERROR(
      CheckDotSide("lhs", lhs, dnums.lhs_contracting_dimensions, dnums.lhs_batch_dimensions));
  RETURN_IF_ERROR(
      CheckDotSide("rhs", rhs, dnums.rhs_contracting_dimensions, dnums.rhs_batch_dimensions));
  RETURN_IF_ERROR(CheckDotPairs("contracting", lhs, rhs, dnums.lhs_contracting_dimensions,
                                dnums.rhs_contracting_dimensions));
  RETURN_IF_ERROR(
      CheckDotPairs("batch", lhs, rhs, dnums.lhs_batch_dimensions, dnums.rhs_batch_dimensions));
  std::vector<int64_t> dims;
  for (int64_t d : dnums.lhs_batch_dimensions) dims.push_back(lhs.dimensions(d));
  AppendFreeDims(lhs, dnums.lhs_contracting_dimensions, dnums.lhs_batch_dimensions, &dims);
  AppendFreeDims(rhs, dnums.rhs_contracting_dimensions, dnums.rhs_batch_dimensions, &dims);
  ASSIGN_OR_RETURN(
      PrimitiveType type,
      ResultType("dot", WiderType(lhs.element_type(), rhs.element_type()), preferred_element_type));
  return Shape::Array(type, dims);
}

absl::StatusOr<Shape> InferConvolutionShape(const Shape& lhs, const Shape& rhs,
                                            const ConvolutionConfig& config) {
  RETURN_IF_ERROR(ExpectArray("convolution", "lhs", lhs));
  RETURN_IF_ERROR(ExpectArray("convolution", "rhs", rhs));
  const ConvolutionDimensionNumbers& d = config.dnums;
  const int64_t num_spatial = static_cast<int64_t>(d.input_spatial_dimensions.size());
  RETURN_IF_ERROR(CheckConvLabels(lhs, rhs, d, num_spatial));
  RETURN_IF_ERROR(CheckConvGroups(lhs, rhs, config));
  if (static_cast<int64_t>(config.window.dimensions.size()) != num_spatial) {
    return InvalidArg("convolution: window has ", config.window.dimensions.size(),
                      " dimensions but there are ", num_spatial, " spatial dimensions");
  }
  std::vector<int64_t> input_spatial;
  for (int64_t i = 0; i < num_spatial; ++i) {
    const int64_t kernel_size = rhs.dimensions(d.kernel_spatial_dimensions[i]);
    if (config.window.dimensions[i].size != kernel_size) {
      return InvalidArg("convolution: window size ", config.window.dimensions[i].size,
                        " of spatial dimension ", i, " differs from the kernel's size ",
                        kernel_size);
    }
    input_spatial.push_back(lhs.dimensions(d.input_spatial_dimensions[i]));
  }
  absl::StatusOr<Shape> windowed = InferWindowOutputShape(
      Shape::Array(lhs.element_type(), input_spatial), config.window, lhs.element_type());
  if (!windowed.ok()) return InvalidArg("convolution: ", windowed.status().message());
  std::vector<int64_t> dims(num_spatial + 2);
  dims[d.output_batch_dimension] =
      lhs.dimensions(d.input_batch_dimension) / config.batch_group_count;
  dims[d.output_feature_dimension] = rhs.dimensions(d.kernel_output_feature_dimension);
  for (int64_t i = 0; i < num_spatial; ++i) {
    dims[d.output_spatial_dimensions[i]] = windowed->dimensions(i);
  }
  ASSIGN_OR_RETURN(PrimitiveType type,
                   ResultType("convolution", WiderType(lhs.element_type(), rhs.element_type()),
                              config.preferred_element_type));
  return Shape::Array(type, dims);
}

absl::StatusOr<Shape> InferRaggedDotShape(const Shape& lhs, const Shape& rhs,
                                          const Shape& group_sizes,
                                          const DotDimensionNumbers& dnums, int64_t ragged_dim,
                                          absl::Span<const int64_t> rhs_group_dims,
                                          std::optional<PrimitiveType> preferred_element_type) {
  RETURN_IF_ERROR(ExpectArray("ragged-dot", "group_sizes", group_sizes));
  auto contains = [](const std::vector<int64_t>& dims, int64_t d) {
    return std::find(dims.begin(), dims.end(), d) != dims.end();
  };
  if (contains(dnums.lhs_batch_dimensions, ragged_dim)) {
    return InferDotShape(lhs, rhs, dnums, preferred_element_type);  // Batch mode: a plain dot.
  }
  if (contains(dnums.lhs_contracting_dimensions, ragged_dim)) {
    // Contracting mode: a leading group dimension, one per group size.
    if (group_sizes.rank() < 1) return InvalidArg("ragged-dot: group_sizes must have rank >= 1");
    ASSIGN_OR_RETURN(Shape dot, InferDotShape(lhs, rhs, dnums, preferred_element_type));
    std::vector<int64_t> dims = dot.dimensions();
    dims.insert(dims.begin(), group_sizes.dimensions(group_sizes.rank() - 1));
    return Shape::Array(dot.element_type(), dims);
  }
  // Non-contracting mode: rhs's group dimension picks each row's matrix and leaves the result.
  if (rhs_group_dims.size() != 1 || rhs_group_dims[0] < 0 || rhs_group_dims[0] >= rhs.rank()) {
    return InvalidArg("ragged-dot: non-contracting mode needs one rhs_group_dims entry in range");
  }
  const int64_t g = rhs_group_dims[0];
  std::vector<int64_t> dims = rhs.dimensions();
  dims.erase(dims.begin() + g);
  DotDimensionNumbers without_group = dnums;
  for (std::vector<int64_t>* list :
       {&without_group.rhs_batch_dimensions, &without_group.rhs_contracting_dimensions}) {
    if (contains(*list, g))
      return InvalidArg("ragged-dot: the rhs group dimension ", g,
                        " cannot be a batch or contracting dimension");
    for (int64_t& d : *list) d -= d > g ? 1 : 0;
  }
  return InferDotShape(lhs, Shape::Array(rhs.element_type(), dims), without_group,
                       preferred_element_type);
}

absl::StatusOr<Shape> InferFftShape(const Shape& operand, FftType type,
                                    absl::Span<const int64_t> fft_length) {
  RETURN_IF_ERROR(ExpectArray("fft", "operand", operand));
  const int64_t n = static_cast<int64_t>(fft_length.size());
  if (n < 1 || n > 3) return InvalidArg("fft: fft_length must have 1 to 3 entries, has ", n);
  if (operand.rank() < n) {
    return InvalidArg("fft: operand ", ShapeStr(operand), " must have rank >= ", n);
  }
  const PrimitiveType t = operand.element_type();
  const int64_t r = operand.rank();
  const bool real_input = type == FftType::kRfft;
  if (real_input ? (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) : !IsComplexType(t)) {
    return InvalidArg("fft: ", FftTypeString(type), " needs ",
                      real_input ? "an f32/f64" : "a complex", " operand, got ", ShapeStr(operand));
  }
  // Innermost dims that must equal fft_length: all for FFT, IFFT and RFFT, all but the last for
  // IRFFT (its input holds fft_length/2+1 complex values there).
  const int64_t checked = type == FftType::kIrfft ? n - 1 : n;
  for (int64_t i = 0; i < checked; ++i) {
    if (operand.dimensions(r - n + i) != fft_length[i]) {
      return InvalidArg("fft: operand dimension ", r - n + i, " has size ",
                        operand.dimensions(r - n + i), " but fft_length[", i, "] is ",
                        fft_length[i]);
    }
  }
  Shape result = WithElementType(operand, t);
  const int64_t last = fft_length[n - 1];
  if (type == FftType::kRfft) {
    result = WithElementType(operand,
                             t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128);
    if (last != 0) result.set_dimension(r - 1, last / 2 + 1);
  } else if (type == FftType::kIrfft) {
    const int64_t inner = operand.dimensions(r - 1);
    if ((inner != 0 || last != 0) && inner != last / 2 + 1) {
      return InvalidArg("fft: IRFFT needs innermost dimension fft_length/2+1 = ", last / 2 + 1,
                        ", got ", inner);
    }
    result = WithElementType(operand,
                             t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64);
    result.set_dimension(r - 1, last);
  }
  return result;
}

absl::StatusOr<Shape> InferTriangularSolveShape(const Shape& a, const Shape& b, bool left_side) {
  RETURN_IF_ERROR(CheckSquareMinor("triangular-solve", a));
  RETURN_IF_ERROR(ExpectArray("triangular-solve", "b", b));
  if (b.element_type() != a.element_type() || b.rank() != a.rank()) {
    return InvalidArg("triangular-solve: b ", ShapeStr(b), " must have the rank and element ",
                      "type of a ", ShapeStr(a));
  }
  const int64_t r = a.rank();
  const int64_t shared = b.dimensions(left_side ? r - 2 : r - 1);
  if (shared != a.dimensions(r - 1)) {
    return InvalidArg("triangular-solve: b dimension ", left_side ? r - 2 : r - 1, " has size ",
                      shared, " but a is ", a.dimensions(r - 1), "x", a.dimensions(r - 1),
                      " (left_side=", left_side ? "true" : "false", ")");
  }
  for (int64_t i = 0; i + 2 < r; ++i) {
    if (a.dimensions(i) != b.dimensions(i)) {
      return InvalidArg("triangular-solve: batch dimension ", i, " differs: a ", ShapeStr(a),
                        ", b ", ShapeStr(b));
    }
  }
  return b;
}

absl::StatusOr<Shape> InferCholeskyShape(const Shape& a) {
  RETURN_IF_ERROR(CheckSquareMinor("cholesky", a));
  return a;
}

absl::StatusOr<Shape> InferBatchNormTrainingShape(const Shape& operand, const Shape& scale,
                                                  const Shape& offset, int64_t feature_index) {
  constexpr std::string_view kOp = "batch-norm-training";
  ASSIGN_OR_RETURN(int64_t features, BatchNormFeatures(kOp, operand, feature_index));
  RETURN_IF_ERROR(CheckFeatureVector(kOp, "scale", scale, operand, features));
  RETURN_IF_ERROR(CheckFeatureVector(kOp, "offset", offset, operand, features));
  const Shape stats = Shape::Array(operand.element_type(), {features});
  return Shape::Tuple({operand, stats, stats});
}

absl::StatusOr<Shape> InferBatchNormInferenceShape(const Shape& operand, const Shape& scale,
                                                   const Shape& offset, const Shape& mean,
                                                   const Shape& variance, int64_t feature_index) {
  constexpr std::string_view kOp = "batch-norm-inference";
  ASSIGN_OR_RETURN(int64_t features, BatchNormFeatures(kOp, operand, feature_index));
  RETURN_IF_ERROR(CheckFeatureVector(kOp, "scale", scale, operand, features));
  RETURN_IF_ERROR(CheckFeatureVector(kOp, "offset", offset, operand, features));
  RETURN_IF_ERROR(CheckFeatureVector(kOp, "mean", mean, operand, features));
  RETURN_IF_ERROR(CheckFeatureVector(kOp, "variance", variance, operand, features));
  return operand;
}

absl::StatusOr<Shape> InferBatchNormGradShape(const Shape& operand, const Shape& scale,
                                              const Shape& mean, const Shape& variance,
                                              const Shape& grad_output, int64_t feature_index) {
  constexpr std::string_view kOp = "batch-norm-grad";
  ASSIGN_OR_RETURN(int64_t features, BatchNormFeatures(kOp, operand, feature_index));
  RETURN_IF_ERROR(CheckFeatureVector(kOp, "scale", scale, operand, features));
  RETURN_IF_ERROR(CheckFeatureVector(kOp, "mean", mean, operand, features));
  RETURN_IF_ERROR(CheckFeatureVector(kOp, "variance", variance, operand, features));
  RETURN_IF_ERROR(ExpectArray(kOp, "grad_output", grad_output));
  if (!grad_output.Compatible(operand)) {
    return InvalidArg(kOp, ": grad_output ", ShapeStr(grad_output), " must match operand ",
                      ShapeStr(operand));
  }
  const Shape stats = Shape::Array(operand.element_type(), {features});
  return Shape::Tuple({operand, stats, stats});
}

}  // namespace hlo

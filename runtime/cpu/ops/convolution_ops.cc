// convolution as im2col + GEMM.
//
// Semantics (StableHLO spec, which XLA follows): an output element at batch n, spatial position
// p and feature o is the dot product of the kernel's slice for feature o with the lhs window at
// p, where the window's element at kernel position k lies at coordinate
// p*stride + k*rhs_dilation - padding_low of the padded, lhs-dilated input (window_reversal
// reads the kernel back to front along that dimension). With feature_group_count G the input
// features and the output features are split into G contiguous groups and group g of the
// output only sees group g of the input; with batch_group_count G the input batch is split
// into G groups instead, and output feature group g sees batch group g (the output batch is
// the input batch / G).
//
// Algorithm, per group: the kernel becomes a [K*I, O_g] matrix (K kernel positions, I input
// features per group, O_g output features per group); for a block of output rows (one per
// (batch, spatial position)), im2col writes a [rows, K*I] matrix of the matching input
// elements (0 for padding and dilation holes); one GEMM gives [rows, O_g], scattered into the
// output by its dimension numbers. Row blocks bound the im2col buffer to about 4M elements.
//
// Example: f32[1,5,5,3] x f32[3,3,3,8] (b01f_01io->b01f, pad 1) -> f32[1,5,5,8]: a 25x27 im2col
// matrix times the 27x8 kernel matrix.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/strided_index.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/ops/convolution_plan.h"
#include "runtime/cpu/ops/dot_handlers.h"
#include "runtime/cpu/ops/matmul_kernels.h"
#include "runtime/cpu/ops/window_geometry.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

absl::Status InvalidArgument(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

// Upper bound on the elements of one im2col block.
constexpr int64_t kIm2ColBlockElements = int64_t{1} << 22;

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

namespace {

// The [K*I, O_g] kernel matrix of group `g`: row (kernel position, input feature).
template <typename C>
void BuildKernelMatrix(const ConvPlan& plan, const C* rhs, int64_t g, std::vector<C>& matrix) {
  const hlo::ConvolutionDimensionNumbers& dn = plan.dn;
  const int64_t in = plan.in_features, out = plan.out_features;
  const int64_t in_stride = plan.rhs_strides[dn.kernel_input_feature_dimension];
  const int64_t out_stride = plan.rhs_strides[dn.kernel_output_feature_dimension];
  matrix.resize(plan.columns() * out);
  C* dst = matrix.data();
  for (StridedCounter k(plan.kernel_sizes, {}); !k.done(); k.Next()) {
    int64_t base = g * out * out_stride;
    for (size_t d = 0; d < plan.kernel_sizes.size(); ++d) {
      const int64_t pos = plan.reversed[d] ? plan.kernel_sizes[d] - 1 - k.index()[d] : k.index()[d];
      base += pos * plan.rhs_strides[dn.kernel_spatial_dimensions[d]];
    }
    for (int64_t i = 0; i < in; ++i) {
      for (int64_t o = 0; o < out; ++o) *dst++ = rhs[base + i * in_stride + o * out_stride];
    }
  }
}

// Writes the im2col row of output position `index` ([batch, spatial...]) of group `g` to `row`.
template <typename C>
void Im2ColRow(const ConvPlan& plan, const C* lhs, int64_t g, const std::vector<int64_t>& index,
               C* row) {
  const hlo::ConvolutionDimensionNumbers& dn = plan.dn;
  const int64_t in = plan.in_features;
  const int64_t feature_stride = plan.lhs_strides[dn.input_feature_dimension];
  const int64_t batch = plan.batch_grouped ? g * plan.out_batch + index[0] : index[0];
  const int64_t feature0 = plan.batch_grouped ? 0 : g * in;
  const int64_t base =
      batch * plan.lhs_strides[dn.input_batch_dimension] + feature0 * feature_stride;
  for (StridedCounter k(plan.kernel_sizes, {}); !k.done(); k.Next(), row += in) {
    int64_t offset = base;
    bool inside = true;
    for (size_t d = 0; d < plan.kernel_sizes.size() && inside; ++d) {
      const int64_t c = plan.coords[d][index[d + 1] * plan.kernel_sizes[d] + k.index()[d]];
      inside = c >= 0;
      offset += c * plan.lhs_strides[dn.input_spatial_dimensions[d]];
    }
    for (int64_t i = 0; i < in; ++i) row[i] = inside ? lhs[offset + i * feature_stride] : C(0);
  }
}

// Output offset of output position `index` ([batch, spatial...]), feature 0.
int64_t OutputOffset(const ConvPlan& plan, const std::vector<int64_t>& index) {
  int64_t offset = index[0] * plan.out_strides[plan.dn.output_batch_dimension];
  for (size_t d = 0; d + 1 < index.size(); ++d) {
    offset += index[d + 1] * plan.out_strides[plan.dn.output_spatial_dimensions[d]];
  }
  return offset;
}

// Buffers reused by every group of one convolution (a depthwise convolution has one group per
// feature: allocating and zeroing them per group cost more than the arithmetic).
template <typename C>
struct ConvScratch {
  std::vector<C> kernel, im2col, product;
  std::vector<int64_t> offsets;  // Output offset of each row in the block.
};

// Convolves group `g` into `out` (dense, the result's layout, compute type C).
template <typename C>
void ConvolveGroup(const ConvPlan& plan, const C* lhs, const C* rhs, int64_t g, C* out,
                   ConvScratch<C>& scratch) {
  std::vector<C>& kernel = scratch.kernel;
  BuildKernelMatrix(plan, rhs, g, kernel);
  const int64_t cols = plan.columns(), out_features = plan.out_features;
  const int64_t feature_stride = plan.out_strides[plan.dn.output_feature_dimension];
  std::vector<int64_t> bounds = {plan.out_batch};
  bounds.insert(bounds.end(), plan.out_sizes.begin(), plan.out_sizes.end());
  const int64_t rows_total = ElementCount(bounds);
  const int64_t block = std::max<int64_t>(
      1, std::min(rows_total, kIm2ColBlockElements / std::max<int64_t>(cols, 1)));
  std::vector<C>& im2col = scratch.im2col;
  std::vector<C>& product = scratch.product;
  std::vector<int64_t>& offsets = scratch.offsets;
  if (static_cast<int64_t>(im2col.size()) < block * cols) im2col.resize(block * cols);
  if (static_cast<int64_t>(product.size()) < block * out_features) {
    product.resize(block * out_features);
  }
  offsets.clear();
  auto flush = [&]() {
    const int64_t rows = static_cast<int64_t>(offsets.size());
    Gemm<C>(im2col.data(), false, kernel.data(), false, product.data(), rows, cols, out_features);
    for (int64_t r = 0; r < rows; ++r) {
      C* dst = out + offsets[r] + g * out_features * feature_stride;
      for (int64_t o = 0; o < out_features; ++o)
        dst[o * feature_stride] = product[r * out_features + o];
    }
    offsets.clear();
  };
  for (StridedCounter p(bounds, {}); !p.done(); p.Next()) {
    Im2ColRow(plan, lhs, g, p.index(), im2col.data() + offsets.size() * cols);
    offsets.push_back(OutputOffset(plan, p.index()));
    if (static_cast<int64_t>(offsets.size()) == block) flush();
  }
  if (!offsets.empty()) flush();
}

// The literal's values as compute type C: in place when it already has that type.
template <typename C>
absl::StatusOr<const C*> ComputeView(const Literal& literal, PrimitiveType compute,
                                     std::vector<C>& storage) {
  if (literal.shape().element_type() == compute) return Data<C>(literal);
  storage.resize(literal.element_count());
  std::vector<int64_t> identity(literal.shape().rank());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int64_t>(i);
  RETURN_IF_ERROR(PackOperand<C>(literal, identity, storage.data()));
  return storage.data();
}

template <typename C>
absl::Status RunConvolution(const ConvPlan& plan, const Literal& lhs, const Literal& rhs,
                            PrimitiveType compute, Literal& out) {
  std::vector<C> lhs_storage, rhs_storage, out_storage;
  ASSIGN_OR_RETURN(const C* a, ComputeView<C>(lhs, compute, lhs_storage));
  ASSIGN_OR_RETURN(const C* b, ComputeView<C>(rhs, compute, rhs_storage));
  const bool in_place = out.shape().element_type() == compute;
  if (!in_place) out_storage.assign(out.element_count(), C(0));
  C* c = in_place ? MutableData<C>(out) : out_storage.data();
  ConvScratch<C> scratch;
  for (int64_t g = 0; g < plan.groups; ++g) ConvolveGroup<C>(plan, a, b, g, c, scratch);
  if (!in_place) RETURN_IF_ERROR(StoreResult<C>(c, out));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> HandleConvolution(const HloInstruction& instr,
                                          absl::Span<const Literal* const> operands, Evaluator&) {
  if (operands.size() != 2) return InvalidArgument("convolution takes two operands");
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  ASSIGN_OR_RETURN(ConvPlan plan, PlanConvolution(instr, lhs.shape(), rhs.shape()));
  ASSIGN_OR_RETURN(PrimitiveType compute,
                   MatmulComputeType(lhs.shape().element_type(), rhs.shape().element_type(),
                                     instr.shape().element_type()));
  Literal out(instr.shape());
  RETURN_IF_ERROR(DispatchComputeType(compute, [&](auto tag) -> absl::Status {
    using C = typename decltype(tag)::type;
    return RunConvolution<C>(plan, lhs, rhs, compute, out);
  }));
  return out;
}

}  // namespace runtime

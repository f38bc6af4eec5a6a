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
#include "runtime/common/convolution_plan.h"
#include "runtime/common/strided_index.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/ops/dot_handlers.h"
#include "runtime/cpu/ops/matmul_kernels.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

// Upper bound on the elements of one im2col block.
constexpr int64_t kIm2ColBlockElements = int64_t{1} << 22;

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
  if (operands.size() != 2) return absl::InvalidArgumentError("convolution takes two operands");
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

// convolution as im2col + cuBLAS, group by group, with the CPU executor's geometry
// (runtime/common/convolution_plan.h; semantics at the top of runtime/cpu/ops/
// convolution_ops.cc). For group g:
//   1. the kernel matrix [K*I, O_g] (K kernel positions, I input features per group, O_g output
//      features per group): one strided copy of the kernel, reversed where window_reversal says;
//   2. im2col blocks [rows, K*I] of at most kIm2ColBlockBytes (rows: output (batch, spatial)
//      positions in row-major order; zeros for padding and dilation holes), each multiplied by
//      the kernel matrix into rows of a [rows, O_g] product;
//   3. the product copied into the result by its dimension numbers (one strided copy).
// Example: f32[1,5,5,3] x f32[3,3,3,8] (b01f_01io->b01f, pad 1) -> f32[1,5,5,8]: a 25x27
// im2col block times the 27x8 kernel matrix.
#include <algorithm>
#include <vector>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/convolution_plan.h"
#include "runtime/common/strided_index.h"
#include "runtime/cuda/op_registry.h"
#include "runtime/cuda/ops/op_util.h"

namespace runtime {
namespace cuda {
namespace {

constexpr int64_t kIm2ColBlockBytes = int64_t{1} << 30;

// Step 1: the kernel matrix of group `g` (row (kernel position, input feature), column o).
CopySpec KernelMatrixSpec(const ConvPlan& plan, int64_t g) {
  const hlo::ConvolutionDimensionNumbers& dn = plan.dn;
  CopySpec spec;
  spec.src_offset = g * plan.out_features * plan.rhs_strides[dn.kernel_output_feature_dimension];
  for (size_t d = 0; d < plan.kernel_sizes.size(); ++d) {
    const int64_t stride = plan.rhs_strides[dn.kernel_spatial_dimensions[d]];
    spec.dims.push_back(plan.kernel_sizes[d]);
    spec.src_strides.push_back(plan.reversed[d] ? -stride : stride);
    if (plan.reversed[d]) spec.src_offset += (plan.kernel_sizes[d] - 1) * stride;
  }
  spec.dims.push_back(plan.in_features);
  spec.src_strides.push_back(plan.rhs_strides[dn.kernel_input_feature_dimension]);
  spec.dims.push_back(plan.out_features);
  spec.src_strides.push_back(plan.rhs_strides[dn.kernel_output_feature_dimension]);
  spec.dst_strides = RowMajorStrides(spec.dims);
  return spec;
}

// Step 3: the [rows, O_g] product of group `g` into the result.
CopySpec ProductSpec(const ConvPlan& plan, int64_t g) {
  const hlo::ConvolutionDimensionNumbers& dn = plan.dn;
  CopySpec spec;
  spec.dims = {plan.out_batch};
  spec.dst_strides = {plan.out_strides[dn.output_batch_dimension]};
  for (size_t d = 0; d < plan.out_sizes.size(); ++d) {
    spec.dims.push_back(plan.out_sizes[d]);
    spec.dst_strides.push_back(plan.out_strides[dn.output_spatial_dimensions[d]]);
  }
  const int64_t feature_stride = plan.out_strides[dn.output_feature_dimension];
  spec.dims.push_back(plan.out_features);
  spec.dst_strides.push_back(feature_stride);
  spec.dst_offset = g * plan.out_features * feature_stride;
  spec.src_strides = RowMajorStrides(spec.dims);
  return spec;
}

// The im2col parameters of group `g` except the block's rows and buffers.
spmd_cuda::Im2ColParams Im2Col(const ConvPlan& plan, int64_t g, int elem_bytes,
                               const int64_t* coords) {
  const hlo::ConvolutionDimensionNumbers& dn = plan.dn;
  spmd_cuda::Im2ColParams p;
  spmd_cuda::WindowGeometry& w = p.spatial;
  w.rank = static_cast<int>(plan.kernel_sizes.size());
  int64_t start = 0;
  for (int d = 0; d < w.rank; ++d) {
    w.out_dims[d] = plan.out_sizes[d];
    w.window[d] = plan.kernel_sizes[d];
    w.coord_start[d] = start;
    start += static_cast<int64_t>(plan.coords[d].size());
    w.in_strides[d] = plan.lhs_strides[dn.input_spatial_dimensions[d]];
  }
  w.window_positions = plan.kernel_positions();
  w.coords = coords;
  p.elem_bytes = elem_bytes;
  p.batch_stride = plan.lhs_strides[dn.input_batch_dimension];
  p.feature_stride = plan.lhs_strides[dn.input_feature_dimension];
  p.base = plan.batch_grouped ? g * plan.out_batch * p.batch_stride
                              : g * plan.in_features * p.feature_stride;
  p.in_features = plan.in_features;
  return p;
}

// Step 2 for `rows` output rows from `row_begin`: im2col into `block`, then the GEMM into the
// product's rows.
absl::Status MultiplyBlock(OpContext& ctx, const ConvPlan& plan, spmd_cuda::Im2ColParams im2col,
                           spmd_cuda::GemmParams gemm, int64_t row_begin, int64_t rows, void* block,
                           const void* kernel, char* product, int out_bytes) {
  const int64_t cols = plan.columns();
  im2col.row_begin = row_begin;
  im2col.lhs = ctx.operands[0].data;
  im2col.out = block;
  im2col.n = rows * cols;
  RETURN_IF_ERROR(ctx.device().Im2Col(im2col));
  // Row-major [rows, K*I] x [K*I, O_g] = [rows, O_g] is, column-major, kernel^T-shaped
  // (O_g x K*I) times im2col^T (K*I x rows).
  gemm.m = plan.out_features;
  gemm.n = rows;
  gemm.k = cols;
  gemm.a = kernel;
  gemm.lda = plan.out_features;
  gemm.b = block;
  gemm.ldb = cols;
  gemm.c = product + row_begin * plan.out_features * out_bytes;
  gemm.ldc = plan.out_features;
  return ctx.device().Gemm(gemm);
}

absl::Status HandleConvolution(OpContext& ctx) {
  const hlo::HloInstruction& instr = ctx.instr;
  const DeviceArray& lhs = ctx.operands[0];
  const DeviceArray& rhs = ctx.operands[1];
  const DeviceArray& out = ctx.outputs[0];
  ASSIGN_OR_RETURN(ConvPlan plan, PlanConvolution(instr, lhs.shape, rhs.shape));
  spmd_cuda::GemmParams gemm;
  RETURN_IF_ERROR(SetGemmTypes("convolution", lhs.shape.element_type(), rhs.shape.element_type(),
                               instr.shape().element_type(), gemm));
  if (lhs.shape.rank() > spmd_cuda::kMaxRank) {
    return absl::UnimplementedError(hlo::StrCat("convolution of rank ", lhs.shape.rank(),
                                                " is not supported by the CUDA executor"));
  }
  const int64_t rows = plan.out_batch * ElementCount(plan.out_sizes);
  const int64_t cols = plan.columns();
  if (rows == 0 || plan.out_features == 0) return absl::OkStatus();
  if (cols == 0) return FillWithZeros(ctx.device(), out);
  const int in_bytes = static_cast<int>(ElementBytes(lhs.shape));
  const int out_bytes = static_cast<int>(ElementBytes(out.shape));
  std::vector<int64_t> coords;
  for (const std::vector<int64_t>& c : plan.coords) coords.insert(coords.end(), c.begin(), c.end());
  ASSIGN_OR_RETURN(DeviceBuffer coords_dev, ScratchCopyOf(ctx, coords));
  const int64_t block_rows =
      std::max<int64_t>(1, std::min(rows, kIm2ColBlockBytes / (cols * in_bytes)));
  ASSIGN_OR_RETURN(DeviceBuffer kernel, ctx.executor.Scratch(cols * plan.out_features * in_bytes));
  ASSIGN_OR_RETURN(DeviceBuffer block, ctx.executor.Scratch(block_rows * cols * in_bytes));
  ASSIGN_OR_RETURN(DeviceBuffer product,
                   ctx.executor.Scratch(rows * plan.out_features * out_bytes));
  for (int64_t g = 0; g < plan.groups; ++g) {
    RETURN_IF_ERROR(
        LaunchCopy(ctx.device(), KernelMatrixSpec(plan, g), in_bytes, rhs.data, kernel.data()));
    const spmd_cuda::Im2ColParams im2col =
        Im2Col(plan, g, in_bytes, static_cast<const int64_t*>(coords_dev.data()));
    for (int64_t r = 0; r < rows; r += block_rows) {
      RETURN_IF_ERROR(MultiplyBlock(ctx, plan, im2col, gemm, r, std::min(block_rows, rows - r),
                                    block.data(), kernel.data(), static_cast<char*>(product.data()),
                                    out_bytes));
    }
    RETURN_IF_ERROR(
        LaunchCopy(ctx.device(), ProductSpec(plan, g), out_bytes, product.data(), out.data));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterConvolutionOps(CudaOpTable& table) {
  table[hlo::HloOpcode::kConvolution] = HandleConvolution;
}

}  // namespace cuda
}  // namespace runtime

// dot as one strided batched GEMM (cuBLAS on a GPU).
//
// Each operand is viewed as row-major [batch, free, contracting] ("FK") or
// [batch, contracting, free] ("KF"); an operand in neither order (batch dimensions not leading,
// or interleaved dimensions) is first copied into FK order. The row-major result
// C[b] (M x N) = A[b] (M x K) * B[b] (K x N) is computed in cuBLAS's column-major terms as
// C^T = B^T * A^T: cuBLAS's "A" is the rhs and its "B" the lhs, and an operand's FK/KF order
// only chooses its transpose flag and leading dimension. f16 and bf16 accumulate in f32.
//
// Example: lhs bf16[8192,8192] contracting {1}, rhs bf16[8192,8192] contracting {0}: lhs is
// FK, rhs is KF, no copy: one cublasGemmStridedBatchedEx(N, N, m=N, n=M, k=K).
#include <algorithm>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/strided_index.h"
#include "runtime/cuda/op_registry.h"
#include "runtime/cuda/ops/op_util.h"

namespace runtime {
namespace cuda {
namespace {

// One operand as a GEMM input.
struct GemmOperand {
  const void* data = nullptr;
  bool contract_last = true;  // FK order (else KF).
  int64_t batch = 1, free = 1, contract = 1;
  DeviceBuffer copy;  // Holds the FK copy when one was needed.
};

absl::StatusOr<GemmOperand> PrepareOperand(OpContext& ctx, const DeviceArray& in,
                                           const std::vector<int64_t>& batch_dims,
                                           const std::vector<int64_t>& contract_dims) {
  GemmOperand g;
  g.data = in.data;
  const hlo::Shape& shape = in.shape;
  std::vector<int64_t> free_dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const bool batch = std::find(batch_dims.begin(), batch_dims.end(), d) != batch_dims.end();
    const bool contract =
        std::find(contract_dims.begin(), contract_dims.end(), d) != contract_dims.end();
    if (!batch && !contract) free_dims.push_back(d);
  }
  for (int64_t d : batch_dims) g.batch *= shape.dimensions(d);
  for (int64_t d : free_dims) g.free *= shape.dimensions(d);
  for (int64_t d : contract_dims) g.contract *= shape.dimensions(d);
  std::vector<int64_t> fk = batch_dims, kf = batch_dims, actual(shape.rank());
  fk.insert(fk.end(), free_dims.begin(), free_dims.end());
  fk.insert(fk.end(), contract_dims.begin(), contract_dims.end());
  kf.insert(kf.end(), contract_dims.begin(), contract_dims.end());
  kf.insert(kf.end(), free_dims.begin(), free_dims.end());
  for (int64_t d = 0; d < shape.rank(); ++d) actual[d] = d;
  if (actual == fk) return g;
  if (actual == kf) {
    g.contract_last = false;
    return g;
  }
  // Copy into FK order: walk the FK dimensions, reading each at its own stride.
  const std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  CopySpec spec;
  for (int64_t d : fk) {
    spec.dims.push_back(shape.dimensions(d));
    spec.src_strides.push_back(strides[d]);
  }
  spec.dst_strides = RowMajorStrides(spec.dims);
  ASSIGN_OR_RETURN(g.copy, ctx.executor.Scratch(shape.byte_size()));
  RETURN_IF_ERROR(LaunchCopy(ctx.device(), spec, static_cast<int>(ElementBytes(shape)), in.data,
                             g.copy.data()));
  g.data = g.copy.data();
  return g;
}

absl::Status HandleDot(OpContext& ctx) {
  const hlo::HloInstruction& instr = ctx.instr;
  if (!instr.attrs().dot_dimension_numbers) {
    return absl::InvalidArgumentError("dot without dimension numbers");
  }
  const hlo::DotDimensionNumbers& dnums = *instr.attrs().dot_dimension_numbers;
  const DeviceArray& lhs = ctx.operands[0];
  const DeviceArray& rhs = ctx.operands[1];
  spmd_cuda::GemmParams p;
  RETURN_IF_ERROR(SetGemmTypes("dot", lhs.shape.element_type(), rhs.shape.element_type(),
                               instr.shape().element_type(), p));
  ASSIGN_OR_RETURN(GemmOperand a, PrepareOperand(ctx, lhs, dnums.lhs_batch_dimensions,
                                                 dnums.lhs_contracting_dimensions));
  ASSIGN_OR_RETURN(GemmOperand b, PrepareOperand(ctx, rhs, dnums.rhs_batch_dimensions,
                                                 dnums.rhs_contracting_dimensions));
  const int64_t m = a.free, n = b.free, k = a.contract;
  p.batch = a.batch;
  p.m = n;  // cuBLAS computes C^T = B^T A^T (see the file comment).
  p.n = m;
  p.k = k;
  p.a = b.data;
  p.trans_a = b.contract_last;
  p.lda = b.contract_last ? k : n;
  p.stride_a = k * n;
  p.b = a.data;
  p.trans_b = !a.contract_last;
  p.ldb = a.contract_last ? k : m;
  p.stride_b = m * k;
  p.c = ctx.outputs[0].data;
  p.ldc = n;
  p.stride_c = m * n;
  if (m == 0 || n == 0) return absl::OkStatus();
  if (k == 0) return FillWithZeros(ctx.device(), ctx.outputs[0]);
  return ctx.device().Gemm(p);
}

}  // namespace

void RegisterDotOps(CudaOpTable& table) { table[hlo::HloOpcode::kDot] = HandleDot; }

}  // namespace cuda
}  // namespace runtime

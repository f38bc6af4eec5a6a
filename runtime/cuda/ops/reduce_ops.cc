// reduce with one operand and a simple reducer (add, multiply, maximum, minimum, and, or): one
// thread per output element walks the reduced dimensions in row-major order. Variadic reduces
// and other reducers fail naming the reducer.
#include <algorithm>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/strided_index.h"
#include "runtime/cuda/op_registry.h"
#include "runtime/cuda/ops/op_util.h"

namespace runtime {
namespace cuda {
namespace {

absl::Status HandleReduce(OpContext& ctx) {
  if (ctx.operands.size() != 2) {
    return absl::UnimplementedError(
        "variadic reduce (several operands) is not supported by the CUDA executor");
  }
  const DeviceArray& in = ctx.operands[0];
  spmd_cuda::ReduceParams p;
  ASSIGN_OR_RETURN(p.type, DTypeOf(in.shape.element_type()));
  ASSIGN_OR_RETURN(p.op, ReducerOp(*ctx.instr.to_apply()));
  p.in = in.data;
  p.init = ctx.operands[1].data;
  p.out = ctx.outputs[0].data;
  const std::vector<int64_t>& reduced = ctx.instr.attrs().dimensions;
  const std::vector<int64_t> strides = RowMajorStrides(in.shape.dimensions());
  p.n = ctx.outputs[0].shape.num_elements();
  p.red_n = 1;
  for (int64_t d = 0; d < in.shape.rank(); ++d) {
    const int64_t size = in.shape.dimensions(d);
    const bool is_reduced = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
    if (size == 1) continue;
    int& rank = is_reduced ? p.red_rank : p.out_rank;
    if (rank >= spmd_cuda::kMaxRank) {
      return absl::UnimplementedError("reduce of too high a rank for the CUDA kernels");
    }
    (is_reduced ? p.red_dims : p.out_dims)[rank] = size;
    (is_reduced ? p.red_strides : p.out_strides)[rank] = strides[d];
    ++rank;
    if (is_reduced) p.red_n *= size;
  }
  if (p.n == 0) return absl::OkStatus();
  return ctx.device().Reduce(p);
}

}  // namespace

void RegisterReduceOps(CudaOpTable& table) { table[hlo::HloOpcode::kReduce] = HandleReduce; }

}  // namespace cuda
}  // namespace runtime

// reduce and reduce-window with one operand and a simple reducer (add, multiply, maximum,
// minimum, and, or): one thread per output element walks the reduced dimensions (the window's
// positions on the input, with the CPU executor's window geometry) in row-major order. Variadic
// reduces and other reducers fail naming the reducer.
#include <algorithm>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/strided_index.h"
#include "runtime/common/window_geometry.h"
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

// reduce-window of one operand: one thread per output element walks its window.
absl::Status HandleReduceWindow(OpContext& ctx) {
  const hlo::HloInstruction& instr = ctx.instr;
  if (ctx.operands.size() != 2) {
    return absl::UnimplementedError(
        "variadic reduce-window (several operands) is not supported by the CUDA executor");
  }
  const DeviceArray& in = ctx.operands[0];
  const DeviceArray& out = ctx.outputs[0];
  std::vector<hlo::WindowDimension> window;
  if (instr.attrs().window.has_value()) window = instr.attrs().window->dimensions;
  if (static_cast<int64_t>(window.size()) != in.shape.rank() ||
      out.shape.rank() != in.shape.rank()) {
    return absl::InvalidArgumentError("reduce-window's window does not match its operand's rank");
  }
  if (in.shape.rank() > spmd_cuda::kMaxRank) {
    return absl::UnimplementedError("reduce-window of too high a rank for the CUDA kernels");
  }
  spmd_cuda::ReduceWindowParams p;
  ASSIGN_OR_RETURN(p.type, DTypeOf(in.shape.element_type()));
  ASSIGN_OR_RETURN(
      p.op, ReducerOp(instr.to_apply() ? *instr.to_apply() : *instr.called_computations().front()));
  p.rank = static_cast<int>(in.shape.rank());
  const std::vector<int64_t> strides = RowMajorStrides(in.shape.dimensions());
  std::vector<int64_t> coords;
  for (int d = 0; d < p.rank; ++d) {
    const hlo::WindowDimension& w = window[d];
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1 ||
        out.shape.dimensions(d) != WindowedOutputSize(w, in.shape.dimensions(d))) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "reduce-window dimension ", d, ": the window does not give the result's size"));
    }
    p.out_dims[d] = out.shape.dimensions(d);
    p.window[d] = w.size;
    p.window_positions *= w.size;
    p.in_strides[d] = strides[d];
    p.coord_start[d] = static_cast<int64_t>(coords.size());
    const std::vector<int64_t> c =
        WindowCoordinates(w, in.shape.dimensions(d), out.shape.dimensions(d));
    coords.insert(coords.end(), c.begin(), c.end());
  }
  p.n = out.shape.num_elements();
  if (p.n == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(DeviceBuffer coords_dev,
                   ctx.executor.Scratch(std::max<size_t>(coords.size(), 1) * sizeof(int64_t)));
  RETURN_IF_ERROR(
      ctx.device().CopyToDevice(coords_dev.data(), coords.data(), coords.size() * sizeof(int64_t)));
  p.coords = static_cast<const int64_t*>(coords_dev.data());
  p.in = in.data;
  p.init = ctx.operands[1].data;
  p.out = out.data;
  return ctx.device().ReduceWindow(p);
}

}  // namespace

void RegisterReduceOps(CudaOpTable& table) {
  table[hlo::HloOpcode::kReduce] = HandleReduce;
  table[hlo::HloOpcode::kReduceWindow] = HandleReduceWindow;
}

}  // namespace cuda
}  // namespace runtime

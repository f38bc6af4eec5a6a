// reduce and reduce-window with one operand and a simple reducer (add, multiply, maximum,
// minimum, and, or): one thread per output element walks the reduced dimensions (the window's
// positions on the input, with the CPU executor's window geometry) in row-major order; and
// select-and-scatter with a compare select; topk (the opcode, and the custom-call "TopK", the
// one custom-call target this executor gives a meaning: the kCustomCall entry dispatches by
// target). Variadic reduces and other reducers, selects or targets fail naming them.
#include <algorithm>
#include <optional>
#include <vector>

#include "hlo/analysis/combiner.h"
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

// The windows of `instr` over `in` for an output of `out_shape`; `coords` receives the window
// coordinates, which the caller copies to the device and points geometry.coords at.
absl::StatusOr<spmd_cuda::WindowGeometry> MakeWindowGeometry(const hlo::HloInstruction& instr,
                                                             const hlo::Shape& in,
                                                             const hlo::Shape& out_shape,
                                                             std::vector<int64_t>& coords) {
  std::vector<hlo::WindowDimension> window;
  if (instr.attrs().window.has_value()) window = instr.attrs().window->dimensions;
  if (static_cast<int64_t>(window.size()) != in.rank() || out_shape.rank() != in.rank()) {
    return absl::InvalidArgumentError("the window does not match the operand's rank");
  }
  if (in.rank() > spmd_cuda::kMaxRank) {
    return absl::UnimplementedError("a window of too high a rank for the CUDA kernels");
  }
  spmd_cuda::WindowGeometry g;
  g.rank = static_cast<int>(in.rank());
  const std::vector<int64_t> strides = RowMajorStrides(in.dimensions());
  for (int d = 0; d < g.rank; ++d) {
    const hlo::WindowDimension& w = window[d];
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1 ||
        out_shape.dimensions(d) != WindowedOutputSize(w, in.dimensions(d))) {
      return absl::InvalidArgumentError(
          hlo::StrCat("window dimension ", d, " does not give the result's size"));
    }
    g.out_dims[d] = out_shape.dimensions(d);
    g.window[d] = w.size;
    g.window_positions *= w.size;
    g.in_strides[d] = strides[d];
    g.coord_start[d] = static_cast<int64_t>(coords.size());
    const std::vector<int64_t> c = WindowCoordinates(w, in.dimensions(d), out_shape.dimensions(d));
    coords.insert(coords.end(), c.begin(), c.end());
  }
  return g;
}

// reduce-window of one operand: one thread per output element walks its window.
absl::Status HandleReduceWindow(OpContext& ctx) {
  if (ctx.operands.size() != 2) {
    return absl::UnimplementedError(
        "variadic reduce-window (several operands) is not supported by the CUDA executor");
  }
  const DeviceArray& in = ctx.operands[0];
  const DeviceArray& out = ctx.outputs[0];
  spmd_cuda::ReduceWindowParams p;
  ASSIGN_OR_RETURN(p.type, DTypeOf(in.shape.element_type()));
  ASSIGN_OR_RETURN(p.op, ReducerOp(*ctx.instr.to_apply()));
  std::vector<int64_t> coords;
  ASSIGN_OR_RETURN(p.geometry, MakeWindowGeometry(ctx.instr, in.shape, out.shape, coords));
  p.n = out.shape.num_elements();
  if (p.n == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(DeviceBuffer coords_dev, ScratchCopyOf(ctx, coords));
  p.geometry.coords = static_cast<const int64_t*>(coords_dev.data());
  p.in = in.data;
  p.init = ctx.operands[1].data;
  p.out = out.data;
  return ctx.device().ReduceWindow(p);
}

// `n` elements of type `from` at `in` converted to `to` at `out`.
absl::Status Convert(OpContext& ctx, const void* in, int from, void* out, int to, int64_t n) {
  spmd_cuda::ElementwiseParams p;
  p.op = spmd_cuda::kConvert;
  p.in_type = from;
  p.out_type = to;
  p.in[0] = in;
  p.out = out;
  p.n = n;
  return n == 0 ? absl::OkStatus() : ctx.device().Elementwise(p);
}

// The select step of select-and-scatter (`sel` with its geometry but not its coordinates,
// which `coords` holds), then the scatter of `updates` at the selected offsets into `result`
// (n_out elements, already holding init).
absl::Status ScatterSelected(OpContext& ctx, spmd_cuda::SelectWindowParams sel,
                             const std::vector<int64_t>& coords, spmd_cuda::ScatterParams scatter,
                             void* result, int64_t n_out, const void* updates) {
  sel.none = n_out;  // Out of bounds: the scatter drops it.
  ASSIGN_OR_RETURN(DeviceBuffer coords_dev, ScratchCopyOf(ctx, coords));
  ASSIGN_OR_RETURN(DeviceBuffer selected, ctx.executor.Scratch(sel.n * sizeof(int64_t)));
  sel.geometry.coords = static_cast<const int64_t*>(coords_dev.data());
  sel.in = ctx.operands[0].data;
  sel.selected = static_cast<int64_t*>(selected.data());
  RETURN_IF_ERROR(ctx.device().SelectWindow(sel));
  // A scatter of [n] updates into the result seen as one dim, at the selected offsets.
  spmd_cuda::IndexedAccess& a = scatter.access;
  a.rank = 1;
  a.dims[0] = sel.n;
  a.batch_pos[0] = 0;
  a.operand_dim[0] = -1;
  a.batch_strides[0] = 1;
  a.index_type = spmd_cuda::kS64;
  a.indices = selected.data();
  a.num_index = 1;
  a.start_index_map[0] = 0;
  a.operand_rank = 1;
  a.operand_dims[0] = n_out;
  a.operand_strides[0] = 1;
  a.window[0] = 1;
  scatter.updates = updates;
  scatter.out = result;
  scatter.n = sel.n;
  return ctx.device().Scatter(scatter);
}

// select-and-scatter: each source element's selected input offset (one thread per source
// element), then a scatter of the source into the result filled with init, at those offsets
// (the scatter kernel: updates to one element combine in source order, as on the CPU; bf16 and
// f16 sums are kept in f32 and rounded once, as the CPU keeps them).
absl::Status HandleSelectAndScatter(OpContext& ctx) {
  const hlo::HloInstruction& instr = ctx.instr;
  const DeviceArray& in = ctx.operands[0];
  const DeviceArray& source = ctx.operands[1];
  const DeviceArray& out = ctx.outputs[0];
  if (instr.called_computations().size() != 2) {
    return absl::InvalidArgumentError("select-and-scatter needs select and scatter computations");
  }
  if (source.shape.element_type() != in.shape.element_type() ||
      ctx.operands[2].shape.element_type() != in.shape.element_type() ||
      out.shape.element_type() != in.shape.element_type()) {
    return absl::InvalidArgumentError(
        "select-and-scatter: operand, source, init and result must share the element type");
  }
  std::optional<hlo::ParameterComparison> select =
      hlo::MatchParameterComparison(*instr.called_computations()[0], 0, 1, in.shape.element_type());
  if (!select.has_value() || select->type == hlo::ComparisonType::kTotalOrder) {
    return absl::UnimplementedError(
        "select-and-scatter whose select is not compare(parameter(0), parameter(1)) of the "
        "natural comparison type is not supported by the CUDA executor");
  }
  spmd_cuda::SelectWindowParams sel;
  ASSIGN_OR_RETURN(sel.type, DTypeOf(in.shape.element_type()));
  sel.compare_dir = static_cast<int>(select->direction);
  sel.n = source.shape.num_elements();
  std::vector<int64_t> coords;
  ASSIGN_OR_RETURN(sel.geometry, MakeWindowGeometry(instr, in.shape, source.shape, coords));
  spmd_cuda::ScatterParams scatter;
  ASSIGN_OR_RETURN(scatter.op, ReducerOp(*instr.called_computations()[1]));
  const int64_t n_out = out.shape.num_elements();
  const bool narrow = sel.type == spmd_cuda::kBF16 || sel.type == spmd_cuda::kF16;
  scatter.type = narrow ? spmd_cuda::kF32 : sel.type;
  DeviceBuffer wide_out, wide_source, wide_init;
  void* result = out.data;
  const void* updates = source.data;
  const void* init = ctx.operands[2].data;
  if (narrow) {
    ASSIGN_OR_RETURN(wide_out, ctx.executor.Scratch(std::max<int64_t>(n_out, 1) * 4));
    ASSIGN_OR_RETURN(wide_source, ctx.executor.Scratch(std::max<int64_t>(sel.n, 1) * 4));
    ASSIGN_OR_RETURN(wide_init, ctx.executor.Scratch(4));
    RETURN_IF_ERROR(Convert(ctx, init, sel.type, wide_init.data(), spmd_cuda::kF32, 1));
    RETURN_IF_ERROR(Convert(ctx, updates, sel.type, wide_source.data(), spmd_cuda::kF32, sel.n));
    result = wide_out.data();
    updates = wide_source.data();
    init = wide_init.data();
  }
  const hlo::Shape result_shape = hlo::Shape::Array(
      narrow ? hlo::PrimitiveType::kF32 : out.shape.element_type(), out.shape.dimensions());
  RETURN_IF_ERROR(FillWithScalar(ctx.device(), DeviceArray{result, result_shape}, init));
  if (sel.n > 0 && n_out > 0) {
    RETURN_IF_ERROR(ScatterSelected(ctx, sel, coords, scatter, result, n_out, updates));
  }
  return narrow ? Convert(ctx, result, spmd_cuda::kF32, out.data, sel.type, n_out)
                : absl::OkStatus();
}

// topk (the opcode, and the custom-call "TopK": largest first, k from the result) along the
// last dim, as the CPU executor: a stable sort of each row by totalOrder, equal elements by
// lower index; the first k of each row.
absl::Status TopK(OpContext& ctx, bool largest) {
  const hlo::Shape& in = ctx.operands.size() == 1 ? ctx.operands[0].shape : hlo::Shape();
  if (ctx.operands.size() != 1 || ctx.outputs.size() != 2 || in.rank() < 1) {
    return absl::InvalidArgumentError("topk takes one array and returns (values, indices)");
  }
  const hlo::Shape& values = ctx.outputs[0].shape;
  const hlo::Shape& indices = ctx.outputs[1].shape;
  const int64_t rank = in.rank();
  spmd_cuda::TopKParams p;
  p.n = in.dimensions(rank - 1);
  p.k = values.rank() == rank ? values.dimensions(rank - 1) : -1;
  bool ok = values.rank() == rank && indices.dimensions() == values.dimensions() &&
            indices.element_type() == hlo::PrimitiveType::kS32 &&
            values.element_type() == in.element_type() && p.k <= p.n && p.n <= 0x3fffffff;
  for (int64_t d = 0; ok && d + 1 < rank; ++d) ok = values.dimensions(d) == in.dimensions(d);
  if (!ok || (ctx.instr.opcode() == hlo::HloOpcode::kTopK && ctx.instr.attrs().k != p.k)) {
    return absl::InvalidArgumentError(hlo::StrCat("topk: unsupported shapes ", in.ToString(false),
                                                  " -> ", ctx.instr.shape().ToString(false)));
  }
  ASSIGN_OR_RETURN(p.type, DTypeOf(in.element_type()));
  if (p.type == spmd_cuda::kPred) {
    return absl::UnimplementedError("topk of pred is not supported by the CUDA executor");
  }
  p.largest = largest;
  p.rows = p.n == 0 ? 0 : in.num_elements() / p.n;
  p.in = ctx.operands[0].data;
  p.values = ctx.outputs[0].data;
  p.indices = static_cast<int32_t*>(ctx.outputs[1].data);
  if (p.rows == 0 || p.k == 0) return absl::OkStatus();
  return ctx.device().TopK(p);
}

absl::Status HandleTopK(OpContext& ctx) { return TopK(ctx, ctx.instr.attrs().largest); }

// Custom-calls with a meaning of their own on this executor: "TopK".
absl::Status HandleCustomCall(OpContext& ctx) {
  const std::string& target = ctx.instr.attrs().custom_call_target;
  if (target == "TopK") return TopK(ctx, /*largest=*/true);
  return absl::UnimplementedError(
      hlo::StrCat("custom-call target \"", target, "\" is not supported by the CUDA executor"));
}

}  // namespace

void RegisterReduceOps(CudaOpTable& table) {
  table[hlo::HloOpcode::kReduce] = HandleReduce;
  table[hlo::HloOpcode::kReduceWindow] = HandleReduceWindow;
  table[hlo::HloOpcode::kSelectAndScatter] = HandleSelectAndScatter;
  table[hlo::HloOpcode::kTopK] = HandleTopK;
  table[hlo::HloOpcode::kCustomCall] = HandleCustomCall;
}

}  // namespace cuda
}  // namespace runtime

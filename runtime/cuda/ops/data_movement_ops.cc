// broadcast, transpose, slice, dynamic-slice, dynamic-update-slice, pad, concatenate, reverse:
// each is one or a few strided copies (op_util.h) between row-major arrays.
#include <algorithm>

#include "hlo/status_macros.h"
#include "runtime/cpu/ops/strided_index.h"
#include "runtime/cuda/op_registry.h"
#include "runtime/cuda/ops/op_util.h"

namespace runtime {
namespace cuda {
namespace {

using hlo::HloOpcode;

int Width(const DeviceArray& a) { return static_cast<int>(ElementBytes(a.shape)); }

// A copy walking the whole result, row-major on the destination side.
CopySpec OverResult(const DeviceArray& out) {
  CopySpec spec;
  spec.dims = out.shape.dimensions();
  spec.dst_strides = RowMajorStrides(spec.dims);
  spec.src_strides.assign(spec.dims.size(), 0);
  return spec;
}

absl::Status HandleBroadcast(OpContext& ctx) {
  const DeviceArray& in = ctx.operands[0];
  CopySpec spec = OverResult(ctx.outputs[0]);
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape.dimensions());
  const std::vector<int64_t>& dims = ctx.instr.attrs().dimensions;
  for (size_t i = 0; i < dims.size(); ++i) spec.src_strides[dims[i]] = in_strides[i];
  return LaunchCopy(ctx.device(), spec, Width(in), in.data, ctx.outputs[0].data);
}

absl::Status HandleTranspose(OpContext& ctx) {
  const DeviceArray& in = ctx.operands[0];
  CopySpec spec = OverResult(ctx.outputs[0]);
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape.dimensions());
  const std::vector<int64_t>& perm = ctx.instr.attrs().dimensions;
  for (size_t d = 0; d < perm.size(); ++d) spec.src_strides[d] = in_strides[perm[d]];
  return LaunchCopy(ctx.device(), spec, Width(in), in.data, ctx.outputs[0].data);
}

absl::Status HandleReverse(OpContext& ctx) {
  const DeviceArray& in = ctx.operands[0];
  CopySpec spec = OverResult(ctx.outputs[0]);
  spec.src_strides = RowMajorStrides(in.shape.dimensions());
  for (int64_t d : ctx.instr.attrs().dimensions) {
    spec.src_offset += (in.shape.dimensions(d) - 1) * spec.src_strides[d];
    spec.src_strides[d] = -spec.src_strides[d];
  }
  return LaunchCopy(ctx.device(), spec, Width(in), in.data, ctx.outputs[0].data);
}

absl::Status HandleSlice(OpContext& ctx) {
  const DeviceArray& in = ctx.operands[0];
  CopySpec spec = OverResult(ctx.outputs[0]);
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape.dimensions());
  const auto& slices = ctx.instr.attrs().slice_dimensions;
  for (size_t d = 0; d < slices.size(); ++d) {
    spec.src_offset += slices[d].start * in_strides[d];
    spec.src_strides[d] = in_strides[d] * slices[d].stride;
  }
  return LaunchCopy(ctx.device(), spec, Width(in), in.data, ctx.outputs[0].data);
}

// The clamped starts of dynamic-(update-)slice: operands from `first`, window `sizes`.
absl::StatusOr<std::vector<int64_t>> ClampedStarts(OpContext& ctx, size_t first,
                                                   const hlo::Shape& operand,
                                                   const std::vector<int64_t>& sizes) {
  std::vector<int64_t> starts;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    ASSIGN_OR_RETURN(int64_t s, ReadScalarIndex(ctx.device(), ctx.operands[first + d]));
    starts.push_back(std::clamp<int64_t>(s, 0, operand.dimensions(d) - sizes[d]));
  }
  return starts;
}

absl::Status HandleDynamicSlice(OpContext& ctx) {
  const DeviceArray& in = ctx.operands[0];
  const DeviceArray& out = ctx.outputs[0];
  ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                   ClampedStarts(ctx, 1, in.shape, out.shape.dimensions()));
  CopySpec spec = OverResult(out);
  spec.src_strides = RowMajorStrides(in.shape.dimensions());
  for (size_t d = 0; d < starts.size(); ++d) spec.src_offset += starts[d] * spec.src_strides[d];
  return LaunchCopy(ctx.device(), spec, Width(in), in.data, out.data);
}

absl::Status HandleDynamicUpdateSlice(OpContext& ctx) {
  const DeviceArray& in = ctx.operands[0];
  const DeviceArray& update = ctx.operands[1];
  const DeviceArray& out = ctx.outputs[0];
  RETURN_IF_ERROR(ctx.device().CopyOnDevice(out.data, in.data, out.shape.byte_size()));
  ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                   ClampedStarts(ctx, 2, in.shape, update.shape.dimensions()));
  CopySpec spec;
  spec.dims = update.shape.dimensions();
  spec.src_strides = RowMajorStrides(spec.dims);
  spec.dst_strides = RowMajorStrides(out.shape.dimensions());
  for (size_t d = 0; d < starts.size(); ++d) spec.dst_offset += starts[d] * spec.dst_strides[d];
  return LaunchCopy(ctx.device(), spec, Width(in), update.data, out.data);
}

absl::Status HandlePad(OpContext& ctx) {
  const DeviceArray& in = ctx.operands[0];
  const DeviceArray& out = ctx.outputs[0];
  RETURN_IF_ERROR(FillWithScalar(ctx.device(), out, ctx.operands[1].data));
  const auto& pads = ctx.instr.attrs().padding_config->dimensions;
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape.dimensions());
  const std::vector<int64_t> out_strides = RowMajorStrides(out.shape.dimensions());
  CopySpec spec;
  for (int64_t d = 0; d < in.shape.rank(); ++d) {
    const int64_t step = pads[d].interior_padding + 1, low = pads[d].edge_padding_low;
    // Operand elements c land at low + c * step; keep those inside [0, out dim).
    const int64_t first = low >= 0 ? 0 : (-low + step - 1) / step;
    int64_t last = std::min(in.shape.dimensions(d) - 1, (out.shape.dimensions(d) - 1 - low) / step);
    if (out.shape.dimensions(d) - 1 - low < 0) last = -1;
    if (last < first) return absl::OkStatus();  // Nothing of the operand survives.
    spec.dims.push_back(last - first + 1);
    spec.src_strides.push_back(in_strides[d]);
    spec.dst_strides.push_back(out_strides[d] * step);
    spec.src_offset += first * in_strides[d];
    spec.dst_offset += (low + first * step) * out_strides[d];
  }
  return LaunchCopy(ctx.device(), spec, Width(in), in.data, out.data);
}

absl::Status HandleConcatenate(OpContext& ctx) {
  const DeviceArray& out = ctx.outputs[0];
  const int64_t dim = ctx.instr.attrs().dimensions.at(0);
  const std::vector<int64_t> out_strides = RowMajorStrides(out.shape.dimensions());
  int64_t position = 0;
  for (const DeviceArray& in : ctx.operands) {
    CopySpec spec;
    spec.dims = in.shape.dimensions();
    spec.src_strides = RowMajorStrides(spec.dims);
    spec.dst_strides = out_strides;
    spec.dst_offset = position * out_strides[dim];
    RETURN_IF_ERROR(LaunchCopy(ctx.device(), spec, Width(in), in.data, out.data));
    position += in.shape.dimensions(dim);
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterDataMovementOps(CudaOpTable& table) {
  table[HloOpcode::kBroadcast] = HandleBroadcast;
  table[HloOpcode::kTranspose] = HandleTranspose;
  table[HloOpcode::kReverse] = HandleReverse;
  table[HloOpcode::kSlice] = HandleSlice;
  table[HloOpcode::kDynamicSlice] = HandleDynamicSlice;
  table[HloOpcode::kDynamicUpdateSlice] = HandleDynamicUpdateSlice;
  table[HloOpcode::kPad] = HandlePad;
  table[HloOpcode::kConcatenate] = HandleConcatenate;
}

}  // namespace cuda
}  // namespace runtime

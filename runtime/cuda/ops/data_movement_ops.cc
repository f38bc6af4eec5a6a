// broadcast, transpose, slice, dynamic-slice, dynamic-update-slice, pad, concatenate, reverse:
// each is one or a few strided copies (op_util.h) between row-major arrays, along the views and
// placements of runtime/common/strided_view.h (the index maps the CPU executor uses too).
#include <optional>
#include <vector>

#include "hlo/status_macros.h"
#include "runtime/common/strided_view.h"
#include "runtime/cuda/op_registry.h"
#include "runtime/cuda/ops/op_util.h"

namespace runtime {
namespace cuda {
namespace {

using hlo::HloOpcode;

int Width(const DeviceArray& a) { return static_cast<int>(ElementBytes(a.shape)); }

// A copy of the elements `from` selects in the source to those `to` selects in the destination.
CopySpec SpecOf(const StridedView& from, const StridedView& to) {
  return CopySpec{from.sizes, from.strides, to.strides, from.offset, to.offset};
}

// An op whose result reads operand 0 through its strided view (every opcode HasSourceView
// accepts: transpose, broadcast, slice, reverse, ...).
absl::Status HandleSourceView(OpContext& ctx) {
  const DeviceArray& in = ctx.operands[0];
  const DeviceArray& out = ctx.outputs[0];
  const std::optional<StridedView> view = SourceViewOf(ctx.instr);
  if (!view) return absl::InternalError("no strided view for this opcode");
  return LaunchCopy(ctx.device(), SpecOf(*view, ReshapeView(out.shape)), Width(in), in.data,
                    out.data);
}

// The clamped starts of dynamic-(update-)slice: operands from `first`, window `sizes`.
absl::StatusOr<std::vector<int64_t>> ClampedStarts(OpContext& ctx, size_t first,
                                                   const hlo::Shape& operand,
                                                   const std::vector<int64_t>& sizes) {
  std::vector<int64_t> raw;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    ASSIGN_OR_RETURN(int64_t s, ReadScalarIndex(ctx.device(), ctx.operands[first + d]));
    raw.push_back(s);
  }
  return ClampStarts(raw, operand.dimensions(), sizes);
}

absl::Status HandleDynamicSlice(OpContext& ctx) {
  const DeviceArray& in = ctx.operands[0];
  const DeviceArray& out = ctx.outputs[0];
  ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                   ClampedStarts(ctx, 1, in.shape, out.shape.dimensions()));
  const CopySpec spec =
      SpecOf(WindowView(in.shape, starts, out.shape.dimensions()), ReshapeView(out.shape));
  return LaunchCopy(ctx.device(), spec, Width(in), in.data, out.data);
}

// Copies operand `in` into `out` where `placement` puts it.
absl::Status CopyPlaced(OpContext& ctx, const Placement& placement, const DeviceArray& in,
                        const DeviceArray& out) {
  if (placement.empty()) return absl::OkStatus();
  const CopySpec spec = SpecOf(placement.OperandView(in.shape), placement.ResultView(out.shape));
  return LaunchCopy(ctx.device(), spec, Width(in), in.data, out.data);
}

absl::Status HandleDynamicUpdateSlice(OpContext& ctx) {
  const DeviceArray& in = ctx.operands[0];
  const DeviceArray& update = ctx.operands[1];
  const DeviceArray& out = ctx.outputs[0];
  RETURN_IF_ERROR(CopyUnlessInPlace(ctx.device(), in, out));
  ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                   ClampedStarts(ctx, 2, in.shape, update.shape.dimensions()));
  return CopyPlaced(ctx, UpdatePlacement(update.shape, starts), update, out);
}

absl::Status HandlePad(OpContext& ctx) {
  const DeviceArray& in = ctx.operands[0];
  const DeviceArray& out = ctx.outputs[0];
  RETURN_IF_ERROR(FillWithScalar(ctx.device(), out, ctx.operands[1].data));
  return CopyPlaced(ctx, PadPlacement(in.shape, out.shape, *ctx.instr.attrs().padding_config), in,
                    out);
}

absl::Status HandleConcatenate(OpContext& ctx) {
  const DeviceArray& out = ctx.outputs[0];
  std::vector<const hlo::Shape*> shapes;
  for (const DeviceArray& in : ctx.operands) shapes.push_back(&in.shape);
  const std::vector<Placement> placements =
      ConcatenatePlacements(shapes, ctx.instr.attrs().dimensions.at(0));
  for (size_t k = 0; k < placements.size(); ++k) {
    RETURN_IF_ERROR(CopyPlaced(ctx, placements[k], ctx.operands[k], out));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterDataMovementOps(CudaOpTable& table) {
  // Every op with a strided view (reshape too, though the executor aliases it before lookup).
  for (HloOpcode opcode : SourceViewOpcodes()) table[opcode] = HandleSourceView;
  table[HloOpcode::kDynamicSlice] = HandleDynamicSlice;
  table[HloOpcode::kDynamicUpdateSlice] = HandleDynamicUpdateSlice;
  table[HloOpcode::kPad] = HandlePad;
  table[HloOpcode::kConcatenate] = HandleConcatenate;
}

}  // namespace cuda
}  // namespace runtime

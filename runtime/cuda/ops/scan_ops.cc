// scan (hlo/ir/scan_attributes.h) on the CUDA executor: the body runs once per position of the
// scanned dim d (last to first when reversed) on the inputs' slices there, copied into scratch
// buffers, and the carries, which live in the result's carry leaves; each step's outputs are
// copied into their position of the stacked outputs and its new carries over the old. The
// same meaning as the CPU executor's (runtime/cpu/ops/scan_ops.cc), which the differential
// tests compare it with.
#include <vector>

#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/scan_attributes.h"
#include "hlo/status_macros.h"
#include "runtime/common/strided_view.h"
#include "runtime/cuda/ops/op_util.h"

namespace runtime {
namespace cuda {
namespace {

using hlo::Shape;

// `shape` with dim `d` of size one: a slice at one position, as the stacked array's rank.
Shape OnePosition(const Shape& shape, int64_t d) {
  std::vector<int64_t> dims = shape.dimensions();
  dims[d] = 1;
  return Shape::Array(shape.element_type(), dims);
}

// The window of `shape` at position `i` of dim `d`.
StridedView PositionView(const Shape& shape, int64_t d, int64_t i) {
  std::vector<int64_t> starts(shape.rank(), 0);
  starts[d] = i;
  return WindowView(shape, starts, OnePosition(shape, d).dimensions());
}

CopySpec Between(const StridedView& from, const StridedView& to) {
  return CopySpec{from.sizes, from.strides, to.strides, from.offset, to.offset};
}

absl::Status HandleScan(OpContext& ctx) {
  ASSIGN_OR_RETURN(const hlo::ScanAttributes attrs, hlo::ReadScanAttributes(ctx.instr));
  const int64_t d = attrs.dimension;
  const int64_t carries = attrs.num_carries;
  const int64_t inputs = static_cast<int64_t>(ctx.operands.size()) - carries;
  const int64_t outputs = static_cast<int64_t>(ctx.outputs.size()) - carries;
  if (inputs < 1 || outputs < 0 || ctx.instr.to_apply() == nullptr) {
    return absl::InvalidArgumentError("scan needs an input, a body and its carries");
  }
  const hlo::HloComputation& body = *ctx.instr.to_apply();
  DeviceApi& device = ctx.device();
  // The carries start as the inits, in the result's carry leaves.
  for (int64_t k = 0; k < carries; ++k) {
    const DeviceArray& carry = ctx.outputs[outputs + k];
    RETURN_IF_ERROR(
        device.CopyOnDevice(carry.data, ctx.operands[inputs + k].data, carry.shape.byte_size()));
  }
  std::vector<DeviceBuffer> slices;
  std::vector<DeviceValue> params;
  for (int64_t k = 0; k < inputs; ++k) {
    const Shape& input = ctx.operands[k].shape;
    std::vector<int64_t> dims = input.dimensions();
    dims.erase(dims.begin() + d);
    const Shape slice = Shape::Array(input.element_type(), dims);
    ASSIGN_OR_RETURN(DeviceBuffer buffer, ctx.executor.Scratch(slice.byte_size()));
    params.push_back({slice, {{buffer.data(), slice}}});
    slices.push_back(std::move(buffer));
  }
  for (int64_t k = 0; k < carries; ++k) {
    const DeviceArray& carry = ctx.outputs[outputs + k];
    params.push_back({carry.shape, {carry}});
  }
  const int64_t length = ctx.operands[0].shape.dimensions(d);
  for (int64_t step = 0; step < length; ++step) {
    const int64_t i = attrs.reverse ? length - 1 - step : step;
    for (int64_t k = 0; k < inputs; ++k) {
      const DeviceArray& input = ctx.operands[k];
      RETURN_IF_ERROR(LaunchCopy(
          device,
          Between(PositionView(input.shape, d, i), ReshapeView(OnePosition(input.shape, d))),
          static_cast<int>(ElementBytes(input.shape)), input.data, slices[k].data()));
    }
    ASSIGN_OR_RETURN(OwnedValue step_result, ctx.executor.Execute(body, params));
    const std::vector<DeviceArray>& leaves = step_result.value.leaves;
    if (static_cast<int64_t>(leaves.size()) != outputs + carries) {
      return absl::InvalidArgumentError("scan body returns the wrong number of values");
    }
    for (int64_t j = 0; j < outputs; ++j) {
      const DeviceArray& out = ctx.outputs[j];
      RETURN_IF_ERROR(LaunchCopy(
          device, Between(ReshapeView(OnePosition(out.shape, d)), PositionView(out.shape, d, i)),
          static_cast<int>(ElementBytes(out.shape)), leaves[j].data, out.data));
    }
    for (int64_t k = 0; k < carries; ++k) {
      const DeviceArray& carry = ctx.outputs[outputs + k];
      RETURN_IF_ERROR(
          device.CopyOnDevice(carry.data, leaves[outputs + k].data, carry.shape.byte_size()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterScanOps(CudaOpTable& table) { table[hlo::HloOpcode::kScan] = &HandleScan; }

}  // namespace cuda
}  // namespace runtime

// gather and scatter with XLA's dimension numbers (semantics as runtime/cpu/ops/
// gather_scatter_ops.cc): the host builds an IndexedAccess that maps each element of the walked
// array (gather's output, scatter's updates) to its operand element; the kernel reads the index
// vector per element. Scatter copies the operand to the result, then combines the updates in
// index order, duplicates too (deterministic: kernels.cu LaunchScatter sorts them by target);
// a window that does not fit at its start is skipped.
// Scatter with several operands fails clearly.
#include <algorithm>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/strided_index.h"
#include "runtime/cuda/op_registry.h"
#include "runtime/cuda/ops/op_util.h"

namespace runtime {
namespace cuda {
namespace {

namespace k = spmd_cuda;

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

struct AccessSpec {
  const hlo::Shape* walked;            // Gather output / scatter updates.
  const std::vector<int64_t>* window_dims;  // offset_dims / update_window_dims.
  const std::vector<int64_t>* removed;      // collapsed / inserted window dims.
  const std::vector<int64_t>* start_index_map;
  const std::vector<int64_t>* operand_batching;
  const std::vector<int64_t>* indices_batching;
  int64_t index_vector_dim;
};

absl::StatusOr<k::IndexedAccess> MakeAccess(const AccessSpec& s, const DeviceArray& operand,
                                            const DeviceArray& indices) {
  k::IndexedAccess a;
  const hlo::Shape& op = operand.shape;
  const hlo::Shape& ix = indices.shape;
  if (s.walked->rank() > k::kMaxRank || op.rank() > k::kMaxRank || ix.rank() > k::kMaxRank) {
    return absl::UnimplementedError("gather/scatter of too high a rank for the CUDA kernels");
  }
  ASSIGN_OR_RETURN(a.index_type, DTypeOf(ix.element_type()));
  a.indices = indices.data;
  const std::vector<int64_t> ix_strides = RowMajorStrides(ix.dimensions());
  a.vector_stride = s.index_vector_dim == ix.rank() ? 0 : ix_strides[s.index_vector_dim];
  int num_batch = 0;
  std::vector<int64_t> batch_strides;
  for (int64_t d = 0; d < ix.rank(); ++d) {
    if (d != s.index_vector_dim) batch_strides.push_back(ix_strides[d]);
  }
  // Operand dims the window walks: not removed, not batching, increasing.
  std::vector<int64_t> walk;
  for (int64_t d = 0; d < op.rank(); ++d) {
    if (!Contains(*s.removed, d) && !Contains(*s.operand_batching, d)) walk.push_back(d);
  }
  a.rank = static_cast<int>(s.walked->rank());
  size_t next_window = 0;
  for (int64_t d = 0; d < s.walked->rank(); ++d) {
    a.dims[d] = s.walked->dimensions(d);
    if (Contains(*s.window_dims, d)) {
      if (next_window >= walk.size()) return absl::InvalidArgumentError("too many window dims");
      a.batch_pos[d] = -1;
      a.operand_dim[d] = static_cast<int>(walk[next_window++]);
    } else {
      if (num_batch >= static_cast<int>(batch_strides.size())) {
        return absl::InvalidArgumentError("batch dimensions do not match the indices");
      }
      a.batch_pos[d] = num_batch;
      a.batch_strides[num_batch] = batch_strides[num_batch];
      a.operand_dim[d] = -1;
      ++num_batch;
    }
  }
  a.num_index = static_cast<int>(s.start_index_map->size());
  for (int i = 0; i < a.num_index; ++i) a.start_index_map[i] = (*s.start_index_map)[i];
  a.num_batching = static_cast<int>(s.operand_batching->size());
  for (int i = 0; i < a.num_batching; ++i) {
    const int64_t d = (*s.indices_batching)[i];
    a.operand_batching[i] = static_cast<int>((*s.operand_batching)[i]);
    a.batching_position[i] = static_cast<int>(d < s.index_vector_dim ? d : d - 1);
  }
  a.operand_rank = static_cast<int>(op.rank());
  const std::vector<int64_t> op_strides = RowMajorStrides(op.dimensions());
  for (int64_t d = 0; d < op.rank(); ++d) {
    a.operand_dims[d] = op.dimensions(d);
    a.operand_strides[d] = op_strides[d];
    a.window[d] = 1;
  }
  for (int64_t d = 0; d < s.walked->rank(); ++d) {
    if (a.operand_dim[d] >= 0) a.window[a.operand_dim[d]] = s.walked->dimensions(d);
  }
  return a;
}

absl::Status HandleGather(OpContext& ctx) {
  const hlo::GatherDimensionNumbers& g = *ctx.instr.attrs().gather_dimension_numbers;
  const DeviceArray& out = ctx.outputs[0];
  AccessSpec spec{&out.shape, &g.offset_dims, &g.collapsed_slice_dims, &g.start_index_map,
                  &g.operand_batching_dims, &g.start_indices_batching_dims, g.index_vector_dim};
  k::GatherParams p;
  ASSIGN_OR_RETURN(p.access, MakeAccess(spec, ctx.operands[0], ctx.operands[1]));
  // Clamping uses the slice sizes, which may exceed the window on collapsed dims (size 1).
  const std::vector<int64_t>& sizes = ctx.instr.attrs().gather_slice_sizes;
  for (size_t d = 0; d < sizes.size(); ++d) p.access.window[d] = sizes[d];
  p.elem_bytes = static_cast<int>(ElementBytes(out.shape));
  p.operand = ctx.operands[0].data;
  p.out = out.data;
  p.n = out.shape.num_elements();
  if (p.n == 0) return absl::OkStatus();
  return ctx.device().Gather(p);
}

absl::Status HandleScatter(OpContext& ctx) {
  if (ctx.operands.size() != 3) {
    return absl::UnimplementedError(
        "scatter with several operands is not supported by the CUDA executor");
  }
  const hlo::ScatterDimensionNumbers& s = *ctx.instr.attrs().scatter_dimension_numbers;
  const DeviceArray& operand = ctx.operands[0];
  const DeviceArray& updates = ctx.operands[2];
  const DeviceArray& out = ctx.outputs[0];
  AccessSpec spec{&updates.shape, &s.update_window_dims, &s.inserted_window_dims,
                  &s.scatter_dims_to_operand_dims, &s.input_batching_dims,
                  &s.scatter_indices_batching_dims, s.index_vector_dim};
  k::ScatterParams p;
  ASSIGN_OR_RETURN(p.access, MakeAccess(spec, operand, ctx.operands[1]));
  ASSIGN_OR_RETURN(p.type, DTypeOf(out.shape.element_type()));
  ASSIGN_OR_RETURN(p.op, ReducerOp(*ctx.instr.to_apply(), /*allow_assign=*/true));
  p.updates = updates.data;
  p.out = out.data;
  p.n = updates.shape.num_elements();
  RETURN_IF_ERROR(CopyUnlessInPlace(ctx.device(), operand, out));
  if (p.n == 0) return absl::OkStatus();
  return ctx.device().Scatter(p);
}

}  // namespace

void RegisterGatherScatterOps(CudaOpTable& table) {
  table[hlo::HloOpcode::kGather] = HandleGather;
  table[hlo::HloOpcode::kScatter] = HandleScatter;
}

}  // namespace cuda
}  // namespace runtime

// Index arithmetic of gather and scatter (gather_scatter_ops.cc), shared with the point
// evaluator (point_ops_indexed.cc) so that both read index vectors, clamp gather starts and
// drop scatter windows the same way. The semantics are described at the top of
// gather_scatter_ops.cc.
#ifndef RUNTIME_CPU_OPS_GATHER_SCATTER_GEOMETRY_H_
#define RUNTIME_CPU_OPS_GATHER_SCATTER_GEOMETRY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/status_macros.h"
#include "runtime/common/strided_index.h"

namespace runtime {

// How a batch position finds its window start in the operand.
struct IndexMapping {
  std::vector<int64_t> batch_bounds;       // Indices dimensions without index_vector_dim.
  std::vector<int64_t> batch_strides;      // Their strides in the indices array.
  int64_t vector_stride = 0;               // Stride of index_vector_dim (0 if implicit).
  std::vector<int64_t> start_index_map;    // Operand dimension of each index vector entry.
  std::vector<int64_t> operand_batching;   // Operand batching dimensions...
  std::vector<int64_t> batching_position;  // ...and the batch coordinate each one copies.
};

// Index element `i` of `indices` as a signed value (huge unsigned values saturate).
int64_t ReadIndex(const hlo::Literal& indices, int64_t i);

// The operand start of the batch position at `batch_index` (index vector at `offset` of
// `indices`, its entries m.vector_stride apart), unclamped.
void WindowStart(const IndexMapping& m, const hlo::Literal& indices, int64_t offset,
                 const std::vector<int64_t>& batch_index, std::vector<int64_t>& start);

// A gather's geometry: checked against the operand and indices shapes.
struct GatherPlan {
  IndexMapping mapping;
  std::vector<int64_t> batch_dims;   // Output dims that are batch positions, increasing.
  std::vector<int64_t> window_dims;  // Operand dims the offset_dims walk, increasing.
};

absl::StatusOr<GatherPlan> PlanGather(const hlo::HloInstruction& instr, const hlo::Shape& operand,
                                      const hlo::Shape& indices);

// Offsets of each window element: in the operand and in the array whose window dims walk the
// operand's window dims (.other), row-major window order.
struct WindowOffsets {
  std::vector<int64_t> operand, other;
};

struct ScatterPlan {
  IndexMapping mapping;
  WindowOffsets window;  // .operand: in the inputs; .other: in the updates (if asked for).
  std::vector<int64_t> operand_dims, operand_strides;
  std::vector<int64_t> window_dims;     // Operand dims update_window_dims walk, increasing.
  std::vector<int64_t> extent;          // Window size per operand dimension.
  std::vector<int64_t> update_strides;  // Updates strides of the batch (scatter) dimensions.
};

absl::StatusOr<ScatterPlan> PlanScatter(const hlo::HloInstruction& instr, const hlo::Shape& operand,
                                        const hlo::Shape& indices, const hlo::Shape& updates,
                                        bool window_offsets = true);

// Calls f(start, updates_offset) (-> absl::Status) for each window that fits inside the
// operand, in row-major batch order: `start` is the window's operand start, `updates_offset`
// the updates offset of its first element. Windows that do not fit are dropped.
template <typename F>
absl::Status ForEachScatterStart(const ScatterPlan& p, const hlo::Literal& indices, F&& f) {
  std::vector<int64_t> start(p.operand_dims.size());
  const IndexMapping& m = p.mapping;
  for (StridedCounter c(m.batch_bounds, {m.batch_strides, p.update_strides}); !c.done(); c.Next()) {
    WindowStart(m, indices, c.offset(0), c.index(), start);
    bool fits = true;
    for (size_t d = 0; d < start.size() && fits; ++d) {
      fits = start[d] >= 0 && start[d] <= p.operand_dims[d] - p.extent[d];
    }
    if (fits) RETURN_IF_ERROR(f(start, c.offset(1)));
  }
  return absl::OkStatus();
}

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_GATHER_SCATTER_GEOMETRY_H_

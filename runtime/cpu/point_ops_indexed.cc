// gather and scatter in the point evaluator (point_evaluator.h), with the executor's index
// arithmetic (ops/gather_scatter_geometry.h).
//
// gather: an asked element reads its batch position's index vector, clamps the start as the
// executor does and moves one operand element.
// scatter: an asked element of result k is input k's element combined with every update that
// lands on it. All index vectors are read; each window that fits (ForEachScatterStart, the
// executor's loop) is matched against the asked elements -- by a hash on the dimensions where a
// window is one element wide, so a scatter of many rows costs one pass -- and the updates that
// land, in the executor's order, feed a synthetic one-dimensional scatter of the asked elements
// run by the executor's own handler (combiner and variadic bodies included).
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "hlo/ir/primitive_type.h"
#include "hlo/status_macros.h"
#include "runtime/cpu/ops/gather_scatter_geometry.h"
#include "runtime/cpu/point_elements.h"
#include "runtime/cpu/point_ops.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using hlo::Shape;
using points::Frame;
using points::Source;

// The batch coordinates (IndexMapping order) of output or updates index `o`.
void BatchIndex(const int64_t* o, const std::vector<int64_t>& batch_dims,
                std::vector<int64_t>& batch) {
  for (size_t i = 0; i < batch_dims.size(); ++i) batch[i] = o[batch_dims[i]];
}

int64_t BatchOffset(const IndexMapping& m, const std::vector<int64_t>& batch) {
  int64_t offset = 0;
  for (size_t i = 0; i < batch.size(); ++i) offset += batch[i] * m.batch_strides[i];
  return offset;
}

// Updates that land on asked elements: asked element `asked` takes updates element `update`.
struct Landing {
  int64_t asked;
  int64_t update;
};

// The updates landing on the asked elements `indices` of a scatter planned as `plan`, in the
// executor's order, from the whole index array `index_values`.
absl::StatusOr<std::vector<Landing>> Landings(const HloInstruction& instr, const ScatterPlan& plan,
                                              const Literal& index_values, const Shape& updates,
                                              absl::Span<const int64_t> indices) {
  const hlo::ScatterDimensionNumbers& dn = *instr.attrs().scatter_dimension_numbers;
  const int64_t rank = static_cast<int64_t>(plan.operand_dims.size());
  std::vector<int64_t> point_dims;  // Dims where a window is one element wide.
  for (int64_t d = 0; d < rank; ++d) {
    if (plan.extent[d] == 1) point_dims.push_back(d);
  }
  std::vector<int64_t> asked(indices.size() * rank);
  absl::flat_hash_map<std::vector<int64_t>, std::vector<int64_t>> by_point;
  std::vector<int64_t> key(point_dims.size());
  for (size_t e = 0; e < indices.size(); ++e) {
    int64_t* p = asked.data() + e * rank;
    points::Unravel(indices[e], plan.operand_dims, p);
    for (size_t i = 0; i < point_dims.size(); ++i) key[i] = p[point_dims[i]];
    by_point[key].push_back(static_cast<int64_t>(e));
  }
  const std::vector<int64_t> window_strides =
      PermuteStrides(RowMajorStrides(updates.dimensions()), dn.update_window_dims);
  std::vector<Landing> landings;
  RETURN_IF_ERROR(ForEachScatterStart(
      plan, index_values, [&](const std::vector<int64_t>& start, int64_t update) {
        for (size_t i = 0; i < point_dims.size(); ++i) key[i] = start[point_dims[i]];
        const auto found = by_point.find(key);
        if (found == by_point.end()) return absl::OkStatus();
        for (int64_t e : found->second) {
          const int64_t* p = asked.data() + e * rank;
          bool inside = true;
          for (int64_t d = 0; d < rank && inside; ++d) {
            inside = p[d] >= start[d] && p[d] < start[d] + plan.extent[d];
          }
          if (!inside) continue;
          int64_t at = update;
          for (size_t i = 0; i < plan.window_dims.size(); ++i) {
            const int64_t d = plan.window_dims[i];
            at += (p[d] - start[d]) * window_strides[i];
          }
          landings.push_back({e, at});
        }
        return absl::OkStatus();
      }));
  return landings;
}

}  // namespace

absl::StatusOr<Literal> PointOps::Gather(PointEvaluator& ev, const HloInstruction& instr,
                                         const Frame* frame, absl::Span<const int64_t> indices) {
  const HloInstruction& operand = *instr.operand(0);
  const HloInstruction& starts = *instr.operand(1);
  ASSIGN_OR_RETURN(GatherPlan plan, PlanGather(instr, operand.shape(), starts.shape()));
  const hlo::GatherDimensionNumbers& dn = *instr.attrs().gather_dimension_numbers;
  const std::vector<int64_t>& slice = instr.attrs().gather_slice_sizes;
  const Shape& out = instr.shape();
  const int64_t n = static_cast<int64_t>(indices.size());
  // The asked elements' index vectors, packed one after another.
  IndexMapping packed = plan.mapping;
  packed.vector_stride = 1;
  const int64_t length = static_cast<int64_t>(packed.start_index_map.size());
  std::vector<int64_t> o(out.rank()), batch(plan.batch_dims.size()), vector_at;
  vector_at.reserve(n * length);
  for (int64_t e = 0; e < n; ++e) {
    points::Unravel(indices[e], out.dimensions(), o.data());
    BatchIndex(o.data(), plan.batch_dims, batch);
    const int64_t base = BatchOffset(plan.mapping, batch);
    for (int64_t k = 0; k < length; ++k) vector_at.push_back(base + k * plan.mapping.vector_stride);
  }
  ASSIGN_OR_RETURN(Literal vectors, ev.Get(starts, 0, frame, vector_at));
  std::vector<Source> sources(n);
  std::vector<int64_t> start(operand.shape().rank());
  for (int64_t e = 0; e < n; ++e) {
    points::Unravel(indices[e], out.dimensions(), o.data());
    BatchIndex(o.data(), plan.batch_dims, batch);
    WindowStart(packed, vectors, e * length, batch, start);
    for (size_t d = 0; d < start.size(); ++d) {
      start[d] = std::clamp<int64_t>(start[d], 0, operand.shape().dimensions(d) - slice[d]);
    }
    for (size_t i = 0; i < plan.window_dims.size(); ++i) {
      start[plan.window_dims[i]] += o[dn.offset_dims[i]];
    }
    sources[e] =
        Source{&operand, 0, frame, points::Ravel(start.data(), operand.shape().dimensions())};
  }
  return Fetch(ev, out.element_type(), sources);
}

absl::StatusOr<Literal> PointOps::Scatter(PointEvaluator& ev, const HloInstruction& instr,
                                          int64_t leaf, const Frame* frame,
                                          absl::Span<const int64_t> indices) {
  const int64_t inputs = instr.operand_count() / 2;
  const HloInstruction& index_array = *instr.operand(inputs);
  const Shape& updates = instr.operand(inputs + 1)->shape();
  ASSIGN_OR_RETURN(ScatterPlan plan,
                   PlanScatter(instr, instr.operand(0)->shape(), index_array.shape(), updates,
                               /*window_offsets=*/false));
  ASSIGN_OR_RETURN(const Literal* index_values, ev.GetAll(index_array, 0, frame));
  ASSIGN_OR_RETURN(std::vector<Landing> landings,
                   Landings(instr, plan, *index_values, updates, indices));
  if (landings.empty()) return ev.Get(*instr.operand(leaf), 0, frame, indices);
  // A scatter of the asked elements ([n]) by the landing updates ([m]), one element each.
  const int64_t m = static_cast<int64_t>(landings.size());
  std::vector<Literal> operands;
  for (int64_t j = 0; j < inputs; ++j) {
    ASSIGN_OR_RETURN(Literal values, ev.Get(*instr.operand(j), 0, frame, indices));
    operands.push_back(std::move(values));
  }
  Literal targets(Shape::Array(hlo::PrimitiveType::kS64, {m, 1}));
  std::vector<int64_t> update_at(m);
  for (int64_t i = 0; i < m; ++i) {
    targets.SetInt(i, landings[i].asked);
    update_at[i] = landings[i].update;
  }
  operands.push_back(std::move(targets));
  for (int64_t j = 0; j < inputs; ++j) {
    ASSIGN_OR_RETURN(Literal values, ev.Get(*instr.operand(inputs + 1 + j), 0, frame, update_at));
    operands.push_back(std::move(values));
  }
  std::vector<const Literal*> pointers;
  std::vector<Shape> results;
  for (const Literal& l : operands) pointers.push_back(&l);
  for (int64_t j = 0; j < inputs; ++j) results.push_back(operands[j].shape());
  points::Synthetic synthetic;
  HloInstruction* made =
      synthetic.Like(instr, inputs == 1 ? results[0] : Shape::Tuple(results), pointers);
  made->mutable_attrs()->scatter_dimension_numbers = hlo::ScatterDimensionNumbers{{}, {0}, {0}, 1};
  ASSIGN_OR_RETURN(Literal value, RunHandler(ev, *made, pointers));
  if (inputs == 1) return value;
  return std::move((*value.mutable_tuple_elements())[leaf]);
}

}  // namespace runtime

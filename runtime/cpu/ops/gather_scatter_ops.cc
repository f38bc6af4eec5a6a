// gather and scatter with XLA's dimension numbers.
//
// Both ops pair "batch positions" with windows of the operand. The batch positions are the
// indices array's coordinates without index_vector_dim (an index_vector_dim equal to the rank
// means each index vector is one scalar); they are also the output's (gather) or the updates'
// (scatter) dimensions that are not window dimensions, in increasing order. At each batch
// position the index vector gives the window's start in the operand dimensions
// start_index_map / scatter_dims_to_operand_dims, and each operand batching dimension starts at
// the batch coordinate of its paired indices batching dimension; all other starts are 0.
//
// gather: starts are clamped so that the slice (slice_sizes) lies inside the operand; the
// output's offset_dims walk the operand dimensions that are neither collapsed nor batching,
// in increasing order.
// scatter: the operands are copied to the results; the updates' update_window_dims walk the
// operand dimensions that are neither inserted nor batching; a window that does not fit inside
// the operand at its start is skipped whole (as XLA's evaluator and backends do); otherwise
// each element is combined, in row-major update order, as
// result = to_apply(result..., update...). An add/multiply/maximum/minimum/and/or or assign body
// with one operand runs as a typed loop; any other body is called per element.
//
// Both precompute, once, the offsets of every window element in the operand and in the
// output/updates, so each batch position costs one index-vector read plus a flat copy loop.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/strided_index.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/op_registry.h"
#include "runtime/cpu/ops/gather_scatter_geometry.h"
#include "runtime/cpu/ops/scalar_computation.h"
#include "runtime/cpu/ops/strided_copy.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

absl::Status InvalidArgument(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

absl::Status CheckDims(absl::Span<const int64_t> dims, int64_t rank, std::string_view what) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) {
      return InvalidArgument(hlo::StrCat(what, " holds ", d, ": out of range or repeated"));
    }
    seen[d] = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<IndexMapping> MakeIndexMapping(const Shape& indices, const Shape& operand,
                                              int64_t index_vector_dim,
                                              const std::vector<int64_t>& start_index_map,
                                              const std::vector<int64_t>& operand_batching,
                                              const std::vector<int64_t>& indices_batching) {
  const int64_t rank = indices.rank();
  if (!hlo::IsIntegralType(indices.element_type()) || index_vector_dim < 0 ||
      index_vector_dim > rank) {
    return InvalidArgument("indices must be an integer array and index_vector_dim <= its rank");
  }
  const int64_t vector_size = index_vector_dim == rank ? 1 : indices.dimensions(index_vector_dim);
  RETURN_IF_ERROR(CheckDims(start_index_map, operand.rank(), "the start index map"));
  RETURN_IF_ERROR(CheckDims(operand_batching, operand.rank(), "the operand batching dims"));
  if (static_cast<int64_t>(start_index_map.size()) != vector_size ||
      operand_batching.size() != indices_batching.size()) {
    return InvalidArgument(
        "the index vector size must match the start index map, and the "
        "operand and indices batching dims must pair up");
  }
  IndexMapping m;
  const std::vector<int64_t> strides = RowMajorStrides(indices.dimensions());
  m.vector_stride = index_vector_dim == rank ? 0 : strides[index_vector_dim];
  for (int64_t d = 0; d < rank; ++d) {
    if (d == index_vector_dim) continue;
    m.batch_bounds.push_back(indices.dimensions(d));
    m.batch_strides.push_back(strides[d]);
  }
  m.start_index_map = start_index_map;
  m.operand_batching = operand_batching;
  for (size_t i = 0; i < indices_batching.size(); ++i) {
    const int64_t d = indices_batching[i];
    if (d < 0 || d >= rank || d == index_vector_dim ||
        indices.dimensions(d) != operand.dimensions(operand_batching[i])) {
      return InvalidArgument(hlo::StrCat("indices batching dimension ", d,
                                         " is invalid or differs in size from its operand "
                                         "batching dimension"));
    }
    m.batching_position.push_back(d < index_vector_dim ? d : d - 1);
  }
  return m;
}

// Operand dimensions that windows walk: not in `removed_a` nor `removed_b`, increasing.
std::vector<int64_t> WindowOperandDims(int64_t rank, const std::vector<int64_t>& removed_a,
                                       const std::vector<int64_t>& removed_b) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(removed_a.begin(), removed_a.end(), d) == removed_a.end() &&
        std::find(removed_b.begin(), removed_b.end(), d) == removed_b.end()) {
      dims.push_back(d);
    }
  }
  return dims;
}

// Dimensions of `rank` not listed in `window_dims` (which is checked), increasing.
absl::StatusOr<std::vector<int64_t>> BatchDims(int64_t rank,
                                               const std::vector<int64_t>& window_dims) {
  RETURN_IF_ERROR(CheckDims(window_dims, rank, "the window dimension list"));
  return WindowOperandDims(rank, window_dims, {});
}

WindowOffsets MakeWindowOffsets(const Shape& operand, const Shape& other,
                                const std::vector<int64_t>& operand_dims,
                                const std::vector<int64_t>& window_dims) {
  std::vector<int64_t> bounds;
  for (int64_t d : window_dims) bounds.push_back(other.dimensions(d));
  WindowOffsets w;
  std::vector<int64_t> op_strides =
      PermuteStrides(RowMajorStrides(operand.dimensions()), operand_dims);
  std::vector<int64_t> other_strides =
      PermuteStrides(RowMajorStrides(other.dimensions()), window_dims);
  for (StridedCounter c(bounds, {op_strides, other_strides}); !c.done(); c.Next()) {
    w.operand.push_back(c.offset(0));
    w.other.push_back(c.offset(1));
  }
  return w;
}

absl::Status CheckGatherShapes(const HloInstruction& instr, const Shape& operand,
                               const IndexMapping& m, const std::vector<int64_t>& batch_dims,
                               const std::vector<int64_t>& window_operand_dims) {
  const hlo::GatherDimensionNumbers& dn = *instr.attrs().gather_dimension_numbers;
  const std::vector<int64_t>& slice = instr.attrs().gather_slice_sizes;
  const Shape& out = instr.shape();
  bool ok = out.element_type() == operand.element_type() &&
            static_cast<int64_t>(slice.size()) == operand.rank() &&
            batch_dims.size() == m.batch_bounds.size() &&
            window_operand_dims.size() == dn.offset_dims.size();
  for (size_t d = 0; ok && d < slice.size(); ++d) {
    const bool walked = std::find(window_operand_dims.begin(), window_operand_dims.end(),
                                  static_cast<int64_t>(d)) != window_operand_dims.end();
    ok = slice[d] >= 0 && slice[d] <= operand.dimensions(d) && (walked || slice[d] == 1);
  }
  for (size_t i = 0; ok && i < batch_dims.size(); ++i) {
    ok = out.dimensions(batch_dims[i]) == m.batch_bounds[i];
  }
  for (size_t i = 0; ok && i < window_operand_dims.size(); ++i) {
    ok = out.dimensions(dn.offset_dims[i]) == slice[window_operand_dims[i]];
  }
  if (!ok) {
    return InvalidArgument(hlo::StrCat("gather result ", out.ToString(), " does not match operand ",
                                       operand.ToString(), ", the indices and the slice sizes"));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t ReadIndex(const Literal& indices, int64_t i) {
  if (hlo::IsUnsignedIntegralType(indices.shape().element_type())) {
    return static_cast<int64_t>(
        std::min<uint64_t>(indices.GetUint(i), std::numeric_limits<int64_t>::max()));
  }
  return indices.GetInt(i);
}

void WindowStart(const IndexMapping& m, const Literal& indices, int64_t offset,
                 const std::vector<int64_t>& batch_index, std::vector<int64_t>& start) {
  std::fill(start.begin(), start.end(), 0);
  for (size_t k = 0; k < m.start_index_map.size(); ++k) {
    start[m.start_index_map[k]] = ReadIndex(indices, offset + k * m.vector_stride);
  }
  for (size_t k = 0; k < m.operand_batching.size(); ++k) {
    start[m.operand_batching[k]] = batch_index[m.batching_position[k]];
  }
}

absl::StatusOr<GatherPlan> PlanGather(const HloInstruction& instr, const Shape& operand,
                                      const Shape& indices) {
  if (!instr.attrs().gather_dimension_numbers.has_value()) {
    return InvalidArgument("gather needs dimension numbers");
  }
  const hlo::GatherDimensionNumbers& dn = *instr.attrs().gather_dimension_numbers;
  GatherPlan p;
  ASSIGN_OR_RETURN(p.mapping,
                   MakeIndexMapping(indices, operand, dn.index_vector_dim, dn.start_index_map,
                                    dn.operand_batching_dims, dn.start_indices_batching_dims));
  RETURN_IF_ERROR(CheckDims(dn.collapsed_slice_dims, operand.rank(), "collapsed_slice_dims"));
  ASSIGN_OR_RETURN(p.batch_dims, BatchDims(instr.shape().rank(), dn.offset_dims));
  p.window_dims =
      WindowOperandDims(operand.rank(), dn.collapsed_slice_dims, dn.operand_batching_dims);
  RETURN_IF_ERROR(CheckGatherShapes(instr, operand, p.mapping, p.batch_dims, p.window_dims));
  return p;
}

absl::StatusOr<ScatterPlan> PlanScatter(const HloInstruction& instr, const Shape& operand,
                                        const Shape& indices, const Shape& updates,
                                        bool window_offsets) {
  if (!instr.attrs().scatter_dimension_numbers.has_value()) {
    return InvalidArgument("scatter needs dimension numbers");
  }
  const hlo::ScatterDimensionNumbers& dn = *instr.attrs().scatter_dimension_numbers;
  ScatterPlan p;
  ASSIGN_OR_RETURN(
      p.mapping,
      MakeIndexMapping(indices, operand, dn.index_vector_dim, dn.scatter_dims_to_operand_dims,
                       dn.input_batching_dims, dn.scatter_indices_batching_dims));
  RETURN_IF_ERROR(CheckDims(dn.inserted_window_dims, operand.rank(), "inserted_window_dims"));
  ASSIGN_OR_RETURN(std::vector<int64_t> scatter_dims,
                   BatchDims(updates.rank(), dn.update_window_dims));
  p.window_dims =
      WindowOperandDims(operand.rank(), dn.inserted_window_dims, dn.input_batching_dims);
  const std::vector<int64_t>& window_dims = p.window_dims;
  bool ok = window_dims.size() == dn.update_window_dims.size() &&
            scatter_dims.size() == p.mapping.batch_bounds.size();
  for (size_t i = 0; ok && i < scatter_dims.size(); ++i) {
    ok = updates.dimensions(scatter_dims[i]) == p.mapping.batch_bounds[i];
  }
  if (!ok) {
    return InvalidArgument(hlo::StrCat("scatter updates ", updates.ToString(), " do not match ",
                                       "operand ", operand.ToString(), " and the indices"));
  }
  p.operand_dims = operand.dimensions();
  p.operand_strides = RowMajorStrides(operand.dimensions());
  p.extent.assign(operand.rank(), 1);
  for (size_t i = 0; i < window_dims.size(); ++i) {
    p.extent[window_dims[i]] = updates.dimensions(dn.update_window_dims[i]);
  }
  if (window_offsets) {
    p.window = MakeWindowOffsets(operand, updates, window_dims, dn.update_window_dims);
  }
  p.update_strides = PermuteStrides(RowMajorStrides(updates.dimensions()), scatter_dims);
  return p;
}

namespace {

absl::StatusOr<Literal> HandleGather(const HloInstruction& instr,
                                     absl::Span<const Literal* const> operands, Evaluator&) {
  if (operands.size() != 2 || !instr.attrs().gather_dimension_numbers.has_value() ||
      !instr.shape().IsArray() || !operands[0]->shape().IsArray()) {
    return InvalidArgument("gather takes an operand, start indices and dimension numbers");
  }
  const hlo::GatherDimensionNumbers& dn = *instr.attrs().gather_dimension_numbers;
  const Literal& operand = *operands[0];
  const Literal& indices = *operands[1];
  const Shape& op_shape = operand.shape();
  ASSIGN_OR_RETURN(GatherPlan plan, PlanGather(instr, op_shape, indices.shape()));
  const IndexMapping& m = plan.mapping;
  const std::vector<int64_t>& batch_dims = plan.batch_dims;
  const std::vector<int64_t>& window_dims = plan.window_dims;
  const std::vector<int64_t>& slice = instr.attrs().gather_slice_sizes;
  Literal out(instr.shape());
  WindowOffsets w = MakeWindowOffsets(op_shape, instr.shape(), window_dims, dn.offset_dims);
  const std::vector<int64_t> op_strides = RowMajorStrides(op_shape.dimensions());
  const std::vector<int64_t> out_batch_strides =
      PermuteStrides(RowMajorStrides(instr.shape().dimensions()), batch_dims);
  const int width = hlo::ByteWidth(op_shape.element_type());
  std::vector<int64_t> start(op_shape.rank());
  uint8_t* dst = out.mutable_data()->data();
  for (StridedCounter c(m.batch_bounds, {m.batch_strides, out_batch_strides}); !c.done();
       c.Next()) {
    WindowStart(m, indices, c.offset(0), c.index(), start);
    int64_t base = 0;
    for (int64_t d = 0; d < op_shape.rank(); ++d) {
      base += std::clamp<int64_t>(start[d], 0, op_shape.dimensions(d) - slice[d]) * op_strides[d];
    }
    CopyIndexedElements(operand.data().data() + base * width, w.operand, dst + c.offset(1) * width,
                        w.other, width);
  }
  return out;
}

absl::Status CheckScatterOperands(const HloInstruction& instr,
                                  absl::Span<const Literal* const> operands, int64_t n) {
  ASSIGN_OR_RETURN(std::vector<Shape> shapes, VariadicResultShapes(instr.shape(), n));
  for (int64_t k = 0; k < n; ++k) {
    const Shape& input = operands[k]->shape();
    const Shape& updates = operands[n + 1 + k]->shape();
    if (!input.IsArray() || !updates.IsArray() || !shapes[k].Compatible(input) ||
        input.dimensions() != operands[0]->shape().dimensions() ||
        updates.dimensions() != operands[n + 1]->shape().dimensions() ||
        updates.element_type() != input.element_type()) {
      return InvalidArgument("scatter inputs, updates and results must pair up in type and shape");
    }
  }
  return absl::OkStatus();
}

// Calls f(operand_offset, updates_offset) (-> absl::Status) for each window that fits.
template <typename F>
absl::Status ForEachScatterWindow(const ScatterPlan& p, const Literal& indices, F&& f) {
  return ForEachScatterStart(p, indices, [&](const std::vector<int64_t>& start, int64_t update) {
    int64_t base = 0;
    for (size_t d = 0; d < start.size(); ++d) base += start[d] * p.operand_strides[d];
    return f(base, update);
  });
}

absl::Status ScatterWithCombiner(hlo::HloOpcode opcode, const ScatterPlan& p,
                                 const Literal& indices, const Literal& updates, Literal& out) {
  const PrimitiveType type = out.shape().element_type();
  return DispatchArrayType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    return WithBinaryOp<ComputeType<T>>(opcode, type == PrimitiveType::kPred, [&](auto op) {
      T* dst = MutableData<T>(out);
      const T* src = Data<T>(updates);
      return ForEachScatterWindow(p, indices, [&](int64_t base, int64_t update_base) {
        for (size_t i = 0; i < p.window.operand.size(); ++i) {
          const int64_t at = base + p.window.operand[i];
          StoreElement(dst, at,
                       op(LoadElement(dst, at), LoadElement(src, update_base + p.window.other[i])));
        }
        return absl::OkStatus();
      });
    });
  });
}

absl::Status ScatterWithCalls(const HloInstruction& instr, const ScatterPlan& p,
                              absl::Span<const Literal* const> operands, std::vector<Literal>& outs,
                              Evaluator& evaluator) {
  const size_t n = outs.size();
  std::vector<PrimitiveType> types;
  std::vector<Literal> current, update;
  for (const Literal& o : outs) {
    types.push_back(o.shape().element_type());
    current.emplace_back(Shape::Array(types.back(), {}));
    update.emplace_back(Shape::Array(types.back(), {}));
  }
  std::vector<const Literal*> args;
  for (const Literal& c : current) args.push_back(&c);
  for (const Literal& u : update) args.push_back(&u);
  const Literal& indices = *operands[n];
  return ForEachScatterWindow(p, indices, [&](int64_t base, int64_t update_base) -> absl::Status {
    for (size_t i = 0; i < p.window.operand.size(); ++i) {
      const int64_t at = base + p.window.operand[i];
      for (size_t k = 0; k < n; ++k) {
        CopyElement(outs[k], at, current[k], 0);
        CopyElement(*operands[n + 1 + k], update_base + p.window.other[i], update[k], 0);
      }
      ASSIGN_OR_RETURN(std::vector<Literal> r,
                       CallScalarComputation(evaluator, *instr.to_apply(), args, types));
      for (size_t k = 0; k < n; ++k) CopyElement(r[k], 0, outs[k], at);
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<Literal> HandleScatter(const HloInstruction& instr,
                                      absl::Span<const Literal* const> operands,
                                      Evaluator& evaluator) {
  if (operands.size() < 3 || operands.size() % 2 == 0 ||
      !instr.attrs().scatter_dimension_numbers.has_value() || instr.called_computations().empty()) {
    return InvalidArgument(
        "scatter takes n inputs, indices, n updates, dimension numbers and "
        "to_apply");
  }
  const int64_t n = static_cast<int64_t>(operands.size() / 2);
  RETURN_IF_ERROR(CheckScatterOperands(instr, operands, n));
  const Literal& indices = *operands[n];
  ASSIGN_OR_RETURN(ScatterPlan plan, PlanScatter(instr, operands[0]->shape(), indices.shape(),
                                                 operands[n + 1]->shape()));
  std::vector<Literal> outs;
  for (int64_t k = 0; k < n; ++k) outs.push_back(*operands[k]);
  const PrimitiveType type = outs[0].shape().element_type();
  std::optional<hlo::HloOpcode> combiner = MatchScalarCombiner(*instr.to_apply(), type);
  if (n == 1 && IsAssignCombiner(*instr.to_apply(), type)) {
    const int width = hlo::ByteWidth(type);
    const uint8_t* src = operands[2]->data().data();
    uint8_t* dst = outs[0].mutable_data()->data();
    RETURN_IF_ERROR(ForEachScatterWindow(plan, indices, [&](int64_t base, int64_t update_base) {
      CopyIndexedElements(src + update_base * width, plan.window.other, dst + base * width,
                          plan.window.operand, width);
      return absl::OkStatus();
    }));
  } else if (n == 1 && combiner.has_value()) {
    RETURN_IF_ERROR(ScatterWithCombiner(*combiner, plan, indices, *operands[2], outs[0]));
  } else {
    RETURN_IF_ERROR(ScatterWithCalls(instr, plan, operands, outs, evaluator));
  }
  return PackVariadic(std::move(outs), instr.shape());
}

}  // namespace

void RegisterGatherScatterOps(OpTable& table) {
  table[hlo::HloOpcode::kGather] = &HandleGather;
  table[hlo::HloOpcode::kScatter] = &HandleScatter;
}

}  // namespace runtime

// Shape inference for gather and scatter with XLA's dimension numbers, including the batching
// dimensions (operand_batching_dims / start_indices_batching_dims for gather,
// input_batching_dims / scatter_indices_batching_dims for scatter).
//
// Both ops view the indices as a batch of index vectors along `index_vector_dim`; when
// index_vector_dim == rank(indices) the indices are read as if they had a trailing dimension
// of size 1 ("expanded" below). The non-window dimensions of the gather result / scatter
// updates are the expanded index dimensions other than index_vector_dim, in order; the window
// dimensions correspond, in order, to the operand dimensions that are neither collapsed
// (inserted) nor batching dimensions.
#include <vector>

#include "absl/algorithm/container.h"
#include "hlo/ir/shape_inference.h"
#include "hlo/ir/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hlo {

using shape_inference_internal::CheckDimensionList;
using shape_inference_internal::DimsStr;
using shape_inference_internal::ExpectArray;
using shape_inference_internal::InvalidArg;
using shape_inference_internal::Scalar;
using shape_inference_internal::ShapeStr;
using shape_inference_internal::VerifyReducerShape;

namespace {

// The indices' dimensions with the implicit trailing 1 added when index_vector_dim == rank.
absl::StatusOr<std::vector<int64_t>> ExpandedIndexDims(std::string_view op, const Shape& indices,
                                                       int64_t index_vector_dim) {
  RETURN_IF_ERROR(ExpectArray(op, "indices", indices));
  if (!IsIntegralType(indices.element_type())) {
    return InvalidArg(op, ": indices must be integral, got ", ShapeStr(indices));
  }
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return InvalidArg(op, ": index_vector_dim ", index_vector_dim, " must be in [0, ",
                      indices.rank(), "] for indices ", ShapeStr(indices));
  }
  std::vector<int64_t> dims = indices.dimensions();
  if (index_vector_dim == indices.rank()) dims.push_back(1);
  return dims;
}

// Checks a pair of batching-dimension lists: `operand_dims` into the operand (sorted, unique,
// disjoint from `collapsed`), `index_dims` into the indices (unique, not index_vector_dim), of
// equal length and matching sizes.
absl::Status CheckBatchingDims(std::string_view op, const Shape& operand, const Shape& indices,
                               absl::Span<const int64_t> operand_dims,
                               absl::Span<const int64_t> index_dims,
                               absl::Span<const int64_t> collapsed, int64_t index_vector_dim) {
  RETURN_IF_ERROR(
      CheckDimensionList(op, "operand batching dims", operand_dims, operand.rank(), true));
  RETURN_IF_ERROR(CheckDimensionList(op, "indices batching dims", index_dims, indices.rank()));
  for (int64_t d : operand_dims) {
    if (absl::c_linear_search(collapsed, d)) {
      return InvalidArg(op, ": operand dimension ", d,
                        " is both a batching and a collapsed/inserted dimension");
    }
  }
  if (absl::c_linear_search(index_dims, index_vector_dim)) {
    return InvalidArg(op, ": index_vector_dim ", index_vector_dim,
                      " cannot be an indices batching dimension");
  }
  if (operand_dims.size() != index_dims.size()) {
    return InvalidArg(op, ": ", operand_dims.size(), " operand batching dims but ",
                      index_dims.size(), " indices batching dims");
  }
  for (size_t i = 0; i < operand_dims.size(); ++i) {
    if (operand.dimensions(operand_dims[i]) != indices.dimensions(index_dims[i])) {
      return InvalidArg(op, ": operand batching dimension ", operand_dims[i], " has size ",
                        operand.dimensions(operand_dims[i]), " but indices batching dimension ",
                        index_dims[i], " has size ", indices.dimensions(index_dims[i]));
    }
  }
  return absl::OkStatus();
}

// Checks the index-vector → operand dimension map (start_index_map /
// scatter_dims_to_operand_dims): one unique in-range entry per index vector element.
absl::Status CheckIndexMap(std::string_view op, std::string_view what,
                           absl::Span<const int64_t> map, const std::vector<int64_t>& expanded,
                           int64_t index_vector_dim, int64_t operand_rank) {
  if (static_cast<int64_t>(map.size()) != expanded[index_vector_dim]) {
    return InvalidArg(op, ": ", what, " ", DimsStr(map), " has ", map.size(),
                      " entries but the index vector dimension has size ",
                      expanded[index_vector_dim]);
  }
  return CheckDimensionList(op, what, map, operand_rank);
}

// Operand dimensions that are windowed: not in `collapsed` and not in `batching`.
std::vector<int64_t> WindowOperandDims(int64_t rank, absl::Span<const int64_t> collapsed,
                                       absl::Span<const int64_t> batching) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!absl::c_linear_search(collapsed, d) && !absl::c_linear_search(batching, d)) {
      dims.push_back(d);
    }
  }
  return dims;
}

absl::Status CheckGatherSliceSizes(const Shape& operand, const GatherDimensionNumbers& dnums,
                                   absl::Span<const int64_t> slice_sizes) {
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return InvalidArg("gather: slice_sizes ", DimsStr(slice_sizes),
                      " must have one entry per dimension of operand ", ShapeStr(operand));
  }
  const size_t windowed = dnums.offset_dims.size() + dnums.collapsed_slice_dims.size() +
                          dnums.operand_batching_dims.size();
  if (static_cast<int64_t>(windowed) != operand.rank()) {
    return InvalidArg("gather: operand rank ", operand.rank(),
                      " must equal |offset_dims| + |collapsed_slice_dims| + "
                      "|operand_batching_dims| = ",
                      windowed);
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.dimensions(i)) {
      return InvalidArg("gather: slice size ", slice_sizes[i], " of dimension ", i,
                        " must be in [0, ", operand.dimensions(i), "]");
    }
  }
  for (const auto* list : {&dnums.collapsed_slice_dims, &dnums.operand_batching_dims}) {
    for (int64_t d : *list) {
      if (slice_sizes[d] > 1) {
        return InvalidArg("gather: collapsed or batching dimension ", d,
                          " must have slice size 0 or 1, got ", slice_sizes[d]);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckGatherDims(const Shape& operand, const Shape& indices,
                             const GatherDimensionNumbers& dnums,
                             const std::vector<int64_t>& expanded) {
  const int64_t output_rank = static_cast<int64_t>(dnums.offset_dims.size() + expanded.size()) - 1;
  RETURN_IF_ERROR(CheckDimensionList("gather", "offset_dims", dnums.offset_dims, output_rank,
                                     /*sorted=*/true));
  RETURN_IF_ERROR(CheckIndexMap("gather", "start_index_map", dnums.start_index_map, expanded,
                                dnums.index_vector_dim, operand.rank()));
  RETURN_IF_ERROR(CheckDimensionList("gather", "collapsed_slice_dims", dnums.collapsed_slice_dims,
                                     operand.rank(), true));
  return CheckBatchingDims("gather", operand, indices, dnums.operand_batching_dims,
                           dnums.start_indices_batching_dims, dnums.collapsed_slice_dims,
                           dnums.index_vector_dim);
}

absl::Status CheckScatterDims(const Shape& operand, const Shape& indices,
                              const ScatterDimensionNumbers& dnums,
                              const std::vector<int64_t>& expanded) {
  RETURN_IF_ERROR(CheckDimensionList("scatter", "inserted_window_dims", dnums.inserted_window_dims,
                                     operand.rank(), true));
  RETURN_IF_ERROR(CheckBatchingDims("scatter", operand, indices, dnums.input_batching_dims,
                                    dnums.scatter_indices_batching_dims, dnums.inserted_window_dims,
                                    dnums.index_vector_dim));
  const size_t window = dnums.update_window_dims.size() + dnums.inserted_window_dims.size() +
                        dnums.input_batching_dims.size();
  if (static_cast<int64_t>(window) != operand.rank()) {
    return InvalidArg("scatter: operand rank ", operand.rank(),
                      " must equal |update_window_dims| + |inserted_window_dims| + "
                      "|input_batching_dims| = ",
                      window);
  }
  return CheckIndexMap("scatter", "scatter_dims_to_operand_dims",
                       dnums.scatter_dims_to_operand_dims, expanded, dnums.index_vector_dim,
                       operand.rank());
}

// Checks `updates` against input `operand` for scatter: rank, window bounds, scatter bounds.
absl::Status CheckScatterUpdates(const Shape& operand, const Shape& updates,
                                 const ScatterDimensionNumbers& dnums,
                                 const std::vector<int64_t>& expanded) {
  const int64_t expected_rank =
      static_cast<int64_t>(expanded.size() - 1 + dnums.update_window_dims.size());
  if (updates.rank() != expected_rank) {
    return InvalidArg("scatter: updates ", ShapeStr(updates), " must have rank ", expected_rank);
  }
  RETURN_IF_ERROR(CheckDimensionList("scatter", "update_window_dims", dnums.update_window_dims,
                                     updates.rank(), true));
  const std::vector<int64_t> window_operand_dims =
      WindowOperandDims(operand.rank(), dnums.inserted_window_dims, dnums.input_batching_dims);
  int64_t window_seen = 0;
  int64_t scatter_seen = 0;
  for (int64_t i = 0; i < updates.rank(); ++i) {
    if (absl::c_linear_search(dnums.update_window_dims, i)) {
      const int64_t operand_dim = window_operand_dims[window_seen++];
      if (updates.dimensions(i) > operand.dimensions(operand_dim)) {
        return InvalidArg("scatter: updates window dimension ", i, " has size ",
                          updates.dimensions(i), " but operand dimension ", operand_dim,
                          " has size ", operand.dimensions(operand_dim));
      }
      continue;
    }
    if (scatter_seen == dnums.index_vector_dim) ++scatter_seen;
    if (updates.dimensions(i) != expanded[scatter_seen]) {
      return InvalidArg("scatter: updates scatter dimension ", i, " has size ",
                        updates.dimensions(i), " but indices dimension ", scatter_seen,
                        " has size ", expanded[scatter_seen]);
    }
    ++scatter_seen;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> InferGatherShape(const Shape& operand, const Shape& start_indices,
                                       const GatherDimensionNumbers& dnums,
                                       absl::Span<const int64_t> slice_sizes) {
  RETURN_IF_ERROR(ExpectArray("gather", "operand", operand));
  ASSIGN_OR_RETURN(std::vector<int64_t> expanded,
                   ExpandedIndexDims("gather", start_indices, dnums.index_vector_dim));
  RETURN_IF_ERROR(CheckGatherDims(operand, start_indices, dnums, expanded));
  RETURN_IF_ERROR(CheckGatherSliceSizes(operand, dnums, slice_sizes));

  const std::vector<int64_t> window_dims =
      WindowOperandDims(operand.rank(), dnums.collapsed_slice_dims, dnums.operand_batching_dims);
  const int64_t output_rank = static_cast<int64_t>(dnums.offset_dims.size() + expanded.size()) - 1;
  std::vector<int64_t> output_dims;
  int64_t offset_seen = 0;
  int64_t batch_seen = 0;
  for (int64_t i = 0; i < output_rank; ++i) {
    if (absl::c_linear_search(dnums.offset_dims, i)) {
      output_dims.push_back(slice_sizes[window_dims[offset_seen++]]);
      continue;
    }
    if (batch_seen == dnums.index_vector_dim) ++batch_seen;
    output_dims.push_back(expanded[batch_seen++]);
  }
  return Shape::Array(operand.element_type(), output_dims);
}

absl::StatusOr<Shape> InferScatterShape(absl::Span<const Shape* const> operands,
                                        const ProgramShape& to_apply,
                                        const ScatterDimensionNumbers& dnums) {
  const int64_t n = static_cast<int64_t>(operands.size()) / 2;
  if (operands.size() < 3 || operands.size() % 2 != 1) {
    return InvalidArg("scatter: expected 2N+1 operands (N inputs, indices, N updates), got ",
                      operands.size());
  }
  const Shape& indices = *operands[n];
  ASSIGN_OR_RETURN(std::vector<int64_t> expanded,
                   ExpandedIndexDims("scatter", indices, dnums.index_vector_dim));
  std::vector<Shape> init_shapes;
  std::vector<PrimitiveType> update_types;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& input = *operands[i];
    const Shape& updates = *operands[n + 1 + i];
    RETURN_IF_ERROR(ExpectArray("scatter", absl::StrCat("input ", i), input));
    RETURN_IF_ERROR(ExpectArray("scatter", absl::StrCat("updates ", i), updates));
    if (input.dimensions() != operands[0]->dimensions()) {
      return InvalidArg("scatter: input ", i, " ", ShapeStr(input),
                        " must have the dimensions of input 0 ", ShapeStr(*operands[0]));
    }
    if (updates.dimensions() != operands[n + 1]->dimensions()) {
      return InvalidArg("scatter: updates ", i, " ", ShapeStr(updates),
                        " must have the dimensions of updates 0 ", ShapeStr(*operands[n + 1]));
    }
    RETURN_IF_ERROR(CheckScatterDims(input, indices, dnums, expanded));
    RETURN_IF_ERROR(CheckScatterUpdates(input, updates, dnums, expanded));
    init_shapes.push_back(Scalar(input.element_type()));
    update_types.push_back(updates.element_type());
  }
  std::vector<const Shape*> init_ptrs;
  for (const Shape& s : init_shapes) init_ptrs.push_back(&s);
  RETURN_IF_ERROR(VerifyReducerShape("scatter", to_apply, init_ptrs, update_types));
  if (n == 1) return *operands[0];
  std::vector<Shape> inputs;
  for (int64_t i = 0; i < n; ++i) inputs.push_back(*operands[i]);
  return Shape::Tuple(std::move(inputs));
}

}  // namespace hlo

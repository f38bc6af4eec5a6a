// Small shape predicates, message formatting, and the reducer-signature check shared by
// reduce, reduce-window, select-and-scatter, scatter and the reducing collectives.
#include "hlo/ir/shape_inference_internal.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"

namespace hlo {
namespace shape_inference_internal {

std::string ShapeStr(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }

std::string DimsStr(absl::Span<const int64_t> dims) {
  return absl::StrCat("{", absl::StrJoin(dims, ","), "}");
}

std::string TypeStr(PrimitiveType type) { return std::string(PrimitiveTypeName(type)); }

absl::Status ExpectArray(std::string_view op, std::string_view what, const Shape& shape) {
  if (shape.IsArray()) return absl::OkStatus();
  return InvalidArg(op, ": ", what, " must be an array, got ", ShapeStr(shape));
}

absl::Status ExpectScalar(std::string_view op, std::string_view what, const Shape& shape) {
  if (IsScalar(shape)) return absl::OkStatus();
  return InvalidArg(op, ": ", what, " must be a scalar, got ", ShapeStr(shape));
}

bool IsScalar(const Shape& shape) { return shape.IsArray() && shape.rank() == 0; }

bool SameDimensions(const Shape& a, const Shape& b) { return a.dimensions() == b.dimensions(); }

Shape Scalar(PrimitiveType type) { return Shape::Array(type, {}); }

Shape WithElementType(const Shape& shape, PrimitiveType type) {
  Shape result = Shape::Array(type, shape.dimensions());
  for (int64_t i = 0; i < shape.rank(); ++i) {
    result.set_dynamic_dimension(i, shape.is_dynamic_dimension(i));
  }
  return result;
}

absl::Status CheckDimensionList(std::string_view op, std::string_view what,
                                absl::Span<const int64_t> dims, int64_t rank, bool sorted) {
  absl::flat_hash_set<int64_t> seen;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank) {
      return InvalidArg(op, ": ", what, " ", DimsStr(dims), " has entry ", dims[i],
                        " out of range [0, ", rank, ")");
    }
    if (!seen.insert(dims[i]).second) {
      return InvalidArg(op, ": ", what, " ", DimsStr(dims), " repeats dimension ", dims[i]);
    }
    if (sorted && i > 0 && dims[i] < dims[i - 1]) {
      return InvalidArg(op, ": ", what, " ", DimsStr(dims), " must be sorted");
    }
  }
  return absl::OkStatus();
}

bool IsPermutation(absl::Span<const int64_t> dims, int64_t rank) {
  if (static_cast<int64_t>(dims.size()) != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

namespace {

// The accumulator shapes a reducer returns: its result, or the elements of its tuple result.
absl::StatusOr<std::vector<Shape>> AccumulatorShapes(std::string_view op,
                                                     const ProgramShape& reducer, int64_t n) {
  const Shape& result = reducer.result;
  std::vector<Shape> accumulators;
  if (result.IsTuple()) {
    accumulators = result.tuple_shapes();
  } else {
    accumulators.push_back(result);
  }
  if (static_cast<int64_t>(accumulators.size()) != n || (n != 1 && !result.IsTuple())) {
    return InvalidArg(op, ": reduction computation must return ",
                      n == 1 ? "a scalar" : absl::StrCat("a tuple of ", n, " scalars"),
                      ", returns ", ShapeStr(result));
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!IsScalar(accumulators[i])) {
      return InvalidArg(op, ": reduction computation must return scalars, result ", i, " is ",
                        ShapeStr(accumulators[i]));
    }
  }
  return accumulators;
}

}  // namespace

absl::Status VerifyReducerShape(std::string_view op, const ProgramShape& reducer,
                                absl::Span<const Shape* const> init_values,
                                absl::Span<const PrimitiveType> input_types) {
  const int64_t n = static_cast<int64_t>(init_values.size());
  const int64_t num_params = static_cast<int64_t>(reducer.parameters.size());
  if (num_params != 2 * n) {
    return InvalidArg(op, ": reduction computation must take ", 2 * n, " parameters, takes ",
                      num_params);
  }
  absl::StatusOr<std::vector<Shape>> accumulators = AccumulatorShapes(op, reducer, n);
  if (!accumulators.ok()) return accumulators.status();
  for (int64_t i = 0; i < n; ++i) {
    const Shape& acc = (*accumulators)[i];
    if (!acc.Compatible(reducer.parameters[i])) {
      return InvalidArg(op, ": reduction computation parameter ", i, " has shape ",
                        ShapeStr(reducer.parameters[i]), " but its result ", i, " is ",
                        ShapeStr(acc));
    }
    if (!acc.Compatible(*init_values[i])) {
      return InvalidArg(op, ": init value ", i, " has shape ", ShapeStr(*init_values[i]),
                        " but the reduction computation accumulates ", ShapeStr(acc));
    }
    const Shape input_element = Scalar(input_types[i]);
    if (!input_element.Compatible(reducer.parameters[n + i])) {
      return InvalidArg(op, ": reduction computation parameter ", n + i, " has shape ",
                        ShapeStr(reducer.parameters[n + i]), " but input ", i, " has element type ",
                        TypeStr(input_types[i]));
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyBinaryScalarReducer(std::string_view op, const ProgramShape& reducer,
                                       absl::Span<const PrimitiveType> element_types) {
  if (reducer.parameters.size() != 2) {
    return InvalidArg(op, ": reduction computation must take 2 parameters, takes ",
                      reducer.parameters.size());
  }
  const Shape& lhs = reducer.parameters[0];
  if (!IsScalar(lhs) || !lhs.Compatible(reducer.parameters[1]) || !lhs.Compatible(reducer.result)) {
    return InvalidArg(op, ": reduction computation must be (T, T) -> T on scalars, is (",
                      ShapeStr(lhs), ", ", ShapeStr(reducer.parameters[1]), ") -> ",
                      ShapeStr(reducer.result));
  }
  for (size_t i = 0; i < element_types.size(); ++i) {
    if (element_types[i] != lhs.element_type()) {
      return InvalidArg(op, ": operand ", i, " has element type ", TypeStr(element_types[i]),
                        " but the reduction computation takes ", ShapeStr(lhs));
    }
  }
  return absl::OkStatus();
}

PrimitiveType WiderType(PrimitiveType a, PrimitiveType b) {
  auto rank = [](PrimitiveType t) {
    if (IsComplexType(t)) return 3;
    if (IsFloatingPointType(t)) return 2;
    if (t == PrimitiveType::kPred) return 0;
    return 1;
  };
  if (rank(a) != rank(b)) return rank(a) > rank(b) ? a : b;
  return BitWidth(b) > BitWidth(a) ? b : a;
}

}  // namespace shape_inference_internal
}  // namespace hlo

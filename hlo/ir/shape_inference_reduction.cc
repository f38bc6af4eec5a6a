// Shape inference for reductions (reduce, reduce-window), windowed scatter
// (select-and-scatter), sort and topk. The reduction computations' signatures are checked with
// VerifyReducerShape (shape_inference_internal.cc).
#include <vector>

#include "absl/algorithm/container.h"
#include "hlo/ir/shape_inference.h"
#include "hlo/ir/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hlo {

using shape_inference_internal::CheckDimensionList;
using shape_inference_internal::ExpectArray;
using shape_inference_internal::ExpectScalar;
using shape_inference_internal::InvalidArg;
using shape_inference_internal::IsScalar;
using shape_inference_internal::SameDimensions;
using shape_inference_internal::Scalar;
using shape_inference_internal::ShapeStr;
using shape_inference_internal::VerifyReducerShape;

namespace {

int64_t DilatedBound(int64_t bound, int64_t dilation) {
  return bound == 0 ? 0 : (bound - 1) * dilation + 1;
}

absl::Status CheckWindowDimension(int64_t i, const WindowDimension& d) {
  if (d.size <= 0 || d.stride <= 0 || d.base_dilation < 1 || d.window_dilation < 1) {
    return InvalidArg(
        "window dimension ", i, " needs size, stride and dilations >= 1, got size=", d.size,
        " stride=", d.stride, " lhs_dilate=", d.base_dilation, " rhs_dilate=", d.window_dilation);
  }
  return absl::OkStatus();
}

// Splits N inputs followed by N init values; checks the inputs share their dimensions and the
// init values are scalars.
absl::Status SplitInputsAndInits(std::string_view op, absl::Span<const Shape* const> operands,
                                 std::vector<const Shape*>* inputs,
                                 std::vector<const Shape*>* inits) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return InvalidArg(op, ": expected 2N operands (N inputs, N init values), got ",
                      operands.size());
  }
  const size_t n = operands.size() / 2;
  inputs->assign(operands.begin(), operands.begin() + n);
  inits->assign(operands.begin() + n, operands.end());
  for (size_t i = 0; i < n; ++i) {
    RETURN_IF_ERROR(ExpectArray(op, absl::StrCat("input ", i), *(*inputs)[i]));
    RETURN_IF_ERROR(ExpectScalar(op, absl::StrCat("init value ", i), *(*inits)[i]));
    if (!SameDimensions(*(*inputs)[i], *(*inputs)[0])) {
      return InvalidArg(op, ": input ", i, " ", ShapeStr(*(*inputs)[i]),
                        " must have the dimensions of input 0 ", ShapeStr(*(*inputs)[0]));
    }
  }
  return absl::OkStatus();
}

std::vector<PrimitiveType> ElementTypes(const std::vector<const Shape*>& shapes) {
  std::vector<PrimitiveType> types;
  for (const Shape* s : shapes) types.push_back(s->element_type());
  return types;
}

}  // namespace

absl::StatusOr<Shape> InferWindowOutputShape(const Shape& base, const Window& window,
                                             PrimitiveType element_type) {
  if (static_cast<int64_t>(window.dimensions.size()) != base.rank()) {
    return InvalidArg("window has ", window.dimensions.size(), " dimensions but the base ",
                      ShapeStr(base), " has rank ", base.rank());
  }
  std::vector<int64_t> dims(base.rank());
  for (int64_t i = 0; i < base.rank(); ++i) {
    const WindowDimension& d = window.dimensions[i];
    RETURN_IF_ERROR(CheckWindowDimension(i, d));
    const int64_t padded =
        d.padding_low + DilatedBound(base.dimensions(i), d.base_dilation) + d.padding_high;
    const int64_t dilated_window = DilatedBound(d.size, d.window_dilation);
    dims[i] = padded < dilated_window ? 0 : (padded - dilated_window) / d.stride + 1;
  }
  Shape result = Shape::Array(element_type, dims);
  for (int64_t i = 0; i < base.rank(); ++i) {
    result.set_dynamic_dimension(i, base.is_dynamic_dimension(i));
  }
  return result;
}

absl::StatusOr<Shape> InferReduceShape(absl::Span<const Shape* const> operands,
                                       absl::Span<const int64_t> dimensions,
                                       const ProgramShape& to_apply) {
  std::vector<const Shape*> inputs, inits;
  RETURN_IF_ERROR(SplitInputsAndInits("reduce", operands, &inputs, &inits));
  const Shape& arg = *inputs[0];
  RETURN_IF_ERROR(CheckDimensionList("reduce", "dimensions", dimensions, arg.rank()));
  RETURN_IF_ERROR(VerifyReducerShape("reduce", to_apply, inits, ElementTypes(inputs)));
  std::vector<int64_t> kept;
  std::vector<bool> kept_dynamic;
  for (int64_t i = 0; i < arg.rank(); ++i) {
    if (absl::c_linear_search(dimensions, i)) continue;
    kept.push_back(arg.dimensions(i));
    kept_dynamic.push_back(arg.is_dynamic_dimension(i));
  }
  std::vector<Shape> results;
  for (const Shape* init : inits) {
    Shape s = Shape::Array(init->element_type(), kept);
    for (size_t i = 0; i < kept.size(); ++i) s.set_dynamic_dimension(i, kept_dynamic[i]);
    results.push_back(std::move(s));
  }
  if (results.size() == 1) return results[0];
  return Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferReduceWindowShape(absl::Span<const Shape* const> operands,
                                             const Window& window, const ProgramShape& to_apply) {
  std::vector<const Shape*> inputs, inits;
  RETURN_IF_ERROR(SplitInputsAndInits("reduce-window", operands, &inputs, &inits));
  RETURN_IF_ERROR(VerifyReducerShape("reduce-window", to_apply, inits, ElementTypes(inputs)));
  std::vector<Shape> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::StatusOr<Shape> s = InferWindowOutputShape(*inputs[i], window, inits[i]->element_type());
    if (!s.ok()) return InvalidArg("reduce-window: ", s.status().message());
    results.push_back(*std::move(s));
  }
  if (results.size() == 1) return results[0];
  return Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferSelectAndScatterShape(const Shape& operand, const ProgramShape& select,
                                                 const Window& window, const Shape& source,
                                                 const Shape& init_value,
                                                 const ProgramShape& scatter) {
  constexpr std::string_view kOp = "select-and-scatter";
  RETURN_IF_ERROR(ExpectArray(kOp, "operand", operand));
  RETURN_IF_ERROR(ExpectArray(kOp, "source", source));
  const Shape element = Scalar(operand.element_type());
  if (select.parameters.size() != 2 || !select.parameters[0].Compatible(element) ||
      !select.parameters[1].Compatible(element) ||
      !select.result.Compatible(Scalar(PrimitiveType::kPred))) {
    return InvalidArg(kOp, ": select computation must be (", ShapeStr(element), ", ",
                      ShapeStr(element), ") -> pred[]");
  }
  RETURN_IF_ERROR(VerifyReducerShape(kOp, scatter, {&init_value}, {source.element_type()}));
  absl::StatusOr<Shape> windowed = InferWindowOutputShape(operand, window, operand.element_type());
  if (!windowed.ok()) return InvalidArg(kOp, ": ", windowed.status().message());
  if (!SameDimensions(*windowed, source)) {
    return InvalidArg(kOp, ": source ", ShapeStr(source),
                      " must have the window output dimensions of the operand, ",
                      ShapeStr(*windowed));
  }
  return operand;
}

absl::StatusOr<Shape> InferSortShape(absl::Span<const Shape* const> operands, int64_t dimension,
                                     const ProgramShape& comparator) {
  if (operands.empty()) return InvalidArg("sort: expected at least one operand");
  const Shape& keys = *operands[0];
  for (size_t i = 0; i < operands.size(); ++i) {
    RETURN_IF_ERROR(ExpectArray("sort", absl::StrCat("operand ", i), *operands[i]));
    if (!SameDimensions(*operands[i], keys)) {
      return InvalidArg("sort: operand ", i, " ", ShapeStr(*operands[i]),
                        " must have the dimensions of operand 0 ", ShapeStr(keys));
    }
  }
  if (dimension < 0 || dimension >= keys.rank()) {
    return InvalidArg("sort: dimension ", dimension, " is out of range for ", ShapeStr(keys));
  }
  if (comparator.parameters.size() != 2 * operands.size()) {
    return InvalidArg("sort: comparator must take ", 2 * operands.size(), " parameters, takes ",
                      comparator.parameters.size());
  }
  for (size_t p = 0; p < comparator.parameters.size(); ++p) {
    const Shape expected = Scalar(operands[p / 2]->element_type());
    if (!comparator.parameters[p].Compatible(expected)) {
      return InvalidArg("sort: comparator parameter ", p, " has shape ",
                        ShapeStr(comparator.parameters[p]), ", expected ", ShapeStr(expected));
    }
  }
  if (!comparator.result.Compatible(Scalar(PrimitiveType::kPred))) {
    return InvalidArg("sort: comparator must return pred[], returns ", ShapeStr(comparator.result));
  }
  if (operands.size() == 1) return keys;
  std::vector<Shape> shapes;
  for (const Shape* s : operands) shapes.push_back(*s);
  return Shape::Tuple(std::move(shapes));
}

absl::StatusOr<Shape> InferTopKShape(const Shape& operand, int64_t k) {
  RETURN_IF_ERROR(ExpectArray("topk", "operand", operand));
  if (operand.rank() == 0) return InvalidArg("topk: operand must not be a scalar");
  const int64_t last = operand.rank() - 1;
  if (k < 0 || k > operand.dimensions(last)) {
    return InvalidArg("topk: k=", k, " must be in [0, ", operand.dimensions(last),
                      "] (the last dimension of ", ShapeStr(operand), ")");
  }
  std::vector<int64_t> dims = operand.dimensions();
  dims[last] = k;
  Shape values = Shape::Array(operand.element_type(), dims);
  for (int64_t i = 0; i < last; ++i) {
    values.set_dynamic_dimension(i, operand.is_dynamic_dimension(i));
  }
  Shape indices = shape_inference_internal::WithElementType(values, PrimitiveType::kS32);
  return Shape::Tuple({values, indices});
}

}  // namespace hlo

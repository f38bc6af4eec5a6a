// Shape inference for ops that move or re-view data without arithmetic: broadcast, reshape,
// transpose, iota, slices, pad, concatenate, reverse, tuples, bitcast and the dimension-size
// ops. Gather and scatter live in shape_inference_gather_scatter.cc.
#include <algorithm>
#include <string>
#include <vector>

#include "hlo/ir/shape_inference.h"
#include "hlo/ir/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hlo {

using shape_inference_internal::CheckDimensionList;
using shape_inference_internal::DimsStr;
using shape_inference_internal::ExpectArray;
using shape_inference_internal::ExpectScalar;
using shape_inference_internal::InvalidArg;
using shape_inference_internal::IsPermutation;
using shape_inference_internal::IsScalar;
using shape_inference_internal::SameDimensions;
using shape_inference_internal::Scalar;
using shape_inference_internal::ShapeStr;
using shape_inference_internal::WithElementType;

namespace {

// Dimensions of `output` with `type`, keeping `output`'s dynamic flags.
Shape DeclaredDims(const Shape& output, PrimitiveType type) {
  return WithElementType(output, type);
}

// Start indices of dynamic-slice / dynamic-update-slice: `rank` integral scalars of one type,
// or the legacy single rank-1 index vector of `rank` elements.
absl::Status CheckStartIndices(std::string_view op, absl::Span<const Shape* const> indices,
                               int64_t rank) {
  if (indices.size() == 1 && indices[0]->IsArray() && indices[0]->rank() == 1) {
    const Shape& vec = *indices[0];
    if (!IsIntegralType(vec.element_type()) || vec.dimensions(0) != rank) {
      return InvalidArg(op, ": start index vector ", ShapeStr(vec), " must be integral with ", rank,
                        " elements");
    }
    return absl::OkStatus();
  }
  if (static_cast<int64_t>(indices.size()) != rank) {
    return InvalidArg(op, ": expected ", rank, " start indices (one per operand dimension), got ",
                      indices.size());
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    const Shape& index = *indices[i];
    if (!IsScalar(index) || !IsIntegralType(index.element_type())) {
      return InvalidArg(op, ": start index ", i, " must be an integral scalar, got ",
                        ShapeStr(index));
    }
    if (index.element_type() != indices[0]->element_type()) {
      return InvalidArg(op, ": start indices must share one type, got ", ShapeStr(*indices[0]),
                        " and ", ShapeStr(index));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> InferBroadcastShape(const Shape& operand, const Shape& output,
                                          absl::Span<const int64_t> dimensions) {
  RETURN_IF_ERROR(ExpectArray("broadcast", "operand", operand));
  RETURN_IF_ERROR(ExpectArray("broadcast", "result", output));
  if (static_cast<int64_t>(dimensions.size()) != operand.rank()) {
    return InvalidArg("broadcast: dimensions ", DimsStr(dimensions), " must have one entry per ",
                      "operand dimension of ", ShapeStr(operand));
  }
  RETURN_IF_ERROR(CheckDimensionList("broadcast", "dimensions", dimensions, output.rank()));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (operand.dimensions(i) != output.dimensions(dimensions[i])) {
      return InvalidArg("broadcast: operand dimension ", i, " has size ", operand.dimensions(i),
                        " but result dimension ", dimensions[i], " has size ",
                        output.dimensions(dimensions[i]));
    }
  }
  return DeclaredDims(output, operand.element_type());
}

absl::StatusOr<Shape> InferReshapeShape(const Shape& operand, const Shape& output) {
  RETURN_IF_ERROR(ExpectArray("reshape", "operand", operand));
  RETURN_IF_ERROR(ExpectArray("reshape", "result", output));
  if (operand.num_elements() != output.num_elements()) {
    return InvalidArg("reshape: operand ", ShapeStr(operand), " has ", operand.num_elements(),
                      " elements but the result ", ShapeStr(output), " has ",
                      output.num_elements());
  }
  return DeclaredDims(output, operand.element_type());
}

absl::StatusOr<Shape> InferDynamicReshapeShape(const Shape& operand,
                                               absl::Span<const Shape* const> sizes,
                                               const Shape& output) {
  RETURN_IF_ERROR(ExpectArray("dynamic-reshape", "result", output));
  if (static_cast<int64_t>(sizes.size()) != output.rank()) {
    return InvalidArg("dynamic-reshape: expected ", output.rank(),
                      " size operands (one per result dimension), got ", sizes.size());
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!sizes[i]->Compatible(Scalar(PrimitiveType::kS32))) {
      return InvalidArg("dynamic-reshape: size operand ", i, " must be s32[], got ",
                        ShapeStr(*sizes[i]));
    }
  }
  RETURN_IF_ERROR(ExpectArray("dynamic-reshape", "operand", operand));
  if (operand.num_elements() != output.num_elements()) {
    return InvalidArg("dynamic-reshape: operand ", ShapeStr(operand), " has ",
                      operand.num_elements(), " elements but the result bounds ", ShapeStr(output),
                      " hold ", output.num_elements());
  }
  return DeclaredDims(output, operand.element_type());
}

absl::StatusOr<Shape> InferTransposeShape(const Shape& operand,
                                          absl::Span<const int64_t> permutation) {
  RETURN_IF_ERROR(ExpectArray("transpose", "operand", operand));
  if (!IsPermutation(permutation, operand.rank())) {
    return InvalidArg("transpose: dimensions ", DimsStr(permutation),
                      " are not a permutation of the dimensions of ", ShapeStr(operand));
  }
  Shape result = Shape::Array(operand.element_type(), std::vector<int64_t>(operand.rank()));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    result.set_dimension(i, operand.dimensions(permutation[i]));
    result.set_dynamic_dimension(i, operand.is_dynamic_dimension(permutation[i]));
  }
  return result;
}

absl::StatusOr<Shape> InferIotaShape(const Shape& output, int64_t iota_dimension) {
  RETURN_IF_ERROR(ExpectArray("iota", "result", output));
  if (output.rank() == 0) return InvalidArg("iota: result must not be a scalar");
  if (iota_dimension < 0 || iota_dimension >= output.rank()) {
    return InvalidArg("iota: iota_dimension ", iota_dimension, " is out of range for ",
                      ShapeStr(output));
  }
  return DeclaredDims(output, output.element_type());
}

absl::StatusOr<Shape> InferSliceShape(const Shape& operand,
                                      absl::Span<const SliceDimension> slice) {
  RETURN_IF_ERROR(ExpectArray("slice", "operand", operand));
  if (static_cast<int64_t>(slice.size()) != operand.rank()) {
    return InvalidArg("slice: expected ", operand.rank(), " slice dimensions for ",
                      ShapeStr(operand), ", got ", slice.size());
  }
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const SliceDimension& s = slice[i];
    if (s.start < 0 || s.start > s.limit || s.limit > operand.dimensions(i)) {
      return InvalidArg("slice: dimension ", i, " [", s.start, ":", s.limit,
                        "] must satisfy 0 <= start <= limit <= ", operand.dimensions(i));
    }
    if (s.stride <= 0) {
      return InvalidArg("slice: dimension ", i, " has non-positive stride ", s.stride);
    }
    sizes.push_back((s.limit - s.start + s.stride - 1) / s.stride);
  }
  Shape result = Shape::Array(operand.element_type(), sizes);
  for (int64_t i = 0; i < operand.rank(); ++i) {
    result.set_dynamic_dimension(i, sizes[i] != 1 && operand.is_dynamic_dimension(i));
  }
  return result;
}

absl::StatusOr<Shape> InferDynamicSliceShape(const Shape& operand,
                                             absl::Span<const Shape* const> start_indices,
                                             absl::Span<const int64_t> slice_sizes) {
  RETURN_IF_ERROR(ExpectArray("dynamic-slice", "operand", operand));
  RETURN_IF_ERROR(CheckStartIndices("dynamic-slice", start_indices, operand.rank()));
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return InvalidArg("dynamic-slice: dynamic_slice_sizes ", DimsStr(slice_sizes),
                      " must have one entry per dimension of ", ShapeStr(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.dimensions(i)) {
      return InvalidArg("dynamic-slice: slice size ", slice_sizes[i], " of dimension ", i,
                        " must be in [0, ", operand.dimensions(i), "]");
    }
  }
  return Shape::Array(operand.element_type(), slice_sizes);
}

absl::StatusOr<Shape> InferDynamicUpdateSliceShape(const Shape& operand, const Shape& update,
                                                   absl::Span<const Shape* const> start_indices) {
  RETURN_IF_ERROR(ExpectArray("dynamic-update-slice", "operand", operand));
  RETURN_IF_ERROR(ExpectArray("dynamic-update-slice", "update", update));
  RETURN_IF_ERROR(CheckStartIndices("dynamic-update-slice", start_indices, operand.rank()));
  if (update.rank() != operand.rank() || update.element_type() != operand.element_type()) {
    return InvalidArg("dynamic-update-slice: update ", ShapeStr(update),
                      " must have the rank and element type of operand ", ShapeStr(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (update.dimensions(i) > operand.dimensions(i)) {
      return InvalidArg("dynamic-update-slice: update dimension ", i, " has size ",
                        update.dimensions(i), " but operand dimension ", i, " has size ",
                        operand.dimensions(i));
    }
  }
  return operand;
}

absl::StatusOr<Shape> InferPadShape(const Shape& operand, const Shape& padding_value,
                                    const PaddingConfig& config) {
  RETURN_IF_ERROR(ExpectArray("pad", "operand", operand));
  RETURN_IF_ERROR(ExpectScalar("pad", "padding value", padding_value));
  if (padding_value.element_type() != operand.element_type()) {
    return InvalidArg("pad: padding value ", ShapeStr(padding_value),
                      " must have the element type of operand ", ShapeStr(operand));
  }
  if (static_cast<int64_t>(config.dimensions.size()) != operand.rank()) {
    return InvalidArg("pad: padding config has ", config.dimensions.size(),
                      " dimensions but operand ", ShapeStr(operand), " has rank ", operand.rank());
  }
  Shape result = operand;
  result.clear_layout();
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PaddingDimension& p = config.dimensions[i];
    if (p.interior_padding < 0) {
      return InvalidArg("pad: dimension ", i, " has negative interior padding ",
                        p.interior_padding);
    }
    const int64_t size = operand.dimensions(i);
    const int64_t padded = size + p.edge_padding_low + p.edge_padding_high +
                           std::max<int64_t>(size - 1, 0) * p.interior_padding;
    if (padded < 0) {
      return InvalidArg("pad: dimension ", i, " of size ", size, " padded ", p.edge_padding_low,
                        "_", p.edge_padding_high, "_", p.interior_padding, " has negative size ",
                        padded);
    }
    result.set_dimension(i, padded);
  }
  return result;
}

absl::StatusOr<Shape> InferConcatenateShape(absl::Span<const Shape* const> operands,
                                            int64_t dimension) {
  if (operands.empty()) return InvalidArg("concatenate: expected at least one operand");
  const Shape& first = *operands[0];
  RETURN_IF_ERROR(ExpectArray("concatenate", "operand 0", first));
  if (dimension < 0 || dimension >= first.rank()) {
    return InvalidArg("concatenate: dimension ", dimension, " is out of range for ",
                      ShapeStr(first));
  }
  Shape result = first;
  result.clear_layout();
  for (size_t i = 1; i < operands.size(); ++i) {
    const Shape& s = *operands[i];
    RETURN_IF_ERROR(ExpectArray("concatenate", absl::StrCat("operand ", i), s));
    if (s.rank() != first.rank() || s.element_type() != first.element_type()) {
      return InvalidArg("concatenate: operand ", i, " ", ShapeStr(s),
                        " must have the rank and element type of operand 0 ", ShapeStr(first));
    }
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (d != dimension && s.dimensions(d) != first.dimensions(d)) {
        return InvalidArg("concatenate: operand ", i, " ", ShapeStr(s), " differs from operand 0 ",
                          ShapeStr(first), " in dimension ", d, ", which is not concatenated");
      }
    }
    result.set_dimension(dimension, result.dimensions(dimension) + s.dimensions(dimension));
  }
  return result;
}

absl::StatusOr<Shape> InferReverseShape(const Shape& operand,
                                        absl::Span<const int64_t> dimensions) {
  RETURN_IF_ERROR(ExpectArray("reverse", "operand", operand));
  RETURN_IF_ERROR(CheckDimensionList("reverse", "dimensions", dimensions, operand.rank()));
  return operand;
}

absl::StatusOr<Shape> InferTupleShape(absl::Span<const Shape* const> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Shape* s : elements) shapes.push_back(*s);
  return Shape::Tuple(std::move(shapes));
}

absl::StatusOr<Shape> InferGetTupleElementShape(const Shape& tuple, int64_t index) {
  if (!tuple.IsTuple()) {
    return InvalidArg("get-tuple-element: operand must be a tuple, got ", ShapeStr(tuple));
  }
  if (index < 0 || index >= tuple.tuple_shapes_size()) {
    return InvalidArg("get-tuple-element: index ", index, " is out of range for ", ShapeStr(tuple),
                      " with ", tuple.tuple_shapes_size(), " elements");
  }
  return tuple.tuple_shapes(index);
}

absl::StatusOr<Shape> InferBitcastShape(const Shape& operand, const Shape& output) {
  RETURN_IF_ERROR(ExpectArray("bitcast", "operand", operand));
  RETURN_IF_ERROR(ExpectArray("bitcast", "result", output));
  if (operand.byte_size() != output.byte_size()) {
    return InvalidArg("bitcast: operand ", ShapeStr(operand), " has ", operand.byte_size(),
                      " bytes but the result ", ShapeStr(output), " has ", output.byte_size());
  }
  return DeclaredDims(output, output.element_type());
}

absl::StatusOr<Shape> InferGetDimensionSizeShape(const Shape& operand, int64_t dimension) {
  RETURN_IF_ERROR(ExpectArray("get-dimension-size", "operand", operand));
  if (dimension < 0 || dimension >= operand.rank()) {
    return InvalidArg("get-dimension-size: dimension ", dimension, " is out of range for ",
                      ShapeStr(operand));
  }
  return Scalar(PrimitiveType::kS32);
}

absl::StatusOr<Shape> InferSetDimensionSizeShape(const Shape& operand, const Shape& size,
                                                 int64_t dimension) {
  RETURN_IF_ERROR(ExpectArray("set-dimension-size", "operand", operand));
  if (dimension < 0 || dimension >= operand.rank()) {
    return InvalidArg("set-dimension-size: dimension ", dimension, " is out of range for ",
                      ShapeStr(operand));
  }
  if (!size.Compatible(Scalar(PrimitiveType::kS32))) {
    return InvalidArg("set-dimension-size: size must be s32[], got ", ShapeStr(size));
  }
  Shape result = WithElementType(operand, operand.element_type());
  result.set_dynamic_dimension(dimension, true);
  return result;
}

}  // namespace hlo

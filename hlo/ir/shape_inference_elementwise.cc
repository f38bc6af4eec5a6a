// Shape inference for elementwise ops: unary and binary arithmetic, compare, select, clamp,
// the conversions, reduce-precision and map. Each checks that the operands are arrays of one
// set of dimensions (no implicit broadcast) and that the element types suit the opcode, then
// returns the operand shape, possibly with a new element type.
#include <algorithm>
#include <string>

#include "hlo/ir/shape_inference.h"
#include "hlo/ir/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hlo {

using shape_inference_internal::ExpectArray;
using shape_inference_internal::ExpectScalar;
using shape_inference_internal::InvalidArg;
using shape_inference_internal::IsScalar;
using shape_inference_internal::SameDimensions;
using shape_inference_internal::Scalar;
using shape_inference_internal::ShapeStr;
using shape_inference_internal::TypeStr;
using shape_inference_internal::WithElementType;

namespace {

// The operand of `opcode` has one of the element types the opcode table admits.
absl::Status ExpectElementTypes(HloOpcode opcode, const Shape& shape) {
  const ElementTypeSet types = ElementwiseTypes(opcode);
  if (IsOfElementTypes(shape.element_type(), types)) return absl::OkStatus();
  return InvalidArg(HloOpcodeString(opcode), ": operand must have ", ElementTypesName(types),
                    " element type, got ", ShapeStr(shape));
}

PrimitiveType ComplexComponentType(PrimitiveType t) {
  return t == PrimitiveType::kC128 ? PrimitiveType::kF64 : PrimitiveType::kF32;
}

// real, imag and abs: a complex operand yields its component type.
absl::StatusOr<Shape> InferComplexComponentOp(HloOpcode opcode, const Shape& operand) {
  RETURN_IF_ERROR(ExpectElementTypes(opcode, operand));
  const PrimitiveType t = operand.element_type();
  return WithElementType(operand, IsComplexType(t) ? ComplexComponentType(t) : t);
}

absl::Status CheckSameArrays(std::string_view op, const Shape& lhs, const Shape& rhs) {
  RETURN_IF_ERROR(ExpectArray(op, "lhs", lhs));
  RETURN_IF_ERROR(ExpectArray(op, "rhs", rhs));
  if (!SameDimensions(lhs, rhs)) {
    return InvalidArg(op, ": operands must have the same dimensions (no implicit broadcast), got ",
                      ShapeStr(lhs), " and ", ShapeStr(rhs));
  }
  if (lhs.element_type() != rhs.element_type()) {
    return InvalidArg(op, ": operands must have the same element type, got ", ShapeStr(lhs),
                      " and ", ShapeStr(rhs));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> InferUnaryOpShape(HloOpcode opcode, const Shape& operand) {
  const std::string_view op = HloOpcodeString(opcode);
  if (!IsElementwiseUnary(opcode)) {
    return InvalidArg(op, ": not a unary elementwise opcode");
  }
  if (HasOpcodeFlag(opcode, op_traits::kForwardsOperand)) return operand;  // copy
  RETURN_IF_ERROR(ExpectArray(op, "operand", operand));
  if (opcode == HloOpcode::kReal || opcode == HloOpcode::kImag || opcode == HloOpcode::kAbs) {
    return InferComplexComponentOp(opcode, operand);
  }
  RETURN_IF_ERROR(ExpectElementTypes(opcode, operand));
  const bool predicate = opcode == HloOpcode::kIsFinite;
  return WithElementType(operand, predicate ? PrimitiveType::kPred : operand.element_type());
}

absl::StatusOr<Shape> InferBinaryOpShape(HloOpcode opcode, const Shape& lhs, const Shape& rhs) {
  const std::string_view op = HloOpcodeString(opcode);
  if (!IsElementwiseBinary(opcode)) {
    return InvalidArg(op, ": not a binary elementwise opcode");
  }
  RETURN_IF_ERROR(CheckSameArrays(op, lhs, rhs));
  RETURN_IF_ERROR(ExpectElementTypes(opcode, lhs));
  const PrimitiveType t = lhs.element_type();
  if (opcode == HloOpcode::kComplex) {
    return WithElementType(lhs,
                           t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128);
  }
  return WithElementType(lhs, t);
}

absl::StatusOr<Shape> InferCompareShape(const Shape& lhs, const Shape& rhs) {
  RETURN_IF_ERROR(CheckSameArrays("compare", lhs, rhs));
  return WithElementType(lhs, PrimitiveType::kPred);
}

absl::StatusOr<Shape> InferSelectShape(const Shape& pred, const Shape& on_true,
                                       const Shape& on_false) {
  RETURN_IF_ERROR(ExpectArray("select", "pred", pred));
  RETURN_IF_ERROR(CheckSameArrays("select", on_true, on_false));
  if (pred.element_type() != PrimitiveType::kPred) {
    return InvalidArg("select: pred must have element type pred, got ", ShapeStr(pred));
  }
  if (!SameDimensions(pred, on_true)) {
    return InvalidArg("select: pred ", ShapeStr(pred), " must have the dimensions of ",
                      ShapeStr(on_true));
  }
  return on_true;
}

absl::StatusOr<Shape> InferClampShape(const Shape& min, const Shape& operand, const Shape& max) {
  RETURN_IF_ERROR(ExpectArray("clamp", "min", min));
  RETURN_IF_ERROR(ExpectArray("clamp", "operand", operand));
  RETURN_IF_ERROR(ExpectArray("clamp", "max", max));
  for (const Shape* bound : {&min, &max}) {
    const char* name = bound == &min ? "min" : "max";
    if (bound->element_type() != operand.element_type()) {
      return InvalidArg("clamp: ", name, " ", ShapeStr(*bound),
                        " must have the element type of operand ", ShapeStr(operand));
    }
    if (!IsScalar(*bound) && !SameDimensions(*bound, operand)) {
      return InvalidArg("clamp: ", name, " ", ShapeStr(*bound),
                        " must be a scalar or have the dimensions of operand ", ShapeStr(operand));
    }
  }
  return operand;
}

absl::StatusOr<Shape> InferConvertShape(const Shape& operand, PrimitiveType new_type) {
  RETURN_IF_ERROR(ExpectArray("convert", "operand", operand));
  if (!IsArrayType(new_type)) {
    return InvalidArg("convert: cannot convert to ", TypeStr(new_type));
  }
  return WithElementType(operand, new_type);
}

absl::StatusOr<Shape> InferBitcastConvertShape(const Shape& operand, PrimitiveType new_type) {
  RETURN_IF_ERROR(ExpectArray("bitcast-convert", "operand", operand));
  const PrimitiveType old_type = operand.element_type();
  if (!IsArrayType(new_type)) {
    return InvalidArg("bitcast-convert: cannot convert to ", TypeStr(new_type));
  }
  if (IsComplexType(old_type) != IsComplexType(new_type)) {
    return InvalidArg("bitcast-convert: cannot convert between complex and real types: ",
                      ShapeStr(operand), " to ", TypeStr(new_type));
  }
  const int in_bits = BitWidth(old_type);
  const int out_bits = BitWidth(new_type);
  if (std::max(in_bits, out_bits) % std::min(in_bits, out_bits) != 0) {
    return InvalidArg("bitcast-convert: bit widths ", in_bits, " (", TypeStr(old_type), ") and ",
                      out_bits, " (", TypeStr(new_type), ") do not divide");
  }
  std::vector<int64_t> dims = operand.dimensions();
  if (in_bits > out_bits) {
    dims.push_back(in_bits / out_bits);
  } else if (in_bits < out_bits) {
    const int64_t ratio = out_bits / in_bits;
    if (dims.empty() || dims.back() != ratio) {
      return InvalidArg("bitcast-convert: converting ", ShapeStr(operand), " to ",
                        TypeStr(new_type), " needs a minor dimension of size ", ratio);
    }
    dims.pop_back();
  }
  return Shape::Array(new_type, dims);
}

absl::StatusOr<Shape> InferStochasticConvertShape(const Shape& operand, const Shape& random,
                                                  PrimitiveType new_type) {
  RETURN_IF_ERROR(ExpectArray("stochastic-convert", "operand", operand));
  RETURN_IF_ERROR(ExpectArray("stochastic-convert", "random", random));
  if (!IsFloatingPointType(operand.element_type())) {
    return InvalidArg("stochastic-convert: operand must be floating-point, got ",
                      ShapeStr(operand));
  }
  if (!IsUnsignedIntegralType(random.element_type()) ||
      BitWidth(random.element_type()) != BitWidth(operand.element_type())) {
    return InvalidArg("stochastic-convert: random ", ShapeStr(random),
                      " must be unsigned with the bit width of operand ", ShapeStr(operand));
  }
  if (!SameDimensions(operand, random)) {
    return InvalidArg("stochastic-convert: random ", ShapeStr(random),
                      " must have the dimensions of operand ", ShapeStr(operand));
  }
  return WithElementType(operand, new_type);
}

absl::StatusOr<Shape> InferReducePrecisionShape(const Shape& operand, int64_t exponent_bits,
                                                int64_t mantissa_bits) {
  RETURN_IF_ERROR(ExpectArray("reduce-precision", "operand", operand));
  if (!IsFloatingPointType(operand.element_type())) {
    return InvalidArg("reduce-precision: operand must be floating-point, got ", ShapeStr(operand));
  }
  if (exponent_bits < 1) {
    return InvalidArg("reduce-precision: exponent_bits must be >= 1, got ", exponent_bits);
  }
  if (mantissa_bits < 0) {
    return InvalidArg("reduce-precision: mantissa_bits must be >= 0, got ", mantissa_bits);
  }
  return operand;
}

absl::StatusOr<Shape> InferMapShape(absl::Span<const Shape* const> operands,
                                    const ProgramShape& to_apply,
                                    absl::Span<const int64_t> dimensions) {
  if (operands.empty()) return InvalidArg("map: expected at least one operand");
  const Shape& first = *operands[0];
  for (size_t i = 0; i < operands.size(); ++i) {
    RETURN_IF_ERROR(ExpectArray("map", absl::StrCat("operand ", i), *operands[i]));
    if (!SameDimensions(*operands[i], first)) {
      return InvalidArg("map: operand ", i, " ", ShapeStr(*operands[i]),
                        " must have the dimensions of operand 0 ", ShapeStr(first));
    }
  }
  for (size_t i = 0; i < dimensions.size(); ++i) {
    if (dimensions[i] != static_cast<int64_t>(i) ||
        dimensions.size() != first.dimensions().size()) {
      return InvalidArg("map: dimensions must be {0, ..., rank-1}, got ",
                        shape_inference_internal::DimsStr(dimensions));
    }
  }
  if (to_apply.parameters.size() != operands.size()) {
    return InvalidArg("map: to_apply takes ", to_apply.parameters.size(),
                      " parameters but map has ", operands.size(), " operands");
  }
  RETURN_IF_ERROR(ExpectScalar("map", "to_apply result", to_apply.result));
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!to_apply.parameters[i].Compatible(Scalar(operands[i]->element_type()))) {
      return InvalidArg("map: to_apply parameter ", i, " has shape ",
                        ShapeStr(to_apply.parameters[i]), " but operand ", i, " is ",
                        ShapeStr(*operands[i]));
    }
  }
  return WithElementType(first, to_apply.result.element_type());
}

}  // namespace hlo

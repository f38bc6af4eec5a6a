#include "runtime/cpu/verify_exact.h"

#include <algorithm>
#include <cmath>

#include "hlo/parser/hlo_parser.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {
namespace {

using hlo::HloOpcode;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

// Opcodes whose results depend on the bits of their element types, not only on their values.
constexpr HloOpcode kBitDependent[] = {
    HloOpcode::kBitcastConvert,  HloOpcode::kRng,
    HloOpcode::kRngBitGenerator, HloOpcode::kRngGetAndUpdateState,
    HloOpcode::kCustomCall,      HloOpcode::kInfeed,
    HloOpcode::kOutfeed};

PrimitiveType Widened(PrimitiveType type) {
  if (hlo::IsComplexType(type)) return PrimitiveType::kC128;
  if (hlo::IsFloatingPointType(type)) return PrimitiveType::kF64;
  return type;
}

Shape WidenShape(const Shape& shape) {
  if (shape.IsTuple()) {
    std::vector<Shape> elements;
    for (const Shape& e : shape.tuple_shapes()) elements.push_back(WidenShape(e));
    return Shape::Tuple(std::move(elements));
  }
  if (!shape.IsArray() || Widened(shape.element_type()) == shape.element_type()) return shape;
  Shape out = Shape::Array(Widened(shape.element_type()), shape.dimensions());
  for (int64_t d = 0; d < shape.rank(); ++d) {
    out.set_dynamic_dimension(d, shape.is_dynamic_dimension(d));
  }
  return out;
}

void WidenInstruction(hlo::HloInstruction& instr) {
  *instr.mutable_shape() = WidenShape(instr.shape());
  hlo::InstructionAttributes& attrs = *instr.mutable_attrs();
  if (attrs.literal.has_value()) attrs.literal = WidenLiteral(*attrs.literal);
}

// Largest |a - b| over an array leaf, as doubles (complex: the modulus of the difference).
double MaxDistance(const Literal& a, const Literal& b) {
  const int64_t n = a.shape().IsArray() ? a.element_count() : 0;
  const bool complex = hlo::IsComplexType(a.shape().element_type());
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = complex ? std::abs(a.GetComplex(i) - b.GetComplex(i))
                             : std::abs(a.GetDouble(i) - b.GetDouble(i));
    worst = std::max(worst, std::isnan(d) ? INFINITY : d);
  }
  return worst;
}

double MaxMagnitude(const Literal& a) {
  const bool complex = hlo::IsComplexType(a.shape().element_type());
  double worst = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    worst = std::max(worst, complex ? std::abs(a.GetComplex(i)) : std::abs(a.GetDouble(i)));
  }
  return worst;
}

}  // namespace

absl::StatusOr<std::unique_ptr<hlo::HloModule>> WidenToF64(const hlo::HloModule& module) {
  ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> wide,
                   hlo::ParseHloModule(module.ToString(), module.name()));
  for (const auto& computation : wide->computations()) {
    for (const auto& instr : computation->instructions()) {
      for (HloOpcode bits : kBitDependent) {
        if (instr->opcode() != bits || hlo::ForwardsOperand(*instr)) continue;
        return absl::UnimplementedError(
            hlo::StrCat("%", instr->name(), " (", hlo::HloOpcodeString(bits),
                        ") depends on its types' bits; the module cannot be widened to f64"));
      }
      WidenInstruction(*instr);
    }
  }
  return wide;
}

Literal WidenLiteral(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    Literal out(WidenShape(shape));
    for (size_t i = 0; i < literal.tuple_elements().size(); ++i) {
      (*out.mutable_tuple_elements())[i] = WidenLiteral(literal.tuple_elements()[i]);
    }
    return out;
  }
  const PrimitiveType to = shape.IsArray() ? Widened(shape.element_type()) : shape.element_type();
  if (to == shape.element_type()) return literal;
  Literal out(WidenShape(shape));
  const bool complex = hlo::IsComplexType(to);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (complex) {
      out.SetComplex(i, literal.GetComplex(i));
    } else {
      out.SetDouble(i, literal.GetDouble(i));
    }
  }
  return out;
}

std::optional<ExactCheck> CheckAgainstExact(const Literal& expected, const Literal& actual,
                                            const Literal& exact, const Tolerance& tolerance) {
  const Shape& shape = expected.shape();
  const bool floating = shape.IsArray() && (hlo::IsFloatingPointType(shape.element_type()) ||
                                            hlo::IsComplexType(shape.element_type()));
  if (!floating) return std::nullopt;
  if (actual.shape().dimensions() != shape.dimensions() ||
      exact.shape().dimensions() != shape.dimensions()) {
    return std::nullopt;
  }
  const double scale = std::max(1.0, MaxMagnitude(exact));
  if (!std::isfinite(scale)) return std::nullopt;
  ExactCheck check;
  check.reference_error = MaxDistance(expected, exact);
  check.spmd_error = MaxDistance(actual, exact);
  if (!std::isfinite(check.reference_error)) return std::nullopt;
  check.bound = kErrorFactor * check.reference_error + tolerance.atol * scale;
  return check;
}

}  // namespace runtime

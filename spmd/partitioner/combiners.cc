#include "spmd/partitioner/combiners.h"

#include <limits>

namespace spmd {

using hlo::HloOpcode;
using hlo::Shape;

std::optional<hlo::Literal> CombinerIdentity(HloOpcode op, hlo::PrimitiveType type) {
  const bool is_float = hlo::IsFloatingPointType(type);
  const bool is_pred = type == hlo::PrimitiveType::kPred;
  const bool is_signed = hlo::IsSignedIntegralType(type);
  if (!is_float && !is_pred && !is_signed && !hlo::IsUnsignedIntegralType(type)) {
    return std::nullopt;  // Complex and other types.
  }
  const int bits = is_pred ? 1 : hlo::BitWidth(type);
  const uint64_t unsigned_max = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const int64_t signed_max =
      bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
  const double inf = std::numeric_limits<double>::infinity();
  hlo::Literal literal(Shape::Array(type, {}));  // Zero.
  // Stays a switch: each reducer's identity is its own arithmetic on `type`, not data.
  switch (op) {
    case HloOpcode::kAdd:
    case HloOpcode::kOr:
      return literal;
    case HloOpcode::kMultiply:
      if (is_float) literal.SetDouble(0, 1); else literal.SetInt(0, 1);
      return literal;
    case HloOpcode::kAnd:
      if (is_float) return std::nullopt;
      if (is_signed) literal.SetInt(0, -1); else literal.SetUint(0, unsigned_max);
      return literal;
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum: {
      const bool max = op == HloOpcode::kMaximum;
      if (is_float) {
        if (bits <= 8) return std::nullopt;  // Some 8-bit formats have no infinity.
        literal.SetDouble(0, max ? -inf : inf);
      } else if (is_signed) {
        literal.SetInt(0, max ? -signed_max - 1 : signed_max);
      } else if (!max) {
        literal.SetUint(0, unsigned_max);
      }
      return literal;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace spmd

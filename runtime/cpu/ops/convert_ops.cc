// Type conversions for the CPU evaluator: convert, bitcast-convert, reduce-precision.
//
// convert dispatches on the source and then on the destination type, so every pair runs one
// typed loop. Rules (XLA's):
//   - float -> integer saturates: NaN -> 0, values beyond the range -> the type's min or max,
//     otherwise truncation toward zero;
//   - anything -> pred is `x != 0`;
//   - integer -> integer wraps (two's complement truncation or extension);
//   - real -> complex sets the imaginary part to 0; complex -> real is an error (XLA does not
//     implement it);
//   - narrow floats round to nearest even through the float codec: from f64 the value goes to
//     the codec as a double (bf16 and f16 round through f32 first, as Eigen does), from other
//     types through float.
// bitcast-convert copies the bytes: same-width types reinterpret each element, and a width
// change adds or removes the minor dimension, which on a little-endian host is the same byte
// sequence. reduce-precision rounds the mantissa to nearest even and then flushes values out
// of the reduced exponent range to signed zero or infinity, on the raw bits of the operand type,
// exactly as XLA's evaluator does (NaN stays NaN unless mantissa_bits is 0, which gives +inf).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hlo/ir/float_codec.h"
#include "hlo/status_macros.h"
#include "runtime/common/reduce_precision.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/op_registry.h"
#include "runtime/cpu/ops/elementwise_kernels.h"
#include "runtime/cpu/ops/family_registration.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::PrimitiveType;
using namespace elementwise;  // NOLINT: the kernel vocabulary of this file.

// float -> integer with XLA's saturation.
template <typename I, typename F>
I SaturatingCast(F x) {
  if (std::isnan(x)) return 0;
  const double value = static_cast<double>(x);
  if (value <= static_cast<double>(std::numeric_limits<I>::lowest())) {
    return std::numeric_limits<I>::lowest();
  }
  if (value >= std::ldexp(1.0, std::numeric_limits<I>::digits)) {
    return std::numeric_limits<I>::max();
  }
  return static_cast<I>(x);
}

// Converts one compute value of the source into destination storage at y[i].
template <typename D, typename CS>
inline void StoreConverted(D* y, int64_t i, CS v) {
  if constexpr (IsNarrowFloat<D>::value) {
    if constexpr (std::is_same_v<CS, double>) {
      y[i].bits = static_cast<decltype(y[i].bits)>(hlo::EncodeNarrowFloat(D::kPrimitiveType, v));
    } else {
      StoreValue(y, i, static_cast<float>(v));
    }
  } else if constexpr (kIsComplex<D>) {
    if constexpr (kIsComplex<CS>) {
      y[i] = D(v);
    } else {
      y[i] = D(static_cast<typename D::value_type>(v), 0);
    }
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<CS>) {
    y[i] = SaturatingCast<D>(v);
  } else {
    y[i] = static_cast<D>(v);
  }
}

template <typename S, typename D>
void ConvertLoop(const Literal& in, Literal& out) {
  const S* x = Data<S>(in);
  D* y = MutableData<D>(out);
  const int64_t n = in.element_count();
  for (int64_t i = 0; i < n; ++i) StoreConverted(y, i, LoadValue(x, i));
}

// Converts `in` (element type S) to pred.
template <typename S>
void ConvertToPred(const Literal& in, Literal& out) {
  const S* x = Data<S>(in);
  uint8_t* y = MutableData<uint8_t>(out);
  const int64_t n = in.element_count();
  using CS = ComputeType<S>;
  for (int64_t i = 0; i < n; ++i) y[i] = LoadValue(x, i) != CS(0);
}

absl::Status ConvertArray(const Literal& in, Literal& out) {
  const PrimitiveType from = in.shape().element_type();
  const PrimitiveType to = out.shape().element_type();
  return DispatchArrayType(from, [&](auto from_tag) -> absl::Status {
    using S = typename decltype(from_tag)::type;
    if (to == PrimitiveType::kPred) {
      ConvertToPred<S>(in, out);
      return absl::OkStatus();
    }
    return DispatchArrayType(to, [&](auto to_tag) -> absl::Status {
      using D = typename decltype(to_tag)::type;
      if constexpr (kIsComplex<S> && !kIsComplex<D>) {
        return absl::UnimplementedError(hlo::StrCat(
            "convert from complex type ", hlo::PrimitiveTypeName(from), " to real type ",
            hlo::PrimitiveTypeName(to), " is not supported (XLA does not define it)"));
      } else {
        ConvertLoop<S, D>(in, out);
        return absl::OkStatus();
      }
    });
  });
}

absl::StatusOr<Literal> HandleConvert(const HloInstruction& instr,
                                      absl::Span<const Literal* const> operands, Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  const Literal& in = *operands[0];
  RETURN_IF_ERROR(CheckResultShape(instr, instr.shape().element_type(), in.element_count()));
  Literal out(instr.shape());
  if (in.shape().element_type() == instr.shape().element_type()) {
    *out.mutable_data() = in.data();
    return out;
  }
  RETURN_IF_ERROR(ConvertArray(in, out));
  return out;
}

bool IsWholeBytes(PrimitiveType type) { return hlo::BitWidth(type) % 8 == 0; }

absl::StatusOr<Literal> HandleBitcastConvert(const HloInstruction& instr,
                                             absl::Span<const Literal* const> operands,
                                             Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  const Literal& in = *operands[0];
  const hlo::Shape& shape = instr.shape();
  if (!shape.IsArray() || !IsWholeBytes(shape.element_type()) ||
      !IsWholeBytes(in.shape().element_type())) {
    return absl::UnimplementedError(hlo::StrCat("bitcast-convert from ", in.shape().ToString(),
                                                " to ", shape.ToString(),
                                                " is not supported (sub-byte element types)"));
  }
  if (shape.byte_size() != static_cast<int64_t>(in.data().size())) {
    return absl::InvalidArgumentError(hlo::StrCat("bitcast-convert from ", in.shape().ToString(),
                                                  " to ", shape.ToString(),
                                                  " changes the size in bytes"));
  }
  Literal out(shape);
  *out.mutable_data() = in.data();
  return out;
}

// Bit layout of an IEEE-style binary float format.
struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
};

template <typename U>
void ReducePrecisionLoop(const Literal& in, Literal& out, FloatFormat f, int exponent_bits,
                         int mantissa_bits) {
  const U* x = Data<U>(in);
  U* y = MutableData<U>(out);
  const int64_t n = in.element_count();
  for (int64_t i = 0; i < n; ++i) {
    y[i] = static_cast<U>(
        ReducePrecisionBits(x[i], f.exponent_bits, f.mantissa_bits, exponent_bits, mantissa_bits));
  }
}

absl::StatusOr<Literal> HandleReducePrecision(const HloInstruction& instr,
                                              absl::Span<const Literal* const> operands,
                                              Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  const Literal& in = *operands[0];
  const PrimitiveType type = in.shape().element_type();
  const int64_t exponent_bits = instr.attrs().exponent_bits;
  const int64_t mantissa_bits = instr.attrs().mantissa_bits;
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return absl::InvalidArgumentError(
        hlo::StrCat("reduce-precision needs exponent_bits >= 1 and "
                    "mantissa_bits >= 0, got ",
                    exponent_bits, " and ", mantissa_bits));
  }
  RETURN_IF_ERROR(CheckResultShape(instr, type, in.element_count()));
  Literal out(instr.shape());
  // Widths beyond the format's own are no-ops; cap them to fit an int.
  const int e = static_cast<int>(std::min<int64_t>(exponent_bits, 64));
  const int m = static_cast<int>(std::min<int64_t>(mantissa_bits, 64));
  switch (type) {
    case PrimitiveType::kF32:
      ReducePrecisionLoop<uint32_t>(in, out, {8, 23}, e, m);
      break;
    case PrimitiveType::kF64:
      ReducePrecisionLoop<uint64_t>(in, out, {11, 52}, e, m);
      break;
    case PrimitiveType::kBF16:
      ReducePrecisionLoop<uint16_t>(in, out, {8, 7}, e, m);
      break;
    case PrimitiveType::kF16:
      ReducePrecisionLoop<uint16_t>(in, out, {5, 10}, e, m);
      break;
    case PrimitiveType::kF8E5M2:
      ReducePrecisionLoop<uint8_t>(in, out, {5, 2}, e, m);
      break;
    default:
      return UnsupportedType(instr, type);
  }
  return out;
}

absl::StatusOr<Literal> HandleStochasticConvert(const HloInstruction&,
                                                absl::Span<const Literal* const>, Evaluator&) {
  return absl::UnimplementedError(
      "stochastic-convert is not supported by the CPU executor (its rounding depends on the "
      "backend's random-bit consumption)");
}

}  // namespace

void RegisterConvertOps(OpTable& table) {
  table[HloOpcode::kConvert] = &HandleConvert;
  table[HloOpcode::kBitcastConvert] = &HandleBitcastConvert;
  table[HloOpcode::kReducePrecision] = &HandleReducePrecision;
  table[HloOpcode::kStochasticConvert] = &HandleStochasticConvert;
}

}  // namespace runtime

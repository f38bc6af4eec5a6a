// Unary and binary elementwise opcodes for the CPU evaluator.
//
// Each opcode is a small functor: its opcode (`kOpcode`; the element types it accepts are the
// opcode table's, hlo::ElementwiseTypes), the storage type of its result (`Out<T>`, usually
// T), the result's PrimitiveType, and `operator()` on compute values (ComputeType: float for the
// narrow floats). `HandleUnary<Op>` and `HandleBinary<Op>` dispatch once on the operand's element
// type and run a plain typed loop, so there is no per-element switch. Semantics follow XLA's
// reference evaluator:
//   - signed integer add/subtract/multiply/negate/abs wrap around (two's complement);
//   - integer x / 0 is -1 (all ones for unsigned), INT_MIN / -1 is INT_MIN; x % 0 is x and
//     INT_MIN % -1 is 0;
//   - maximum/minimum propagate NaN (the first NaN operand wins);
//   - shifts by an amount >= the bit width (or negative) give 0, or the sign fill for
//     shift-right-arithmetic;
//   - power: x^0 and 1^x are 1; an integer raised to a negative power is 0 (1 for base 1);
//   - pred operands: not is logical; add/or/maximum are or, multiply/and/minimum are and, xor
//     is xor; other opcodes reject pred.
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "hlo/status_macros.h"
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

// Whether the opcode table admits storage type T for `opcode` (pred is handled apart).
template <typename T>
constexpr bool AcceptsType(HloOpcode opcode) {
  const hlo::ElementTypeSet types = hlo::ElementwiseTypes(opcode);
  if constexpr (kIsComplex<T>) {
    return (types & hlo::kComplexKind) != 0;
  } else if constexpr (kIsInt<T>) {
    return (types & (std::is_signed_v<T> ? hlo::kSignedKind : hlo::kUnsignedKind)) != 0;
  } else if constexpr (kIsFloat<T>) {
    return (types & hlo::kFloatKind) != 0 ||
           ((types & hlo::kF32F64Kind) != 0 && std::is_floating_point_v<T>);
  } else {
    return false;
  }
}

constexpr bool AcceptsPred(HloOpcode opcode) {
  return (hlo::ElementwiseTypes(opcode) & hlo::kPredKind) != 0;
}

PrimitiveType ComponentType(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return t;
}

// How a binary opcode treats pred operands.
enum class PredRule { kReject, kOr, kAnd, kXor };

// Defaults: the result has the operand's element type; pred is rejected.
struct SameType {
  template <typename T>
  using Out = T;
  static PrimitiveType OutType(PrimitiveType t) { return t; }
  static constexpr PredRule kPred = PredRule::kReject;
};

template <typename C>
C WrapNegate(C x) {
  return static_cast<C>(-static_cast<WrapType<C>>(x));
}

// ----------------------------------------------------------------------------- unary functors

struct AbsOp {
  static constexpr HloOpcode kOpcode = HloOpcode::kAbs;
  template <typename T>
  using Out = RealOf<T>;
  static PrimitiveType OutType(PrimitiveType t) { return ComponentType(t); }
  template <typename C>
  auto operator()(C x) const {
    if constexpr (kIsComplex<C>) {
      return std::abs(x);
    } else if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_integral_v<C>) {
      return x < 0 ? WrapNegate(x) : x;
    } else {
      return std::fabs(x);
    }
  }
};

struct NegateOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kNegate;
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return WrapNegate(x);
    } else {
      return -x;
    }
  }
};

struct SignOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kSign;
  template <typename C>
  C operator()(C x) const {
    if constexpr (kIsComplex<C>) {
      const auto magnitude = std::abs(x);
      return magnitude == 0 ? C(0) : x / magnitude;
    } else if constexpr (std::is_integral_v<C>) {
      return static_cast<C>((C(0) < x) - (x < C(0)));
    } else {
      return std::isnan(x) ? x : std::copysign(static_cast<C>(x != 0), x);
    }
  }
};

struct ExpOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kExp;
  template <typename C>
  C operator()(C x) const {
    return std::exp(x);
  }
};

struct Expm1Op : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kExpm1;
  template <typename C>
  C operator()(C x) const {
    if constexpr (kIsComplex<C>) {
      return std::exp(x) - C(1);
    } else {
      return std::expm1(x);
    }
  }
};

struct LogOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kLog;
  template <typename C>
  C operator()(C x) const {
    return std::log(x);
  }
};

struct Log1pOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kLog1p;
  template <typename C>
  C operator()(C x) const {
    if constexpr (kIsComplex<C>) {
      return std::log(C(1) + x);
    } else {
      return std::log1p(x);
    }
  }
};

struct LogisticOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kLogistic;
  template <typename C>
  C operator()(C x) const {
    return C(1) / (C(1) + std::exp(-x));
  }
};

struct SqrtOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kSqrt;
  template <typename C>
  C operator()(C x) const {
    return std::sqrt(x);
  }
};

struct RsqrtOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kRsqrt;
  template <typename C>
  C operator()(C x) const {
    return C(1) / std::sqrt(x);
  }
};

struct CbrtOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kCbrt;
  template <typename C>
  C operator()(C x) const {
    return std::cbrt(x);
  }
};

struct SinOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kSin;
  template <typename C>
  C operator()(C x) const {
    return std::sin(x);
  }
};

struct CosOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kCos;
  template <typename C>
  C operator()(C x) const {
    return std::cos(x);
  }
};

struct TanOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kTan;
  template <typename C>
  C operator()(C x) const {
    return std::tan(x);
  }
};

struct TanhOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kTanh;
  template <typename C>
  C operator()(C x) const {
    return std::tanh(x);
  }
};

struct ErfOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kErf;
  template <typename C>
  C operator()(C x) const {
    return std::erf(x);
  }
};

struct FloorOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kFloor;
  template <typename C>
  C operator()(C x) const {
    return std::floor(x);
  }
};

struct CeilOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kCeil;
  template <typename C>
  C operator()(C x) const {
    return std::ceil(x);
  }
};

// Round half away from zero.
struct RoundAfzOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kRoundNearestAfz;
  template <typename C>
  C operator()(C x) const {
    return std::round(x);
  }
};

// Round half to even (the default floating-point environment rounds to nearest even).
struct RoundEvenOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kRoundNearestEven;
  template <typename C>
  C operator()(C x) const {
    return std::nearbyint(x);
  }
};

// Bitwise not on integers (pred is handled as logical not by HandleUnary).
struct NotOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kNot;
  template <typename C>
  C operator()(C x) const {
    return static_cast<C>(~x);
  }
};

struct PopcntOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kPopulationCount;
  template <typename C>
  C operator()(C x) const {
    const auto bits = static_cast<uint64_t>(static_cast<std::make_unsigned_t<C>>(x));
    return static_cast<C>(__builtin_popcountll(bits));
  }
};

struct ClzOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kClz;
  template <typename C>
  C operator()(C x) const {
    constexpr int kBits = 8 * sizeof(C);
    const auto bits = static_cast<uint64_t>(static_cast<std::make_unsigned_t<C>>(x));
    return static_cast<C>(bits == 0 ? kBits : __builtin_clzll(bits) - (64 - kBits));
  }
};

struct IsFiniteOp {
  static constexpr HloOpcode kOpcode = HloOpcode::kIsFinite;
  template <typename T>
  using Out = uint8_t;
  static PrimitiveType OutType(PrimitiveType) { return PrimitiveType::kPred; }
  template <typename C>
  uint8_t operator()(C x) const {
    return std::isfinite(x) ? 1 : 0;
  }
};

struct RealOp {
  static constexpr HloOpcode kOpcode = HloOpcode::kReal;
  template <typename T>
  using Out = RealOf<T>;
  static PrimitiveType OutType(PrimitiveType t) { return ComponentType(t); }
  template <typename C>
  auto operator()(C x) const {
    if constexpr (kIsComplex<C>) {
      return x.real();
    } else {
      return x;
    }
  }
};

struct ImagOp {
  static constexpr HloOpcode kOpcode = HloOpcode::kImag;
  template <typename T>
  using Out = RealOf<T>;
  static PrimitiveType OutType(PrimitiveType t) { return ComponentType(t); }
  template <typename C>
  auto operator()(C x) const {
    if constexpr (kIsComplex<C>) {
      return x.imag();
    } else {
      return C(0);
    }
  }
};

// ---------------------------------------------------------------------------- binary functors

struct AddOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kAdd;
  static constexpr PredRule kPred = PredRule::kOr;
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(static_cast<WrapType<C>>(a) + static_cast<WrapType<C>>(b));
    } else {
      return a + b;
    }
  }
};

struct SubtractOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kSubtract;
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(static_cast<WrapType<C>>(a) - static_cast<WrapType<C>>(b));
    } else {
      return a - b;
    }
  }
};

struct MultiplyOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kMultiply;
  static constexpr PredRule kPred = PredRule::kAnd;
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(static_cast<WrapType<C>>(a) * static_cast<WrapType<C>>(b));
    } else {
      return a * b;
    }
  }
};

struct DivideOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kDivide;
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return static_cast<C>(-1);  // All ones for unsigned types.
      if constexpr (std::is_signed_v<C>) {
        if (b == -1 && a == std::numeric_limits<C>::min()) return a;
      }
    }
    return static_cast<C>(a / b);
  }
};

struct RemainderOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kRemainder;
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return a;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1 && a == std::numeric_limits<C>::min()) return 0;
      }
      return static_cast<C>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};

struct MaximumOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kMaximum;
  static constexpr PredRule kPred = PredRule::kOr;
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
    }
    return a < b ? b : a;
  }
};

struct MinimumOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kMinimum;
  static constexpr PredRule kPred = PredRule::kAnd;
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
    }
    return b < a ? b : a;
  }
};

// Integer power by squaring in wrapping unsigned arithmetic.
template <typename C>
C IntegerPower(C base, C exponent) {
  if constexpr (std::is_signed_v<C>) {
    if (exponent < 0) return base == 1 ? 1 : 0;
  }
  WrapType<C> result = 1;
  WrapType<C> b = static_cast<WrapType<C>>(base);
  auto e = static_cast<std::make_unsigned_t<C>>(exponent);
  while (e != 0) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<C>(result);
}

struct PowerOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kPower;
  template <typename C>
  C operator()(C a, C b) const {
    if (a == C(1) || b == C(0)) return C(1);
    if constexpr (kIsComplex<C>) {
      // inf^(r + 0i) is inf for r > 0 and 0 for r < 0.
      const bool a_is_inf = a.imag() == 0 && a.real() > 0 && std::isinf(a.real());
      if (a_is_inf && b.imag() == 0 && b.real() > 0) return a;
      if (a_is_inf && b.imag() == 0 && b.real() < 0) return C(0);
      return std::pow(a, b);
    } else if constexpr (std::is_integral_v<C>) {
      return IntegerPower(a, b);
    } else {
      return std::pow(a, b);
    }
  }
};

struct Atan2Op : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kAtan2;
  template <typename C>
  C operator()(C y, C x) const {
    if constexpr (kIsComplex<C>) {
      // atan2(y, x) = -i * log((x + i*y) / sqrt(x^2 + y^2)).
      const C i(0, 1);
      return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
    } else {
      return std::atan2(y, x);
    }
  }
};

struct AndOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kAnd;
  static constexpr PredRule kPred = PredRule::kAnd;
  template <typename C>
  C operator()(C a, C b) const {
    return static_cast<C>(a & b);
  }
};

struct OrOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kOr;
  static constexpr PredRule kPred = PredRule::kOr;
  template <typename C>
  C operator()(C a, C b) const {
    return static_cast<C>(a | b);
  }
};

struct XorOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kXor;
  static constexpr PredRule kPred = PredRule::kXor;
  template <typename C>
  C operator()(C a, C b) const {
    return static_cast<C>(a ^ b);
  }
};

template <typename C>
bool ShiftOutOfRange(C amount) {
  return static_cast<std::make_unsigned_t<C>>(amount) >= 8 * sizeof(C);
}

struct ShiftLeftOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kShiftLeft;
  template <typename C>
  C operator()(C a, C b) const {
    if (ShiftOutOfRange(b)) return 0;
    return static_cast<C>(static_cast<WrapType<C>>(a) << b);
  }
};

struct ShiftRightArithmeticOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kShiftRightArithmetic;
  template <typename C>
  C operator()(C a, C b) const {
    const auto as_signed = static_cast<std::make_signed_t<C>>(a);
    if (ShiftOutOfRange(b)) return as_signed < 0 ? static_cast<C>(-1) : 0;
    return static_cast<C>(as_signed >> b);
  }
};

struct ShiftRightLogicalOp : SameType {
  static constexpr HloOpcode kOpcode = HloOpcode::kShiftRightLogical;
  template <typename C>
  C operator()(C a, C b) const {
    if (ShiftOutOfRange(b)) return 0;
    return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) >> b);
  }
};

template <typename T>
using ComplexOf = std::complex<std::conditional_t<std::is_same_v<T, double>, double, float>>;

// complex(real, imag): f32 -> c64, f64 -> c128.
struct ComplexOp {
  static constexpr HloOpcode kOpcode = HloOpcode::kComplex;
  static constexpr PredRule kPred = PredRule::kReject;
  template <typename T>
  using Out = ComplexOf<T>;
  static PrimitiveType OutType(PrimitiveType t) {
    return t == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64;
  }
  template <typename C>
  ComplexOf<C> operator()(C re, C im) const {
    return ComplexOf<C>(re, im);
  }
};

// ------------------------------------------------------------------------------------ handlers

template <typename Op>
absl::StatusOr<Literal> HandleUnary(const HloInstruction& instr,
                                    absl::Span<const Literal* const> operands, Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  const Literal& x = *operands[0];
  const PrimitiveType type = x.shape().element_type();
  Literal out;
  if (type == PrimitiveType::kPred) {  // Of the unary ops only `not` accepts pred: logical.
    if (!AcceptsPred(Op::kOpcode)) return UnsupportedType(instr, type);
    RETURN_IF_ERROR(CheckResultShape(instr, PrimitiveType::kPred, x.element_count()));
    out = Literal(instr.shape());
    MapUnary<uint8_t, uint8_t>(x, out, [](uint8_t v) { return static_cast<uint8_t>(v == 0); });
    return out;
  }
  RETURN_IF_ERROR(DispatchArrayType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (AcceptsType<T>(Op::kOpcode)) {
      RETURN_IF_ERROR(CheckResultShape(instr, Op::OutType(type), x.element_count()));
      out = Literal(instr.shape());
      MapUnary<T, typename Op::template Out<T>>(x, out, Op{});
      return absl::OkStatus();
    } else {
      return UnsupportedType(instr, type);
    }
  }));
  return out;
}

// Binary opcodes on pred operands (stored as 0/1 bytes).
template <typename Op>
absl::Status RunPredBinary(const HloInstruction& instr, const Literal& a, const Literal& b,
                           Literal& out) {
  switch (Op::kPred) {
    case PredRule::kOr:
      MapBinary<uint8_t, uint8_t>(a, b, out, [](uint8_t x, uint8_t y) -> uint8_t { return x | y; });
      return absl::OkStatus();
    case PredRule::kAnd:
      MapBinary<uint8_t, uint8_t>(a, b, out, [](uint8_t x, uint8_t y) -> uint8_t { return x & y; });
      return absl::OkStatus();
    case PredRule::kXor:
      MapBinary<uint8_t, uint8_t>(a, b, out, [](uint8_t x, uint8_t y) -> uint8_t { return x ^ y; });
      return absl::OkStatus();
    case PredRule::kReject:
      break;
  }
  return UnsupportedType(instr, PrimitiveType::kPred);
}

template <typename Op>
absl::StatusOr<Literal> HandleBinary(const HloInstruction& instr,
                                     absl::Span<const Literal* const> operands, Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 2));
  const Literal& a = *operands[0];
  const Literal& b = *operands[1];
  const PrimitiveType type = a.shape().element_type();
  if (b.shape().element_type() != type || b.element_count() != a.element_count()) {
    return absl::InvalidArgumentError(hlo::StrCat("operands ", a.shape().ToString(), " and ",
                                                  b.shape().ToString(), " do not match"));
  }
  static_assert((Op::kPred != PredRule::kReject) == AcceptsPred(Op::kOpcode),
                "a binary op's pred rule and its opcode's element types disagree");
  Literal out;
  if (type == PrimitiveType::kPred) {
    if (!AcceptsPred(Op::kOpcode)) return UnsupportedType(instr, type);
    RETURN_IF_ERROR(CheckResultShape(instr, PrimitiveType::kPred, a.element_count()));
    out = Literal(instr.shape());
    RETURN_IF_ERROR(RunPredBinary<Op>(instr, a, b, out));
    return out;
  }
  RETURN_IF_ERROR(DispatchArrayType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (AcceptsType<T>(Op::kOpcode)) {
      RETURN_IF_ERROR(CheckResultShape(instr, Op::OutType(type), a.element_count()));
      out = Literal(instr.shape());
      MapBinary<T, typename Op::template Out<T>>(a, b, out, Op{});
      return absl::OkStatus();
    } else {
      return UnsupportedType(instr, type);
    }
  }));
  return out;
}

void RegisterUnaryOps(OpTable& table) {
  table[HloOpcode::kAbs] = &HandleUnary<AbsOp>;
  table[HloOpcode::kNegate] = &HandleUnary<NegateOp>;
  table[HloOpcode::kSign] = &HandleUnary<SignOp>;
  table[HloOpcode::kExp] = &HandleUnary<ExpOp>;
  table[HloOpcode::kExpm1] = &HandleUnary<Expm1Op>;
  table[HloOpcode::kLog] = &HandleUnary<LogOp>;
  table[HloOpcode::kLog1p] = &HandleUnary<Log1pOp>;
  table[HloOpcode::kLogistic] = &HandleUnary<LogisticOp>;
  table[HloOpcode::kSqrt] = &HandleUnary<SqrtOp>;
  table[HloOpcode::kRsqrt] = &HandleUnary<RsqrtOp>;
  table[HloOpcode::kCbrt] = &HandleUnary<CbrtOp>;
  table[HloOpcode::kSin] = &HandleUnary<SinOp>;
  table[HloOpcode::kCos] = &HandleUnary<CosOp>;
  table[HloOpcode::kTan] = &HandleUnary<TanOp>;
  table[HloOpcode::kTanh] = &HandleUnary<TanhOp>;
  table[HloOpcode::kErf] = &HandleUnary<ErfOp>;
  table[HloOpcode::kFloor] = &HandleUnary<FloorOp>;
  table[HloOpcode::kCeil] = &HandleUnary<CeilOp>;
  table[HloOpcode::kRoundNearestAfz] = &HandleUnary<RoundAfzOp>;
  table[HloOpcode::kRoundNearestEven] = &HandleUnary<RoundEvenOp>;
  table[HloOpcode::kNot] = &HandleUnary<NotOp>;
  table[HloOpcode::kPopulationCount] = &HandleUnary<PopcntOp>;
  table[HloOpcode::kClz] = &HandleUnary<ClzOp>;
  table[HloOpcode::kIsFinite] = &HandleUnary<IsFiniteOp>;
  table[HloOpcode::kReal] = &HandleUnary<RealOp>;
  table[HloOpcode::kImag] = &HandleUnary<ImagOp>;
}

void RegisterBinaryOps(OpTable& table) {
  table[HloOpcode::kAdd] = &HandleBinary<AddOp>;
  table[HloOpcode::kSubtract] = &HandleBinary<SubtractOp>;
  table[HloOpcode::kMultiply] = &HandleBinary<MultiplyOp>;
  table[HloOpcode::kDivide] = &HandleBinary<DivideOp>;
  table[HloOpcode::kRemainder] = &HandleBinary<RemainderOp>;
  table[HloOpcode::kMaximum] = &HandleBinary<MaximumOp>;
  table[HloOpcode::kMinimum] = &HandleBinary<MinimumOp>;
  table[HloOpcode::kPower] = &HandleBinary<PowerOp>;
  table[HloOpcode::kAtan2] = &HandleBinary<Atan2Op>;
  table[HloOpcode::kAnd] = &HandleBinary<AndOp>;
  table[HloOpcode::kOr] = &HandleBinary<OrOp>;
  table[HloOpcode::kXor] = &HandleBinary<XorOp>;
  table[HloOpcode::kShiftLeft] = &HandleBinary<ShiftLeftOp>;
  table[HloOpcode::kShiftRightArithmetic] = &HandleBinary<ShiftRightArithmeticOp>;
  table[HloOpcode::kShiftRightLogical] = &HandleBinary<ShiftRightLogicalOp>;
  table[HloOpcode::kComplex] = &HandleBinary<ComplexOp>;
}

}  // namespace

void RegisterElementwiseOps(OpTable& table) {
  RegisterUnaryOps(table);
  RegisterBinaryOps(table);
  RegisterCompareOps(table);
  RegisterConvertOps(table);
}

}  // namespace runtime

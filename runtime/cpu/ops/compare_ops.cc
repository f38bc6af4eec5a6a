// compare, select and clamp for the CPU evaluator.
//
// compare: the direction and the comparison type are resolved once, outside the loop. The
// default type follows the element type (FLOAT for floats, SIGNED for signed integers,
// UNSIGNED for unsigned integers and pred). TOTALORDER on floats compares sign-magnitude keys
// of the raw bits, so -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN and equality is bit
// equality up to the NaN payload; FLOAT follows IEEE (NaN is unordered, -0 == +0). An explicit
// SIGNED/UNSIGNED type reinterprets integer operands. Complex operands support only EQ and NE.
//
// select: the predicate is a pred array of the operands' shape or a pred scalar (which picks a
// whole operand). clamp(min, x, max) = min(max(x, min), max) with NaN propagation as in XLA's
// evaluator; min and max may be scalars.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hlo/status_macros.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/op_registry.h"
#include "runtime/cpu/ops/compare_keys.h"
#include "runtime/cpu/ops/elementwise_kernels.h"
#include "runtime/cpu/ops/family_registration.h"

namespace runtime {
namespace {

using hlo::ComparisonDirection;
using hlo::ComparisonType;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::PrimitiveType;
using namespace elementwise;  // NOLINT: the kernel vocabulary of this file.

// z[i] = a(i) <direction> b(i), for loaders a and b returning comparable keys.
template <typename LoadA, typename LoadB>
void CompareLoop(ComparisonDirection direction, int64_t n, LoadA a, LoadB b, uint8_t* z) {
  switch (direction) {
    case ComparisonDirection::kEq:
      for (int64_t i = 0; i < n; ++i) z[i] = a(i) == b(i);
      return;
    case ComparisonDirection::kNe:
      for (int64_t i = 0; i < n; ++i) z[i] = a(i) != b(i);
      return;
    case ComparisonDirection::kLt:
      for (int64_t i = 0; i < n; ++i) z[i] = a(i) < b(i);
      return;
    case ComparisonDirection::kLe:
      for (int64_t i = 0; i < n; ++i) z[i] = a(i) <= b(i);
      return;
    case ComparisonDirection::kGt:
      for (int64_t i = 0; i < n; ++i) z[i] = a(i) > b(i);
      return;
    case ComparisonDirection::kGe:
      for (int64_t i = 0; i < n; ++i) z[i] = a(i) >= b(i);
      return;
  }
}

// z[i] = x[i] <direction> y[i] under comparison `type` (compare_keys.h).
template <typename T>
absl::Status CompareTyped(const Literal& a, const Literal& b, ComparisonDirection direction,
                          ComparisonType type, uint8_t* z) {
  const int64_t n = a.element_count();
  const T* x = Data<T>(a);
  const T* y = Data<T>(b);
  return WithCompareKey<T>(direction, type, a.shape().element_type(), [&](auto key) {
    if constexpr (kIsComplex<T>) {  // EQ or NE (WithCompareKey rejects the others).
      const bool eq = direction == ComparisonDirection::kEq;
      for (int64_t i = 0; i < n; ++i) z[i] = (key(x, i) == key(y, i)) == eq;
    } else {
      CompareLoop(
          direction, n, [&](int64_t i) { return key(x, i); },
          [&](int64_t i) { return key(y, i); }, z);
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<Literal> HandleCompare(const HloInstruction& instr,
                                      absl::Span<const Literal* const> operands, Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 2));
  const Literal& a = *operands[0];
  const Literal& b = *operands[1];
  const PrimitiveType type = a.shape().element_type();
  if (b.shape().element_type() != type || b.element_count() != a.element_count()) {
    return absl::InvalidArgumentError(hlo::StrCat("operands ", a.shape().ToString(), " and ",
                                                  b.shape().ToString(), " do not match"));
  }
  RETURN_IF_ERROR(CheckResultShape(instr, PrimitiveType::kPred, a.element_count()));
  Literal out(instr.shape());
  uint8_t* z = MutableData<uint8_t>(out);
  RETURN_IF_ERROR(DispatchArrayType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    return CompareTyped<T>(a, b, instr.attrs().comparison_direction, instr.attrs().comparison_type,
                           z);
  }));
  return out;
}

// Element-size-specialized select: the fixed-size memcpy compiles to one move.
template <int kBytes>
void SelectLoop(const uint8_t* pred, const uint8_t* on_true, const uint8_t* on_false, uint8_t* out,
                int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(out + i * kBytes, (pred[i] ? on_true : on_false) + i * kBytes, kBytes);
  }
}

void SelectBytes(const uint8_t* pred, const uint8_t* on_true, const uint8_t* on_false, uint8_t* out,
                 int64_t n, int element_bytes) {
  switch (element_bytes) {
    case 1:
      return SelectLoop<1>(pred, on_true, on_false, out, n);
    case 2:
      return SelectLoop<2>(pred, on_true, on_false, out, n);
    case 4:
      return SelectLoop<4>(pred, on_true, on_false, out, n);
    case 8:
      return SelectLoop<8>(pred, on_true, on_false, out, n);
    case 16:
      return SelectLoop<16>(pred, on_true, on_false, out, n);
    default:
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(out + i * element_bytes, (pred[i] ? on_true : on_false) + i * element_bytes,
                    element_bytes);
      }
  }
}

absl::StatusOr<Literal> HandleSelect(const HloInstruction& instr,
                                     absl::Span<const Literal* const> operands, Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 3));
  const Literal& pred = *operands[0];
  const Literal& on_true = *operands[1];
  const Literal& on_false = *operands[2];
  const PrimitiveType type = on_true.shape().element_type();
  const int64_t n = on_true.element_count();
  if (on_false.shape().element_type() != type || on_false.element_count() != n) {
    return absl::InvalidArgumentError(hlo::StrCat("on_true ", on_true.shape().ToString(),
                                                  " and on_false ", on_false.shape().ToString(),
                                                  " do not match"));
  }
  const bool scalar_pred = pred.shape().rank() == 0;
  if (pred.shape().element_type() != PrimitiveType::kPred ||
      (!scalar_pred && pred.element_count() != n)) {
    return absl::InvalidArgumentError(hlo::StrCat(
        "predicate ", pred.shape().ToString(), " must be a pred scalar or have ", n, " elements"));
  }
  RETURN_IF_ERROR(CheckResultShape(instr, type, n));
  Literal out(instr.shape());
  uint8_t* dst = out.mutable_data()->data();
  if (scalar_pred) {
    const Literal& chosen = pred.data()[0] ? on_true : on_false;
    if (!chosen.data().empty()) std::memcpy(dst, chosen.data().data(), chosen.data().size());
    return out;
  }
  SelectBytes(pred.data().data(), on_true.data().data(), on_false.data().data(), dst, n,
              hlo::ByteWidth(type));
  return out;
}

template <typename C>
C ClampValue(C low, C value, C high) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(low)) return low;
    if (std::isnan(value)) return value;
    if (std::isnan(high)) return high;
  }
  const C raised = value < low ? low : value;
  return high < raised ? high : raised;
}

template <typename T>
void ClampLoop(const Literal& low, const Literal& x, const Literal& high, Literal& out) {
  const T* lo = Data<T>(low);
  const T* v = Data<T>(x);
  const T* hi = Data<T>(high);
  T* z = MutableData<T>(out);
  const int64_t n = x.element_count();
  const int64_t lo_step = low.shape().rank() == 0 ? 0 : 1;
  const int64_t hi_step = high.shape().rank() == 0 ? 0 : 1;
  for (int64_t i = 0; i < n; ++i) {
    StoreValue(z, i,
               ClampValue(LoadValue(lo, i * lo_step), LoadValue(v, i), LoadValue(hi, i * hi_step)));
  }
}

absl::StatusOr<Literal> HandleClamp(const HloInstruction& instr,
                                    absl::Span<const Literal* const> operands, Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 3));
  const Literal& x = *operands[1];
  const PrimitiveType type = x.shape().element_type();
  for (int k : {0, 2}) {
    const Literal& bound = *operands[k];
    if (bound.shape().element_type() != type ||
        (bound.shape().rank() != 0 && bound.element_count() != x.element_count())) {
      return absl::InvalidArgumentError(
          hlo::StrCat(k == 0 ? "min " : "max ", bound.shape().ToString(),
                      " must be a scalar or match the operand ", x.shape().ToString()));
    }
  }
  RETURN_IF_ERROR(CheckResultShape(instr, type, x.element_count()));
  Literal out(instr.shape());
  RETURN_IF_ERROR(DispatchArrayType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (kIsComplex<T>) {
      return UnsupportedType(instr, type);
    } else {
      ClampLoop<T>(*operands[0], x, *operands[2], out);
      return absl::OkStatus();
    }
  }));
  return out;
}

}  // namespace

void RegisterCompareOps(OpTable& table) {
  table[HloOpcode::kCompare] = &HandleCompare;
  table[HloOpcode::kSelect] = &HandleSelect;
  table[HloOpcode::kClamp] = &HandleClamp;
}

}  // namespace runtime

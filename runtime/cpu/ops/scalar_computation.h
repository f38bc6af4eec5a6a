// Scalar computations called by reduce, reduce-window, select-and-scatter, sort, map and
// scatter: recognising the common one-instruction bodies so that kernels can run a typed loop,
// and calling any other body element by element through the evaluator.
//
// Recognised bodies (the "fast paths"):
//   combiner   ROOT r = T[] add|multiply|maximum|minimum|and|or(parameter(0), parameter(1))
//              (either operand order: all six are commutative);
//   assign     ROOT r = parameter(1)                       (scatter's "replace");
//   compare    ROOT r = pred[] compare(parameter(i), parameter(j)), direction=D, type=K
//              (sort comparators, select-and-scatter's select).
// Anything else runs through `CallScalarComputation`, which builds scalar Literals and calls
// `Evaluator::Call`, so every body the evaluator can run is supported, only slower.
#ifndef RUNTIME_CPU_OPS_SCALAR_COMPUTATION_H_
#define RUNTIME_CPU_OPS_SCALAR_COMPUTATION_H_

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/analysis/combiner.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/literal.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {

// The opcode of a combiner body `op(parameter(0), parameter(1))` whose parameters and result are
// scalars of `type`, when op is one that `BinaryOpSupports(op, type)`; nullopt otherwise.
std::optional<hlo::HloOpcode> MatchScalarCombiner(const hlo::HloComputation& computation,
                                                  hlo::PrimitiveType type);

// Whether `computation` has two scalar parameters of `type` and returns parameter 1 unchanged.
bool IsAssignCombiner(const hlo::HloComputation& computation, hlo::PrimitiveType type);

// Comparator bodies (hlo/analysis/combiner.h).
using hlo::MatchParameterComparison;
using hlo::ParameterComparison;

// Whether the typed combiner loop supports `op` on `type`: add/multiply on every type,
// maximum/minimum on non-complex types, and/or on integers and pred.
bool BinaryOpSupports(hlo::HloOpcode op, hlo::PrimitiveType type);

// A scalar Literal holding element `i` of array `array`.
hlo::Literal ScalarOf(const hlo::Literal& array, int64_t i);
// Copies element `i` of `from` into element `j` of `to`. REQUIRES: same element type.
void CopyElement(const hlo::Literal& from, int64_t i, hlo::Literal& to, int64_t j);

// Calls `computation` on `args` and returns its scalar results: the tuple elements of a tuple
// result, else the single result. An error unless there is one scalar result per entry of
// `expected`, of that element type.
absl::StatusOr<std::vector<hlo::Literal>> CallScalarComputation(
    Evaluator& evaluator, const hlo::HloComputation& computation,
    absl::Span<const hlo::Literal* const> args, absl::Span<const hlo::PrimitiveType> expected);

// A signed integer whose order is IEEE totalOrder on `v` (floats are widened exactly).
inline int64_t TotalOrderKey(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits < 0 ? bits ^ INT64_MAX : bits;
}

// The array shapes of a variadic op's `n` results: the tuple elements of a tuple `shape` (which
// must have n array elements), else `shape` itself (then n must be 1).
absl::StatusOr<std::vector<hlo::Shape>> VariadicResultShapes(const hlo::Shape& shape, int64_t n);
// The op's value from its `results`: a tuple of them when `shape` is a tuple, else results[0].
hlo::Literal PackVariadic(std::vector<hlo::Literal> results, const hlo::Shape& shape);

// Typed binary functors on compute values C (ComputeType of the storage type). Integer
// arithmetic wraps (computed in 64-bit unsigned); float maximum/minimum propagate NaN.
template <typename C>
struct AddOp {
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    } else {
      return a + b;
    }
  }
};
template <typename C>
struct MulOp {
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    } else {
      return a * b;
    }
  }
};
template <typename C>
struct MaxOp {
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      return (a > b || std::isnan(a)) ? a : b;
    } else {
      return a > b ? a : b;
    }
  }
};
template <typename C>
struct MinOp {
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      return (a < b || std::isnan(a)) ? a : b;
    } else {
      return a < b ? a : b;
    }
  }
};
template <typename C>
struct AndOp {
  C operator()(C a, C b) const { return static_cast<C>(a & b); }
};
template <typename C>
struct OrOp {
  C operator()(C a, C b) const { return static_cast<C>(a | b); }
};

template <typename C>
struct IsComplex : std::false_type {};
template <typename R>
struct IsComplex<std::complex<R>> : std::true_type {};

// Calls f(functor) with the functor for `op` on compute type C, returning f's result (an
// absl::Status). For pred (`is_pred`), add is logical or. REQUIRES: BinaryOpSupports(op, type).
template <typename C, typename F>
absl::Status WithBinaryOp(hlo::HloOpcode op, bool is_pred, F&& f) {
  using hlo::HloOpcode;
  // Stays a switch: each case instantiates f with a different functor type (no table holds types).
  switch (op) {
    case HloOpcode::kAdd:
      if constexpr (std::is_integral_v<C>) {
        if (is_pred) return f(OrOp<C>{});
      }
      return f(AddOp<C>{});
    case HloOpcode::kMultiply:
      return f(MulOp<C>{});
    case HloOpcode::kMaximum:
      if constexpr (!IsComplex<C>::value) return f(MaxOp<C>{});
      break;
    case HloOpcode::kMinimum:
      if constexpr (!IsComplex<C>::value) return f(MinOp<C>{});
      break;
    case HloOpcode::kAnd:
      if constexpr (std::is_integral_v<C>) return f(AndOp<C>{});
      break;
    case HloOpcode::kOr:
      if constexpr (std::is_integral_v<C>) return f(OrOp<C>{});
      break;
    default:
      break;
  }
  return absl::InternalError("WithBinaryOp: unsupported combiner opcode for this type");
}

// Evaluates `a direction b` on compute values. With `total_order` (comparison type
// TOTALORDER), floats compare by IEEE totalOrder: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
template <typename C>
bool CompareValues(hlo::ComparisonDirection direction, bool total_order, C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (total_order) return CompareValues(direction, false, TotalOrderKey(a), TotalOrderKey(b));
  }
  using hlo::ComparisonDirection;
  if constexpr (IsComplex<C>::value) {
    return direction == ComparisonDirection::kEq ? a == b : a != b;  // Eq and Ne only.
  } else {
    switch (direction) {
      case ComparisonDirection::kEq:
        return a == b;
      case ComparisonDirection::kNe:
        return a != b;
      case ComparisonDirection::kLt:
        return a < b;
      case ComparisonDirection::kLe:
        return a <= b;
      case ComparisonDirection::kGt:
        return a > b;
      case ComparisonDirection::kGe:
        return a >= b;
    }
    return false;
  }
}

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_SCALAR_COMPUTATION_H_

// The keys the compare op orders elements by, shared by the compare kernel (compare_ops.cc) and
// the sort comparator's per-pair program (sort_comparator.cc), so both give the same answer.
//
// `WithCompareKey<T>` resolves a comparison type on storage type T once and hands its caller a
// key function `key(const T* data, int64_t i)`; the built-in operators on the keys implement
// the comparison: integers reinterpreted as signed or unsigned (an explicit SIGNED/UNSIGNED
// type overrides the element type's own), floats by IEEE value (FLOAT, the default) or by a
// sign-magnitude key of their raw bits (TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < +NaN),
// complex values by value (EQ and NE only).
#ifndef RUNTIME_CPU_OPS_COMPARE_KEYS_H_
#define RUNTIME_CPU_OPS_COMPARE_KEYS_H_

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/status/status.h"
#include "hlo/ir/hlo_attributes.h"
#include "hlo/ir/primitive_type.h"
#include "hlo/strings.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/ops/elementwise_kernels.h"

namespace runtime {

// The signed integer whose order is the total order of the float with storage T.
template <typename T>
auto StorageTotalOrderKey(T value) {
  if constexpr (IsNarrowFloat<T>::value) {
    using Signed = std::make_signed_t<decltype(value.bits)>;
    const auto bits = static_cast<Signed>(value.bits);
    return static_cast<Signed>(bits < 0 ? bits ^ std::numeric_limits<Signed>::max() : bits);
  } else {
    using Signed = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
    Signed bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return static_cast<Signed>(bits < 0 ? bits ^ std::numeric_limits<Signed>::max() : bits);
  }
}

// `a direction b` on keys. Complex keys support EQ and NE only (others give false).
template <typename K>
bool CompareKeys(hlo::ComparisonDirection direction, const K& a, const K& b) {
  using hlo::ComparisonDirection;
  switch (direction) {
    case ComparisonDirection::kEq:
      return a == b;
    case ComparisonDirection::kNe:
      return a != b;
    default:
      break;
  }
  if constexpr (!elementwise::kIsComplex<K>) {
    switch (direction) {
      case ComparisonDirection::kLt:
        return a < b;
      case ComparisonDirection::kLe:
        return a <= b;
      case ComparisonDirection::kGt:
        return a > b;
      case ComparisonDirection::kGe:
        return a >= b;
      default:
        break;
    }
  }
  return false;
}

inline absl::Status BadComparisonType(hlo::ComparisonType type, hlo::PrimitiveType element_type) {
  return absl::InvalidArgumentError(hlo::StrCat("comparison type ", hlo::ComparisonTypeString(type),
                                                " does not apply to element type ",
                                                hlo::PrimitiveTypeName(element_type)));
}

// Calls f(key) with the key function of comparison `type` and `direction` on storage T
// (element type `element_type`) and returns f's absl::Status; an error, without calling f,
// when the comparison does not apply to the type.
template <typename T, typename F>
absl::Status WithCompareKey(hlo::ComparisonDirection direction, hlo::ComparisonType type,
                            hlo::PrimitiveType element_type, F&& f) {
  using hlo::ComparisonDirection;
  using hlo::ComparisonType;
  if constexpr (elementwise::kIsInt<T>) {
    if (type == ComparisonType::kFloat || type == ComparisonType::kPartialOrder) {
      return BadComparisonType(type, element_type);
    }
    const bool as_signed = type == ComparisonType::kSigned ||
                           (type != ComparisonType::kUnsigned && std::is_signed_v<T>);
    if (as_signed) {
      using S = std::make_signed_t<T>;
      return f([](const T* data, int64_t i) { return reinterpret_cast<const S*>(data)[i]; });
    }
    using U = std::make_unsigned_t<T>;
    return f([](const T* data, int64_t i) { return reinterpret_cast<const U*>(data)[i]; });
  } else if constexpr (elementwise::kIsComplex<T>) {
    if (direction != ComparisonDirection::kEq && direction != ComparisonDirection::kNe) {
      return absl::InvalidArgumentError(
          hlo::StrCat("complex values support only EQ and NE comparisons, got ",
                      hlo::ComparisonDirectionString(direction)));
    }
    return f([](const T* data, int64_t i) { return data[i]; });
  } else {
    if (type == ComparisonType::kSigned || type == ComparisonType::kUnsigned) {
      return BadComparisonType(type, element_type);
    }
    if (type == ComparisonType::kTotalOrder) {
      return f([](const T* data, int64_t i) { return StorageTotalOrderKey(data[i]); });
    }
    return f([](const T* data, int64_t i) { return elementwise::LoadValue(data, i); });
  }
}

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_COMPARE_KEYS_H_

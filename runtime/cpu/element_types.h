// Compile-time dispatch over element types for the CPU kernels.
//
// `DispatchArrayType(type, f)` calls `f(Tag<T>{})` with T the C++ storage type of `type`:
// bool-as-uint8_t for pred, the fixed-width integers, float/double, std::complex, and for the
// narrow floats (bf16, f16, f8, f4) the raw storage type `NarrowFloat<bits>` whose values are
// read and written through float (see Load/Store). Unsupported types return an error.
#ifndef RUNTIME_CPU_ELEMENT_TYPES_H_
#define RUNTIME_CPU_ELEMENT_TYPES_H_

#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "absl/status/status.h"
#include "hlo/ir/float_codec.h"
#include "hlo/ir/literal.h"
#include "hlo/strings.h"

namespace runtime {

template <typename T>
struct Tag {
  using type = T;
};

// Storage of a narrow float element of `kType`.
template <hlo::PrimitiveType kType, typename Storage>
struct NarrowFloat {
  Storage bits;
  static constexpr hlo::PrimitiveType kPrimitiveType = kType;
};

template <typename T>
struct IsNarrowFloat : std::false_type {};
template <hlo::PrimitiveType K, typename S>
struct IsNarrowFloat<NarrowFloat<K, S>> : std::true_type {};

// The arithmetic type computations on T use: float for narrow floats, else T itself
// (uint8_t stands for pred).
template <typename T>
using ComputeType = std::conditional_t<IsNarrowFloat<T>::value, float, T>;

template <typename T>
inline ComputeType<T> LoadElement(const T* data, int64_t i) {
  if constexpr (IsNarrowFloat<T>::value) {
    return static_cast<float>(hlo::DecodeNarrowFloat(T::kPrimitiveType, data[i].bits));
  } else {
    return data[i];
  }
}

template <typename T>
inline void StoreElement(T* data, int64_t i, ComputeType<T> v) {
  if constexpr (IsNarrowFloat<T>::value) {
    data[i].bits = static_cast<decltype(data[i].bits)>(
        hlo::EncodeNarrowFloat(T::kPrimitiveType, static_cast<double>(v)));
  } else {
    data[i] = v;
  }
}

template <typename T>
T* MutableData(hlo::Literal& literal) {
  return reinterpret_cast<T*>(literal.mutable_data()->data());
}
template <typename T>
const T* Data(const hlo::Literal& literal) {
  return reinterpret_cast<const T*>(literal.data().data());
}

// Calls f(Tag<T>{}) for the storage type of `type`; returns f's result. f must return
// absl::Status or absl::StatusOr<X> (the same for every T).
template <typename F>
auto DispatchArrayType(hlo::PrimitiveType type, F&& f) -> decltype(f(Tag<float>{})) {
  using hlo::PrimitiveType;
  switch (type) {
    case PrimitiveType::kPred: return f(Tag<uint8_t>{});
    case PrimitiveType::kS8: return f(Tag<int8_t>{});
    case PrimitiveType::kS16: return f(Tag<int16_t>{});
    case PrimitiveType::kS32: return f(Tag<int32_t>{});
    case PrimitiveType::kS64: return f(Tag<int64_t>{});
    case PrimitiveType::kU8: return f(Tag<uint8_t>{});
    case PrimitiveType::kU16: return f(Tag<uint16_t>{});
    case PrimitiveType::kU32: return f(Tag<uint32_t>{});
    case PrimitiveType::kU64: return f(Tag<uint64_t>{});
    case PrimitiveType::kF32: return f(Tag<float>{});
    case PrimitiveType::kF64: return f(Tag<double>{});
    case PrimitiveType::kC64: return f(Tag<std::complex<float>>{});
    case PrimitiveType::kC128: return f(Tag<std::complex<double>>{});
    case PrimitiveType::kBF16: return f(Tag<NarrowFloat<PrimitiveType::kBF16, uint16_t>>{});
    case PrimitiveType::kF16: return f(Tag<NarrowFloat<PrimitiveType::kF16, uint16_t>>{});
    case PrimitiveType::kF8E5M2: return f(Tag<NarrowFloat<PrimitiveType::kF8E5M2, uint8_t>>{});
    case PrimitiveType::kF8E4M3FN:
      return f(Tag<NarrowFloat<PrimitiveType::kF8E4M3FN, uint8_t>>{});
    default:
      return absl::UnimplementedError(
          hlo::StrCat("the CPU executor does not support element type ",
                      hlo::PrimitiveTypeName(type)));
  }
}

}  // namespace runtime

#endif  // RUNTIME_CPU_ELEMENT_TYPES_H_

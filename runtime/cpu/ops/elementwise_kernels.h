// Typed loops and checks shared by the elementwise handler files (elementwise_ops.cc,
// compare_ops.cc, convert_ops.cc).
//
// A handler dispatches once on the element type (DispatchArrayType) and then runs one of the
// Map loops below with a functor; the loop body is a plain indexed loop over the dense
// row-major buffers, so for the native types the compiler can vectorize it. Narrow floats are
// loaded and stored through float: bf16 and f16 with the inline codecs below, the 8-bit
// formats through element_types.h.
#ifndef RUNTIME_CPU_OPS_ELEMENTWISE_KERNELS_H_
#define RUNTIME_CPU_OPS_ELEMENTWISE_KERNELS_H_

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/literal.h"
#include "hlo/strings.h"
#include "runtime/cpu/element_types.h"

namespace runtime {
namespace elementwise {

// Traits over storage types (the T of Tag<T>).
template <typename T>
struct IsComplexStorage : std::false_type {};
template <typename R>
struct IsComplexStorage<std::complex<R>> : std::true_type {};
template <typename T>
inline constexpr bool kIsComplex = IsComplexStorage<T>::value;
// Floating point, native or narrow.
template <typename T>
inline constexpr bool kIsFloat = std::is_floating_point_v<T> || IsNarrowFloat<T>::value;
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T>;

// The real component type of a complex storage type; T itself otherwise.
template <typename T>
struct RealOfImpl {
  using type = T;
};
template <typename R>
struct RealOfImpl<std::complex<R>> {
  using type = R;
};
template <typename T>
using RealOf = typename RealOfImpl<T>::type;

// Unsigned type at least as wide as `int`, for wrapping integer arithmetic without undefined
// behaviour (and without promotion to signed int for narrow unsigned types).
template <typename T>
using WrapType =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// Inline bf16/f16 codecs, bit-identical to hlo/ir/float_codec for finite values and infinities
// (round to nearest even; f16 overflows to infinity at 65520). They keep a NaN's sign, which
// the out-of-line codec drops. Other narrow floats go through the codec.
inline float DecodeBf16Bits(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

inline uint16_t EncodeBf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN.
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
}

inline float DecodeF16Bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1F;
  const uint32_t mantissa = h & 0x3FF;
  uint32_t u;
  if (exponent == 0x1F) {
    u = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent == 0) {  // Zero or subnormal: mantissa * 2^-24.
    const float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -magnitude : magnitude;
  } else {
    u = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

inline uint16_t EncodeF16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00;   // NaN.
  if (a >= 0x477FF000u) return sign | 0x7C00;  // >= 65520 rounds to infinity.
  if (a < 0x38800000u) {                       // Below 2^-14: a multiple of 2^-24.
    float magnitude;
    std::memcpy(&magnitude, &a, sizeof(magnitude));
    return sign | static_cast<uint16_t>(std::nearbyint(magnitude * 16777216.0f));
  }
  uint32_t half = (((a >> 23) - 112) << 10) | ((a >> 13) & 0x3FF);
  const uint32_t rest = a & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return sign | static_cast<uint16_t>(half);
}

// LoadElement/StoreElement (element_types.h) with the bf16 and f16 codecs inlined.
template <typename T>
inline ComputeType<T> LoadValue(const T* data, int64_t i) {
  if constexpr (IsNarrowFloat<T>::value) {
    if constexpr (T::kPrimitiveType == hlo::PrimitiveType::kBF16) {
      return DecodeBf16Bits(data[i].bits);
    } else if constexpr (T::kPrimitiveType == hlo::PrimitiveType::kF16) {
      return DecodeF16Bits(data[i].bits);
    } else {
      return LoadElement(data, i);
    }
  } else {
    return data[i];
  }
}

template <typename T>
inline void StoreValue(T* data, int64_t i, ComputeType<T> v) {
  if constexpr (IsNarrowFloat<T>::value) {
    if constexpr (T::kPrimitiveType == hlo::PrimitiveType::kBF16) {
      data[i].bits = EncodeBf16Bits(v);
    } else if constexpr (T::kPrimitiveType == hlo::PrimitiveType::kF16) {
      data[i].bits = EncodeF16Bits(v);
    } else {
      StoreElement(data, i, v);
    }
  } else {
    data[i] = v;
  }
}

// out[i] = fn(in[i]) for every element.
template <typename In, typename Out, typename Fn>
void MapUnary(const hlo::Literal& in, hlo::Literal& out, Fn fn) {
  const In* x = Data<In>(in);
  Out* y = MutableData<Out>(out);
  const int64_t n = in.element_count();
  for (int64_t i = 0; i < n; ++i) StoreValue(y, i, fn(LoadValue(x, i)));
}

// out[i] = fn(a[i], b[i]) for every element.
template <typename In, typename Out, typename Fn>
void MapBinary(const hlo::Literal& a, const hlo::Literal& b, hlo::Literal& out, Fn fn) {
  const In* x = Data<In>(a);
  const In* y = Data<In>(b);
  Out* z = MutableData<Out>(out);
  const int64_t n = a.element_count();
  for (int64_t i = 0; i < n; ++i) StoreValue(z, i, fn(LoadValue(x, i), LoadValue(y, i)));
}

// Error for an element type an opcode does not accept.
inline absl::Status UnsupportedType(const hlo::HloInstruction& instr, hlo::PrimitiveType type) {
  return absl::UnimplementedError(hlo::StrCat(hlo::HloOpcodeString(instr.opcode()),
                                              " does not support element type ",
                                              hlo::PrimitiveTypeName(type)));
}

// Checks that `instr` got `count` operands, all arrays.
inline absl::Status CheckArrayOperands(const hlo::HloInstruction& instr,
                                       absl::Span<const hlo::Literal* const> operands,
                                       size_t count) {
  if (operands.size() != count) {
    return absl::InvalidArgumentError(hlo::StrCat(hlo::HloOpcodeString(instr.opcode()), " expects ",
                                                  count, " operands, got ", operands.size()));
  }
  for (size_t i = 0; i < count; ++i) {
    if (!operands[i]->shape().IsArray()) {
      return absl::InvalidArgumentError(
          hlo::StrCat("operand ", i, " of ", hlo::HloOpcodeString(instr.opcode()),
                      " is not an array: ", operands[i]->shape().ToString()));
    }
  }
  return absl::OkStatus();
}

// Checks that the result shape of `instr` has element type `type` and `count` elements.
inline absl::Status CheckResultShape(const hlo::HloInstruction& instr, hlo::PrimitiveType type,
                                     int64_t count) {
  const hlo::Shape& shape = instr.shape();
  if (!shape.IsArray() || shape.element_type() != type || shape.num_elements() != count) {
    return absl::InvalidArgumentError(
        hlo::StrCat("result shape ", shape.ToString(), " does not match the operands: expected ",
                    count, " elements of type ", hlo::PrimitiveTypeName(type)));
  }
  return absl::OkStatus();
}

}  // namespace elementwise
}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_ELEMENTWISE_KERNELS_H_

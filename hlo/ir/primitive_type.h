// Element types of HLO arrays, numbered exactly as xla_data.proto's PrimitiveType so that the
// enum value is the proto value.
#ifndef HLO_IR_PRIMITIVE_TYPE_H_
#define HLO_IR_PRIMITIVE_TYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace hlo {

enum class PrimitiveType : int {
  kInvalid = 0,
  kPred = 1,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU8 = 6,
  kU16 = 7,
  kU32 = 8,
  kU64 = 9,
  kF16 = 10,
  kF32 = 11,
  kF64 = 12,
  kTuple = 13,
  kOpaque = 14,
  kC64 = 15,
  kBF16 = 16,
  kToken = 17,
  kC128 = 18,
  kF8E5M2 = 19,
  kF8E4M3FN = 20,
  kS4 = 21,
  kU4 = 22,
  kF8E4M3B11FNUZ = 23,
  kF8E5M2FNUZ = 24,
  kF8E4M3FNUZ = 25,
  kS2 = 26,
  kU2 = 27,
  kF8E4M3 = 28,
  kF8E3M4 = 29,
  kS1 = 30,
  kU1 = 31,
  kF4E2M1FN = 32,
  kF8E8M0FNU = 33,
};

// The lower-case HLO text name ("f32", "pred", "token", ...).
std::string_view PrimitiveTypeName(PrimitiveType type);
// Inverse of PrimitiveTypeName; nullopt for an unknown name.
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);
// Whether `value` is one of the enumerators above.
bool IsValidPrimitiveType(int value);

bool IsArrayType(PrimitiveType type);  // Not tuple, token, opaque or invalid.
bool IsFloatingPointType(PrimitiveType type);
bool IsComplexType(PrimitiveType type);
bool IsSignedIntegralType(PrimitiveType type);
bool IsUnsignedIntegralType(PrimitiveType type);
inline bool IsIntegralType(PrimitiveType t) {
  return IsSignedIntegralType(t) || IsUnsignedIntegralType(t);
}
// Bits of one element (1 for pred is stored as a byte: see ByteWidth).
int BitWidth(PrimitiveType type);
// Bytes one element occupies in memory (sub-byte types take one byte each).
int ByteWidth(PrimitiveType type);

}  // namespace hlo

#endif  // HLO_IR_PRIMITIVE_TYPE_H_

// Conversions between double and the narrow floating-point encodings HLO uses (f16, bf16, the
// f8 family, f4e2m1fn, f8e8m0fnu). Encoding rounds to nearest, ties to even.
#ifndef HLO_IR_FLOAT_CODEC_H_
#define HLO_IR_FLOAT_CODEC_H_

#include <cstdint>

#include "hlo/ir/primitive_type.h"

namespace hlo {

// REQUIRES: IsFloatingPointType(type) and BitWidth(type) <= 16.
double DecodeNarrowFloat(PrimitiveType type, uint16_t bits);
// REQUIRES: IsFloatingPointType(type) and BitWidth(type) <= 16.
uint16_t EncodeNarrowFloat(PrimitiveType type, double value);

}  // namespace hlo

#endif  // HLO_IR_FLOAT_CODEC_H_

// Narrow floats are described by a small format record (exponent and mantissa widths, bias and
// how infinities and NaNs are encoded). bf16 and f16 take fast bit-level paths; the 8-bit and
// smaller formats decode by formula and encode by nearest-code search over their <= 256 codes.
#include "hlo/ir/float_codec.h"

#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <vector>
#include <cstring>
#include <limits>

namespace hlo {
namespace {

enum class Special { kIeee, kFiniteNanAllOnes, kNegZeroNan, kNone, kUnsignedE8M0 };

struct Format {
  int exp_bits;
  int man_bits;
  int bias;
  Special special;
};

Format FormatOf(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16: return {5, 10, 15, Special::kIeee};
    case PrimitiveType::kBF16: return {8, 7, 127, Special::kIeee};
    case PrimitiveType::kF8E5M2: return {5, 2, 15, Special::kIeee};
    case PrimitiveType::kF8E4M3: return {4, 3, 7, Special::kIeee};
    case PrimitiveType::kF8E3M4: return {3, 4, 3, Special::kIeee};
    case PrimitiveType::kF8E4M3FN: return {4, 3, 7, Special::kFiniteNanAllOnes};
    case PrimitiveType::kF8E4M3FNUZ: return {4, 3, 8, Special::kNegZeroNan};
    case PrimitiveType::kF8E5M2FNUZ: return {5, 2, 16, Special::kNegZeroNan};
    case PrimitiveType::kF8E4M3B11FNUZ: return {4, 3, 11, Special::kNegZeroNan};
    case PrimitiveType::kF4E2M1FN: return {2, 1, 1, Special::kNone};
    case PrimitiveType::kF8E8M0FNU: return {8, 0, 127, Special::kUnsignedE8M0};
    default: return {8, 23, 127, Special::kIeee};
  }
}

double DecodeWithFormat(const Format& f, uint32_t bits) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.special == Special::kUnsignedE8M0) {
    return bits == 0xFF ? nan : std::ldexp(1.0, static_cast<int>(bits) - f.bias);
  }
  const uint32_t sign = (bits >> (f.exp_bits + f.man_bits)) & 1;
  const uint32_t exp = (bits >> f.man_bits) & ((1u << f.exp_bits) - 1);
  const uint32_t man = bits & ((1u << f.man_bits) - 1);
  const uint32_t exp_max = (1u << f.exp_bits) - 1;
  const uint32_t man_max = (1u << f.man_bits) - 1;
  if (f.special == Special::kNegZeroNan && sign && exp == 0 && man == 0) return nan;
  if (f.special == Special::kIeee && exp == exp_max) {
    if (man != 0) return nan;
    return sign ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (f.special == Special::kFiniteNanAllOnes && exp == exp_max && man == man_max) return nan;
  double value = exp == 0 ? std::ldexp(static_cast<double>(man), 1 - f.bias - f.man_bits)
                          : std::ldexp(1.0 + std::ldexp(static_cast<double>(man), -f.man_bits),
                                       static_cast<int>(exp) - f.bias);
  return sign ? -value : value;
}

// Every code of a format of <= 8 bits, decoded once per type (the search below runs per
// element, and decoding costs a scalbn).
struct CodeTable {
  int total_bits = 0;
  std::vector<double> values;  // values[c] = the decoded code c.
};

const CodeTable& CodesOf(PrimitiveType type) {
  static constexpr int kTypes = 64;
  static std::atomic<const CodeTable*> tables[kTypes] = {};
  const int index = static_cast<int>(type);
  const CodeTable* table = index < kTypes ? tables[index].load(std::memory_order_acquire) : nullptr;
  if (table != nullptr) return *table;
  const Format f = FormatOf(type);
  auto* fresh = new CodeTable;
  fresh->total_bits = (f.special == Special::kUnsignedE8M0 ? 0 : 1) + f.exp_bits + f.man_bits;
  for (uint32_t c = 0; c < (1u << fresh->total_bits); ++c) {
    fresh->values.push_back(DecodeWithFormat(f, c));
  }
  if (index >= kTypes) {
    static std::mutex mu;
    static std::vector<std::unique_ptr<CodeTable>> extra;
    std::lock_guard<std::mutex> lock(mu);
    extra.emplace_back(fresh);
    return *fresh;
  }
  const CodeTable* expected = nullptr;
  if (!tables[index].compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
    delete fresh;  // Another thread won; use its table.
    return *expected;
  }
  return *fresh;
}

// Nearest code (ties to the even code) among the finite codes of a format of <= 8 bits.
uint16_t EncodeBySearch(PrimitiveType type, double value) {
  const CodeTable& table = CodesOf(type);
  const Format f = FormatOf(type);
  const int total_bits = table.total_bits;
  const uint32_t codes = 1u << total_bits;
  uint32_t nan_code = 0, inf_code = 0;
  bool has_inf = false, has_nan = false;
  uint32_t best = 0;
  double best_err = std::numeric_limits<double>::infinity();
  for (uint32_t c = 0; c < codes; ++c) {
    double d = table.values[c];
    if (std::isnan(d)) {
      if (!has_nan) nan_code = c;
      has_nan = true;
      continue;
    }
    if (std::isinf(d)) {
      if (d > 0) inf_code = c;
      has_inf = true;
      continue;
    }
    double err = std::fabs(d - value);
    if (err < best_err || (err == best_err && (c & 1) == 0 && (best & 1) == 1)) {
      best = c;
      best_err = err;
    }
  }
  const uint32_t sign_bit = 1u << (total_bits - 1);
  if (std::isnan(value)) return has_nan ? nan_code : best;
  if (std::isinf(value)) {
    if (has_inf) return value > 0 ? inf_code : (inf_code | sign_bit);
    return has_nan ? nan_code : best;
  }
  if (value == 0 && std::signbit(value) && f.special != Special::kNegZeroNan &&
      f.special != Special::kUnsignedE8M0) {
    return sign_bit;
  }
  return best;
}

uint16_t EncodeBF16(double value) {
  float f = static_cast<float>(value);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
  uint32_t rounding = 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

uint16_t EncodeF16(double value) {
  float f = static_cast<float>(value);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  if (std::isnan(f)) return sign | 0x7E00;
  float a = std::fabs(f);
  if (a >= 65520.0f) return sign | 0x7C00;  // Rounds to infinity.
  if (a < std::ldexp(1.0f, -14)) {
    // Subnormal: a multiple of 2^-24, rounded to nearest even.
    float scaled = a * std::ldexp(1.0f, 24);
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t au;
  std::memcpy(&au, &a, 4);
  uint32_t exp = ((au >> 23) & 0xFF) - 127 + 15;
  uint32_t man = au & 0x7FFFFF;
  uint32_t half = (exp << 10) | (man >> 13);
  uint32_t rest = man & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return sign | static_cast<uint16_t>(half);
}

}  // namespace

double DecodeNarrowFloat(PrimitiveType type, uint16_t bits) {
  if (type == PrimitiveType::kBF16) {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  if (type == PrimitiveType::kF16) return DecodeWithFormat(FormatOf(type), bits);
  const CodeTable& table = CodesOf(type);
  return table.values[bits & (table.values.size() - 1)];
}

uint16_t EncodeNarrowFloat(PrimitiveType type, double value) {
  if (type == PrimitiveType::kBF16) return EncodeBF16(value);
  if (type == PrimitiveType::kF16) return EncodeF16(value);
  return EncodeBySearch(type, value);
}

}  // namespace hlo

// Element loads, stores and arithmetic shared by the CUDA kernels and their host twins.
//
// Values are computed in a wide form: floating types as double, integer types (and pred) as
// 64-bit two's complement (unsigned types zero-extended). Stores narrow to the element type
// (integers wrap, float -> integer saturates with NaN -> 0, as XLA's convert does; f16/bf16 round
// to nearest even). Integer division follows XLA: x / 0 = -1, x % 0 = x, MIN / -1 = MIN.
#ifndef RUNTIME_CUDA_KERNELS_ELEMENT_MATH_H_
#define RUNTIME_CUDA_KERNELS_ELEMENT_MATH_H_

#include <math.h>
#include <stdint.h>

#include "runtime/common/reduce_precision.h"
#include "runtime/cuda/kernels/kernel_params.h"

#ifdef __CUDACC__
#define SPMD_HD __host__ __device__ __forceinline__
#else
#define SPMD_HD inline
#endif

namespace spmd_cuda {

union FloatBits32 { float f; uint32_t u; };
union FloatBits64 { double f; uint64_t u; };

SPMD_HD float Bf16ToFloat(uint16_t b) { FloatBits32 v; v.u = uint32_t(b) << 16; return v.f; }

SPMD_HD uint16_t FloatToBf16(float f) {
  FloatBits32 v; v.f = f;
  if ((v.u & 0x7fffffffu) > 0x7f800000u) return uint16_t((v.u >> 16) | 0x40);  // Quiet NaN.
  return uint16_t((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);
}

SPMD_HD float HalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  FloatBits32 v;
  if (exp == 0) {
    const float mag = float(mant) * 5.9604644775390625e-8f;  // mant * 2^-24, exact.
    return sign ? -mag : mag;
  }
  if (exp == 31) v.u = sign | 0x7f800000u | (mant << 13);
  else v.u = sign | ((exp + 112u) << 23) | (mant << 13);
  return v.f;
}

SPMD_HD uint16_t FloatToHalf(float f) {
  FloatBits32 v; v.f = f;
  const uint32_t sign = (v.u >> 16) & 0x8000u;
  const uint32_t exp = (v.u >> 23) & 0xffu, mant = v.u & 0x7fffffu;
  if (exp == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = int(exp) - 112;
  if (e >= 31) return uint16_t(sign | 0x7c00u);
  if (e <= 0) {  // Subnormal half (or zero).
    if (e < -10) return uint16_t(sign);
    const uint32_t m = mant | 0x800000u, shift = uint32_t(14 - e);
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return uint16_t(sign | r);
  }
  uint32_t h = sign | (uint32_t(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return uint16_t(h);
}

SPMD_HD bool IsFloatType(int t) { return t == kF16 || t == kBF16 || t == kF32 || t == kF64; }
SPMD_HD bool IsUnsignedType(int t) {
  return t == kPred || t == kU8 || t == kU16 || t == kU32 || t == kU64;
}
SPMD_HD int BitsOf(int t) {
  switch (t) {
    case kPred: case kS8: case kU8: return 8;
    case kS16: case kU16: case kF16: case kBF16: return 16;
    case kS32: case kU32: case kF32: return 32;
    default: return 64;
  }
}

// A value in wide form: `f` for floating types, `i` for integers and pred.
struct Num {
  double f;
  int64_t i;
};

SPMD_HD Num FromF(double f) { Num n; n.f = f; n.i = 0; return n; }
SPMD_HD Num FromI(int64_t i) { Num n; n.f = 0; n.i = i; return n; }

SPMD_HD Num Load(const void* p, int t, int64_t k) {
  switch (t) {
    case kPred: case kU8: return FromI(static_cast<const uint8_t*>(p)[k]);
    case kS8: return FromI(static_cast<const int8_t*>(p)[k]);
    case kS16: return FromI(static_cast<const int16_t*>(p)[k]);
    case kU16: return FromI(static_cast<const uint16_t*>(p)[k]);
    case kS32: return FromI(static_cast<const int32_t*>(p)[k]);
    case kU32: return FromI(static_cast<const uint32_t*>(p)[k]);
    case kS64: return FromI(static_cast<const int64_t*>(p)[k]);
    case kU64: return FromI(int64_t(static_cast<const uint64_t*>(p)[k]));
    case kF16: return FromF(HalfToFloat(static_cast<const uint16_t*>(p)[k]));
    case kBF16: return FromF(Bf16ToFloat(static_cast<const uint16_t*>(p)[k]));
    case kF32: return FromF(static_cast<const float*>(p)[k]);
    default: return FromF(static_cast<const double*>(p)[k]);
  }
}

// Stores `v`, already in the wide form of `t`.
SPMD_HD void Store(void* p, int t, int64_t k, Num v) {
  switch (t) {
    case kPred: static_cast<uint8_t*>(p)[k] = v.i != 0; break;
    case kS8: case kU8: static_cast<uint8_t*>(p)[k] = uint8_t(uint64_t(v.i)); break;
    case kS16: case kU16: static_cast<uint16_t*>(p)[k] = uint16_t(uint64_t(v.i)); break;
    case kS32: case kU32: static_cast<uint32_t*>(p)[k] = uint32_t(uint64_t(v.i)); break;
    case kS64: case kU64: static_cast<uint64_t*>(p)[k] = uint64_t(v.i); break;
    case kF16: static_cast<uint16_t*>(p)[k] = FloatToHalf(float(v.f)); break;
    case kBF16: static_cast<uint16_t*>(p)[k] = FloatToBf16(float(v.f)); break;
    case kF32: static_cast<float*>(p)[k] = float(v.f); break;
    default: static_cast<double*>(p)[k] = v.f; break;
  }
}

// The largest and smallest value of integer type `t`, as doubles (for saturation).
SPMD_HD double IntMax(int t) {
  const int bits = BitsOf(t);
  if (t == kPred) return 1;
  return IsUnsignedType(t) ? ldexp(1.0, bits) - 1 : ldexp(1.0, bits - 1) - 1;
}
SPMD_HD double IntMin(int t) { return IsUnsignedType(t) ? 0 : -ldexp(1.0, BitsOf(t) - 1); }

// `v` of type `from` in the wide form of type `to`.
SPMD_HD Num ConvertNum(Num v, int from, int to) {
  if (to == kPred) return FromI(IsFloatType(from) ? v.f != 0 : v.i != 0);
  if (IsFloatType(to)) {
    if (IsFloatType(from)) return FromF(v.f);
    return FromF(from == kU64 ? double(uint64_t(v.i)) : double(v.i));
  }
  if (!IsFloatType(from)) return v;  // Integer -> integer wraps at the store.
  if (isnan(v.f)) return FromI(0);
  if (v.f >= IntMax(to)) return FromI(to == kU64 ? int64_t(~uint64_t(0)) : int64_t(IntMax(to)));
  if (v.f <= IntMin(to)) return FromI(int64_t(IntMin(to)));
  if (to == kU64 && v.f >= 9223372036854775808.0) return FromI(int64_t(uint64_t(v.f)));
  return FromI(int64_t(v.f));
}

// Sign-extends or zero-extends the low bits of `v` as type `t` (after wrapping arithmetic).
SPMD_HD int64_t Normalize(int64_t v, int t) {
  const int bits = BitsOf(t);
  if (bits == 64) return v;
  const uint64_t mask = (uint64_t(1) << bits) - 1;
  const uint64_t u = uint64_t(v) & mask;
  if (IsUnsignedType(t)) return int64_t(u);
  const uint64_t sign = uint64_t(1) << (bits - 1);
  return int64_t((u ^ sign) - sign);
}

SPMD_HD bool Less(Num a, Num b, int t) {
  if (IsFloatType(t)) return a.f < b.f;
  if (t == kU64) return uint64_t(a.i) < uint64_t(b.i);
  return a.i < b.i;
}

SPMD_HD bool Compare(Num a, Num b, int t, int dir) {
  if (IsFloatType(t)) {
    switch (dir) {
      case kEq: return a.f == b.f;
      case kNe: return a.f != b.f;
      case kGe: return a.f >= b.f;
      case kGt: return a.f > b.f;
      case kLe: return a.f <= b.f;
      default: return a.f < b.f;
    }
  }
  switch (dir) {
    case kEq: return a.i == b.i;
    case kNe: return a.i != b.i;
    case kGe: return !Less(a, b, t);
    case kGt: return Less(b, a, t);
    case kLe: return !Less(b, a, t);
    default: return Less(a, b, t);
  }
}

SPMD_HD Num IntDivRem(Num a, Num b, int t, bool rem) {
  if (b.i == 0) return FromI(rem ? a.i : -1);
  if (t == kU64) {
    const uint64_t x = uint64_t(a.i), y = uint64_t(b.i);
    return FromI(int64_t(rem ? x % y : x / y));
  }
  if (b.i == -1) return FromI(rem ? 0 : int64_t(0 - uint64_t(a.i)));  // MIN / -1 wraps to MIN.
  return FromI(rem ? a.i % b.i : a.i / b.i);
}

SPMD_HD Num Shift(Num a, Num b, int t, int op) {
  const int bits = BitsOf(t);
  const uint64_t amount = uint64_t(b.i);
  const uint64_t mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  if (op == kShl) return FromI(amount >= uint64_t(bits) ? 0 : int64_t(uint64_t(a.i) << amount));
  if (op == kShrL) {
    return FromI(amount >= uint64_t(bits) ? 0 : int64_t((uint64_t(a.i) & mask) >> amount));
  }
  if (amount >= uint64_t(bits)) return FromI(a.i < 0 ? -1 : 0);
  return FromI(a.i >> amount);
}

SPMD_HD double FloatMaxMin(double a, double b, bool is_max) {
  if (isnan(a) || isnan(b)) return isnan(a) ? a : b;  // NaN propagates, as in XLA.
  return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

// a op b for the binary ops (and the reductions), in the wide form of `t`.
SPMD_HD Num Binary(int op, Num a, Num b, int t) {
  const bool fl = IsFloatType(t);
  switch (op) {
    case kAdd: return fl ? FromF(a.f + b.f) : FromI(int64_t(uint64_t(a.i) + uint64_t(b.i)));
    case kSub: return fl ? FromF(a.f - b.f) : FromI(int64_t(uint64_t(a.i) - uint64_t(b.i)));
    case kMul: return fl ? FromF(a.f * b.f) : FromI(int64_t(uint64_t(a.i) * uint64_t(b.i)));
    case kDiv: return fl ? FromF(a.f / b.f) : IntDivRem(a, b, t, false);
    case kRem: return fl ? FromF(fmod(a.f, b.f)) : IntDivRem(a, b, t, true);
    case kMax:
      return fl ? FromF(FloatMaxMin(a.f, b.f, true)) : (Less(a, b, t) ? b : a);
    case kMin:
      return fl ? FromF(FloatMaxMin(a.f, b.f, false)) : (Less(b, a, t) ? b : a);
    case kPow: {
      if (fl) return FromF(pow(a.f, b.f));
      if (b.i < 0) return FromI(a.i == 1 ? 1 : a.i == -1 ? (b.i % 2 ? -1 : 1) : 0);
      uint64_t r = 1, base = uint64_t(a.i);
      for (int64_t e = b.i; e > 0; e >>= 1, base *= base) if (e & 1) r *= base;
      return FromI(int64_t(r));
    }
    case kAtan2: return FromF(atan2(a.f, b.f));
    case kAnd: return FromI(a.i & b.i);
    case kOr: return FromI(a.i | b.i);
    case kXor: return FromI(a.i ^ b.i);
    default: return Shift(a, b, t, op);
  }
}

SPMD_HD double RoundHalfAwayFromZero(double x) { return x < 0 ? -floor(-x + 0.5) : floor(x + 0.5); }

SPMD_HD Num Unary(int op, Num a, int t) {
  if (!IsFloatType(t)) {
    switch (op) {
      case kNeg: return FromI(int64_t(0 - uint64_t(a.i)));
      case kAbs: return FromI(a.i < 0 ? int64_t(0 - uint64_t(a.i)) : a.i);
      case kSign: return FromI(IsUnsignedType(t) ? (a.i != 0) : (a.i > 0) - (a.i < 0));
      case kNot: return FromI(t == kPred ? !a.i : ~a.i);
      default: return a;  // Rounding ops are identities on integers.
    }
  }
  const double x = a.f;
  switch (op) {
    case kNeg: return FromF(-x);
    case kAbs: return FromF(fabs(x));
    case kSign: return FromF(isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : x);
    case kExp: return FromF(exp(x));
    case kExpm1: return FromF(expm1(x));
    case kLog: return FromF(log(x));
    case kLog1p: return FromF(log1p(x));
    case kSqrt: return FromF(sqrt(x));
    case kRsqrt: return FromF(1.0 / sqrt(x));
    case kCbrt: return FromF(cbrt(x));
    case kTanh: return FromF(tanh(x));
    case kSin: return FromF(sin(x));
    case kCos: return FromF(cos(x));
    case kTan: return FromF(tan(x));
    case kFloor: return FromF(floor(x));
    case kCeil: return FromF(ceil(x));
    case kRoundAfz: return FromF(RoundHalfAwayFromZero(x));
    case kRoundEven: return FromF(rint(x));
    case kLogistic: return FromF(1.0 / (1.0 + exp(-x)));
    case kIsFinite: return FromI(isfinite(x) ? 1 : 0);
    default: return a;
  }
}

// Computes element `i` of an elementwise op.
// Element s of `src` to element d of `dst`, elements of `bytes` bytes (1, 2, 4 or 8).
SPMD_HD void CopyBytes(const void* src, int64_t s, void* dst, int64_t d, int bytes) {
  switch (bytes) {
    case 1:
      static_cast<uint8_t*>(dst)[d] = static_cast<const uint8_t*>(src)[s];
      break;
    case 2:
      static_cast<uint16_t*>(dst)[d] = static_cast<const uint16_t*>(src)[s];
      break;
    case 4:
      static_cast<uint32_t*>(dst)[d] = static_cast<const uint32_t*>(src)[s];
      break;
    default:
      static_cast<uint64_t*>(dst)[d] = static_cast<const uint64_t*>(src)[s];
      break;
  }
}

// reduce-precision of element k of `in` (a floating type `t`) into element i of `out`, on the
// value's bits (runtime/common/reduce_precision.h).
SPMD_HD void ReducePrecisionAt(const ElementwiseParams& p, int64_t k, int64_t i) {
  const int t = p.in_type, bytes = BitsOf(t) / 8;
  const int fe = t == kF64 ? 11 : t == kF16 ? 5 : 8;
  const int fm = t == kF64 ? 52 : t == kF32 ? 23 : t == kF16 ? 10 : 7;
  uint64_t bits = 0;
  CopyBytes(p.in[0], k, &bits, 0, bytes);
  bits = runtime::ReducePrecisionBits(bits, fe, fm, p.exponent_bits, p.mantissa_bits);
  CopyBytes(&bits, 0, p.out, i, bytes);
}

SPMD_HD void ElementwiseAt(const ElementwiseParams& p, int64_t i) {
  const int64_t k0 = (p.scalar_mask & 1) ? 0 : i, k1 = (p.scalar_mask & 2) ? 0 : i,
                k2 = (p.scalar_mask & 4) ? 0 : i;
  const int t = p.in_type;
  Num r;
  if (p.op == kReducePrecision) {
    ReducePrecisionAt(p, k0, i);
    return;
  }
  if (p.op == kCopy || p.op == kConvert) {
    r = ConvertNum(Load(p.in[0], t, k0), t, p.out_type);
  } else if (p.op == kSelect) {
    r = Load(p.in[0], kPred, k0).i ? Load(p.in[1], t, k1) : Load(p.in[2], t, k2);
  } else if (p.op == kClamp) {
    const Num lo = Load(p.in[0], t, k0), x = Load(p.in[1], t, k1), hi = Load(p.in[2], t, k2);
    r = Binary(kMin, Binary(kMax, x, lo, t), hi, t);
  } else if (p.op == kCompare) {
    r = FromI(Compare(Load(p.in[0], t, k0), Load(p.in[1], t, k1), t, p.compare_dir) ? 1 : 0);
  } else if (p.op >= kAdd) {
    r = Binary(p.op, Load(p.in[0], t, k0), Load(p.in[1], t, k1), t);
  } else {
    r = Unary(p.op, Load(p.in[0], t, k0), t);
  }
  if (!IsFloatType(p.out_type)) r.i = Normalize(r.i, p.out_type);
  Store(p.out, p.out_type, i, r);
}

}  // namespace spmd_cuda

#endif  // RUNTIME_CUDA_KERNELS_ELEMENT_MATH_H_

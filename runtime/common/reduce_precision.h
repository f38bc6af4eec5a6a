// XLA's reduce-precision on the bits of one floating-point value: rounds the mantissa to
// nearest even at `mantissa_bits` and clamps the exponent to the range of `exponent_bits`
// (overflow to infinity, underflow to zero), keeping the value's own format. Plain C++ that
// nvcc compiles too: the CPU executor's handler and the CUDA kernels call this one function.
#ifndef RUNTIME_COMMON_REDUCE_PRECISION_H_
#define RUNTIME_COMMON_REDUCE_PRECISION_H_

#include <stdint.h>

#ifdef __CUDACC__
#define RUNTIME_HD __host__ __device__ __forceinline__
#else
#define RUNTIME_HD inline
#endif

namespace runtime {

// `v`: the bits of a value (in its low 1 + format_exponent_bits + format_mantissa_bits bits) of
// an IEEE-style binary format with those field widths (f32: 8, 23; bf16: 8, 7; f16: 5, 10;
// f64: 11, 52). `exponent_bits` >= 1 and `mantissa_bits` >= 0; widths at least the format's
// leave that field alone. NaN stays NaN while a mantissa bit remains, else becomes infinity.
RUNTIME_HD uint64_t ReducePrecisionBits(uint64_t v, int format_exponent_bits,
                                        int format_mantissa_bits, int exponent_bits,
                                        int mantissa_bits) {
  const int fe = format_exponent_bits, fm = format_mantissa_bits, width = 1 + fe + fm;
  const uint64_t all = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const uint64_t mantissa_mask = (uint64_t{1} << fm) - 1;
  const uint64_t exponent_mask = ((uint64_t{1} << fe) - 1) << fm;
  const uint64_t sign_mask = uint64_t{1} << (width - 1);
  v &= all;
  if ((v & exponent_mask) == exponent_mask && (v & mantissa_mask) != 0) {
    return mantissa_bits > 0 ? v : exponent_mask;  // +inf when no mantissa bits remain.
  }
  if (mantissa_bits < fm) {
    const int shift = fm - mantissa_bits;
    const uint64_t last_bit = uint64_t{1} << shift;
    const uint64_t bias = ((v & last_bit) >> shift) + (last_bit >> 1) - 1;
    v = ((v + bias) & ~(last_bit - 1)) & all;
  }
  if (exponent_bits < fe) {
    const uint64_t format_bias = (uint64_t{1} << (fe - 1)) - 1;
    const uint64_t reduced_bias = (uint64_t{1} << (exponent_bits - 1)) - 1;
    const uint64_t exponent = v & exponent_mask;
    if (exponent > ((format_bias + reduced_bias) << fm)) {
      v = (v & sign_mask) | exponent_mask;
    } else if (exponent <= ((format_bias - reduced_bias) << fm)) {
      v &= sign_mask;
    }
  }
  return v;
}

}  // namespace runtime

#undef RUNTIME_HD

#endif  // RUNTIME_COMMON_REDUCE_PRECISION_H_

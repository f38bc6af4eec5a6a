// Matrix-multiply building blocks shared by dot (dot_ops.cc) and convolution
// (convolution_ops.cc).
//
// Both ops reduce to C[M,N] = A[M,K] * B[K,N] on dense buffers of one "compute type", chosen from
// the result element type: f32 (also for bf16/f16/f8 results, rounded once at the end), f64, c64,
// c128, and u64 for integer and pred results (wrapping arithmetic, so every integer width gets
// its modular result; pred results are "any product non-zero"). Operands of other element types
// are converted while they are packed into the compute buffers; floating operands with an
// integer result, and complex operands with a real result, are rejected as unimplemented.
// The multiply itself is Eigen's GEMM on mapped buffers, never a naive loop; for f32 and f64 it
// is the build for the CPU's widest vector instructions, chosen at run time (gemm.h).
#ifndef RUNTIME_CPU_OPS_MATMUL_KERNELS_H_
#define RUNTIME_CPU_OPS_MATMUL_KERNELS_H_

#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/literal.h"
#include "hlo/strings.h"
#include "runtime/common/strided_index.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/ops/scalar_computation.h"

namespace runtime {

// The compute type (kF32, kF64, kC64, kC128 or kU64) for a product of `lhs` and `rhs` elements
// producing `result` elements, or an Unimplemented error naming the unsupported combination.
absl::StatusOr<hlo::PrimitiveType> MatmulComputeType(hlo::PrimitiveType lhs, hlo::PrimitiveType rhs,
                                                     hlo::PrimitiveType result);

// Calls f(Tag<C>{}) for compute type `type` (one of MatmulComputeType's results).
template <typename F>
auto DispatchComputeType(hlo::PrimitiveType type, F&& f) -> decltype(f(Tag<float>{})) {
  switch (type) {
    case hlo::PrimitiveType::kF32:
      return f(Tag<float>{});
    case hlo::PrimitiveType::kF64:
      return f(Tag<double>{});
    case hlo::PrimitiveType::kC64:
      return f(Tag<std::complex<float>>{});
    case hlo::PrimitiveType::kC128:
      return f(Tag<std::complex<double>>{});
    case hlo::PrimitiveType::kU64:
      return f(Tag<uint64_t>{});
    default:
      break;
  }
  return absl::InternalError("DispatchComputeType: not a matmul compute type");
}

// C[M,N] (row-major, overwritten) = A[M,K] * B[K,N] with Eigen. `a_col_major`: A is stored
// column-major (i.e. as a row-major [K,M]); likewise `b_col_major` (B stored as row-major
// [N,K]). Float and double read column-major operands in place (gemm.h: DenseGemm); other types
// copy them to row-major first. REQUIRES: C is a compute type.
template <typename C>
void Gemm(const C* a, bool a_col_major, const C* b, bool b_col_major, C* c, int64_t m, int64_t k,
          int64_t n);

// Converts one value to compute type C. REQUIRES: MatmulComputeType accepted the pair.
template <typename C, typename V>
C ToCompute(V v) {
  if constexpr (IsComplex<C>::value) {
    using R = typename C::value_type;
    if constexpr (IsComplex<V>::value) {
      return C(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    } else {
      return C(static_cast<R>(v), R(0));
    }
  } else if constexpr (IsComplex<V>::value) {
    return C();  // Rejected by MatmulComputeType.
  } else {
    return static_cast<C>(v);
  }
}

// Copies array `literal` into `dst` as a dense row-major array of compute type C whose dimension
// i is the literal's dimension perm[i] (a transpose when perm is not the identity).
template <typename C>
absl::Status PackOperand(const hlo::Literal& literal, absl::Span<const int64_t> perm, C* dst) {
  const hlo::Shape& shape = literal.shape();
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(shape.dimensions(p));
  std::vector<int64_t> src_strides = PermuteStrides(RowMajorStrides(shape.dimensions()), perm);
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t inner = rank == 0 ? 1 : dims.back();
  const int64_t inner_stride = rank == 0 ? 0 : src_strides.back();
  if (rank > 0) {
    dims.pop_back();
    src_strides.pop_back();
  }
  return DispatchArrayType(shape.element_type(), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    const T* src = Data<T>(literal);
    C* out = dst;
    for (StridedCounter c(dims, {src_strides}); !c.done() && inner > 0; c.Next()) {
      const int64_t base = c.offset(0);
      for (int64_t j = 0; j < inner; ++j) {
        *out++ = ToCompute<C>(LoadElement(src, base + j * inner_stride));
      }
    }
    return absl::OkStatus();
  });
}

// Writes the dense compute values `src` (one per element of `out`, row-major) into `out`,
// converting to its element type. REQUIRES: MatmulComputeType accepted the pair.
template <typename C>
absl::Status StoreResult(const C* src, hlo::Literal& out) {
  const bool is_pred = out.shape().element_type() == hlo::PrimitiveType::kPred;
  return DispatchArrayType(out.shape().element_type(), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    using RC = ComputeType<T>;
    T* dst = MutableData<T>(out);
    for (int64_t i = 0; i < out.element_count(); ++i) {
      if constexpr (IsComplex<C>::value && !IsComplex<RC>::value) {
        StoreElement(dst, i, RC());  // Rejected by MatmulComputeType.
      } else if constexpr (std::is_integral_v<C>) {
        StoreElement(dst, i, is_pred ? static_cast<RC>(src[i] != 0) : static_cast<RC>(src[i]));
      } else {
        StoreElement(dst, i, ToCompute<RC>(src[i]));
      }
    }
    return absl::OkStatus();
  });
}

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_MATMUL_KERNELS_H_

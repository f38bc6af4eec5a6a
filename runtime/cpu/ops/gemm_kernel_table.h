// The interface between the GEMM dispatcher (gemm.h) and its instruction-set builds.
//
// The same Eigen GEMM source (gemm_kernels_eigen.inc) is compiled once per instruction set:
// gemm_generic.cc with the build's flags, gemm_avx2.cc with -mavx2 -mfma and gemm_avx512.cc
// with AVX-512 (see runtime/cpu/BUILD.bazel). Each build exports exactly one object, a table of
// plain function pointers over the plain structs below; nothing in this header is a template
// function or an inline function, so no code is shared between the builds by the linker.
#ifndef RUNTIME_CPU_OPS_GEMM_KERNEL_TABLE_H_
#define RUNTIME_CPU_OPS_GEMM_KERNEL_TABLE_H_

#include <cstdint>

namespace runtime {

// C[m,n] (row-major, overwritten) = A[m,k] * B[k,n], on strided views:
//   A: element (i, l) is a[i * lda + l], or a[l * lda + i] when `a_col_major`;
//   B: element (l, j) is b[l * ldb + j], or b[j * ldb + l] when `b_col_major`;
//   C: element (i, j) is c[i * ldc + j].
// k == 0 writes zeros. REQUIRES: C does not overlap A or B; m, k, n >= 0.
// A trivial aggregate (no member initializers, so no constructor for the builds to share):
// value-initialize it, `GemmProblem<float> p = {};`.
template <typename T>
struct GemmProblem {
  const T* a;
  const T* b;
  T* c;
  int64_t m, k, n;
  int64_t lda, ldb, ldc;
  bool a_col_major;
  bool b_col_major;
};

// One instruction-set build of the kernels.
struct GemmKernels {
  const char* name;  // "generic", "avx2" or "avx512".
  void (*f32)(const GemmProblem<float>& problem);
  void (*f64)(const GemmProblem<double>& problem);
};

// The builds. Only call a table the CPU supports (gemm.h: SupportedGemmKernels).
extern const GemmKernels kGenericGemmKernels;  // The build's own flags (x86-64: SSE2).
extern const GemmKernels kAvx2GemmKernels;     // AVX2 + FMA.
extern const GemmKernels kAvx512GemmKernels;   // AVX-512 F/DQ/VL/BW + AVX2 + FMA.

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_GEMM_KERNEL_TABLE_H_

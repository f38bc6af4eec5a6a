// The GEMM kernels built with the build's own flags: the path for CPUs without AVX2 + FMA, and
// the baseline that tests and bench/gemm_bench.cc compare the other builds with. It keeps
// Eigen's own namespace: only the AVX builds must not share symbols with the rest of the program
// (gemm_avx2.cc says why).
#define GEMM_KERNEL_TABLE kGenericGemmKernels
#define GEMM_KERNEL_NAME "generic"

#include "runtime/cpu/ops/gemm_kernels_eigen.inc"

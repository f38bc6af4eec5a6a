// The GEMM kernels built for AVX-512 F/DQ/VL/BW with AVX2 + FMA (copts in
// runtime/cpu/BUILD.bazel). Called only after gemm.cc has checked the CPU with
// __builtin_cpu_supports. Eigen is renamed so that none of its instantiations here can stand in
// for another build's (see gemm_avx2.cc).
#define Eigen EigenAvx512
#define GEMM_KERNEL_TABLE kAvx512GemmKernels
#define GEMM_KERNEL_NAME "avx512"

#include "runtime/cpu/ops/gemm_kernels_eigen.inc"

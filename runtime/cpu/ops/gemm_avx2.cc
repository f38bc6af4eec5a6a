// The GEMM kernels built for AVX2 + FMA (copts in runtime/cpu/BUILD.bazel). Called only after
// gemm.cc has checked the CPU with __builtin_cpu_supports.
//
// Why Eigen is renamed here: Eigen is header-only, so every translation unit that multiplies
// matrices instantiates the same inline templates (gebp kernels, packing, blocking) as weak
// symbols, and the linker keeps one copy of each for the whole program. If this file and a
// generic one both instantiated `Eigen::internal::gebp_kernel<float, ...>`, the linker could
// keep this AVX copy for the generic caller too, and the binary would die with SIGILL on a CPU
// without AVX2. With `Eigen` defined as `EigenAvx2` before the include, every Eigen symbol
// made here is mangled under another namespace, so no weak symbol can coincide with one from
// another build; the only thing exported is the table of plain function pointers. The
// runtime/cpu:gemm_isa_symbols_test checks with nm that the built objects share nothing.
#define Eigen EigenAvx2
#define GEMM_KERNEL_TABLE kAvx2GemmKernels
#define GEMM_KERNEL_NAME "avx2"

#include "runtime/cpu/ops/gemm_kernels_eigen.inc"

// Compute-type selection and the GEMMs: f32 and f64 go to the dispatched kernels of gemm.h
// (AVX2/AVX-512 where the CPU has them, panels on idle cores); c64, c128 and u64 use the Eigen
// instantiations here (kept in one translation unit: the Eigen product kernels are the slowest
// code in the executor to compile).
#include "runtime/cpu/ops/matmul_kernels.h"

#include <Eigen/Core>
#include <vector>

#include "runtime/cpu/ops/gemm.h"

namespace runtime {
namespace {

using hlo::PrimitiveType;

template <typename C, int kAOrder, int kBOrder>
void EigenGemm(const C* a, const C* b, C* c, int64_t m, int64_t k, int64_t n) {
  using AMatrix = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, kAOrder>;
  using BMatrix = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, kBOrder>;
  using CMatrix = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<CMatrix> out(c, m, n);
  if (k == 0) {
    out.setZero();
    return;
  }
  Eigen::Map<const AMatrix> lhs(a, m, k);
  Eigen::Map<const BMatrix> rhs(b, k, n);
  out.noalias() = lhs * rhs;
}

// Fills `storage` with the transpose of the row-major [rows, cols] matrix `x`; returns it.
template <typename C>
const C* TransposedCopy(const C* x, int64_t rows, int64_t cols, std::vector<C>& storage) {
  storage.resize(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) storage[j * rows + i] = x[i * cols + j];
  }
  return storage.data();
}

}  // namespace

absl::StatusOr<PrimitiveType> MatmulComputeType(PrimitiveType lhs, PrimitiveType rhs,
                                                PrimitiveType result) {
  auto unsupported = [&]() {
    return absl::UnimplementedError(
        hlo::StrCat("the CPU executor does not multiply ", hlo::PrimitiveTypeName(lhs), " by ",
                    hlo::PrimitiveTypeName(rhs), " into ", hlo::PrimitiveTypeName(result)));
  };
  const bool complex_input = hlo::IsComplexType(lhs) || hlo::IsComplexType(rhs);
  const bool float_input = hlo::IsFloatingPointType(lhs) || hlo::IsFloatingPointType(rhs);
  if (result == PrimitiveType::kC64 || result == PrimitiveType::kC128) return result;
  if (complex_input) return unsupported();
  if (result == PrimitiveType::kF64) return PrimitiveType::kF64;
  if (hlo::IsFloatingPointType(result)) return PrimitiveType::kF32;
  if (hlo::IsIntegralType(result) || result == PrimitiveType::kPred) {
    if (float_input) return unsupported();
    return PrimitiveType::kU64;
  }
  return unsupported();
}

template <typename C>
void Gemm(const C* a, bool a_col_major, const C* b, bool b_col_major, C* c, int64_t m, int64_t k,
          int64_t n) {
  if constexpr (std::is_floating_point_v<C>) {
    GemmProblem<C> p = {};
    p.a = a;
    p.b = b;
    p.c = c;
    p.m = m;
    p.k = k;
    p.n = n;
    p.lda = a_col_major ? m : k;
    p.ldb = b_col_major ? k : n;
    p.ldc = n;
    p.a_col_major = a_col_major;
    p.b_col_major = b_col_major;
    DenseGemm(HostGemmKernels(), p);
  } else {
    // Other types instantiate the row-major product only: transpose into row-major copies.
    std::vector<C> a_rows, b_rows;
    if (a_col_major) a = TransposedCopy(a, k, m, a_rows);
    if (b_col_major) b = TransposedCopy(b, n, k, b_rows);
    EigenGemm<C, Eigen::RowMajor, Eigen::RowMajor>(a, b, c, m, k, n);
  }
}

template void Gemm<float>(const float*, bool, const float*, bool, float*, int64_t, int64_t,
                          int64_t);
template void Gemm<double>(const double*, bool, const double*, bool, double*, int64_t, int64_t,
                           int64_t);
template void Gemm<std::complex<float>>(const std::complex<float>*, bool,
                                        const std::complex<float>*, bool, std::complex<float>*,
                                        int64_t, int64_t, int64_t);
template void Gemm<std::complex<double>>(const std::complex<double>*, bool,
                                         const std::complex<double>*, bool, std::complex<double>*,
                                         int64_t, int64_t, int64_t);
template void Gemm<uint64_t>(const uint64_t*, bool, const uint64_t*, bool, uint64_t*, int64_t,
                             int64_t, int64_t);

}  // namespace runtime

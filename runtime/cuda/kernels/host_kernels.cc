// Host twins of the generic kernels: the same element functions, run in a loop. They let the
// whole CUDA executor (buffer plan, op lowering, collectives) run and be checked against the
// CPU executor on a machine without a GPU.

#include <algorithm>
#include <vector>

#include "runtime/cuda/kernels/element_math.h"
#include "runtime/cuda/kernels/index_math.h"
#include "runtime/cuda/kernels/launch.h"

namespace spmd_cuda {

int HostElementwise(const ElementwiseParams& p) {
  for (int64_t i = 0; i < p.n; ++i) ElementwiseAt(p, i);
  return 0;
}
int HostStridedCopy(const StridedCopyParams& p) {
  for (int64_t i = 0; i < p.n; ++i) StridedCopyAt(p, i);
  return 0;
}
int HostReduce(const ReduceParams& p) {
  for (int64_t i = 0; i < p.n; ++i) ReduceAt(p, i);
  return 0;
}
int HostIota(const IotaParams& p) {
  for (int64_t i = 0; i < p.n; ++i) IotaAt(p, i);
  return 0;
}
int HostGather(const GatherParams& p) {
  for (int64_t i = 0; i < p.n; ++i) GatherAt(p, i);
  return 0;
}
int HostScatter(const ScatterParams& p) {
  for (int64_t i = 0; i < p.n; ++i) ScatterAt(p, i);
  return 0;
}

int HostIm2Col(const Im2ColParams& p) {
  for (int64_t i = 0; i < p.n; ++i) Im2ColAt(p, i);
  return 0;
}

int HostReduceWindow(const ReduceWindowParams& p) {
  for (int64_t i = 0; i < p.n; ++i) ReduceWindowAt(p, i);
  return 0;
}

int HostSelectWindow(const SelectWindowParams& p) {
  for (int64_t i = 0; i < p.n; ++i) SelectWindowAt(p, i);
  return 0;
}

int HostTopK(const TopKParams& p) {
  std::vector<int32_t> order(p.rows * p.n);
  for (int64_t r = 0; r < p.rows; ++r) {
    int32_t* row = order.data() + r * p.n;
    for (int64_t j = 0; j < p.n; ++j) row[j] = static_cast<int32_t>(j);
    std::stable_sort(row, row + p.n, [&](int32_t a, int32_t b) {
      return OrderedKey(p.in, p.type, r * p.n + a, p.largest) <
             OrderedKey(p.in, p.type, r * p.n + b, p.largest);
    });
  }
  for (int64_t i = 0; i < p.rows * p.k; ++i) TopKTakeAt(p, order.data(), i);
  return 0;
}

int HostGemm(const GemmParams& p) {
  // Column-major: element (r, c) of X with leading dimension ld is X[r + c * ld].
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t a0 = b * p.stride_a, b0 = b * p.stride_b, c0 = b * p.stride_c;
    for (int64_t col = 0; col < p.n; ++col) {
      for (int64_t row = 0; row < p.m; ++row) {
        double acc = 0;
        for (int64_t k = 0; k < p.k; ++k) {
          const int64_t ia = p.trans_a ? k + row * p.lda : row + k * p.lda;
          const int64_t ib = p.trans_b ? col + k * p.ldb : k + col * p.ldb;
          acc += Load(p.a, p.in_type, a0 + ia).f * Load(p.b, p.in_type, b0 + ib).f;
        }
        Store(p.c, p.out_type, c0 + row + col * p.ldc, FromF(acc));
      }
    }
  }
  return 0;
}

}  // namespace spmd_cuda

// The CUDA executor's generic kernels: one grid-stride loop per kernel around the element
// functions of element_math.h and index_math.h (reduce also has a block-per-output form). Correct first: every kernel handles any element
// type through a runtime type switch; the dot, where speed matters most, goes to cuBLAS.
#include <cuda_runtime.h>

#include "runtime/cuda/kernels/element_math.h"
#include "runtime/cuda/kernels/index_math.h"
#include "runtime/cuda/kernels/launch.h"

namespace spmd_cuda {
namespace {

constexpr int kThreads = 256;

template <typename Params, void (*kAt)(const Params&, int64_t)>
__global__ void GridStride(const Params p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    kAt(p, i);
  }
}

__device__ void ScatterElement(const ScatterParams& p, int64_t i) { ScatterAt(p, i); }
__device__ void ElementwiseElement(const ElementwiseParams& p, int64_t i) { ElementwiseAt(p, i); }
__device__ void StridedCopyElement(const StridedCopyParams& p, int64_t i) { StridedCopyAt(p, i); }
__device__ void ReduceElement(const ReduceParams& p, int64_t i) { ReduceAt(p, i); }
__device__ void IotaElement(const IotaParams& p, int64_t i) { IotaAt(p, i); }
__device__ void GatherElement(const GatherParams& p, int64_t i) { GatherAt(p, i); }

template <typename Params, void (*kAt)(const Params&, int64_t)>
int Launch(const Params& p, int64_t n, void* stream) {
  if (n <= 0) return 0;
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  GridStride<Params, kAt><<<static_cast<unsigned>(blocks), kThreads, 0,
                            static_cast<cudaStream_t>(stream)>>>(p, n);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int LaunchElementwise(const ElementwiseParams& p, void* s) {
  return Launch<ElementwiseParams, ElementwiseElement>(p, p.n, s);
}
int LaunchStridedCopy(const StridedCopyParams& p, void* s) {
  return Launch<StridedCopyParams, StridedCopyElement>(p, p.n, s);
}
// One block per output element: the threads stride over the reduced elements, then combine
// their partial results in a shared-memory tree (kThreads is a power of two). Integer partials
// stay exact in 64 bits and wrap once at the store, as wrapping arithmetic would.
__global__ void ReduceBlockPerOutput(const ReduceParams p) {
  __shared__ Num partial[kThreads];
  __shared__ bool present[kThreads];
  const int t = threadIdx.x;
  for (int64_t i = blockIdx.x; i < p.n; i += gridDim.x) {
    const int64_t base = ReduceBase(p, i);
    Num acc = FromI(0);
    bool have = false;
    for (int64_t r = t; r < p.red_n; r += blockDim.x) {
      const Num v = Load(p.in, p.type, ReduceOffset(p, base, r));
      acc = have ? Binary(p.op, acc, v, p.type) : v;
      have = true;
    }
    partial[t] = acc;
    present[t] = have;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
      if (t < stride && present[t + stride]) {
        partial[t] = present[t] ? Binary(p.op, partial[t], partial[t + stride], p.type)
                                : partial[t + stride];
        present[t] = true;
      }
      __syncthreads();
    }
    if (t == 0) {
      Num result = Load(p.init, p.type, 0);
      if (present[0]) result = Binary(p.op, result, partial[0], p.type);
      ReduceStore(p, i, result);
    }
    __syncthreads();
  }
}

// Long reductions over contiguous elements (or few outputs) take a block per output; the rest
// a thread per output, whose neighbours then read neighbouring addresses.
int LaunchReduce(const ReduceParams& p, void* s) {
  const bool contiguous = p.red_rank > 0 && p.red_strides[p.red_rank - 1] == 1;
  if (p.n > 0 && p.red_n >= 64 && (contiguous || p.n < 4096)) {
    const int64_t blocks = p.n < 65535 * 8 ? p.n : 65535 * 8;
    ReduceBlockPerOutput<<<static_cast<unsigned>(blocks), kThreads, 0,
                           static_cast<cudaStream_t>(s)>>>(p);
    return static_cast<int>(cudaGetLastError());
  }
  return Launch<ReduceParams, ReduceElement>(p, p.n, s);
}
int LaunchIota(const IotaParams& p, void* s) { return Launch<IotaParams, IotaElement>(p, p.n, s); }
int LaunchGather(const GatherParams& p, void* s) {
  return Launch<GatherParams, GatherElement>(p, p.n, s);
}
int LaunchScatter(const ScatterParams& p, void* s) {
  return Launch<ScatterParams, ScatterElement>(p, p.n, s);
}

}  // namespace spmd_cuda

// The CUDA executor's generic kernels: one grid-stride loop per kernel around the element
// functions of element_math.h and index_math.h. Correct first: every kernel handles any element
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
int LaunchReduce(const ReduceParams& p, void* s) {
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

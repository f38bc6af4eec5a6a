// The CUDA executor's generic kernels: one grid-stride loop per kernel around the element
// functions of element_math.h and index_math.h (reduce also has a block-per-output form). Correct first: every kernel handles any element
// type through a runtime type switch; the dot, where speed matters most, goes to cuBLAS.
#include <cuda_runtime.h>

#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

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

__device__ void ElementwiseElement(const ElementwiseParams& p, int64_t i) { ElementwiseAt(p, i); }
__device__ void StridedCopyElement(const StridedCopyParams& p, int64_t i) { StridedCopyAt(p, i); }
__device__ void ReduceElement(const ReduceParams& p, int64_t i) { ReduceAt(p, i); }
__device__ void IotaElement(const IotaParams& p, int64_t i) { IotaAt(p, i); }
__device__ void GatherElement(const GatherParams& p, int64_t i) { GatherAt(p, i); }
__device__ void Im2ColElement(const Im2ColParams& p, int64_t i) { Im2ColAt(p, i); }
__device__ void ReduceWindowElement(const ReduceWindowParams& p, int64_t i) {
  ReduceWindowAt(p, i);
}
__device__ void SelectWindowElement(const SelectWindowParams& p, int64_t i) {
  SelectWindowAt(p, i);
}

// Blocks of kThreads for a grid-stride loop over `n` elements (at most 65535 * 8).
unsigned Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

template <typename Params, void (*kAt)(const Params&, int64_t)>
int Launch(const Params& p, int64_t n, void* stream) {
  if (n <= 0) return 0;
  GridStride<Params, kAt><<<Blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(p, n);
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
int LaunchReduceWindow(const ReduceWindowParams& p, void* s) {
  return Launch<ReduceWindowParams, ReduceWindowElement>(p, p.n, s);
}
// topk: per chunk of rows (CUB counts items in int), each element's ordered key and its index
// in the row, a stable segmented radix sort of the rows (ties keep the lower index first), then
// the first k of each row gathered into values and indices.
__global__ void TopKKeys(const TopKParams p, int64_t first_row, int64_t count, uint64_t* keys,
                         int32_t* order, int* offsets, int rows) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < count;
       j += int64_t(gridDim.x) * blockDim.x) {
    keys[j] = OrderedKey(p.in, p.type, first_row * p.n + j, p.largest);
    order[j] = int32_t(j % p.n);
    if (j % p.n == 0) offsets[j / p.n] = int(j);
    if (j == 0) offsets[rows] = int(count);
  }
}

__global__ void TopKTake(const TopKParams p, const int32_t* order, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    TopKTakeAt(p, order, i);
  }
}

// Rows [first_row, first_row + rows) of `p`, with scratch for that many rows.
cudaError_t TopKChunk(TopKParams p, int64_t first_row, int rows, uint64_t* keys, int32_t* order,
                      int* offsets, cudaStream_t stream) {
  const int64_t count = rows * p.n;
  uint64_t* sorted_keys = keys + count;
  int32_t* sorted_order = order + count;
  TopKKeys<<<Blocks(count), kThreads, 0, stream>>>(p, first_row, count, keys, order, offsets, rows);
  const int end_bit = BitsOf(p.type);
  size_t temp_bytes = 0;
  cudaError_t e = cub::DeviceSegmentedRadixSort::SortPairs(
      nullptr, temp_bytes, keys, sorted_keys, order, sorted_order, int(count), rows, offsets,
      offsets + 1, 0, end_bit, stream);
  void* temp = nullptr;
  if (e == cudaSuccess) e = cudaMallocAsync(&temp, temp_bytes > 0 ? temp_bytes : 1, stream);
  if (e != cudaSuccess) return e;
  e = cub::DeviceSegmentedRadixSort::SortPairs(temp, temp_bytes, keys, sorted_keys, order,
                                               sorted_order, int(count), rows, offsets, offsets + 1,
                                               0, end_bit, stream);
  cudaFreeAsync(temp, stream);
  if (e != cudaSuccess) return e;
  p.in = static_cast<const char*>(p.in) + first_row * p.n * (BitsOf(p.type) / 8);
  p.values = static_cast<char*>(p.values) + first_row * p.k * (BitsOf(p.type) / 8);
  p.indices += first_row * p.k;
  TopKTake<<<Blocks(rows * p.k), kThreads, 0, stream>>>(p, sorted_order, rows * p.k);
  return cudaGetLastError();
}

int LaunchTopK(const TopKParams& p, void* s) {
  if (p.rows <= 0 || p.k <= 0) return 0;
  if (p.n > 0x3fffffff) return static_cast<int>(cudaErrorInvalidValue);
  cudaStream_t stream = static_cast<cudaStream_t>(s);
  const int64_t chunk_rows = std::max<int64_t>(1, std::min<int64_t>(p.rows, 0x3fffffff / p.n));
  const int64_t count = chunk_rows * p.n;
  char* scratch = nullptr;  // keys and sorted keys, order and sorted order, row offsets.
  const size_t bytes = 2 * count * (sizeof(uint64_t) + sizeof(int32_t)) + (chunk_rows + 1) * 4;
  cudaError_t e = cudaMallocAsync(&scratch, bytes, stream);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return static_cast<int>(e);
  }
  uint64_t* keys = reinterpret_cast<uint64_t*>(scratch);
  int32_t* order = reinterpret_cast<int32_t*>(keys + 2 * count);
  int* offsets = reinterpret_cast<int*>(order + 2 * count);
  for (int64_t r = 0; r < p.rows && e == cudaSuccess; r += chunk_rows) {
    const int rows = int(std::min<int64_t>(chunk_rows, p.rows - r));
    e = TopKChunk(p, r, rows, keys, order, offsets, stream);
  }
  cudaFreeAsync(scratch, stream);
  if (e != cudaSuccess) cudaGetLastError();
  return static_cast<int>(e);
}

int LaunchSelectWindow(const SelectWindowParams& p, void* s) {
  return Launch<SelectWindowParams, SelectWindowElement>(p, p.n, s);
}
int LaunchIm2Col(const Im2ColParams& p, void* s) {
  return Launch<Im2ColParams, Im2ColElement>(p, p.n, s);
}
int LaunchGather(const GatherParams& p, void* s) {
  return Launch<GatherParams, GatherElement>(p, p.n, s);
}
// Scatter applies the updates in index order, as the CPU executor and the host twin do, so that
// duplicate indices combine in one fixed order and replicas agree bit for bit (atomics would
// combine floating-point updates in whatever order threads arrive). Chunk by chunk of at most
// kScatterChunk updates (bounding the scratch to 32 bytes each), in order:
//   1. each update element's target offset in `out` (`skip`, past the end, when its window is
//      out of bounds) and its index;
//   2. a stable radix sort of the (offset, index) pairs (CUB), so each target's updates are
//      adjacent and in index order;
//   3. one thread per run of equal offsets folds the run's updates into its element in order.
constexpr int64_t kScatterChunk = int64_t{1} << 25;

__global__ void ScatterTargets(const ScatterParams p, int64_t first, int64_t count, uint64_t skip,
                               uint64_t* keys, uint64_t* order) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < count;
       j += int64_t(gridDim.x) * blockDim.x) {
    int64_t off = 0;
    keys[j] = OperandOffset(p.access, first + j, /*clamp=*/false, &off) ? uint64_t(off) : skip;
    order[j] = uint64_t(first + j);
  }
}

__global__ void ScatterRuns(const ScatterParams p, int64_t count, uint64_t skip,
                            const uint64_t* keys, const uint64_t* order) {
  const int bytes = BitsOf(p.type) / 8;
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < count;
       j += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t k = keys[j];
    if (k == skip || (j > 0 && keys[j - 1] == k)) continue;
    uint64_t word = 0;
    CopyBytes(p.out, int64_t(k), &word, 0, bytes);
    for (int64_t m = j; m < count && keys[m] == k; ++m) {
      word = CombineBits(word, Load(p.updates, p.type, int64_t(order[m])), p.type, p.op);
    }
    CopyBytes(&word, 0, p.out, int64_t(k), bytes);
  }
}

// One chunk of updates [first, first + count) with the scratch at `pairs` (4 * count words).
cudaError_t ScatterChunk(const ScatterParams& p, int64_t first, int64_t count, uint64_t skip,
                         int end_bit, uint64_t* pairs, cudaStream_t stream) {
  uint64_t *keys = pairs, *order = pairs + count, *sorted_keys = pairs + 2 * count,
           *sorted_order = pairs + 3 * count;
  const unsigned blocks = Blocks(count);
  ScatterTargets<<<blocks, kThreads, 0, stream>>>(p, first, count, skip, keys, order);
  size_t temp_bytes = 0;
  cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, sorted_keys, order,
                                                  sorted_order, count, 0, end_bit, stream);
  void* temp = nullptr;
  if (e == cudaSuccess) e = cudaMallocAsync(&temp, temp_bytes > 0 ? temp_bytes : 1, stream);
  if (e != cudaSuccess) return e;
  e = cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, sorted_keys, order, sorted_order,
                                      count, 0, end_bit, stream);
  cudaFreeAsync(temp, stream);
  if (e != cudaSuccess) return e;
  ScatterRuns<<<blocks, kThreads, 0, stream>>>(p, count, skip, sorted_keys, sorted_order);
  return cudaGetLastError();
}

int LaunchScatter(const ScatterParams& p, void* s) {
  if (p.n <= 0) return 0;
  cudaStream_t stream = static_cast<cudaStream_t>(s);
  uint64_t skip = 1;  // One past the last element of the operand.
  for (int d = 0; d < p.access.operand_rank; ++d) skip *= uint64_t(p.access.operand_dims[d]);
  int end_bit = 1;
  while (end_bit < 64 && (skip >> end_bit) != 0) ++end_bit;
  const int64_t chunk = p.n < kScatterChunk ? p.n : kScatterChunk;
  uint64_t* pairs = nullptr;  // keys, order, sorted keys, sorted order: `chunk` each.
  cudaError_t e = cudaMallocAsync(&pairs, 4 * sizeof(uint64_t) * chunk, stream);
  if (e != cudaSuccess) {
    cudaGetLastError();  // Not sticky: the caller gets it as this launch's error.
    return static_cast<int>(e);
  }
  for (int64_t first = 0; first < p.n && e == cudaSuccess; first += chunk) {
    const int64_t count = p.n - first < chunk ? p.n - first : chunk;
    e = ScatterChunk(p, first, count, skip, end_bit, pairs, stream);
  }
  cudaFreeAsync(pairs, stream);
  if (e != cudaSuccess) cudaGetLastError();
  return static_cast<int>(e);
}

}  // namespace spmd_cuda

// Parameters of the CUDA executor's generic kernels, as plain structs.
//
// This header is shared by the .cu files (compiled by nvcc), by their host twins
// (host_kernels.cc, which run the same element functions in loops so the executor can be tested
// without a GPU) and by the executor (.cc). It must stay free of Abseil and of CUDA headers.
// Every kernel computes one output element per index `i` in [0, n); the element functions that
// do it live in element_math.h and index_math.h.
#ifndef RUNTIME_CUDA_KERNELS_KERNEL_PARAMS_H_
#define RUNTIME_CUDA_KERNELS_KERNEL_PARAMS_H_

#include <stdint.h>

namespace spmd_cuda {

// Highest rank a kernel handles after size-1 dimensions are dropped and contiguous ones merged.
constexpr int kMaxRank = 8;

// Element types the kernels read and write (pred is stored as one byte, 0 or 1).
enum DType : int {
  kPred, kS8, kS16, kS32, kS64, kU8, kU16, kU32, kU64, kF16, kBF16, kF32, kF64, kNumDTypes
};

// Elementwise operations. Binary ops read in0 and in1; kSelect reads pred in0 and picks in1 or
// in2; kClamp is clamp(min=in0, x=in1, max=in2); kConvert converts in0 (in_type) to out_type.
enum ElementOp : int {
  kCopy,
  kConvert,
  // Unary.
  kNeg,
  kAbs,
  kSign,
  kNot,
  kExp,
  kExpm1,
  kLog,
  kLog1p,
  kSqrt,
  kRsqrt,
  kCbrt,
  kTanh,
  kSin,
  kCos,
  kTan,
  kFloor,
  kCeil,
  kRoundAfz,
  kRoundEven,
  kLogistic,
  kIsFinite,
  kReducePrecision,  // On the bits: ElementwiseParams' exponent_bits and mantissa_bits.
  // Binary.
  kAdd,
  kSub,
  kMul,
  kDiv,
  kRem,
  kMax,
  kMin,
  kPow,
  kAtan2,
  kAnd,
  kOr,
  kXor,
  kShl,
  kShrA,
  kShrL,
  kCompare,
  // Ternary.
  kSelect,
  kClamp,
};

// Comparison directions for kCompare (HLO's order).
enum CompareDir : int { kEq, kNe, kGe, kGt, kLe, kLt };

struct ElementwiseParams {
  int op = kCopy;
  int compare_dir = kEq;
  int out_type = kF32;
  int in_type = kF32;     // Type of the compared/converted/computed operands (in1 for select).
  const void* in[3] = {nullptr, nullptr, nullptr};
  int scalar_mask = 0;    // Bit k: operand k is a scalar read at index 0.
  int exponent_bits = 0;  // kReducePrecision's target widths.
  int mantissa_bits = 0;
  void* out = nullptr;
  int64_t n = 0;
};

// dst[dst_offset + sum c_k dst_strides[k]] = src[src_offset + sum c_k src_strides[k]] for every
// coordinate c of `dims` (row-major order, index i). Strides and offsets count elements; source
// strides may be 0 (broadcast) or negative (reverse).
struct StridedCopyParams {
  int rank = 0;
  int elem_bytes = 4;
  int64_t dims[kMaxRank] = {};
  int64_t src_strides[kMaxRank] = {};
  int64_t dst_strides[kMaxRank] = {};
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
  const void* src = nullptr;
  void* dst = nullptr;
  int64_t n = 0;
};

// Reductions: kAdd, kMul, kMax, kMin, kAnd, kOr (ElementOp values).
// out[i] = init op in[...] over the reduced coordinates of output element i.
struct ReduceParams {
  int type = kF32;
  int op = kAdd;
  const void* in = nullptr;
  const void* init = nullptr;  // One element of `type`.
  void* out = nullptr;
  int out_rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t out_strides[kMaxRank] = {};  // Input stride of each kept dimension.
  int red_rank = 0;
  int64_t red_dims[kMaxRank] = {};
  int64_t red_strides[kMaxRank] = {};
  int64_t n = 0;      // Output elements.
  int64_t red_n = 0;  // Reduced elements per output element.
};

// The windows of reduce-window and select-and-scatter over an input of `in_strides`: output
// element o (row-major over out_dims) reads window positions (row-major over window) whose
// input coordinate along dim d is coords[coord_start[d] + o_d * window[d] + k_d] (-1: padding
// or a base-dilation hole, skipped, as on the CPU executor).
struct WindowGeometry {
  int rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t window[kMaxRank] = {};
  int64_t coord_start[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};
  int64_t window_positions = 1;  // The product of window.
  const int64_t* coords = nullptr;
};

// reduce-window of one operand: out[o] = init op in[...] over o's window positions.
struct ReduceWindowParams {
  WindowGeometry geometry;
  int type = kF32;
  int op = kAdd;
  const void* in = nullptr;
  const void* init = nullptr;  // One element of `type`.
  void* out = nullptr;
  int64_t n = 0;  // Output elements.
};

// select-and-scatter's select: selected[s] = the input offset its select comparator keeps
// among source element s's window positions (the first, replaced by each later one the kept
// value does not compare `compare_dir` to), or `none` when no position falls on the input.
struct SelectWindowParams {
  WindowGeometry geometry;
  int type = kF32;
  int compare_dir = kGe;
  int64_t none = 0;
  const void* in = nullptr;
  int64_t* selected = nullptr;
  int64_t n = 0;  // Source elements.
};

// out[i] = coordinate `iota_dim` of element i: (i / inner) % dim.
struct IotaParams {
  int type = kS32;
  void* out = nullptr;
  int64_t inner = 1;
  int64_t dim = 1;
  int64_t n = 0;
};

// How a gather output element / scatter update element finds its operand element (see
// runtime/cpu/ops/gather_scatter_ops.cc for the semantics). Dimension k of the walked array
// (gather output, scatter updates) is either a batch dimension (batch_pos[k] >= 0: position
// among the indices dimensions without index_vector_dim) or a window dimension walking operand
// dimension operand_dim[k].
struct IndexedAccess {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int batch_pos[kMaxRank] = {};
  int operand_dim[kMaxRank] = {};
  int index_type = kS32;
  const void* indices = nullptr;
  int64_t batch_strides[kMaxRank] = {};  // Indices stride of each batch position.
  int64_t vector_stride = 0;             // Indices stride of index_vector_dim (0: implicit).
  int num_index = 0;
  int start_index_map[kMaxRank] = {};
  int num_batching = 0;
  int operand_batching[kMaxRank] = {};
  int batching_position[kMaxRank] = {};
  int operand_rank = 0;
  int64_t operand_dims[kMaxRank] = {};
  int64_t operand_strides[kMaxRank] = {};
  int64_t window[kMaxRank] = {};  // Gather: slice sizes; scatter: window size per operand dim.
};

// Gather: out[i] = operand[start (clamped) + window coordinate].
struct GatherParams {
  IndexedAccess access;
  int elem_bytes = 4;
  const void* operand = nullptr;
  void* out = nullptr;
  int64_t n = 0;
};

// Scatter: out[start + window coordinate] = combine(out[...], updates[i]) when the whole window
// fits; op is kCopy (assign) or a reduction op. `out` already holds the operand.
struct ScatterParams {
  IndexedAccess access;
  int type = kF32;
  int op = kCopy;
  const void* updates = nullptr;
  void* out = nullptr;
  int64_t n = 0;
};

// im2col of one convolution group (runtime/common/convolution_plan.h): out[r, k, i], row-major
// [rows, K, I], is the lhs element that kernel position k and input feature i read for output
// row row_begin + r (row-major over [batch, spatial out_dims...]), or zero where that position
// falls on padding or a dilation hole. `spatial` holds the spatial dims' windows: out_dims the
// output sizes, window the kernel sizes, in_strides the lhs strides, window_positions K.
struct Im2ColParams {
  WindowGeometry spatial;
  int elem_bytes = 4;
  int64_t batch_stride = 0;  // lhs strides of the batch and feature dims.
  int64_t feature_stride = 0;
  int64_t base = 0;         // lhs offset of the group's first batch and feature.
  int64_t in_features = 0;  // I.
  int64_t row_begin = 0;
  const void* lhs = nullptr;
  void* out = nullptr;
  int64_t n = 0;  // Rows of this block times K * I.
};

// topk along the last dim of `in` ([rows, n] of `type`): values[r, j] and indices[r, j] (s32) are
// the j-th element of row r and its index in a stable sort by XLA's comparator: IEEE totalOrder
// for floats, value for integers, descending when `largest`; equal elements by lower index.
struct TopKParams {
  int type = kF32;
  bool largest = true;
  int64_t rows = 0, n = 0, k = 0;
  const void* in = nullptr;
  void* values = nullptr;
  int32_t* indices = nullptr;
};

// One strided batched GEMM in cuBLAS's column-major terms:
// C[b] (m x n, ldc) = op(A[b]) (m x k) * op(B[b]) (k x n), op = transpose when trans_*.
struct GemmParams {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t lda = 0, stride_a = 0;
  const void* b = nullptr;
  int64_t ldb = 0, stride_b = 0;
  void* c = nullptr;
  int64_t ldc = 0, stride_c = 0;
  int64_t batch = 1;
  int in_type = kF32;   // A and B.
  int out_type = kF32;  // C.
};

}  // namespace spmd_cuda

#endif  // RUNTIME_CUDA_KERNELS_KERNEL_PARAMS_H_

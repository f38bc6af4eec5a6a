// Index arithmetic of the data-movement kernels (strided copy, reduce, iota, gather, scatter),
// shared by the CUDA kernels and their host twins. Each function computes output element (or,
// for scatter, update element) `i`.
#ifndef RUNTIME_CUDA_KERNELS_INDEX_MATH_H_
#define RUNTIME_CUDA_KERNELS_INDEX_MATH_H_

#include <stdint.h>

#include "runtime/cuda/kernels/element_math.h"

namespace spmd_cuda {

SPMD_HD void StridedCopyAt(const StridedCopyParams& p, int64_t i) {
  int64_t s = p.src_offset, d = p.dst_offset;
  for (int k = p.rank - 1; k >= 0; --k) {
    const int64_t c = i % p.dims[k];
    i /= p.dims[k];
    s += c * p.src_strides[k];
    d += c * p.dst_strides[k];
  }
  CopyBytes(p.src, s, p.dst, d, p.elem_bytes);
}

// The input offset where output element `i`'s reduced elements start.
SPMD_HD int64_t ReduceBase(const ReduceParams& p, int64_t i) {
  int64_t base = 0;
  for (int k = p.out_rank - 1; k >= 0; --k) {
    base += (i % p.out_dims[k]) * p.out_strides[k];
    i /= p.out_dims[k];
  }
  return base;
}

// The input offset of reduced element `r` (row-major over the reduced dims) from `base`.
SPMD_HD int64_t ReduceOffset(const ReduceParams& p, int64_t base, int64_t r) {
  for (int k = p.red_rank - 1; k >= 0; --k) {
    base += (r % p.red_dims[k]) * p.red_strides[k];
    r /= p.red_dims[k];
  }
  return base;
}

SPMD_HD void ReduceStore(const ReduceParams& p, int64_t i, Num acc) {
  if (!IsFloatType(p.type)) acc.i = Normalize(acc.i, p.type);
  Store(p.out, p.type, i, acc);
}

// Output element `i` by one thread, reduced elements in row-major order.
SPMD_HD void ReduceAt(const ReduceParams& p, int64_t i) {
  const int64_t base = ReduceBase(p, i);
  Num acc = Load(p.init, p.type, 0);
  for (int64_t r = 0; r < p.red_n; ++r) {
    acc = Binary(p.op, acc, Load(p.in, p.type, ReduceOffset(p, base, r)), p.type);
  }
  ReduceStore(p, i, acc);
}

// The input offset of window position w of output element `out_index`; false on padding.
SPMD_HD bool WindowInputOffset(const WindowGeometry& g, const int64_t* out_index, int64_t w,
                               int64_t* offset) {
  *offset = 0;
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t k = w % g.window[d];
    w /= g.window[d];
    const int64_t x = g.coords[g.coord_start[d] + out_index[d] * g.window[d] + k];
    if (x < 0) return false;
    *offset += x * g.in_strides[d];
  }
  return true;
}

// The position of output element `i` along each dim; returns what is left of `i` (the batch
// of an im2col row, 0 when `i` is inside out_dims).
SPMD_HD int64_t WindowOutIndex(const WindowGeometry& g, int64_t i, int64_t* out_index) {
  for (int d = g.rank - 1; d >= 0; --d) {
    out_index[d] = i % g.out_dims[d];
    i /= g.out_dims[d];
  }
  return i;
}

SPMD_HD void ReduceWindowAt(const ReduceWindowParams& p, int64_t i) {
  int64_t out_index[kMaxRank];
  WindowOutIndex(p.geometry, i, out_index);
  Num acc = Load(p.init, p.type, 0);
  for (int64_t w = 0, offset = 0; w < p.geometry.window_positions; ++w) {
    if (WindowInputOffset(p.geometry, out_index, w, &offset)) {
      acc = Binary(p.op, acc, Load(p.in, p.type, offset), p.type);
    }
  }
  if (!IsFloatType(p.type)) acc.i = Normalize(acc.i, p.type);
  Store(p.out, p.type, i, acc);
}

SPMD_HD void Im2ColAt(const Im2ColParams& p, int64_t i) {
  const int64_t cols = p.spatial.window_positions * p.in_features;
  int64_t out_index[kMaxRank];
  const int64_t batch = WindowOutIndex(p.spatial, p.row_begin + i / cols, out_index);
  int64_t offset = 0;
  if (WindowInputOffset(p.spatial, out_index, (i % cols) / p.in_features, &offset)) {
    offset += p.base + batch * p.batch_stride + (i % p.in_features) * p.feature_stride;
    CopyBytes(p.lhs, offset, p.out, i, p.elem_bytes);
  } else {
    const uint64_t zero = 0;
    CopyBytes(&zero, 0, p.out, i, p.elem_bytes);
  }
}

SPMD_HD void SelectWindowAt(const SelectWindowParams& p, int64_t i) {
  int64_t out_index[kMaxRank];
  WindowOutIndex(p.geometry, i, out_index);
  int64_t best = -1;
  Num best_value = FromI(0);
  for (int64_t w = 0, offset = 0; w < p.geometry.window_positions; ++w) {
    if (!WindowInputOffset(p.geometry, out_index, w, &offset)) continue;
    const Num v = Load(p.in, p.type, offset);
    if (best < 0 || !Compare(best_value, v, p.type, p.compare_dir)) {
      best = offset;
      best_value = v;
    }
  }
  p.selected[i] = best < 0 ? p.none : best;
}

// Element i of `in` (type t) as an unsigned key whose ascending order is the element's order
// (IEEE totalOrder for floats: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN), reversed when
// `largest`; only the low BitsOf(t) bits are used.
SPMD_HD uint64_t OrderedKey(const void* in, int t, int64_t i, bool largest) {
  const int bits = BitsOf(t);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  const uint64_t all = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  uint64_t v = 0;
  CopyBytes(in, i, &v, 0, bits / 8);
  if (IsFloatType(t)) {
    v = (v & sign) ? (~v & all) : (v | sign);
  } else if (!IsUnsignedType(t)) {
    v ^= sign;
  }
  return largest ? (~v & all) : v;
}

// topk's output element j of row r from the row's order (`order`: the row's indices sorted).
SPMD_HD void TopKTakeAt(const TopKParams& p, const int32_t* order, int64_t i) {
  const int64_t r = i / p.k, j = i % p.k;
  const int32_t index = order[r * p.n + j];
  CopyBytes(p.in, r * p.n + index, p.values, i, BitsOf(p.type) / 8);
  p.indices[i] = index;
}

SPMD_HD void IotaAt(const IotaParams& p, int64_t i) {
  const int64_t v = (i / p.inner) % p.dim;
  Store(p.out, p.type, i, IsFloatType(p.type) ? FromF(double(v)) : FromI(v));
}

// Index element `k` of the indices array as a signed value (huge unsigned values saturate).
SPMD_HD int64_t ReadIndex(const void* indices, int type, int64_t k) {
  const Num v = Load(indices, type, k);
  if (type == kU64 && v.i < 0) return INT64_MAX;
  return v.i;
}

// The operand offset of element `i` of the walked array; false when `clamp` is off and the
// whole window does not fit at its start (the element is then skipped).
SPMD_HD bool OperandOffset(const IndexedAccess& a, int64_t i, bool clamp, int64_t* offset) {
  int64_t coord[kMaxRank], batch[kMaxRank], start[kMaxRank], window[kMaxRank];
  for (int k = a.rank - 1; k >= 0; --k) {
    coord[k] = i % a.dims[k];
    i /= a.dims[k];
  }
  int64_t index_offset = 0;
  for (int d = 0; d < a.operand_rank; ++d) start[d] = window[d] = 0;
  for (int k = 0; k < a.rank; ++k) {
    if (a.batch_pos[k] >= 0) {
      batch[a.batch_pos[k]] = coord[k];
      index_offset += coord[k] * a.batch_strides[a.batch_pos[k]];
    } else {
      window[a.operand_dim[k]] = coord[k];
    }
  }
  for (int k = 0; k < a.num_index; ++k) {
    start[a.start_index_map[k]] = ReadIndex(a.indices, a.index_type, index_offset + k * a.vector_stride);
  }
  for (int k = 0; k < a.num_batching; ++k) start[a.operand_batching[k]] = batch[a.batching_position[k]];
  int64_t off = 0;
  for (int d = 0; d < a.operand_rank; ++d) {
    const int64_t limit = a.operand_dims[d] - a.window[d];
    if (clamp) {
      start[d] = start[d] < 0 ? 0 : start[d] > limit ? limit : start[d];
    } else if (start[d] < 0 || start[d] > limit) {
      return false;
    }
    off += (start[d] + window[d]) * a.operand_strides[d];
  }
  *offset = off;
  return true;
}

SPMD_HD void GatherAt(const GatherParams& p, int64_t i) {
  int64_t off = 0;
  OperandOffset(p.access, i, /*clamp=*/true, &off);
  CopyBytes(p.operand, off, p.out, i, p.elem_bytes);
}

// The bits of element type `t` holding combine(old, update) (low bytes of a 64-bit word).
SPMD_HD uint64_t CombineBits(uint64_t old_bits, Num update, int t, int op) {
  uint64_t word = old_bits;
  Num r = op == kCopy ? update : Binary(op, Load(&word, t, 0), update, t);
  if (!IsFloatType(t)) r.i = Normalize(r.i, t);
  Store(&word, t, 0, r);
  return word;
}

// Applies combine to element `k` of `out` (the host twin; the GPU orders duplicates by sorting,
// kernels.cu LaunchScatter).
SPMD_HD void CombineAt(void* out, int64_t k, Num update, int t, int op) {
  const int bytes = BitsOf(t) / 8;
  uint64_t word = 0;
  CopyBytes(out, k, &word, 0, bytes);
  word = CombineBits(word, update, t, op);
  CopyBytes(&word, 0, out, k, bytes);
}

SPMD_HD void ScatterAt(const ScatterParams& p, int64_t i) {
  int64_t off = 0;
  if (!OperandOffset(p.access, i, /*clamp=*/false, &off)) return;
  CombineAt(p.out, off, Load(p.updates, p.type, i), p.type, p.op);
}

}  // namespace spmd_cuda

#endif  // RUNTIME_CUDA_KERNELS_INDEX_MATH_H_

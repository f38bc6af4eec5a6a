// Strided N-d copy over bytes.
//
// The copy first normalizes its loop nest: dimensions of size 1 are dropped and an outer
// dimension is folded into the next inner one when both buffers step through it contiguously
// (outer stride == inner stride * inner size), so a row-major slice of whole rows becomes one
// long run. Then one of three inner kernels runs under an odometer over the remaining outer
// dimensions:
//   - contiguous run on both sides: one memcpy per run;
//   - transpose (destination contiguous along the innermost dimension, source contiguous along
//     some outer dimension k): a tiled loop over (k, innermost) so reads and writes both hit
//     cache lines they already hold;
//   - anything else (broadcast stride 0, reverse stride < 0, slice strides): an element loop
//     whose element size is a compile-time constant for the common sizes.
#include "runtime/cpu/ops/strided_copy.h"

#include <algorithm>
#include <cstring>

namespace runtime {
namespace {

struct LoopDim {
  int64_t size;
  int64_t src;
  int64_t dst;
};

// Drops unit dimensions and merges dimensions that are contiguous in both buffers. Returns
// false when the copy is empty.
bool Normalize(const StridedCopySpec& spec, std::vector<LoopDim>* dims) {
  for (size_t d = 0; d < spec.sizes.size(); ++d) {
    const int64_t size = spec.sizes[d];
    if (size == 0) return false;
    if (size == 1) continue;
    LoopDim inner{size, spec.src_strides[d], spec.dst_strides[d]};
    if (!dims->empty()) {
      LoopDim& outer = dims->back();
      if (outer.src == inner.src * inner.size && outer.dst == inner.dst * inner.size) {
        outer = LoopDim{outer.size * inner.size, inner.src, inner.dst};
        continue;
      }
    }
    dims->push_back(inner);
  }
  return true;
}

// Calls inner(src, dst) once per index of `outer`, with the pointers advanced accordingly.
template <typename Inner>
void ForEachOuter(const std::vector<LoopDim>& outer, const uint8_t* src, uint8_t* dst,
                  Inner inner) {
  const int64_t n = static_cast<int64_t>(outer.size());
  std::vector<int64_t> index(n, 0);
  while (true) {
    inner(src, dst);
    int64_t d = n - 1;
    for (; d >= 0; --d) {
      src += outer[d].src;
      dst += outer[d].dst;
      if (++index[d] < outer[d].size) break;
      src -= outer[d].src * outer[d].size;
      dst -= outer[d].dst * outer[d].size;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

template <int kBytes>
inline void CopyOne(const uint8_t* src, uint8_t* dst) {
  std::memcpy(dst, src, kBytes);
}

template <int kBytes>
void ElementLoop(const uint8_t* src, uint8_t* dst, const LoopDim& d) {
  for (int64_t i = 0; i < d.size; ++i) {
    CopyOne<kBytes>(src + i * d.src, dst + i * d.dst);
  }
}

template <int kBytes>
void TiledTranspose(const uint8_t* src, uint8_t* dst, const LoopDim& k, const LoopDim& l) {
  constexpr int64_t kTile = kBytes >= 8 ? 16 : 32;
  for (int64_t kb = 0; kb < k.size; kb += kTile) {
    const int64_t k_end = std::min(k.size, kb + kTile);
    for (int64_t lb = 0; lb < l.size; lb += kTile) {
      const int64_t l_end = std::min(l.size, lb + kTile);
      for (int64_t i = kb; i < k_end; ++i) {
        const uint8_t* s = src + i * k.src;
        uint8_t* t = dst + i * k.dst;
        for (int64_t j = lb; j < l_end; ++j) CopyOne<kBytes>(s + j * l.src, t + j * l.dst);
      }
    }
  }
}

// Runs the element or tiled kernel for a compile-time element size.
template <int kBytes>
void CopyWithElementSize(const uint8_t* src, uint8_t* dst, std::vector<LoopDim> dims) {
  const LoopDim last = dims.back();
  dims.pop_back();
  if (last.dst == kBytes && last.src != kBytes) {
    // Transpose: look for an outer dimension along which the source is contiguous.
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dims[k].src != kBytes) continue;
      const LoopDim kdim = dims[k];
      dims.erase(dims.begin() + k);
      ForEachOuter(dims, src, dst,
                   [&](const uint8_t* s, uint8_t* t) { TiledTranspose<kBytes>(s, t, kdim, last); });
      return;
    }
  }
  ForEachOuter(dims, src, dst,
               [&](const uint8_t* s, uint8_t* t) { ElementLoop<kBytes>(s, t, last); });
}

// Element loop for an element size without a specialization.
void CopyGenericElements(const uint8_t* src, uint8_t* dst, std::vector<LoopDim> dims,
                         int64_t element_bytes) {
  const LoopDim last = dims.back();
  dims.pop_back();
  ForEachOuter(dims, src, dst, [&](const uint8_t* s, uint8_t* t) {
    for (int64_t i = 0; i < last.size; ++i) {
      std::memcpy(t + i * last.dst, s + i * last.src, element_bytes);
    }
  });
}

template <int kBytes>
void CopyIndexedFixed(const uint8_t* src, absl::Span<const int64_t> src_offsets, uint8_t* dst,
                      absl::Span<const int64_t> dst_offsets) {
  for (size_t j = 0; j < src_offsets.size(); ++j) {
    std::memcpy(dst + dst_offsets[j] * kBytes, src + src_offsets[j] * kBytes, kBytes);
  }
}

}  // namespace

void CopyIndexedElements(const uint8_t* src, absl::Span<const int64_t> src_offsets, uint8_t* dst,
                         absl::Span<const int64_t> dst_offsets, int64_t element_bytes) {
  switch (element_bytes) {
    case 1:
      return CopyIndexedFixed<1>(src, src_offsets, dst, dst_offsets);
    case 2:
      return CopyIndexedFixed<2>(src, src_offsets, dst, dst_offsets);
    case 4:
      return CopyIndexedFixed<4>(src, src_offsets, dst, dst_offsets);
    case 8:
      return CopyIndexedFixed<8>(src, src_offsets, dst, dst_offsets);
    case 16:
      return CopyIndexedFixed<16>(src, src_offsets, dst, dst_offsets);
    default:
      for (size_t j = 0; j < src_offsets.size(); ++j) {
        std::memcpy(dst + dst_offsets[j] * element_bytes, src + src_offsets[j] * element_bytes,
                    element_bytes);
      }
  }
}

void StridedCopy(const uint8_t* src, uint8_t* dst, const StridedCopySpec& spec,
                 int64_t element_bytes) {
  std::vector<LoopDim> dims;
  if (!Normalize(spec, &dims)) return;
  if (dims.empty()) {  // A single element.
    std::memcpy(dst, src, element_bytes);
    return;
  }
  const LoopDim last = dims.back();
  if (last.src == element_bytes && last.dst == element_bytes) {
    const int64_t run = last.size * element_bytes;
    dims.pop_back();
    ForEachOuter(dims, src, dst, [run](const uint8_t* s, uint8_t* t) { std::memcpy(t, s, run); });
    return;
  }
  switch (element_bytes) {
    case 1:
      return CopyWithElementSize<1>(src, dst, std::move(dims));
    case 2:
      return CopyWithElementSize<2>(src, dst, std::move(dims));
    case 4:
      return CopyWithElementSize<4>(src, dst, std::move(dims));
    case 8:
      return CopyWithElementSize<8>(src, dst, std::move(dims));
    case 16:
      return CopyWithElementSize<16>(src, dst, std::move(dims));
    default:
      return CopyGenericElements(src, dst, std::move(dims), element_bytes);
  }
}

void CopyView(const uint8_t* src, const StridedView& from, uint8_t* dst, const StridedView& to,
              int64_t element_bytes) {
  StridedCopySpec spec{from.sizes, from.strides, to.strides};
  for (int64_t& s : spec.src_strides) s *= element_bytes;
  for (int64_t& s : spec.dst_strides) s *= element_bytes;
  StridedCopy(src + from.offset * element_bytes, dst + to.offset * element_bytes, spec,
              element_bytes);
}

std::vector<int64_t> RowMajorByteStrides(absl::Span<const int64_t> dims, int64_t element_bytes) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = element_bytes;
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= dims[d];
  }
  return strides;
}

std::vector<int64_t> RowMajorByteStrides(const hlo::Shape& shape) {
  return RowMajorByteStrides(shape.dimensions(), hlo::ByteWidth(shape.element_type()));
}

void FillElements(uint8_t* dst, int64_t count, const uint8_t* value, int64_t element_bytes) {
  if (count <= 0) return;
  std::memcpy(dst, value, element_bytes);
  // Double the filled prefix until it covers the buffer.
  const int64_t total = count * element_bytes;
  int64_t filled = element_bytes;
  while (filled < total) {
    const int64_t n = std::min(filled, total - filled);
    std::memcpy(dst + filled, dst, n);
    filled += n;
  }
}

}  // namespace runtime

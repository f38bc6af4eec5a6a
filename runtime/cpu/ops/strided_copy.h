// Byte-level array kernels shared by the data-movement handlers (shape_ops.cc, slice_ops.cc).
//
// Every data-movement op (broadcast, transpose, slice, reverse, pad, concatenate, the dynamic
// slices) is one `StridedCopy`: an N-d loop over the destination region where each dimension
// advances the source and destination pointers by a byte stride. A stride may be 0 (broadcast)
// or negative (reverse). Working on bytes with the element size as a parameter lets one kernel
// serve every element type.
#ifndef RUNTIME_CPU_OPS_STRIDED_COPY_H_
#define RUNTIME_CPU_OPS_STRIDED_COPY_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "hlo/ir/shape.h"
#include "runtime/common/strided_view.h"

namespace runtime {

// One N-d copy: `sizes[d]` iterations of dimension d (outermost first), advancing the source by
// `src_strides[d]` bytes and the destination by `dst_strides[d]` bytes per step.
struct StridedCopySpec {
  std::vector<int64_t> sizes;
  std::vector<int64_t> src_strides;
  std::vector<int64_t> dst_strides;
};

// Copies the elements `spec` describes from `src` to `dst`. Adjacent dimensions that are
// contiguous in both buffers are merged, contiguous innermost runs are copied with memcpy, and a
// transposing copy (destination contiguous along one dimension, source along another) is tiled
// so both sides stay in cache. REQUIRES: every address the loop touches lies inside the buffers,
// and the regions do not overlap. `element_bytes` is the size of one element.
void StridedCopy(const uint8_t* src, uint8_t* dst, const StridedCopySpec& spec,
                 int64_t element_bytes);

// Copies the elements `from` selects in `src` to those `to` selects in `dst` (views in elements
// of `element_bytes` bytes, runtime/common/strided_view.h). REQUIRES: equal sizes, and what
// StridedCopy requires.
void CopyView(const uint8_t* src, const StridedView& from, uint8_t* dst, const StridedView& to,
              int64_t element_bytes);

// Byte strides of a dense row-major array with `dims` and `element_bytes`-sized elements.
std::vector<int64_t> RowMajorByteStrides(absl::Span<const int64_t> dims, int64_t element_bytes);
// The same for an array `shape` (its element type's ByteWidth).
std::vector<int64_t> RowMajorByteStrides(const hlo::Shape& shape);

// Indexed copy: the element at dst_offsets[j] of `dst` becomes the one at src_offsets[j] of
// `src` (offsets in elements of `element_bytes` bytes), for j < src_offsets.size(). Applies a
// gather's or scatter's windows and a sorted row's permutation.
// REQUIRES: dst_offsets.size() == src_offsets.size().
void CopyIndexedElements(const uint8_t* src, absl::Span<const int64_t> src_offsets, uint8_t* dst,
                         absl::Span<const int64_t> dst_offsets, int64_t element_bytes);

// Fills `count` elements at `dst` with copies of the `element_bytes` bytes at `value`.
void FillElements(uint8_t* dst, int64_t count, const uint8_t* value, int64_t element_bytes);

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_STRIDED_COPY_H_

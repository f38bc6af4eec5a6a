// Multi-index iteration over dense row-major arrays for the reduce, dot and gather/scatter
// kernels.
//
// `StridedCounter` walks a multi-index over `bounds` in row-major order (last dimension
// fastest) and keeps, for each of several stride vectors, the linear offset that the current
// index maps to. A kernel that reads one array and writes another with a different dimension
// order asks for two stride vectors and reads both offsets; a stride of 0 makes a dimension
// broadcast (e.g. the reduced dimensions of a reduce's output).
#ifndef RUNTIME_COMMON_STRIDED_INDEX_H_
#define RUNTIME_COMMON_STRIDED_INDEX_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "hlo/ir/shape.h"

namespace runtime {

// Row-major strides (in elements) of an array with dimensions `dims` (hlo/ir/shape.h).
using hlo::RowMajorStrides;

// Product of `dims` (1 for none).
inline int64_t ElementCount(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Strides of `dims` picked in the order `perm`: result[i] = strides[perm[i]].
inline std::vector<int64_t> PermuteStrides(absl::Span<const int64_t> strides,
                                           absl::Span<const int64_t> perm) {
  std::vector<int64_t> out;
  out.reserve(perm.size());
  for (int64_t p : perm) out.push_back(strides[p]);
  return out;
}

class StridedCounter {
 public:
  // Iterates over `bounds`; `strides[k]` (each of bounds.size() entries) defines offset(k).
  // A rank-0 `bounds` yields one position; a zero bound yields none.
  StridedCounter(std::vector<int64_t> bounds, std::vector<std::vector<int64_t>> strides)
      : bounds_(std::move(bounds)),
        strides_(std::move(strides)),
        index_(bounds_.size(), 0),
        offsets_(strides_.size(), 0) {
    for (int64_t b : bounds_) done_ |= b == 0;
  }

  bool done() const { return done_; }
  const std::vector<int64_t>& index() const { return index_; }
  int64_t offset(size_t k) const { return offsets_[k]; }

  // Advances to the next position in row-major order.
  void Next() {
    for (int64_t d = static_cast<int64_t>(bounds_.size()) - 1; d >= 0; --d) {
      if (++index_[d] < bounds_[d]) {
        for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] += strides_[k][d];
        return;
      }
      index_[d] = 0;
      for (size_t k = 0; k < strides_.size(); ++k) {
        offsets_[k] -= strides_[k][d] * (bounds_[d] - 1);
      }
    }
    done_ = true;
  }

 private:
  std::vector<int64_t> bounds_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> index_;
  std::vector<int64_t> offsets_;
  bool done_ = false;
};

}  // namespace runtime

#endif  // RUNTIME_COMMON_STRIDED_INDEX_H_

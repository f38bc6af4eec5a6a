// Small helpers of the point evaluator (point_evaluator.h): element bits, row-major indices,
// flattened tuple leaves.
#ifndef RUNTIME_CPU_POINT_ELEMENTS_H_
#define RUNTIME_CPU_POINT_ELEMENTS_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/shard_geometry.h"

namespace runtime {
namespace points {

// Copies `width` (<= 8) bytes; the common widths as fixed-size copies (inlined loads and
// stores, no memcpy call).
inline void CopyBytes(void* to, const void* from, int width) {
  switch (width) {
    case 4:
      return static_cast<void>(std::memcpy(to, from, 4));
    case 1:
      return static_cast<void>(std::memcpy(to, from, 1));
    case 2:
      return static_cast<void>(std::memcpy(to, from, 2));
    case 8:
      return static_cast<void>(std::memcpy(to, from, 8));
    default:
      std::memcpy(to, from, width);
  }
}

// The raw bits of element `i` of an array literal whose elements are `width` (<= 8) bytes.
inline uint64_t BitsAt(const hlo::Literal& literal, int64_t i, int width) {
  uint64_t bits = 0;
  CopyBytes(&bits, literal.data().data() + i * width, width);
  return bits;
}

inline void SetBits(hlo::Literal& literal, int64_t i, int width, uint64_t bits) {
  CopyBytes(literal.mutable_data()->data() + i * width, &bits, width);
}

// Row-major linear index <-> multi-index over `dims`.
inline void Unravel(int64_t linear, const std::vector<int64_t>& dims, int64_t* index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    index[d] = dims[d] == 0 ? 0 : linear % dims[d];
    linear = dims[d] == 0 ? 0 : linear / dims[d];
  }
}

// Advances a row-major multi-index over `dims` by `delta` > 0 elements (Unravel of linear +
// delta), dividing only where a dimension carries: cheap for runs of nearby indices.
inline void Advance(const std::vector<int64_t>& dims, int64_t delta, int64_t* index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0 && delta > 0; --d) {
    index[d] += delta;
    if (index[d] < dims[d]) return;
    delta = index[d] / dims[d];
    index[d] %= dims[d];
  }
}

// The multi-indices of a sequence of linear indices, in turn: each advanced from the previous
// one where they ascend, else unravelled afresh.
class MultiIndexWalk {
 public:
  explicit MultiIndexWalk(const std::vector<int64_t>& dims) : dims_(dims), index_(dims.size()) {}
  const int64_t* To(int64_t linear) {
    if (previous_ >= 0 && linear > previous_) {
      Advance(dims_, linear - previous_, index_.data());
    } else {
      Unravel(linear, dims_, index_.data());
    }
    previous_ = linear;
    return index_.data();
  }

 private:
  const std::vector<int64_t>& dims_;
  std::vector<int64_t> index_;
  int64_t previous_ = -1;
};

inline int64_t Ravel(const int64_t* index, const std::vector<int64_t>& dims) {
  int64_t linear = 0;
  for (size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + index[d];
  return linear;
}

// Calls `fn(i, global)` for each position i of `indices`, row-major indices into a device's
// padded shard (dimensions `local`) whose data is `region` of an array of dimensions `full`:
// `global` is the element's row-major index in the full array, or -1 in the padding. A run of
// consecutive indices steps along the last dimension without unravelling each index.
template <typename Fn>
void ForEachShardElement(const std::vector<int64_t>& local, const std::vector<int64_t>& full,
                         const hlo::ShardRegion& region, absl::Span<const int64_t> indices,
                         Fn fn) {
  const std::vector<int64_t> sizes = region.sizes();
  const int64_t rank = static_cast<int64_t>(full.size());
  std::vector<int64_t> at(rank);
  int64_t previous = -2, global = 0;
  bool rows_inside = false;  // Every coordinate but the last is inside the region.
  for (size_t i = 0; i < indices.size(); ++i) {
    const int64_t l = indices[i];
    if (rank > 0 && l == previous + 1 && at[rank - 1] + 1 < local[rank - 1]) {
      ++at[rank - 1];
      ++global;
    } else {
      Unravel(l, local, at.data());
      rows_inside = region.holds_data;
      global = 0;
      for (int64_t d = 0; d < rank; ++d) {
        if (d + 1 < rank) rows_inside = rows_inside && at[d] < sizes[d];
        global = global * full[d] + at[d] + region.offsets[d];
      }
    }
    previous = l;
    const bool inside = rows_inside && (rank == 0 || at[rank - 1] < sizes[rank - 1]);
    fn(i, inside ? global : int64_t{-1});
  }
}

// Every element of the rows along `dim` that `indices` (row-major over `dims`) lie in, except
// those `known` says are known already; each row once.
template <typename Known>
std::vector<int64_t> WholeRows(absl::Span<const int64_t> indices, const std::vector<int64_t>& dims,
                               int64_t dim, Known known) {
  int64_t stride = 1;
  for (size_t d = dim + 1; d < dims.size(); ++d) stride *= dims[d];
  const int64_t length = dims[dim];
  absl::flat_hash_set<int64_t> starts;
  std::vector<int64_t> out;
  for (int64_t i : indices) {
    const int64_t start = i - (i / stride % length) * stride;
    if (!starts.insert(start).second) continue;
    for (int64_t p = 0; p < length; ++p) {
      if (!known(start + p * stride)) out.push_back(start + p * stride);
    }
  }
  return out;
}

// The memoized elements of one value, as raw bits: a dense array once a quarter of a value of
// at most 2^26 elements is known (a value read whole, such as scatter indices); before that,
// runs of elements (at least kRun of a 64-element block set at once: the rows of a sort, a
// shard's range) in blocks with a bit mask, and scattered elements (samples) in a hash map,
// so neither a row nor a sample pays much hashing or memory per element.
class ElementMemo {
 public:
  bool Has(int64_t i) const {
    if (!dense_.empty()) return known_[i];
    if (!blocks_.empty()) {
      const auto found = blocks_.find(i >> kShift);
      if (found != blocks_.end() && (found->second->mask >> (i & kMask) & 1)) return true;
    }
    return !sparse_.empty() && sparse_.contains(i);
  }
  uint64_t At(int64_t i) const {
    if (!dense_.empty()) return dense_[i];
    if (!blocks_.empty()) {
      const auto found = blocks_.find(i >> kShift);
      if (found != blocks_.end() && (found->second->mask >> (i & kMask) & 1)) {
        return found->second->bits[i & kMask];
      }
    }
    return sparse_.at(i);
  }
  // Sets elements `sorted` (ascending, none known yet) of a value of `count` elements to the
  // elements of `values` (`width`-byte elements, in the same order).
  void SetSorted(absl::Span<const int64_t> sorted, const hlo::Literal& values, int width,
                 int64_t count) {
    const int64_t n = static_cast<int64_t>(sorted.size());
    if (dense_.empty() && count <= kDenseLimit && (known_count_ + n) * 4 >= count) GoDense(count);
    known_count_ += n;
    if (!dense_.empty()) {
      for (int64_t k = 0; k < n; ++k) {
        dense_[sorted[k]] = BitsAt(values, k, width);
        known_[sorted[k]] = true;
      }
      return;
    }
    for (int64_t k = 0; k < n;) {
      const int64_t block = sorted[k] >> kShift;
      int64_t end = k + 1;
      while (end < n && (sorted[end] >> kShift) == block) ++end;
      auto found = blocks_.find(block);
      if (found == blocks_.end() && end - k >= kRun) {
        found = blocks_.emplace(block, std::make_unique<Block>()).first;
      }
      for (; k < end; ++k) {
        const uint64_t bits = BitsAt(values, k, width);
        if (found == blocks_.end()) {
          sparse_[sorted[k]] = bits;
        } else {
          found->second->bits[sorted[k] & kMask] = bits;
          found->second->mask |= uint64_t{1} << (sorted[k] & kMask);
        }
      }
    }
  }

 private:
  static constexpr int64_t kDenseLimit = int64_t{1} << 26;
  static constexpr int kShift = 6;
  static constexpr int64_t kMask = (int64_t{1} << kShift) - 1;
  static constexpr int64_t kRun = 8;
  struct Block {
    uint64_t mask = 0;
    uint64_t bits[int64_t{1} << kShift];
  };

  void GoDense(int64_t count) {
    dense_.assign(count, 0);
    known_.assign(count, false);
    for (const auto& [i, bits] : sparse_) {
      dense_[i] = bits;
      known_[i] = true;
    }
    for (const auto& [block, data] : blocks_) {
      for (int64_t j = 0; j <= kMask; ++j) {
        if (!(data->mask >> j & 1)) continue;
        dense_[(block << kShift) + j] = data->bits[j];
        known_[(block << kShift) + j] = true;
      }
    }
    sparse_.clear();
    blocks_.clear();
  }

  int64_t known_count_ = 0;
  absl::flat_hash_map<int64_t, uint64_t> sparse_;
  absl::flat_hash_map<int64_t, std::unique_ptr<Block>> blocks_;
  std::vector<uint64_t> dense_;
  std::vector<bool> known_;
};

// The flattened position of the first leaf of tuple element `element` of `shape`.
int64_t LeafOffset(const hlo::Shape& shape, int64_t element);
// Array leaf `leaf` (flattened order) of `shape`, or null when there is none.
const hlo::Shape* LeafAt(const hlo::Shape& shape, int64_t leaf);
// Leaf `leaf` of `instr`'s value, which must be an array of at most 8-byte elements.
absl::StatusOr<const hlo::Shape*> FlatLeafShape(const hlo::HloInstruction& instr, int64_t leaf);

}  // namespace points
}  // namespace runtime

#endif  // RUNTIME_CPU_POINT_ELEMENTS_H_

// Small helpers of the point evaluator (point_evaluator.h): element bits, row-major indices,
// flattened tuple leaves.
#ifndef RUNTIME_CPU_POINT_ELEMENTS_H_
#define RUNTIME_CPU_POINT_ELEMENTS_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/shard_geometry.h"

namespace runtime {
namespace points {

// The raw bits of element `i` of an array literal whose elements are `width` (<= 8) bytes.
inline uint64_t BitsAt(const hlo::Literal& literal, int64_t i, int width) {
  uint64_t bits = 0;
  std::memcpy(&bits, literal.data().data() + i * width, width);
  return bits;
}

inline void SetBits(hlo::Literal& literal, int64_t i, int width, uint64_t bits) {
  std::memcpy(literal.mutable_data()->data() + i * width, &bits, width);
}

// Row-major linear index <-> multi-index over `dims`.
inline void Unravel(int64_t linear, const std::vector<int64_t>& dims, int64_t* index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    index[d] = dims[d] == 0 ? 0 : linear % dims[d];
    linear = dims[d] == 0 ? 0 : linear / dims[d];
  }
}

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

// The memoized elements of one value, as raw bits: a hash map while few are known, a dense
// array once a quarter of a value of at most 2^26 elements is (a value read whole, such as
// scatter indices, then costs no hashing per element).
class ElementMemo {
 public:
  bool Has(int64_t i) const { return dense_.empty() ? sparse_.contains(i) : known_[i]; }
  uint64_t At(int64_t i) const { return dense_.empty() ? sparse_.at(i) : dense_[i]; }
  void Set(int64_t i, uint64_t bits) {
    if (dense_.empty()) {
      sparse_[i] = bits;
    } else {
      dense_[i] = bits;
      known_[i] = true;
    }
  }
  // Called before `adding` elements of a value of `count` elements are Set.
  void Grow(int64_t adding, int64_t count) {
    if (!dense_.empty() || count > kDenseLimit ||
        (static_cast<int64_t>(sparse_.size()) + adding) * 4 < count) {
      return;
    }
    dense_.assign(count, 0);
    known_.assign(count, false);
    for (const auto& [i, bits] : sparse_) {
      dense_[i] = bits;
      known_[i] = true;
    }
    sparse_.clear();
  }

 private:
  static constexpr int64_t kDenseLimit = int64_t{1} << 26;
  absl::flat_hash_map<int64_t, uint64_t> sparse_;
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

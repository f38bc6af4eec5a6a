// Stable radix sort of a permutation by unsigned 64-bit order codes, shared by the sort
// handler's typed keys and the comparator programs' lexicographic keys.
#ifndef RUNTIME_CPU_OPS_RADIX_SORT_H_
#define RUNTIME_CPU_OPS_RADIX_SORT_H_

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace runtime {

// Working storage of StableRadixSortByCode, kept across calls so rows reuse it.
struct RadixScratch {
  std::vector<std::pair<uint64_t, int64_t>> a, b;  // (code, index) entries.
  std::vector<std::array<size_t, 256>> counts;     // One histogram per byte that differs.
};

// Reorders `perm` (indices into `codes`) so that codes[perm[j]] ascends; entries with equal
// codes keep their order in `perm`, so sorting by the least significant key first and the
// most significant last gives a lexicographic order. Passes run over the bytes in which the
// codes differ only, and none when perm is already in order.
void StableRadixSortByCode(absl::Span<const uint64_t> codes, std::vector<int64_t>& perm,
                           RadixScratch& scratch);

// Below this many entries a comparison sort is as fast as the radix passes.
inline constexpr size_t kRadixMinLength = 64;

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_RADIX_SORT_H_

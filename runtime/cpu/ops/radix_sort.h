// Stable radix sort of a permutation by unsigned 64-bit order codes, shared by the sort
// handler's typed keys and the comparator programs' lexicographic keys.
#ifndef RUNTIME_CPU_OPS_RADIX_SORT_H_
#define RUNTIME_CPU_OPS_RADIX_SORT_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace runtime {

// Working storage of StableRadixSortByCode, kept across calls so rows reuse it.
struct RadixScratch {
  std::vector<std::pair<uint64_t, uint64_t>> a, b;                // (code, index) entries.
  std::vector<std::pair<uint32_t, uint32_t>> narrow_a, narrow_b;  // When both fit 32 bits.
  std::vector<size_t> counts;                                     // One histogram per pass.
};

// The most bits one radix pass sorts by (2048 buckets: the histograms stay in L1).
inline constexpr int kRadixDigitBits = 11;

// Reorders `perm` (indices into `codes`) so that codes[perm[j]] ascends; entries with equal
// codes keep their order in `perm`, so sorting by the least significant key first and the
// most significant last gives a lexicographic order. Passes run over the span of bits in
// which the codes differ only (32-bit f32 keys: three passes of 11 bits), moving 32-bit
// entries when codes and indices fit, and none when perm is already in order.
void StableRadixSortByCode(absl::Span<const uint64_t> codes, std::vector<int64_t>& perm,
                           RadixScratch& scratch);

// Below this many entries a comparison sort is as fast as the radix passes.
inline constexpr size_t kRadixMinLength = 64;

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_RADIX_SORT_H_

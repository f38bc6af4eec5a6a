#include "runtime/cpu/ops/radix_sort.h"

#include <cstdint>
#include <utility>

namespace runtime {
namespace {

// The passes of StableRadixSortByCode over entries of `Code` codes and `Index` indices (32-bit
// when every code and index fits, halving what each pass moves): one pass per digit of `width`
// bits from bit `low` up, least significant first; the histograms are taken in one read.
template <typename Code, typename Index>
void RadixPasses(std::vector<std::pair<Code, Index>>& a, std::vector<std::pair<Code, Index>>& b,
                 int low, int width, int passes, std::vector<size_t>& counts) {
  const size_t buckets = size_t{1} << width;
  const Code mask = static_cast<Code>(buckets - 1);
  counts.assign(static_cast<size_t>(passes) * buckets, 0);
  for (const auto& e : a) {
    for (int p = 0; p < passes; ++p)
      ++counts[p * buckets + ((e.first >> (low + p * width)) & mask)];
  }
  b.resize(a.size());
  for (int p = 0; p < passes; ++p) {
    size_t* start = &counts[p * buckets];
    size_t sum = 0;
    for (size_t v = 0; v < buckets; ++v) sum += std::exchange(start[v], sum);
    const int shift = low + p * width;
    for (const auto& e : a) b[start[(e.first >> shift) & mask]++] = e;
    a.swap(b);
  }
}

// Fills `a` with (code, index) entries of `perm` in order; true when they already ascend.
template <typename Code, typename Index>
bool Gather(absl::Span<const uint64_t> codes, const std::vector<int64_t>& perm,
            std::vector<std::pair<Code, Index>>& a) {
  a.resize(perm.size());
  bool ascending = true;
  uint64_t previous = 0;
  for (size_t j = 0; j < perm.size(); ++j) {
    const uint64_t code = codes[perm[j]];
    a[j] = {static_cast<Code>(code), static_cast<Index>(perm[j])};
    ascending = ascending && code >= previous;
    previous = code;
  }
  return ascending;
}

template <typename Code, typename Index>
void SortNarrowOrWide(absl::Span<const uint64_t> codes, std::vector<int64_t>& perm, int low,
                      int width, int passes, std::vector<std::pair<Code, Index>>& a,
                      std::vector<std::pair<Code, Index>>& b, std::vector<size_t>& counts) {
  if (Gather(codes, perm, a)) return;
  RadixPasses(a, b, low, width, passes, counts);
  for (size_t j = 0; j < perm.size(); ++j) perm[j] = static_cast<int64_t>(a[j].second);
}

}  // namespace

void StableRadixSortByCode(absl::Span<const uint64_t> codes, std::vector<int64_t>& perm,
                           RadixScratch& scratch) {
  const size_t n = perm.size();
  if (n < 2) return;
  // The bits in which some code differs from the first: only the span from the lowest to the
  // highest of them is sorted (none when all codes are equal), in digits of at most
  // kRadixDigitBits bits.
  const uint64_t first = codes[perm[0]];
  uint64_t differ = 0;
  for (int64_t i : perm) differ |= codes[i] ^ first;
  if (differ == 0) return;
  const int low = __builtin_ctzll(differ);
  const int span = 64 - __builtin_clzll(differ) - low;
  const int passes = (span + kRadixDigitBits - 1) / kRadixDigitBits;
  const int width = (span + passes - 1) / passes;
  // perm's indices are below codes.size().
  if (low + span <= 32 && codes.size() - 1 <= UINT32_MAX) {
    SortNarrowOrWide(codes, perm, low, width, passes, scratch.narrow_a, scratch.narrow_b,
                     scratch.counts);
  } else {
    SortNarrowOrWide(codes, perm, low, width, passes, scratch.a, scratch.b, scratch.counts);
  }
}

}  // namespace runtime

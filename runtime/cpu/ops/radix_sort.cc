#include "runtime/cpu/ops/radix_sort.h"

#include <array>
#include <utility>

namespace runtime {

void StableRadixSortByCode(absl::Span<const uint64_t> codes, std::vector<int64_t>& perm,
                           RadixScratch& scratch) {
  const size_t n = perm.size();
  if (n < 2) return;
  std::vector<std::pair<uint64_t, int64_t>>& a = scratch.a;
  std::vector<std::pair<uint64_t, int64_t>>& b = scratch.b;
  a.resize(n);
  b.resize(n);
  // A first read finds the bits in which some code differs from the first (bytes without any
  // need no pass) and whether perm is already in order (an index tie-break, say: nothing to
  // do). A second gives the histograms of the bytes that differ (they do not depend on the
  // order). The passes then move (code, index) pairs, reading the codes in order.
  const uint64_t first = codes[perm[0]];
  uint64_t differ = 0;
  bool ascending = true;
  uint64_t previous = first;
  for (size_t j = 0; j < n; ++j) {
    const uint64_t code = codes[perm[j]];
    a[j] = {code, perm[j]};
    differ |= code ^ first;
    ascending = ascending && code >= previous;
    previous = code;
  }
  if (ascending) return;
  std::array<int, 8> shifts;
  size_t passes = 0;
  for (int shift = 0; shift < 64; shift += 8) {
    if (((differ >> shift) & 0xFF) != 0) shifts[passes++] = shift;
  }
  std::vector<std::array<size_t, 256>>& counts = scratch.counts;
  counts.assign(passes, std::array<size_t, 256>{});
  for (const auto& e : a) {
    for (size_t p = 0; p < passes; ++p) ++counts[p][(e.first >> shifts[p]) & 0xFF];
  }
  for (size_t p = 0; p < passes; ++p) {
    std::array<size_t, 256> start;
    size_t sum = 0;
    for (int v = 0; v < 256; ++v) {
      start[v] = sum;
      sum += counts[p][v];
    }
    for (const auto& e : a) b[start[(e.first >> shifts[p]) & 0xFF]++] = e;
    a.swap(b);
  }
  for (size_t j = 0; j < n; ++j) perm[j] = a[j].second;
}

}  // namespace runtime

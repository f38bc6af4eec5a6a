#include "runtime/cpu/ops/radix_sort.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace runtime {
namespace {

// The order must be std::stable_sort's on the codes, from any starting permutation: codes with
// many ties, differing in low, middle or high bytes only, in all 32 low bits (f32 keys: 32-bit
// entries, three 11-bit digits), in bits that straddle bit 32 (64-bit entries), or in all 64
// bits; or already in order.
TEST(RadixSortTest, MatchesAStableSortOfTheCodes) {
  std::mt19937_64 rng(99);
  RadixScratch scratch;
  const std::vector<uint64_t> masks = {
      0xFF, 0xF0F000, 0xFFFFFFFFull, 0x3FFFFFFFCull, 0xFF00000000000000ull, ~uint64_t{0}};
  for (uint64_t mask : masks) {
    for (size_t n : {0, 1, 2, 63, 64, 500}) {
      for (int trial = 0; trial < 3; ++trial) {
        std::vector<uint64_t> codes(n);
        for (uint64_t& c : codes) c = (rng() % 5 == 0 ? rng() : rng() % 4) & mask;
        if (trial == 2) std::sort(codes.begin(), codes.end());
        std::vector<int64_t> perm(n);
        std::iota(perm.begin(), perm.end(), 0);
        if (trial == 1) std::shuffle(perm.begin(), perm.end(), rng);
        std::vector<int64_t> expected = perm;
        std::stable_sort(expected.begin(), expected.end(),
                         [&](int64_t a, int64_t b) { return codes[a] < codes[b]; });
        StableRadixSortByCode(codes, perm, scratch);
        EXPECT_EQ(perm, expected) << "mask " << mask << " n " << n << " trial " << trial;
      }
    }
  }
}

// Sorting by the least significant key first and the most significant last is lexicographic.
TEST(RadixSortTest, SuccessivePassesSortLexicographically) {
  std::mt19937_64 rng(7);
  const size_t n = 300;
  std::vector<uint64_t> major(n), minor(n);
  for (size_t i = 0; i < n; ++i) {
    major[i] = rng() % 3;
    minor[i] = rng() % 5;
  }
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::vector<int64_t> expected = perm;
  std::stable_sort(expected.begin(), expected.end(), [&](int64_t a, int64_t b) {
    return major[a] != major[b] ? major[a] < major[b] : minor[a] < minor[b];
  });
  RadixScratch scratch;
  StableRadixSortByCode(minor, perm, scratch);
  StableRadixSortByCode(major, perm, scratch);
  EXPECT_EQ(perm, expected);
}

}  // namespace
}  // namespace runtime

// Element-wise comparison of an array computed two ways (the oracle's verdict).
//
// An element passes when |actual - expected| <= atol * scale + rtol * |expected|, where scale
// is max(1, the largest |expected| in the array): the absolute part grows with the magnitude
// of the values, which is how large the rounding of a reordered sum can get. Defaults by type:
//   f32, c64: rtol 1e-4, atol 1e-5     f64, c128: rtol 1e-9, atol 1e-12
//   f16: rtol 1e-3, atol 1e-3          bf16: rtol 1e-2, atol 1e-2     f8: rtol 1.25e-1,
//   atol 1.25e-1 integers and pred: exact.
// NaN matches NaN; infinities match only themselves.
#ifndef RUNTIME_CPU_COMPARE_H_
#define RUNTIME_CPU_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/ir/literal.h"

namespace runtime {

struct Tolerance {
  double rtol = 0;
  double atol = 0;
  bool exact() const { return rtol == 0 && atol == 0; }
};

// The default tolerance for `type` (see the file comment).
Tolerance DefaultTolerance(hlo::PrimitiveType type);

// The outcome of comparing one array.
struct ArrayComparison {
  int64_t elements = 0;
  int64_t mismatches = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;             // Over elements whose expected value is not 0.
  std::vector<int64_t> first_mismatch;  // Index of the first failing element; empty if none.
  // The element closest to (or furthest beyond) its allowance: the largest error / allowed.
  std::vector<int64_t> worst;  // Empty when every element is exact.
  std::string worst_expected, worst_actual;
  double worst_error = 0;
  double worst_allowed = 0;  // atol * scale + rtol * |expected| there.
  double scale = 1;          // max(1, the largest finite |expected|) for floating arrays.
  std::string expected_value;           // The values at first_mismatch, as HLO text.
  std::string actual_value;
  std::string problem;  // A structural problem (shape mismatch); empty if none.
  bool ok() const { return mismatches == 0 && problem.empty(); }
};

// Compares `actual` with `expected` element by element under `tolerance`. Arrays of different
// shapes give a `problem` and no element comparison.
ArrayComparison CompareArrays(const hlo::Literal& expected, const hlo::Literal& actual,
                              const Tolerance& tolerance);

// `[1,2,0]`.
std::string FormatIndex(const std::vector<int64_t>& index);

}  // namespace runtime

#endif  // RUNTIME_CPU_COMPARE_H_

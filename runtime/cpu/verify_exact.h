// The reference's own rounding error, to judge a floating-point mismatch by.
//
// Two correct programs that sum in different orders round differently: in bf16 a reduction of
// a few hundred terms can differ by many units in the last place, more than any fixed
// tolerance can allow without also letting wrong programs through. When a leaf fails the
// element-wise tolerance, the oracle runs the unpartitioned module once more with every
// floating type widened to f64 (complex to c128), on the same arguments: the exact result,
// up to f64 rounding. The leaf then passes when the SPMD program is no further from the
// exact result than kErrorFactor times the unpartitioned program's own distance, plus the
// type's atol scaled as in compare.h -- it rounds like a correct reordering. A wrong program
// (a missing all-reduce, a shifted offset, a wrong pair) is off by whole values, far beyond
// the reference's rounding, and still fails.
//
// Modules whose meaning depends on the bits of a narrow type cannot be widened
// (bitcast-convert, random number generation, custom-calls other than the identities the
// executor knows, infeed/outfeed); they keep the element-wise verdict.
#ifndef RUNTIME_CPU_VERIFY_EXACT_H_
#define RUNTIME_CPU_VERIFY_EXACT_H_

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/literal.h"
#include "runtime/cpu/compare.h"

namespace runtime {

inline constexpr double kErrorFactor = 4.0;

// A copy of `module` computing in f64 (c128): every floating element type narrower than f64
// in every shape and constant widened. Fails naming an instruction whose meaning depends on
// its type's bits.
absl::StatusOr<std::unique_ptr<hlo::HloModule>> WidenToF64(const hlo::HloModule& module);

// `literal` (tuples leaf by leaf) with its narrow floating leaves widened to f64 (c128).
hlo::Literal WidenLiteral(const hlo::Literal& literal);

// The distances from `exact` of the unpartitioned and the SPMD results of one leaf.
struct ExactCheck {
  double reference_error = 0;  // max |expected - exact|
  double spmd_error = 0;       // max |actual - exact|
  double bound = 0;            // kErrorFactor * reference_error + atol * scale
  bool ok() const { return spmd_error <= bound; }
};

// Compares one leaf against the exact result. std::nullopt when the leaf is not floating,
// the shapes differ, or the exact result is not finite somewhere (no bound can be given).
std::optional<ExactCheck> CheckAgainstExact(const hlo::Literal& expected,
                                            const hlo::Literal& actual, const hlo::Literal& exact,
                                            const Tolerance& tolerance);

}  // namespace runtime

#endif  // RUNTIME_CPU_VERIFY_EXACT_H_

// Sort comparators run as per-element keys plus a small per-pair program, instead of one
// evaluator call per comparison.
//
// A comparator takes 2n scalars: parameter 2k is operand k's left element, 2k+1 its right one.
// Each instruction depends on the left parameters only, the right ones only, neither
// (constants) or both ("mixed"). Instructions of one side are elementwise functions of one
// element, so they are computed for every element at once by running them over whole arrays
// through the evaluator's own kernels (same per-element semantics as the scalar calls). The
// mixed instructions are then evaluated per comparison on those precomputed values:
//
//   k_l = select(lt(bitcast(x_l), 0), ..., ...)   left side: computed once per element
//   k_r = select(lt(bitcast(x_r), 0), ..., ...)   right side: likewise
//   c   = gt(k_l, k_r)                            mixed: compared per pair of elements
//   ROOT select(eq(c, gt(k_r, k_l)), lt(i_l, i_r), c)   mixed: a boolean program on pairs
//
// Supported: one-side instructions that are elementwise unary/binary ops, compare, select,
// clamp, convert and bitcast-convert; mixed instructions (pred results) that are compare, select,
// and, or, xor and not. Anything else is not recognised and the caller keeps the per-comparison
// evaluator calls. The program computes exactly the comparator's value for each pair, so a
// sort driven by it is identical to one that calls the comparator.
#ifndef RUNTIME_CPU_OPS_SORT_COMPARATOR_H_
#define RUNTIME_CPU_OPS_SORT_COMPARATOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/literal.h"
#include "runtime/cpu/evaluator.h"
#include "runtime/cpu/ops/radix_sort.h"

namespace runtime {

class SortComparator {
 public:
  // A comparator program for `comparator` on `operands` (the sort's operands, all of the same
  // dimensions), with its per-element keys computed; null when the comparator is not of the
  // supported form. Errors are those of computing the keys.
  static absl::StatusOr<std::unique_ptr<SortComparator>> Create(
      const hlo::HloComputation& comparator, absl::Span<const hlo::Literal* const> operands,
      Evaluator& evaluator);

  ~SortComparator();

  // The comparator's value with the left parameters taken from element `a` of the operands and
  // the right ones from element `b` (linear row-major offsets).
  bool Compare(int64_t a, int64_t b);

  // Whether the comparator is a lexicographic order on per-element keys: every compare of the
  // program compares one array with itself at the two elements (the same function of either
  // side), and the program's truth table over those compares' outcomes is a lexicographic
  // order. TopK's "greater value, then smaller index" is one.
  bool is_lexicographic() const;
  // For a lexicographic comparator: sets `perm` to the stable order of elements base + j*stride
  // (j < perm.size()) by the keys' order codes and returns true. The order is the one a stable
  // sort calling the comparator gives (it is a strict weak order). False, leaving `perm`
  // unspecified, when the comparator is not lexicographic or a key of this row has no order
  // code (NaN under a FLOAT compare, which is not a weak order); then sort with Compare.
  bool SortRowByKeys(int64_t base, int64_t stride, std::vector<int64_t>& perm);

  struct Node;
  struct Program;

 private:
  explicit SortComparator(std::unique_ptr<Program> program);

  std::unique_ptr<Program> program_;
  std::vector<uint8_t> slots_;    // The per-pair value of each node.
  std::vector<uint64_t> codes_;   // SortRowByKeys: the keys' codes, key-major.
  RadixScratch scratch_;          // SortRowByKeys: the radix passes' working storage.
};

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_SORT_COMPARATOR_H_

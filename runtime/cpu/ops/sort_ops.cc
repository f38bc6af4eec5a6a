// sort(operands...), dimensions={d}, to_apply=comparator[, is_stable=true].
//
// Every operand has the same dimensions. Along dimension d, each row (one index for every other
// dimension) is sorted by a permutation computed from the comparator, which takes 2n scalars
// (operand 0's left and right values, then operand 1's, ...) and returns whether left sorts
// before right; the permutation is then applied to every operand. The permutation always comes
// from std::stable_sort: that honours is_stable, is a valid result of an unstable sort, and
// stays memory-safe when a comparator is not a strict weak order (NaNs under LT).
//
// Fast path: a comparator `compare(parameter(0), parameter(1))` with direction LT or GT (any
// comparison type natural for the key's element type, or TOTALORDER for floats) sorts typed keys
// of operand 0. Otherwise a comparator whose instructions split into left-only and right-only
// elementwise keys and a boolean program on them (sort_comparator.h: e.g. TopK's float-flip
// keys with an index tie-break) computes its keys once for all elements and runs the program
// per comparison. Any other comparator is called per comparison on scalar Literals prepared once
// per row.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/strided_index.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/ops/radix_sort.h"
#include "runtime/cpu/ops/reduce_handlers.h"
#include "runtime/cpu/ops/scalar_computation.h"
#include "runtime/cpu/ops/sort_comparator.h"
#include "runtime/cpu/ops/strided_copy.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

// Where the rows along the sort dimension lie in the operands' dense storage.
struct SortRows {
  std::vector<int64_t> outer_bounds;   // Operand dimensions with the sort dimension set to 1.
  std::vector<int64_t> outer_strides;  // Row-major strides of the operands.
  int64_t length = 0;                  // Size of the sort dimension.
  int64_t stride = 0;                  // Stride of the sort dimension.
};

// Computes the sorted order of one row (element offsets base + j*stride, j < length).
class RowSorter {
 public:
  virtual ~RowSorter() = default;
  virtual absl::Status Sort(int64_t base, std::vector<int64_t>& perm) = 0;
};

template <typename T>
class TypedRowSorter : public RowSorter {
 public:
  TypedRowSorter(const Literal& keys, const SortRows& rows, ParameterComparison cmp)
      : keys_(Data<T>(keys)), rows_(rows), cmp_(cmp) {}

  absl::Status Sort(int64_t base, std::vector<int64_t>& perm) override {
    values_.resize(rows_.length);
    for (int64_t j = 0; j < rows_.length; ++j) {
      values_[j] = LoadElement(keys_, base + j * rows_.stride);
    }
    const bool total = cmp_.type == hlo::ComparisonType::kTotalOrder;
    const hlo::ComparisonDirection direction = cmp_.direction;
    using C = ComputeType<T>;
    if constexpr (!IsComplex<C>::value) {
      // LT/GT: sort (key, index) pairs in place of indices into the keys (no indirection,
      // no per-comparison switch). The comparisons, and so the stable order, are the same.
      const bool lt = direction == hlo::ComparisonDirection::kLt;
      if (lt || direction == hlo::ComparisonDirection::kGt) {
        if constexpr (std::is_same_v<C, float>) {
          if (!total && perm.size() >= kRadixMinLength && RadixSortFloat(perm, lt)) {
            return absl::OkStatus();
          }
        }
        if constexpr (std::is_floating_point_v<C>) {
          if (total) return SortByKey(perm, lt, [](C v) { return TotalOrderKey(v); });
        }
        if (!total) return SortByKey(perm, lt, [](C v) { return v; });
      }
    }
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
      return CompareValues(direction, total, values_[a], values_[b]);
    });
    return absl::OkStatus();
  }

 private:
  // Stable-sorts `perm` by key(values_[i]), ascending (`lt`) or descending.
  template <typename KeyFn>
  absl::Status SortByKey(std::vector<int64_t>& perm, bool lt, KeyFn key) {
    using K = decltype(key(values_[0]));
    std::vector<std::pair<K, int64_t>> entries(perm.size());
    for (size_t j = 0; j < perm.size(); ++j) entries[j] = {key(values_[perm[j]]), perm[j]};
    if (lt) {
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    } else {
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first; });
    }
    for (size_t j = 0; j < perm.size(); ++j) perm[j] = entries[j].second;
    return absl::OkStatus();
  }

  // Stable radix sort of `perm` by float key, ascending (`lt`) or descending, giving the
  // order the LT/GT comparison sort gives: -0 and +0 compare equal (both map to one key), and
  // a descending sort inverts the keys rather than the order, so ties keep their order.
  // Returns false, sorting nothing, when the row holds a NaN (there LT is no strict weak
  // order and only the comparison sort defines the result).
  bool RadixSortFloat(std::vector<int64_t>& perm, bool lt) {
    codes_.resize(values_.size());
    for (size_t j = 0; j < values_.size(); ++j) {
      const float v = values_[j];
      if (std::isnan(v)) return false;
      uint32_t bits;
      const float positive_zero_for_both = v == 0.0f ? 0.0f : v;
      std::memcpy(&bits, &positive_zero_for_both, sizeof(bits));
      // Unsigned order of the mapped bits is the float order.
      uint32_t key = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
      if (!lt) key = ~key;
      codes_[j] = key;
    }
    StableRadixSortByCode(codes_, perm, scratch_);
    return true;
  }

  const T* keys_;
  const SortRows& rows_;
  ParameterComparison cmp_;
  std::vector<ComputeType<T>> values_;
  std::vector<uint64_t> codes_;  // RadixSortFloat: each value's order code.
  RadixScratch scratch_;         // RadixSortFloat: the radix passes' working storage.
};

// Sorts rows by a SortComparator program (keys computed once for all rows).
class ProgramRowSorter : public RowSorter {
 public:
  ProgramRowSorter(std::unique_ptr<SortComparator> comparator, const SortRows& rows)
      : comparator_(std::move(comparator)), rows_(rows) {}

  absl::Status Sort(int64_t base, std::vector<int64_t>& perm) override {
    const int64_t stride = rows_.stride;
    if (comparator_->SortRowByKeys(base, stride, perm)) return absl::OkStatus();
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
      return comparator_->Compare(base + a * stride, base + b * stride);
    });
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<SortComparator> comparator_;
  const SortRows& rows_;
};

class CallingRowSorter : public RowSorter {
 public:
  CallingRowSorter(const hlo::HloComputation& comparator, absl::Span<const Literal* const> operands,
                   const SortRows& rows, Evaluator& evaluator)
      : comparator_(comparator), operands_(operands), rows_(rows), evaluator_(evaluator) {}

  absl::Status Sort(int64_t base, std::vector<int64_t>& perm) override {
    const size_t n = operands_.size();
    scalars_.resize(n);
    for (size_t k = 0; k < n; ++k) {
      scalars_[k].clear();
      for (int64_t j = 0; j < rows_.length; ++j) {
        scalars_[k].push_back(ScalarOf(*operands_[k], base + j * rows_.stride));
      }
    }
    absl::Status status;
    std::vector<const Literal*> args(2 * n);
    const PrimitiveType pred = PrimitiveType::kPred;
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
      if (!status.ok()) return false;
      for (size_t k = 0; k < n; ++k) {
        args[2 * k] = &scalars_[k][a];
        args[2 * k + 1] = &scalars_[k][b];
      }
      absl::StatusOr<std::vector<Literal>> r =
          CallScalarComputation(evaluator_, comparator_, args, {&pred, 1});
      if (!r.ok()) {
        status = r.status();
        return false;
      }
      return (*r)[0].GetInt(0) != 0;
    });
    return status;
  }

 private:
  const hlo::HloComputation& comparator_;
  absl::Span<const Literal* const> operands_;
  const SortRows& rows_;
  Evaluator& evaluator_;
  std::vector<std::vector<Literal>> scalars_;
};

absl::StatusOr<std::unique_ptr<RowSorter>> MakeRowSorter(const HloInstruction& instr,
                                                         absl::Span<const Literal* const> operands,
                                                         const SortRows& rows,
                                                         Evaluator& evaluator) {
  const PrimitiveType type = operands[0]->shape().element_type();
  std::optional<ParameterComparison> cmp = MatchParameterComparison(*instr.to_apply(), 0, 1, type);
  if (cmp.has_value() && (cmp->direction == hlo::ComparisonDirection::kLt ||
                          cmp->direction == hlo::ComparisonDirection::kGt)) {
    return DispatchArrayType(type, [&](auto tag) -> absl::StatusOr<std::unique_ptr<RowSorter>> {
      using T = typename decltype(tag)::type;
      return std::unique_ptr<RowSorter>(new TypedRowSorter<T>(*operands[0], rows, *cmp));
    });
  }
  if (rows.length > 1) {
    // An error computing the keys falls back to the calls, which report their own errors.
    absl::StatusOr<std::unique_ptr<SortComparator>> program =
        SortComparator::Create(*instr.to_apply(), operands, evaluator);
    if (program.ok() && *program != nullptr) {
      return std::unique_ptr<RowSorter>(new ProgramRowSorter(*std::move(program), rows));
    }
  }
  return std::unique_ptr<RowSorter>(
      new CallingRowSorter(*instr.to_apply(), operands, rows, evaluator));
}

absl::StatusOr<SortRows> MakeSortRows(const HloInstruction& instr,
                                      absl::Span<const Literal* const> operands) {
  const Shape& shape = operands[0]->shape();
  for (const Literal* op : operands) {
    if (!op->shape().IsArray() || op->shape().dimensions() != shape.dimensions()) {
      return absl::InvalidArgumentError("sort operands must be arrays of the same dimensions");
    }
  }
  if (instr.dimensions().size() != 1 || instr.dimensions()[0] < 0 ||
      instr.dimensions()[0] >= std::max<int64_t>(shape.rank(), 1)) {
    return absl::InvalidArgumentError("sort needs one dimension within the operands' rank");
  }
  SortRows rows;
  rows.outer_bounds = shape.dimensions();
  rows.outer_strides = RowMajorStrides(shape.dimensions());
  if (shape.rank() == 0) {
    rows.length = 1;
    return rows;
  }
  const int64_t d = instr.dimensions()[0];
  rows.length = shape.dimensions(d);
  rows.stride = rows.outer_strides[d];
  rows.outer_bounds[d] = 1;
  return rows;
}

}  // namespace

absl::StatusOr<Literal> HandleSort(const HloInstruction& instr,
                                   absl::Span<const Literal* const> operands,
                                   Evaluator& evaluator) {
  if (operands.empty() || instr.called_computations().empty()) {
    return absl::InvalidArgumentError("sort takes at least one operand and a comparator");
  }
  const int64_t n = static_cast<int64_t>(operands.size());
  if (instr.to_apply()->num_parameters() != 2 * n) {
    return absl::InvalidArgumentError(
        hlo::StrCat("sort comparator must take ", 2 * n, " parameters, two per operand"));
  }
  ASSIGN_OR_RETURN(std::vector<Shape> shapes, VariadicResultShapes(instr.shape(), n));
  for (int64_t k = 0; k < n; ++k) {
    if (!shapes[k].Compatible(operands[k]->shape())) {
      return absl::InvalidArgumentError(
          hlo::StrCat("sort result ", shapes[k].ToString(), " differs from its operand"));
    }
  }
  ASSIGN_OR_RETURN(SortRows rows, MakeSortRows(instr, operands));
  ASSIGN_OR_RETURN(std::unique_ptr<RowSorter> sorter,
                   MakeRowSorter(instr, operands, rows, evaluator));
  std::vector<Literal> outs;
  outs.reserve(n);
  for (const Shape& s : shapes) outs.emplace_back(s);
  std::vector<int64_t> perm(rows.length);
  std::vector<int64_t> sources(rows.length);  // The sorted row's element offsets in the operands.
  std::vector<int64_t> targets(rows.length);  // Its positions, from the row's start.
  for (int64_t j = 0; j < rows.length; ++j) targets[j] = j * rows.stride;
  for (StridedCounter c(rows.outer_bounds, {rows.outer_strides}); !c.done(); c.Next()) {
    const int64_t base = c.offset(0);
    std::iota(perm.begin(), perm.end(), 0);
    RETURN_IF_ERROR(sorter->Sort(base, perm));
    for (int64_t j = 0; j < rows.length; ++j) sources[j] = base + perm[j] * rows.stride;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t width = hlo::ByteWidth(operands[k]->shape().element_type());
      CopyIndexedElements(operands[k]->data().data(), sources,
                          outs[k].mutable_data()->data() + base * width, targets, width);
    }
  }
  return PackVariadic(std::move(outs), instr.shape());
}

}  // namespace runtime

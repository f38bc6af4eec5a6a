// topk, as the opcode (`topk(x), k=K, largest=true|false`) and as the custom-call "TopK"
// (largest first, k from the result shape): operand [batch..., n] -> (values [batch..., k],
// indices s32[batch..., k]). Each row of the last dimension keeps the first k elements of a
// stable sort by XLA's comparator (TopkDecomposer: GtTotalOrder for largest, LtTotalOrder
// otherwise): floats by IEEE totalOrder (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN),
// integers by value, equal elements by lower index. A partial sort with the index as the last
// key gives exactly the stable sort's first k.
#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include "absl/status/statusor.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/ops/compare_keys.h"
#include "runtime/cpu/ops/custom_call_handlers.h"
#include "runtime/cpu/ops/reduce_handlers.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using hlo::PrimitiveType;

struct TopKRows {
  int64_t rows = 0;
  int64_t n = 0;  // Row length.
  int64_t k = 0;
};

absl::Status BadShapes(const HloInstruction& instr, const Literal& input) {
  return absl::InvalidArgumentError(hlo::StrCat("topk: unsupported shapes ",
                                                input.shape().ToString(false), " -> ",
                                                instr.shape().ToString(false)));
}

// The row geometry, after checking the shapes; `k` is the opcode's attribute (none for the
// custom-call, whose k is the result's).
absl::StatusOr<TopKRows> CheckShapes(const HloInstruction& instr,
                                     absl::Span<const Literal* const> operands,
                                     std::optional<int64_t> k) {
  const hlo::Shape& shape = instr.shape();
  if (operands.size() != 1 || !shape.IsTuple() || shape.tuple_shapes().size() != 2) {
    return absl::InvalidArgumentError("topk takes one operand and returns (values, indices)");
  }
  const Literal& input = *operands[0];
  const hlo::Shape& values = shape.tuple_shapes(0);
  const hlo::Shape& indices = shape.tuple_shapes(1);
  const int64_t rank = input.shape().rank();
  if (rank < 1 || values.rank() != rank || indices.dimensions() != values.dimensions() ||
      indices.element_type() != PrimitiveType::kS32 ||
      values.element_type() != input.shape().element_type()) {
    return BadShapes(instr, input);
  }
  TopKRows rows{0, input.shape().dimensions(rank - 1), values.dimensions(rank - 1)};
  for (int64_t d = 0; d + 1 < rank; ++d) {
    if (values.dimensions(d) != input.shape().dimensions(d)) return BadShapes(instr, input);
  }
  if ((k && *k != rows.k) || rows.k > rows.n || rows.n > std::numeric_limits<int32_t>::max()) {
    return BadShapes(instr, input);
  }
  rows.rows = rows.n == 0 ? 0 : input.element_count() / rows.n;
  return rows;
}

// Writes each row's first k elements by `key` (descending when `largest`) and their indices.
template <typename T, typename Key>
void SelectRows(const Literal& input, const TopKRows& s, bool largest, Key key, Literal& values,
                Literal& indices) {
  const T* in = reinterpret_cast<const T*>(input.data().data());
  T* out = reinterpret_cast<T*>(values.mutable_data()->data());
  int32_t* out_index = reinterpret_cast<int32_t*>(indices.mutable_data()->data());
  std::vector<int64_t> order(s.n);
  for (int64_t r = 0; r < s.rows; ++r) {
    const T* row = in + r * s.n;
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + s.k, order.end(), [&](int64_t a, int64_t b) {
      const auto ka = key(row, a);
      const auto kb = key(row, b);
      if (ka != kb) return largest ? ka > kb : ka < kb;
      return a < b;
    });
    for (int64_t j = 0; j < s.k; ++j) {
      out[r * s.k + j] = row[order[j]];
      out_index[r * s.k + j] = static_cast<int32_t>(order[j]);
    }
  }
}

absl::StatusOr<Literal> ComputeTopK(const HloInstruction& instr,
                                    absl::Span<const Literal* const> operands,
                                    std::optional<int64_t> k, bool largest) {
  ASSIGN_OR_RETURN(TopKRows rows, CheckShapes(instr, operands, k));
  const Literal& input = *operands[0];
  const PrimitiveType type = input.shape().element_type();
  Literal out(instr.shape());
  Literal& values = (*out.mutable_tuple_elements())[0];
  Literal& indices = (*out.mutable_tuple_elements())[1];
  const hlo::ComparisonType order = hlo::IsFloatingPointType(type)
                                        ? hlo::ComparisonType::kTotalOrder
                                        : hlo::ComparisonType::kDefault;
  const hlo::ComparisonDirection direction =
      largest ? hlo::ComparisonDirection::kGt : hlo::ComparisonDirection::kLt;
  RETURN_IF_ERROR(DispatchArrayType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (elementwise::kIsComplex<T>) {
      return absl::InvalidArgumentError("topk: complex values have no order");
    } else {
      return WithCompareKey<T>(direction, order, type, [&](auto key) {
        SelectRows<T>(input, rows, largest, key, values, indices);
        return absl::OkStatus();
      });
    }
  }));
  return out;
}

}  // namespace

absl::StatusOr<Literal> HandleTopKOpcode(const HloInstruction& instr,
                                         absl::Span<const Literal* const> operands, Evaluator&) {
  return ComputeTopK(instr, operands, instr.attrs().k, instr.attrs().largest);
}

absl::StatusOr<Literal> HandleTopK(const HloInstruction& instr,
                                   absl::Span<const Literal* const> operands, Evaluator&) {
  return ComputeTopK(instr, operands, std::nullopt, /*largest=*/true);
}

}  // namespace runtime

// The custom-call "TopK": operand [batch..., n] -> (values [batch..., k], indices s32[batch..., k])
// with k from the result shape: the k largest elements of each row of the last dim, in
// descending order (IEEE total order, so NaNs rank highest), equal values by lower index.
#include <algorithm>
#include <numeric>

#include "absl/status/statusor.h"
#include "hlo/strings.h"
#include "runtime/cpu/ops/custom_call_handlers.h"
#include "runtime/cpu/ops/scalar_computation.h"

namespace runtime {

using hlo::HloInstruction;
using hlo::Literal;

absl::StatusOr<Literal> HandleTopK(const HloInstruction& instr,
                                   absl::Span<const Literal* const> operands, Evaluator&) {
  const hlo::Shape& shape = instr.shape();
  if (operands.size() != 1 || !shape.IsTuple() || shape.tuple_shapes().size() != 2) {
    return absl::InvalidArgumentError("TopK takes one operand and returns (values, indices)");
  }
  const Literal& input = *operands[0];
  const hlo::Shape& values_shape = shape.tuple_shapes()[0];
  const hlo::Shape& index_shape = shape.tuple_shapes()[1];
  const int64_t rank = input.shape().rank();
  if (rank < 1 || values_shape.rank() != rank || index_shape.dimensions() != values_shape.dimensions() ||
      index_shape.element_type() != hlo::PrimitiveType::kS32 ||
      !hlo::IsFloatingPointType(input.shape().element_type())) {
    return absl::InvalidArgumentError(
        hlo::StrCat("TopK: unsupported shapes ", input.shape().ToString(false), " -> ",
                    shape.ToString(false)));
  }
  const int64_t n = input.shape().dimensions(rank - 1);
  const int64_t k = values_shape.dimensions(rank - 1);
  if (k > n) return absl::InvalidArgumentError("TopK: k exceeds the row length");
  const int64_t rows = n == 0 ? 0 : input.element_count() / n;
  Literal out(shape);
  Literal& values = (*out.mutable_tuple_elements())[0];
  Literal& indices = (*out.mutable_tuple_elements())[1];
  std::vector<int64_t> order(n);
  std::vector<int64_t> keys(n);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < n; ++i) keys[i] = TotalOrderKey(input.GetDouble(r * n + i));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
      return keys[a] != keys[b] ? keys[a] > keys[b] : a < b;
    });
    for (int64_t j = 0; j < k; ++j) {
      values.SetDouble(r * k + j, input.GetDouble(r * n + order[j]));
      indices.SetInt(r * k + j, order[j]);
    }
  }
  return out;
}

}  // namespace runtime

// The custom-call `__op$block_scaled_dot(lhs, rhs, lhs_scale, rhs_scale)` (XLA's MX/NVFP4
// block-scaled dot): each operand is dequantized by multiplying every element by its block's
// scale -- a scale tensor has the operand's rank, and along a dim where it is k times smaller
// each scale covers a block of k consecutive elements -- and the dequantized operands meet in a
// dot over their last dims, with all dims before the last two as batch dims:
//   lhs [B.., M, K] x rhs [B.., N, K] -> [B.., M, N]   (computed in f32).
#include "absl/status/statusor.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cpu/ops/custom_call_handlers.h"
#include "runtime/cpu/ops/dot_handlers.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

absl::StatusOr<Literal> Dequantize(const Literal& x, const Literal& scale) {
  const Shape& xs = x.shape();
  const Shape& ss = scale.shape();
  if (!xs.IsArray() || !ss.IsArray() || xs.rank() != ss.rank()) {
    return absl::InvalidArgumentError("block_scaled_dot: a scale must have its operand's rank");
  }
  const int64_t rank = xs.rank();
  std::vector<int64_t> block(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t n = xs.dimensions(d), s = ss.dimensions(d);
    if (s <= 0 || n % s != 0) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "block_scaled_dot: scale dim ", d, " (", s, ") does not divide operand dim (", n, ")"));
    }
    block[d] = n / s;
  }
  Literal out(Shape::Array(PrimitiveType::kF32, xs.dimensions()));
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < x.element_count(); ++i) {
    int64_t s = 0;
    for (int64_t d = 0; d < rank; ++d) s = s * ss.dimensions(d) + index[d] / block[d];
    out.SetDouble(i, x.GetDouble(i) * scale.GetDouble(s));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < xs.dimensions(d)) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<Literal> HandleBlockScaledDot(const HloInstruction& instr,
                                             absl::Span<const Literal* const> operands,
                                             Evaluator& evaluator) {
  if (operands.size() != 4) {
    return absl::InvalidArgumentError(
        "block_scaled_dot takes four operands: lhs, rhs, lhs_scale, rhs_scale");
  }
  ASSIGN_OR_RETURN(Literal lhs, Dequantize(*operands[0], *operands[2]));
  ASSIGN_OR_RETURN(Literal rhs, Dequantize(*operands[1], *operands[3]));
  const int64_t rank = lhs.shape().rank();
  if (rank < 2 || rhs.shape().rank() != rank) {
    return absl::InvalidArgumentError("block_scaled_dot: operands need equal ranks of at least 2");
  }
  hlo::DotDimensionNumbers dn;
  for (int64_t d = 0; d + 2 < rank; ++d) {
    dn.lhs_batch_dimensions.push_back(d);
    dn.rhs_batch_dimensions.push_back(d);
  }
  dn.lhs_contracting_dimensions = {rank - 1};
  dn.rhs_contracting_dimensions = {rank - 1};
  std::unique_ptr<HloInstruction> dot = HloInstruction::Create(hlo::HloOpcode::kDot,
                                                               instr.shape(), {});
  dot->mutable_attrs()->dot_dimension_numbers = dn;
  const Literal* dot_operands[] = {&lhs, &rhs};
  return HandleDotInstruction(*dot, dot_operands, evaluator);
}

}  // namespace runtime

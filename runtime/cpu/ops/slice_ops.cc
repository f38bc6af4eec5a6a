// Opcodes that move a window of an array: dynamic-slice, dynamic-update-slice, pad (slice has
// a strided view and runs through shape_ops.cc's generic handler).
//
// Each is one StridedCopy (strided_copy.h) between the window and the full array:
//   dynamic-slice         the start indices are runtime scalars, clamped as XLA does so the
//                         window fits: start = clamp(index, 0, dim - size);
//   dynamic-update-slice  the result is the operand with the update copied in at the clamped
//                         start (start = clamp(index, 0, dim - update_dim));
//   pad                   the result is filled with the padding value, then the operand is
//                         copied to positions low + i * (interior + 1); negative low/high
//                         padding crops, so only operand indices that land inside are copied.
// Example: pad(f32[3] {1,2,3}, 0), padding=-1_1_1 -> f32[5] {0,2,0,3,0}.
// The index maps (views, placements, clamping) are runtime/common/strided_view.h's.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/strided_view.h"
#include "runtime/cpu/op_registry.h"
#include "runtime/cpu/ops/elementwise_kernels.h"
#include "runtime/cpu/ops/family_registration.h"
#include "runtime/cpu/ops/strided_copy.h"

namespace runtime {
namespace {

using elementwise::CheckArrayOperands;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(message); }

absl::Status CheckResultType(const HloInstruction& instr, const Literal& operand) {
  if (!instr.shape().IsArray() || instr.shape().rank() != operand.shape().rank() ||
      instr.shape().element_type() != operand.shape().element_type()) {
    return Invalid(hlo::StrCat("result shape ", instr.shape().ToString(),
                               " must have the element type and rank of operand ",
                               operand.shape().ToString()));
  }
  return absl::OkStatus();
}

// Value of an integer index element as int64 (unsigned values beyond INT64_MAX saturate).
absl::StatusOr<int64_t> ReadIndex(const Literal& literal, int64_t i) {
  const PrimitiveType type = literal.shape().element_type();
  if (hlo::IsUnsignedIntegralType(type)) {
    return static_cast<int64_t>(std::min<uint64_t>(literal.GetUint(i), INT64_MAX));
  }
  if (hlo::IsSignedIntegralType(type)) return literal.GetInt(i);
  return Invalid(
      hlo::StrCat("start index of type ", literal.shape().ToString(), " is not an integer"));
}

// The start indices of a dynamic slice of `rank` dimensions, starting at operand `first`:
// either `rank` scalars or one rank-1 array of `rank` elements (XLA's older form), each clamped
// to [0, dims[d] - window[d]].
absl::StatusOr<std::vector<int64_t>> ClampedStarts(absl::Span<const Literal* const> operands,
                                                   size_t first, const Shape& full,
                                                   absl::Span<const int64_t> window) {
  const int64_t rank = full.rank();
  const size_t count = operands.size() - first;
  const bool scalars = static_cast<int64_t>(count) == rank;
  const bool vector = count == 1 && operands[first]->shape().rank() == 1 &&
                      operands[first]->element_count() == rank;
  if (!scalars && !vector) {
    return Invalid(hlo::StrCat("expected ", rank, " start indices for ", full.ToString()));
  }
  std::vector<int64_t> raw(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const Literal& index = scalars ? *operands[first + d] : *operands[first];
    if (scalars && index.element_count() != 1) {
      return Invalid(
          hlo::StrCat("start index ", d, " is not a scalar: ", index.shape().ToString()));
    }
    ASSIGN_OR_RETURN(raw[d], ReadIndex(index, scalars ? 0 : d));
    if (window[d] > full.dimensions(d) || window[d] < 0) {
      return Invalid(hlo::StrCat("window size ", window[d], " does not fit dimension ", d, " of ",
                                 full.ToString()));
    }
  }
  return ClampStarts(raw, full.dimensions(), window);
}

absl::StatusOr<Literal> HandleDynamicSlice(const HloInstruction& instr,
                                           absl::Span<const Literal* const> operands, Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, operands.size()));
  if (operands.empty()) return Invalid("dynamic-slice needs an operand");
  const Literal& in = *operands[0];
  RETURN_IF_ERROR(CheckResultType(instr, in));
  const Shape& out_shape = instr.shape();
  const std::vector<int64_t>& sizes = instr.attrs().dynamic_slice_sizes;
  if (!sizes.empty() && sizes != out_shape.dimensions()) {
    return Invalid(
        hlo::StrCat("dynamic_slice_sizes do not match the result ", out_shape.ToString()));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                   ClampedStarts(operands, 1, in.shape(), out_shape.dimensions()));
  Literal out(out_shape);
  if (out.data().empty()) return out;
  CopyView(in.data().data(), WindowView(in.shape(), starts, out_shape.dimensions()),
           out.mutable_data()->data(), ReshapeView(out_shape),
           hlo::ByteWidth(out_shape.element_type()));
  return out;
}

absl::StatusOr<Literal> HandleDynamicUpdateSlice(const HloInstruction& instr,
                                                 absl::Span<const Literal* const> operands,
                                                 Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, operands.size()));
  if (operands.size() < 2) return Invalid("dynamic-update-slice needs an operand and an update");
  const Literal& in = *operands[0];
  const Literal& update = *operands[1];
  RETURN_IF_ERROR(CheckResultType(instr, in));
  RETURN_IF_ERROR(CheckResultType(instr, update));
  if (!instr.shape().Compatible(in.shape())) {
    return Invalid(hlo::StrCat("result ", instr.shape().ToString(), " must equal operand ",
                               in.shape().ToString()));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                   ClampedStarts(operands, 2, in.shape(), update.shape().dimensions()));
  Literal out(instr.shape());
  *out.mutable_data() = in.data();
  if (update.data().empty()) return out;
  const Placement placement = UpdatePlacement(update.shape(), starts);
  CopyView(update.data().data(), placement.OperandView(update.shape()), out.mutable_data()->data(),
           placement.ResultView(in.shape()), hlo::ByteWidth(in.shape().element_type()));
  return out;
}

absl::StatusOr<Literal> HandlePad(const HloInstruction& instr,
                                  absl::Span<const Literal* const> operands, Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 2));
  const Literal& in = *operands[0];
  const Literal& value = *operands[1];
  RETURN_IF_ERROR(CheckResultType(instr, in));
  const Shape& out_shape = instr.shape();
  const int64_t rank = in.shape().rank();
  const auto& config = instr.attrs().padding_config;
  if (value.shape().rank() != 0 || value.shape().element_type() != in.shape().element_type() ||
      !config || static_cast<int64_t>(config->dimensions.size()) != rank) {
    return Invalid(
        "pad needs a scalar padding value of the operand's type and one padding "
        "entry per dimension");
  }
  for (int64_t d = 0; d < rank; ++d) {
    const hlo::PaddingDimension& p = config->dimensions[d];
    const int64_t in_dim = in.shape().dimensions(d);
    const int64_t expected = p.edge_padding_low + p.edge_padding_high + in_dim +
                             std::max<int64_t>(in_dim - 1, 0) * p.interior_padding;
    if (p.interior_padding < 0 || expected != out_shape.dimensions(d)) {
      return Invalid(hlo::StrCat("padding of dimension ", d, " does not turn ",
                                 in.shape().ToString(), " into ", out_shape.ToString()));
    }
  }
  Literal out(out_shape);
  const int64_t element_bytes = hlo::ByteWidth(out_shape.element_type());
  const bool zero_value =
      std::all_of(value.data().begin(), value.data().end(), [](uint8_t b) { return b == 0; });
  if (!zero_value) {  // The result starts zero-filled.
    FillElements(out.mutable_data()->data(), out.element_count(), value.data().data(),
                 element_bytes);
  }
  const Placement placement = PadPlacement(in.shape(), out_shape, *config);
  if (placement.empty()) return out;
  CopyView(in.data().data(), placement.OperandView(in.shape()), out.mutable_data()->data(),
           placement.ResultView(out_shape), element_bytes);
  return out;
}

}  // namespace

void RegisterSliceOps(OpTable& table) {
  table[HloOpcode::kDynamicSlice] = &HandleDynamicSlice;
  table[HloOpcode::kDynamicUpdateSlice] = &HandleDynamicUpdateSlice;
  table[HloOpcode::kPad] = &HandlePad;
}

}  // namespace runtime

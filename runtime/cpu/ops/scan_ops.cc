// scan(inputs..., inits...), dimensions={d}, num_carries=c, to_apply=body[, is_reverse=true]:
// walks dim d of the inputs (last to first when reversed). At position i the body gets the
// inputs' slices at i (dim d removed) followed by the carries, and returns the step's outputs
// followed by the new carries. The result is (outputs stacked along dim d..., final carries...),
// or the one output array when there are no carries and the result is not a tuple.
//
//   scan(f32[1024,128] x, f32[] init), dimensions={0}, num_carries=1, to_apply=body
//   body(f32[128] xi, f32[] carry) -> (f32[] out, f32[] carry')  ==>  (f32[1024], f32[])
#include <string>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/scan_attributes.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cpu/box_copy.h"
#include "runtime/cpu/ops/reduce_handlers.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using hlo::Shape;

std::vector<int64_t> Without(const std::vector<int64_t>& dims, int64_t d) {
  std::vector<int64_t> out = dims;
  out.erase(out.begin() + d);
  return out;
}

// The slice of `input` at position i of dim d, with dim d removed.
absl::StatusOr<Literal> SliceAt(const Literal& input, int64_t d, int64_t i) {
  std::vector<int64_t> sizes = input.shape().dimensions();
  sizes[d] = 1;
  std::vector<int64_t> offsets(sizes.size(), 0);
  offsets[d] = i;
  Literal box(Shape::Array(input.shape().element_type(), sizes));
  RETURN_IF_ERROR(CopyBox(input, offsets, box, std::vector<int64_t>(sizes.size(), 0), sizes));
  Literal out(Shape::Array(input.shape().element_type(), Without(input.shape().dimensions(), d)));
  *out.mutable_data() = std::move(*box.mutable_data());  // Same row-major bytes.
  return out;
}

// Writes `value` (the output shape without dim d) at position i of dim d of `output`.
absl::Status PutAt(const Literal& value, int64_t d, int64_t i, Literal& output) {
  std::vector<int64_t> sizes = output.shape().dimensions();
  sizes[d] = 1;
  if (Without(sizes, d) != value.shape().dimensions()) {
    return absl::InvalidArgumentError(
        hlo::StrCat("scan body output ", value.shape().ToString(false), " does not fit ",
                    output.shape().ToString(false)));
  }
  Literal box(Shape::Array(value.shape().element_type(), sizes));
  *box.mutable_data() = value.data();
  std::vector<int64_t> offsets(sizes.size(), 0);
  offsets[d] = i;
  return CopyBox(box, std::vector<int64_t>(sizes.size(), 0), output, offsets, sizes);
}

}  // namespace

absl::StatusOr<Literal> HandleScan(const HloInstruction& instr,
                                   absl::Span<const Literal* const> operands,
                                   Evaluator& evaluator) {
  ASSIGN_OR_RETURN(const hlo::ScanAttributes scan, hlo::ReadScanAttributes(instr));
  const int64_t num_carries = scan.num_carries;
  if (num_carries < 0 || num_carries >= static_cast<int64_t>(operands.size())) {
    return absl::InvalidArgumentError("scan needs num_carries below its operand count");
  }
  const bool reverse = scan.reverse;
  if (instr.to_apply() == nullptr) return absl::InvalidArgumentError("scan needs a body");
  const int64_t d = scan.dimension;
  for (const hlo::Literal* operand : operands.subspan(0, operands.size() - num_carries)) {
    if (!operand->shape().IsArray() || d < 0 || d >= operand->shape().rank()) {
      return absl::InvalidArgumentError(hlo::StrCat("scan dimension ", d, " is out of range for ",
                                                    operand->shape().ToString(false)));
    }
  }
  const int64_t num_inputs = static_cast<int64_t>(operands.size()) - num_carries;
  const int64_t length = operands[0]->shape().dimensions(d);
  // A single output without carries is an array result; otherwise a tuple.
  const std::vector<Shape> result_shapes =
      instr.shape().IsTuple() ? instr.shape().tuple_shapes() : std::vector<Shape>{instr.shape()};
  const int64_t num_outputs = static_cast<int64_t>(result_shapes.size()) - num_carries;
  std::vector<Literal> outputs;
  for (int64_t k = 0; k < num_outputs; ++k) outputs.emplace_back(result_shapes[k]);
  std::vector<Literal> carries;
  for (int64_t k = 0; k < num_carries; ++k) carries.push_back(*operands[num_inputs + k]);
  for (int64_t step = 0; step < length; ++step) {
    const int64_t i = reverse ? length - 1 - step : step;
    std::vector<Literal> slices;
    for (int64_t k = 0; k < num_inputs; ++k) {
      ASSIGN_OR_RETURN(Literal slice, SliceAt(*operands[k], d, i));
      slices.push_back(std::move(slice));
    }
    std::vector<const Literal*> args;
    for (const Literal& s : slices) args.push_back(&s);
    for (const Literal& c : carries) args.push_back(&c);
    ASSIGN_OR_RETURN(Literal result, evaluator.Call(*instr.to_apply(), args));
    std::vector<Literal>& parts = *result.mutable_tuple_elements();
    if (static_cast<int64_t>(parts.size()) != num_outputs + num_carries) {
      return absl::InvalidArgumentError("scan body returns the wrong number of values");
    }
    for (int64_t k = 0; k < num_outputs; ++k) RETURN_IF_ERROR(PutAt(parts[k], d, i, outputs[k]));
    for (int64_t k = 0; k < num_carries; ++k) carries[k] = std::move(parts[num_outputs + k]);
  }
  if (!instr.shape().IsTuple()) {
    if (num_outputs != 1 || num_carries != 0) {
      return absl::InvalidArgumentError("an array-shaped scan has one output and no carries");
    }
    return std::move(outputs[0]);
  }
  Literal out(instr.shape());
  std::vector<Literal>& elements = *out.mutable_tuple_elements();
  for (int64_t k = 0; k < num_outputs; ++k) elements[k] = std::move(outputs[k]);
  for (int64_t k = 0; k < num_carries; ++k) elements[num_outputs + k] = std::move(carries[k]);
  return out;
}

}  // namespace runtime

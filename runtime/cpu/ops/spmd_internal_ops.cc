// XLA's internal SPMD custom-calls, run on whole (unpartitioned) arrays. XLA defines them by
// how its partitioner lowers them to shards (xla/service/spmd/custom_call_handler.cc) and
// Enzyme-JAX, which emits them, by its enzymexla ops; the meanings below are those lowerings
// on one shard, i.e. without sharding, along dimension `dimension` of size N (X = operand 0):
//
//   _SPMDInternalOp_RotateRight  amount=A (>= 0): out[k] = X[(k - A) mod N].
//   _SPMDInternalOp_MultiRotate  left_amount=L, right_amount=R: L+R+1 results, result i is X
//                                rotated left by L - i: out_i[k] = X[(k + L - i) mod N].
//   _SPMDInternalOp_Wrap         left_amount=L, right_amount=R: W = X[N-L:N] ++ X ++ X[0:R];
//                                the result (dimension size M) holds W[0:M], zeros past W.
//   _SPMDInternalOp_MultiPad     amt=A, operands (X, padding value): A+1 results, result i is X
//                                padded with A-i values low and i high.
//   _SPMDInternalOp_MultiSlice   amount=A, start_indices, limit_indices, strides: A+1 results,
//                                result i is the slice shifted by i along `dimension`.
// Example: RotateRight of {0,1,2,3,4} by 2 is {3,4,0,1,2}; MultiRotate with L=R=1 gives
// {1,2,3,4,0}, {0,1,2,3,4}, {4,0,1,2,3}. `bufferize` (a buffer-donation hint) is accepted and
// ignored; any other config key, a missing key or a shape that disagrees is an error.
#include <algorithm>
#include <string_view>
#include <vector>

#include "hlo/ir/custom_call_config.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cpu/box_copy.h"
#include "runtime/cpu/ops/custom_call_handlers.h"
#include "runtime/cpu/ops/scalar_computation.h"
#include "runtime/cpu/ops/strided_copy.h"

namespace runtime {
namespace {

using hlo::CustomCallConfig;
using hlo::HloInstruction;
using hlo::Literal;
using hlo::Shape;

absl::Status Error(const HloInstruction& instr, std::string_view message) {
  return absl::InvalidArgumentError(
      hlo::StrCat("custom-call \"", instr.attrs().custom_call_target, "\": ", message));
}

// The config of `instr`, which may use `keys` (and `bufferize`).
absl::StatusOr<CustomCallConfig> ConfigOf(const HloInstruction& instr,
                                          std::vector<std::string_view> keys) {
  keys.push_back("bufferize");
  return CustomCallConfig::Parse(instr.attrs().custom_call_target, instr.attrs().backend_config,
                                 keys);
}

// Checks the operand count and that operand 0 is an array; returns it.
absl::StatusOr<const Literal*> ArrayOperand(const HloInstruction& instr,
                                            absl::Span<const Literal* const> operands,
                                            size_t count) {
  if (operands.size() != count || !operands[0]->shape().IsArray()) {
    return Error(instr, hlo::StrCat("expects ", count, " operand(s), the first an array"));
  }
  return operands[0];
}

// The `dimension` key, checked against `x`'s rank.
absl::StatusOr<int64_t> DimensionOf(const HloInstruction& instr, const CustomCallConfig& config,
                                    const Literal& x) {
  ASSIGN_OR_RETURN(int64_t dim, config.Int("dimension"));
  if (dim < 0 || dim >= x.shape().rank()) {
    return Error(instr, hlo::StrCat("dimension ", dim, " is outside operand ",
                                    x.shape().ToString()));
  }
  return dim;
}

// The `count` result shapes, checked to be arrays of `x`'s element type with `dims`.
absl::StatusOr<std::vector<Shape>> CheckedResultShapes(const HloInstruction& instr,
                                                       const Literal& x, int64_t count,
                                                       const std::vector<int64_t>& dims) {
  ASSIGN_OR_RETURN(std::vector<Shape> shapes, VariadicResultShapes(instr.shape(), count));
  for (const Shape& s : shapes) {
    if (s.element_type() != x.shape().element_type() || s.dimensions() != dims) {
      return Error(instr, hlo::StrCat("result ", s.ToString(), " must be ",
                                      Shape::Array(x.shape().element_type(), dims).ToString()));
    }
  }
  return shapes;
}

// The `count` result shapes, each `x`'s dimensions with `dim` resized to `size`.
absl::StatusOr<std::vector<Shape>> ResultShapes(const HloInstruction& instr, const Literal& x,
                                                int64_t count, int64_t dim, int64_t size) {
  std::vector<int64_t> dims = x.shape().dimensions();
  dims[dim] = size;
  return CheckedResultShapes(instr, x, count, dims);
}

// Copies `length` positions along `dim` from `src` (starting at `src_start`) into `dst`
// (starting at `dst_start`), clipped to `dst`; all other dimensions are copied whole.
absl::Status CopyAlong(const Literal& src, int64_t src_start, Literal& dst, int64_t dst_start,
                       int64_t length, int64_t dim) {
  length = std::min(length, dst.shape().dimensions(dim) - dst_start);
  if (length <= 0) return absl::OkStatus();
  std::vector<int64_t> src_offsets(src.shape().rank(), 0);
  std::vector<int64_t> dst_offsets(src.shape().rank(), 0);
  std::vector<int64_t> sizes = src.shape().dimensions();
  src_offsets[dim] = src_start;
  dst_offsets[dim] = dst_start;
  sizes[dim] = length;
  return CopyBox(src, src_offsets, dst, dst_offsets, sizes);
}

// `x` rotated left by `shift` along `dim`: out[k] = x[(k + shift) mod N].
absl::StatusOr<Literal> RotateLeft(const Literal& x, int64_t dim, int64_t shift) {
  Literal out(x.shape());
  const int64_t n = x.shape().dimensions(dim);
  if (n == 0) return out;
  const int64_t s = ((shift % n) + n) % n;
  RETURN_IF_ERROR(CopyAlong(x, s, out, 0, n - s, dim));
  RETURN_IF_ERROR(CopyAlong(x, 0, out, n - s, s, dim));
  return out;
}

absl::StatusOr<Literal> HandleRotateRight(const HloInstruction& instr,
                                          absl::Span<const Literal* const> operands, Evaluator&) {
  ASSIGN_OR_RETURN(const Literal* x, ArrayOperand(instr, operands, 1));
  ASSIGN_OR_RETURN(CustomCallConfig config, ConfigOf(instr, {"dimension", "amount"}));
  ASSIGN_OR_RETURN(int64_t dim, DimensionOf(instr, config, *x));
  ASSIGN_OR_RETURN(int64_t amount, config.Int("amount"));
  if (amount < 0) return Error(instr, "amount must not be negative");
  RETURN_IF_ERROR(ResultShapes(instr, *x, 1, dim, x->shape().dimensions(dim)).status());
  return RotateLeft(*x, dim, -amount);
}

absl::StatusOr<Literal> HandleMultiRotate(const HloInstruction& instr,
                                          absl::Span<const Literal* const> operands, Evaluator&) {
  ASSIGN_OR_RETURN(const Literal* x, ArrayOperand(instr, operands, 1));
  ASSIGN_OR_RETURN(CustomCallConfig config,
                   ConfigOf(instr, {"dimension", "left_amount", "right_amount"}));
  ASSIGN_OR_RETURN(int64_t dim, DimensionOf(instr, config, *x));
  ASSIGN_OR_RETURN(int64_t left, config.Int("left_amount"));
  ASSIGN_OR_RETURN(int64_t right, config.Int("right_amount"));
  if (left + right < 0) return Error(instr, "left_amount + right_amount must not be negative");
  const int64_t count = left + right + 1;
  RETURN_IF_ERROR(ResultShapes(instr, *x, count, dim, x->shape().dimensions(dim)).status());
  std::vector<Literal> results;
  for (int64_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(Literal r, RotateLeft(*x, dim, left - i));
    results.push_back(std::move(r));
  }
  return PackVariadic(std::move(results), instr.shape());
}

absl::StatusOr<Literal> HandleWrap(const HloInstruction& instr,
                                   absl::Span<const Literal* const> operands, Evaluator&) {
  ASSIGN_OR_RETURN(const Literal* x, ArrayOperand(instr, operands, 1));
  ASSIGN_OR_RETURN(CustomCallConfig config,
                   ConfigOf(instr, {"dimension", "left_amount", "right_amount"}));
  ASSIGN_OR_RETURN(int64_t dim, DimensionOf(instr, config, *x));
  ASSIGN_OR_RETURN(int64_t left, config.Int("left_amount"));
  ASSIGN_OR_RETURN(int64_t right, config.Int("right_amount"));
  const int64_t n = x->shape().dimensions(dim);
  if (left < 0 || right < 0 || left > n || right > n) {
    return Error(instr, hlo::StrCat("left_amount ", left, " and right_amount ", right,
                                    " must lie in [0, ", n, "]"));
  }
  if (!instr.shape().IsArray() || instr.shape().rank() != x->shape().rank()) {
    return Error(instr, "result must be an array of the operand's rank");
  }
  const int64_t m = instr.shape().dimensions(dim);
  RETURN_IF_ERROR(ResultShapes(instr, *x, 1, dim, m).status());
  Literal out(instr.shape());
  RETURN_IF_ERROR(CopyAlong(*x, n - left, out, 0, left, dim));
  RETURN_IF_ERROR(CopyAlong(*x, 0, out, left, n, dim));
  RETURN_IF_ERROR(CopyAlong(*x, 0, out, left + n, right, dim));
  return out;
}

absl::StatusOr<Literal> HandleMultiPad(const HloInstruction& instr,
                                       absl::Span<const Literal* const> operands, Evaluator&) {
  ASSIGN_OR_RETURN(const Literal* x, ArrayOperand(instr, operands, 2));
  const Literal& pad = *operands[1];
  if (!pad.shape().IsArray() || pad.shape().rank() != 0 ||
      pad.shape().element_type() != x->shape().element_type()) {
    return Error(instr, "the padding value must be a scalar of the operand's element type");
  }
  ASSIGN_OR_RETURN(CustomCallConfig config, ConfigOf(instr, {"dimension", "amt"}));
  ASSIGN_OR_RETURN(int64_t dim, DimensionOf(instr, config, *x));
  ASSIGN_OR_RETURN(int64_t amount, config.Int("amt"));
  if (amount < 0) return Error(instr, "amt must not be negative");
  const int64_t n = x->shape().dimensions(dim);
  ASSIGN_OR_RETURN(std::vector<Shape> shapes,
                   ResultShapes(instr, *x, amount + 1, dim, n + amount));
  std::vector<Literal> results;
  const int64_t width = hlo::ByteWidth(x->shape().element_type());
  for (int64_t i = 0; i <= amount; ++i) {
    Literal r(shapes[i]);
    FillElements(r.mutable_data()->data(), r.element_count(), pad.data().data(), width);
    RETURN_IF_ERROR(CopyAlong(*x, 0, r, amount - i, n, dim));
    results.push_back(std::move(r));
  }
  return PackVariadic(std::move(results), instr.shape());
}

// Result i of MultiSlice: the slice `start`..`limit` by `strides` with start[dim] += shift.
absl::StatusOr<Literal> ShiftedSlice(const HloInstruction& instr, const Literal& x,
                                     const Shape& shape, const std::vector<int64_t>& start,
                                     const std::vector<int64_t>& strides, int64_t dim,
                                     int64_t shift) {
  const std::vector<int64_t> in_strides = RowMajorByteStrides(x.shape());
  StridedCopySpec spec{shape.dimensions(), {}, RowMajorByteStrides(shape)};
  int64_t offset = 0;
  for (int64_t d = 0; d < x.shape().rank(); ++d) {
    const int64_t first = start[d] + (d == dim ? shift : 0);
    const int64_t last = first + (shape.dimensions(d) - 1) * strides[d];
    if (shape.dimensions(d) > 0 && (first < 0 || last >= x.shape().dimensions(d))) {
      return Error(instr, hlo::StrCat("slice ", shift, " reads [", first, ", ", last,
                                      "] outside dimension ", d, " of ", x.shape().ToString()));
    }
    offset += first * in_strides[d];
    spec.src_strides.push_back(in_strides[d] * strides[d]);
  }
  Literal out(shape);
  if (out.element_count() > 0) {
    StridedCopy(x.data().data() + offset, out.mutable_data()->data(), spec,
                hlo::ByteWidth(x.shape().element_type()));
  }
  return out;
}

absl::StatusOr<Literal> HandleMultiSlice(const HloInstruction& instr,
                                         absl::Span<const Literal* const> operands, Evaluator&) {
  ASSIGN_OR_RETURN(const Literal* x, ArrayOperand(instr, operands, 1));
  ASSIGN_OR_RETURN(CustomCallConfig config,
                   ConfigOf(instr, {"dimension", "amount", "start_indices", "limit_indices",
                                    "strides"}));
  ASSIGN_OR_RETURN(int64_t dim, DimensionOf(instr, config, *x));
  ASSIGN_OR_RETURN(int64_t amount, config.Int("amount"));
  ASSIGN_OR_RETURN(std::vector<int64_t> start, config.List("start_indices"));
  ASSIGN_OR_RETURN(std::vector<int64_t> limit, config.List("limit_indices"));
  ASSIGN_OR_RETURN(std::vector<int64_t> strides, config.List("strides"));
  const size_t rank = static_cast<size_t>(x->shape().rank());
  if (amount < 0 || start.size() != rank || limit.size() != rank || strides.size() != rank) {
    return Error(instr, "amount must not be negative and the index lists need one entry per "
                        "operand dimension");
  }
  std::vector<int64_t> dims(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (strides[d] <= 0 || limit[d] < start[d]) {
      return Error(instr, hlo::StrCat("bad slice range [", start[d], ", ", limit[d], ") step ",
                                      strides[d], " in dimension ", d));
    }
    dims[d] = (limit[d] - start[d] + strides[d] - 1) / strides[d];
  }
  ASSIGN_OR_RETURN(std::vector<Shape> shapes, CheckedResultShapes(instr, *x, amount + 1, dims));
  std::vector<Literal> results;
  for (int64_t i = 0; i <= amount; ++i) {
    ASSIGN_OR_RETURN(Literal r, ShiftedSlice(instr, *x, shapes[i], start, strides, dim, i));
    results.push_back(std::move(r));
  }
  return PackVariadic(std::move(results), instr.shape());
}

}  // namespace

CustomCallHandler FindSpmdInternalHandler(std::string_view target) {
  if (target == "_SPMDInternalOp_RotateRight") return &HandleRotateRight;
  if (target == "_SPMDInternalOp_MultiRotate") return &HandleMultiRotate;
  if (target == "_SPMDInternalOp_Wrap") return &HandleWrap;
  if (target == "_SPMDInternalOp_MultiPad") return &HandleMultiPad;
  if (target == "_SPMDInternalOp_MultiSlice") return &HandleMultiSlice;
  return nullptr;
}

}  // namespace runtime

// Shape inference for the custom-calls whose meaning is fixed: XLA's internal SPMD ops
// (`_SPMDInternalOp_*`, written by XLA's partitioner and by Enzyme-JAX). Their semantics are
// documented in runtime/cpu/ops/spmd_internal_ops.cc; here only what they return:
//
//   RotateRight(X), MultiRotate(X)  one / left_amount+right_amount+1 results shaped as X
//   Wrap(X)                         X with `dimension` of any size (the declared one)
//   MultiPad(X, pad)                amt+1 results, X with `dimension` grown by amt
//   MultiSlice(X)                   amount+1 results, the slice start..limit by strides
//
// Several results are a tuple; one may be an array or a 1-tuple, as declared. Other targets
// are UnimplementedError (their results are whatever the declaration says).
#include <string>
#include <vector>

#include "hlo/ir/custom_call_config.h"
#include "hlo/ir/shape_inference.h"
#include "hlo/ir/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hlo {
namespace {

using shape_inference_internal::InvalidArg;
using shape_inference_internal::ShapeStr;

struct InternalOp {
  std::string_view target;
  std::vector<std::string_view> keys;  // Besides `bufferize`, accepted by every op.
  int64_t operands;
};

const std::vector<InternalOp>& InternalOps() {
  static const auto* ops = new std::vector<InternalOp>{
      {"_SPMDInternalOp_RotateRight", {"dimension", "amount"}, 1},
      {"_SPMDInternalOp_MultiRotate", {"dimension", "left_amount", "right_amount"}, 1},
      {"_SPMDInternalOp_Wrap", {"dimension", "left_amount", "right_amount"}, 1},
      {"_SPMDInternalOp_MultiPad", {"dimension", "amt"}, 2},
      {"_SPMDInternalOp_MultiSlice",
       {"dimension", "amount", "start_indices", "limit_indices", "strides"},
       1},
  };
  return *ops;
}

// `count` results of `shape`, as a tuple unless there is one and the declaration is an array.
Shape Results(const Shape& shape, int64_t count, const Shape& declared) {
  if (count == 1 && !declared.IsTuple()) return shape;
  return Shape::Tuple(std::vector<Shape>(count, shape));
}

// The result of `op` on operand `x` with `config`, `dim` checked.
absl::StatusOr<Shape> InferInternalOp(const InternalOp& op, const CustomCallConfig& config,
                                      const Shape& x, int64_t dim, const Shape& declared) {
  std::vector<int64_t> dims = x.dimensions();
  const std::string_view name = op.target.substr(std::string_view("_SPMDInternalOp_").size());
  if (name == "RotateRight") return Results(x, 1, declared);
  if (name == "MultiRotate") {
    ASSIGN_OR_RETURN(int64_t left, config.Int("left_amount"));
    ASSIGN_OR_RETURN(int64_t right, config.Int("right_amount"));
    if (left + right < 0) return InvalidArg(op.target, ": left_amount + right_amount < 0");
    return Results(x, left + right + 1, declared);
  }
  if (name == "Wrap") {
    if (!declared.IsArray() || declared.rank() != x.rank()) {
      return InvalidArg(op.target, ": the result must be an array of the operand's rank");
    }
    dims[dim] = declared.dimensions(dim);
    return Shape::Array(x.element_type(), dims);
  }
  if (name == "MultiPad") {
    ASSIGN_OR_RETURN(int64_t amount, config.Int("amt"));
    if (amount < 0) return InvalidArg(op.target, ": amt must not be negative");
    dims[dim] += amount;
    return Results(Shape::Array(x.element_type(), dims), amount + 1, declared);
  }
  ASSIGN_OR_RETURN(int64_t amount, config.Int("amount"));
  ASSIGN_OR_RETURN(std::vector<int64_t> start, config.List("start_indices"));
  ASSIGN_OR_RETURN(std::vector<int64_t> limit, config.List("limit_indices"));
  ASSIGN_OR_RETURN(std::vector<int64_t> strides, config.List("strides"));
  const size_t rank = dims.size();
  if (amount < 0 || start.size() != rank || limit.size() != rank || strides.size() != rank) {
    return InvalidArg(op.target, ": amount must not be negative and the index lists need one ",
                      "entry per operand dimension");
  }
  for (size_t d = 0; d < rank; ++d) {
    if (strides[d] <= 0 || limit[d] < start[d]) {
      return InvalidArg(op.target, ": bad slice range [", start[d], ", ", limit[d], ") step ",
                        strides[d], " in dimension ", d);
    }
    dims[d] = (limit[d] - start[d] + strides[d] - 1) / strides[d];
  }
  return Results(Shape::Array(x.element_type(), dims), amount + 1, declared);
}

}  // namespace

absl::StatusOr<Shape> InferCustomCallShape(const HloInstruction& instr) {
  const std::string& target = instr.attrs().custom_call_target;
  for (const InternalOp& op : InternalOps()) {
    if (op.target != target) continue;
    if (instr.operand_count() != op.operands || !instr.operand(0)->shape().IsArray()) {
      return InvalidArg(target, ": expects ", op.operands, " operand(s), the first an array");
    }
    const Shape& x = instr.operand(0)->shape();
    if (op.operands == 2 &&
        !instr.operand(1)->shape().Compatible(Shape::Array(x.element_type(), {}))) {
      return InvalidArg(target, ": the padding value must be a scalar of the operand's type");
    }
    std::vector<std::string_view> keys = op.keys;
    keys.push_back("bufferize");
    ASSIGN_OR_RETURN(CustomCallConfig config,
                     CustomCallConfig::Parse(target, instr.attrs().backend_config, keys));
    ASSIGN_OR_RETURN(int64_t dim, config.Int("dimension"));
    if (dim < 0 || dim >= x.rank()) {
      return InvalidArg(target, ": dimension ", dim, " is outside operand ", ShapeStr(x));
    }
    return InferInternalOp(op, config, x, dim, instr.shape());
  }
  return absl::UnimplementedError(shape_inference_internal::Cat(
      "shape inference is not implemented for custom-call \"", target, "\""));
}

}  // namespace hlo

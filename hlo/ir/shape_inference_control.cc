// Shape inference for control flow (call, while, conditional) and the token/random ops
// (after-all, add-dependency, rng). Control-flow results are read off the called
// computations' program shapes after checking them against the operands.
#include <vector>

#include "hlo/ir/shape_inference.h"
#include "hlo/ir/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hlo {

using shape_inference_internal::ExpectArray;
using shape_inference_internal::InvalidArg;
using shape_inference_internal::IsScalar;
using shape_inference_internal::Scalar;
using shape_inference_internal::ShapeStr;
using shape_inference_internal::WithElementType;

absl::StatusOr<Shape> InferCallShape(absl::Span<const Shape* const> arguments,
                                     const ProgramShape& to_apply) {
  if (arguments.size() != to_apply.parameters.size()) {
    return InvalidArg("call: callee takes ", to_apply.parameters.size(), " parameters but ",
                      arguments.size(), " arguments are passed");
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!arguments[i]->Compatible(to_apply.parameters[i])) {
      return InvalidArg("call: argument ", i, " ", ShapeStr(*arguments[i]),
                        " does not match parameter ", i, " ", ShapeStr(to_apply.parameters[i]));
    }
  }
  return to_apply.result;
}

absl::StatusOr<Shape> InferScanShape(absl::Span<const Shape* const> operands, int64_t dimension,
                                     int64_t num_carries, const ProgramShape& body) {
  const int64_t count = static_cast<int64_t>(operands.size());
  if (num_carries < 0 || num_carries >= count) {
    return InvalidArg("scan: num_carries ", num_carries, " must be below the operand count ",
                      count);
  }
  const int64_t num_inputs = count - num_carries;
  int64_t length = -1;
  std::vector<Shape> params;
  for (int64_t k = 0; k < num_inputs; ++k) {
    const Shape& input = *operands[k];
    if (!input.IsArray() || dimension < 0 || dimension >= input.rank()) {
      return InvalidArg("scan: dimension ", dimension, " is out of range for input ", k, " ",
                        ShapeStr(input));
    }
    if (length >= 0 && input.dimensions(dimension) != length) {
      return InvalidArg("scan: input ", k, " ", ShapeStr(input), " has length ",
                        input.dimensions(dimension), " along dimension ", dimension,
                        " but input 0 has ", length);
    }
    length = input.dimensions(dimension);
    std::vector<int64_t> dims = input.dimensions();
    dims.erase(dims.begin() + dimension);
    params.push_back(Shape::Array(input.element_type(), dims));
  }
  for (int64_t k = num_inputs; k < count; ++k) params.push_back(*operands[k]);
  if (body.parameters.size() != params.size()) {
    return InvalidArg("scan: body takes ", body.parameters.size(), " parameters but the scan ",
                      "passes ", params.size(), " (", num_inputs, " slices and ", num_carries,
                      " carries)");
  }
  for (size_t k = 0; k < params.size(); ++k) {
    if (!body.parameters[k].Compatible(params[k])) {
      return InvalidArg("scan: body parameter ", k, " is ", ShapeStr(body.parameters[k]),
                        " but the scan passes ", ShapeStr(params[k]));
    }
  }
  const std::vector<Shape> step =
      body.result.IsTuple() ? body.result.tuple_shapes() : std::vector<Shape>{body.result};
  const int64_t num_outputs = static_cast<int64_t>(step.size()) - num_carries;
  if (num_outputs < 0) {
    return InvalidArg("scan: body returns ", step.size(), " values, fewer than its ", num_carries,
                      " carries");
  }
  std::vector<Shape> results;
  for (int64_t k = 0; k < num_outputs; ++k) {
    if (!step[k].IsArray()) return InvalidArg("scan: body output ", k, " is not an array");
    std::vector<int64_t> dims = step[k].dimensions();
    if (dimension > static_cast<int64_t>(dims.size())) {
      return InvalidArg("scan: dimension ", dimension, " is out of range for body output ", k, " ",
                        ShapeStr(step[k]));
    }
    dims.insert(dims.begin() + dimension, length);
    results.push_back(Shape::Array(step[k].element_type(), dims));
  }
  for (int64_t k = 0; k < num_carries; ++k) {
    const Shape& carry = step[num_outputs + k];
    if (!carry.Compatible(*operands[num_inputs + k])) {
      return InvalidArg("scan: body returns carry ", k, " as ", ShapeStr(carry),
                        " but it starts as ", ShapeStr(*operands[num_inputs + k]));
    }
    results.push_back(carry);
  }
  if (results.size() == 1 && num_carries == 0) return results[0];
  return Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferWhileShape(const ProgramShape& condition, const ProgramShape& body,
                                      const Shape& init) {
  if (condition.parameters.size() != 1 || body.parameters.size() != 1) {
    return InvalidArg("while: condition and body must take 1 parameter, take ",
                      condition.parameters.size(), " and ", body.parameters.size());
  }
  if (!condition.result.Compatible(Scalar(PrimitiveType::kPred))) {
    return InvalidArg("while: condition must return pred[], returns ", ShapeStr(condition.result));
  }
  const struct {
    const char* what;
    const Shape* shape;
  } checks[] = {{"condition parameter", &condition.parameters[0]},
                {"body parameter", &body.parameters[0]},
                {"body result", &body.result}};
  for (const auto& check : checks) {
    if (!check.shape->Compatible(init)) {
      return InvalidArg("while: ", check.what, " ", ShapeStr(*check.shape),
                        " does not match the init value ", ShapeStr(init));
    }
  }
  return init;
}

absl::StatusOr<Shape> InferConditionalShape(const Shape& branch_index,
                                            absl::Span<const ProgramShape> branches,
                                            absl::Span<const Shape* const> branch_operands) {
  const bool is_pred = branch_index.Compatible(Scalar(PrimitiveType::kPred));
  if (!is_pred && !branch_index.Compatible(Scalar(PrimitiveType::kS32))) {
    return InvalidArg("conditional: branch index must be pred[] or s32[], got ",
                      ShapeStr(branch_index));
  }
  if (branches.empty() || (is_pred && branches.size() != 2)) {
    return InvalidArg(
        "conditional: ",
        is_pred ? "a pred index needs exactly 2 branches" : "needs at least one branch", ", got ",
        branches.size());
  }
  if (branch_operands.size() != branches.size()) {
    return InvalidArg("conditional: ", branches.size(), " branches but ", branch_operands.size(),
                      " branch operands");
  }
  for (size_t i = 0; i < branches.size(); ++i) {
    if (branches[i].parameters.size() != 1) {
      return InvalidArg("conditional: branch ", i, " must take 1 parameter, takes ",
                        branches[i].parameters.size());
    }
    if (!branches[i].parameters[0].Compatible(*branch_operands[i])) {
      return InvalidArg("conditional: branch ", i, " parameter ",
                        ShapeStr(branches[i].parameters[0]), " does not match its operand ",
                        ShapeStr(*branch_operands[i]));
    }
    if (!branches[i].result.Compatible(branches[0].result)) {
      return InvalidArg("conditional: branch ", i, " returns ", ShapeStr(branches[i].result),
                        " but branch 0 returns ", ShapeStr(branches[0].result));
    }
  }
  return branches[0].result;
}

absl::StatusOr<Shape> InferAfterAllShape(absl::Span<const Shape* const> operands) {
  // XLA accepts any operands here: after-all only orders them.
  (void)operands;
  return Shape::Token();
}

absl::StatusOr<Shape> InferAddDependencyShape(const Shape& operand, const Shape& token) {
  if (!token.IsToken()) {
    return InvalidArg("add-dependency: operand 1 must be a token, got ", ShapeStr(token));
  }
  return operand;
}

absl::StatusOr<Shape> InferRngShape(const Shape& a, const Shape& b, RandomDistribution distribution,
                                    const Shape& output) {
  RETURN_IF_ERROR(ExpectArray("rng", "result", output));
  if (!IsScalar(a) || !a.Compatible(b)) {
    return InvalidArg("rng: parameters must be scalars of one type, got ", ShapeStr(a), " and ",
                      ShapeStr(b));
  }
  const PrimitiveType t = a.element_type();
  switch (distribution) {
    case RandomDistribution::kUniform:
      if (IsComplexType(t)) return InvalidArg("rng: rng_uniform cannot produce ", ShapeStr(a));
      break;
    case RandomDistribution::kNormal:
      if (!IsFloatingPointType(t)) {
        return InvalidArg("rng: rng_normal needs floating-point parameters, got ", ShapeStr(a));
      }
      break;
    default:
      return InvalidArg("rng: invalid distribution");
  }
  return WithElementType(output, t);
}

}  // namespace hlo

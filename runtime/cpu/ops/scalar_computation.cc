// Pattern matching of one-instruction scalar bodies, and element-wise calls of any other body.
// A body matches only when every value involved is a scalar of the operand's element type, so a
// fast path never changes a result's type or rounding.
#include "runtime/cpu/ops/scalar_computation.h"

#include <cstring>

#include "hlo/analysis/combiner.h"
#include "hlo/status_macros.h"

namespace runtime {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::PrimitiveType;

bool IsScalarOf(const hlo::Shape& shape, PrimitiveType type) {
  return shape.IsArray() && shape.rank() == 0 && shape.element_type() == type;
}

// The parameter number of `instr` if it is a parameter, else -1.
int64_t ParameterNumberOf(const HloInstruction* instr) {
  return instr->opcode() == HloOpcode::kParameter ? instr->parameter_number() : -1;
}

}  // namespace

bool BinaryOpSupports(HloOpcode op, PrimitiveType type) {
  return hlo::HasOpcodeFlag(op, hlo::op_traits::kReducer) &&
         hlo::IsOfElementTypes(type, hlo::ElementwiseTypes(op));
}

std::optional<HloOpcode> MatchScalarCombiner(const HloComputation& computation,
                                             PrimitiveType type) {
  const std::optional<HloOpcode> op = hlo::MatchCombiner(computation);
  if (!op || !BinaryOpSupports(*op, type) ||
      !IsScalarOf(computation.root_instruction()->shape(), type)) {
    return std::nullopt;
  }
  for (const HloInstruction* p : computation.parameter_instructions()) {
    if (p == nullptr || !IsScalarOf(p->shape(), type)) return std::nullopt;
  }
  return op;
}

bool IsAssignCombiner(const HloComputation& computation, PrimitiveType type) {
  const HloInstruction* root = computation.root_instruction();
  if (computation.num_parameters() != 2 || root == nullptr) return false;
  if (ParameterNumberOf(root) != 1 || !IsScalarOf(root->shape(), type)) return false;
  const HloInstruction* p0 = computation.parameter_instruction(0);
  return p0 != nullptr && IsScalarOf(p0->shape(), type);
}

Literal ScalarOf(const Literal& array, int64_t i) {
  Literal scalar(hlo::Shape::Array(array.shape().element_type(), {}));
  CopyElement(array, i, scalar, 0);
  return scalar;
}

void CopyElement(const Literal& from, int64_t i, Literal& to, int64_t j) {
  const int64_t width = hlo::ByteWidth(from.shape().element_type());
  std::memcpy(to.mutable_data()->data() + j * width, from.data().data() + i * width, width);
}

absl::StatusOr<std::vector<hlo::Shape>> VariadicResultShapes(const hlo::Shape& shape, int64_t n) {
  std::vector<hlo::Shape> shapes;
  if (shape.IsTuple()) {
    shapes = shape.tuple_shapes();
  } else {
    shapes.push_back(shape);
  }
  bool ok = static_cast<int64_t>(shapes.size()) == n;
  for (const hlo::Shape& s : shapes) ok = ok && s.IsArray();
  if (!ok) {
    return absl::InvalidArgumentError(hlo::StrCat("result shape ", shape.ToString(), " must hold ",
                                                  n, " array(s), one per input"));
  }
  return shapes;
}

Literal PackVariadic(std::vector<Literal> results, const hlo::Shape& shape) {
  if (!shape.IsTuple()) return std::move(results[0]);
  return Literal::Tuple(shape, std::move(results));
}

absl::StatusOr<std::vector<Literal>> CallScalarComputation(
    Evaluator& evaluator, const HloComputation& computation, absl::Span<const Literal* const> args,
    absl::Span<const PrimitiveType> expected) {
  ASSIGN_OR_RETURN(Literal result, evaluator.Call(computation, args));
  const bool is_tuple = result.shape().IsTuple();
  const size_t count = is_tuple ? result.tuple_elements().size() : 1;
  bool ok = count == expected.size();
  for (size_t k = 0; ok && k < count; ++k) {
    const hlo::Shape& shape = is_tuple ? result.tuple_elements()[k].shape() : result.shape();
    ok = shape.IsArray() && shape.rank() == 0 && shape.element_type() == expected[k];
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        hlo::StrCat("computation ", computation.name(), " must return ", expected.size(),
                    " scalar(s) of the operands' element types, got ", result.shape().ToString()));
  }
  std::vector<Literal> results;
  if (is_tuple) {
    results = std::move(*result.mutable_tuple_elements());
  } else {
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace runtime

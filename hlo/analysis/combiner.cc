// A combiner is recognised by its root alone: a reducer opcode whose two operands are the
// computation's two parameters, each used once; a comparator likewise: a compare of the two.
#include "hlo/analysis/combiner.h"

namespace hlo {
namespace {

bool IsScalarOf(const Shape& shape, PrimitiveType type) {
  return shape.IsArray() && shape.rank() == 0 && shape.element_type() == type;
}

// The parameter number of `instr` if it is a parameter, else -1.
int64_t ParameterNumberOf(const HloInstruction* instr) {
  return instr->opcode() == HloOpcode::kParameter ? instr->parameter_number() : -1;
}

ComparisonDirection Mirror(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kLt:
      return ComparisonDirection::kGt;
    case ComparisonDirection::kGt:
      return ComparisonDirection::kLt;
    case ComparisonDirection::kLe:
      return ComparisonDirection::kGe;
    case ComparisonDirection::kGe:
      return ComparisonDirection::kLe;
    default:
      return d;
  }
}

// Whether comparison type `t` is the natural one for `type`, so that CompareValues on compute
// values (with total_order = t is TOTALORDER) implements it.
bool ComparisonTypeFits(ComparisonType t, PrimitiveType type) {
  switch (t) {
    case ComparisonType::kDefault:
      return true;
    case ComparisonType::kFloat:
    case ComparisonType::kTotalOrder:
      return IsFloatingPointType(type);
    case ComparisonType::kSigned:
      return IsSignedIntegralType(type);
    case ComparisonType::kUnsigned:
      return IsUnsignedIntegralType(type) || type == PrimitiveType::kPred;
    default:
      return false;
  }
}
}  // namespace

std::optional<HloOpcode> MatchCombiner(const HloComputation& computation) {
  const HloInstruction* root = computation.root_instruction();
  if (computation.num_parameters() != 2 || root == nullptr || root->operand_count() != 2 ||
      !HasOpcodeFlag(root->opcode(), op_traits::kReducer)) {
    return std::nullopt;
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter ||
      a->parameter_number() == b->parameter_number()) {
    return std::nullopt;
  }
  return root->opcode();
}

bool IsSelectingCombiner(const HloComputation& computation) {
  if (std::optional<HloOpcode> op = MatchCombiner(computation)) {
    return *op == HloOpcode::kMaximum || *op == HloOpcode::kMinimum || *op == HloOpcode::kAnd ||
           *op == HloOpcode::kOr;
  }
  const HloInstruction* root = computation.root_instruction();
  const int64_t n = root == nullptr ? 0 : root->operand_count();
  if (n == 0 || root->opcode() != HloOpcode::kTuple || computation.num_parameters() != 2 * n) {
    return false;
  }
  auto parameter = [](const HloInstruction* instr) -> int64_t {
    return instr->opcode() == HloOpcode::kParameter ? instr->parameter_number() : -1;
  };
  const HloInstruction* predicate = nullptr;
  int64_t lhs_first = -1;  // 1: select(p, lhs, rhs); 0: select(p, rhs, lhs).
  for (int64_t i = 0; i < n; ++i) {
    const HloInstruction* select = root->operand(i);
    if (select->opcode() != HloOpcode::kSelect) return false;
    const int64_t a = parameter(select->operand(1)), b = parameter(select->operand(2));
    const int64_t orientation = a == i && b == n + i ? 1 : (a == n + i && b == i ? 0 : -1);
    if (orientation < 0 ||
        (predicate != nullptr && (select->operand(0) != predicate || orientation != lhs_first))) {
      return false;
    }
    predicate = select->operand(0);
    lhs_first = orientation;
  }
  return true;
}

std::optional<ParameterComparison> MatchParameterComparison(const HloComputation& computation,
                                                            int64_t lhs, int64_t rhs,
                                                            PrimitiveType type) {
  const HloInstruction* root = computation.root_instruction();
  if (root == nullptr || root->opcode() != HloOpcode::kCompare || root->operand_count() != 2) {
    return std::nullopt;
  }
  if (!IsScalarOf(root->operand(0)->shape(), type) ||
      !IsScalarOf(root->operand(1)->shape(), type)) {
    return std::nullopt;
  }
  int64_t a = ParameterNumberOf(root->operand(0));
  int64_t b = ParameterNumberOf(root->operand(1));
  ParameterComparison result;
  result.type = root->attrs().comparison_type;
  if (a == lhs && b == rhs) {
    result.direction = root->attrs().comparison_direction;
  } else if (a == rhs && b == lhs) {
    result.direction = Mirror(root->attrs().comparison_direction);
  } else {
    return std::nullopt;
  }
  const bool ordered =
      result.direction != ComparisonDirection::kEq && result.direction != ComparisonDirection::kNe;
  if (!ComparisonTypeFits(result.type, type) || (ordered && IsComplexType(type))) {
    return std::nullopt;
  }
  return result;
}

}  // namespace hlo

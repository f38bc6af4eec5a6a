// A combiner is recognised by its root alone: a reducer opcode whose two operands are the
// computation's two parameters, each used once; a comparator likewise: a compare of the two.
#include "hlo/analysis/combiner.h"

#include <initializer_list>

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

namespace {

// Whether `q` chooses the lhs exactly where `p` does, up to elements whose value the inputs
// share: q is p, or or(p, and(equal(lhs_k, rhs_k), ...)) (operands in either order) for an
// element k that `p` selects. Where q alone picks the lhs, lhs_k = rhs_k, so the tuple chosen
// is still one input (JAX's argmax and argmin: ties on the value go to the lower index).
bool SameChoice(const HloInstruction* q, const HloInstruction* p,
                const std::vector<const HloInstruction*>& predicates, int64_t n) {
  if (q == p) return true;
  if (q->opcode() != HloOpcode::kOr || q->operand_count() != 2) return false;
  for (int64_t side = 0; side < 2; ++side) {
    const HloInstruction* tie = q->operand(1 - side);
    if (q->operand(side) != p || tie->opcode() != HloOpcode::kAnd) continue;
    for (const HloInstruction* term : tie->operands()) {
      if (term->opcode() != HloOpcode::kCompare ||
          term->attrs().comparison_direction != ComparisonDirection::kEq) {
        continue;
      }
      const HloInstruction* x = term->operand(0);
      const HloInstruction* y = term->operand(1);
      if (x->opcode() != HloOpcode::kParameter || y->opcode() != HloOpcode::kParameter) continue;
      const int64_t k = std::min(x->parameter_number(), y->parameter_number());
      if (k < n && std::max(x->parameter_number(), y->parameter_number()) == n + k &&
          predicates[k] == p) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

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
  std::vector<const HloInstruction*> predicates;
  int64_t lhs_first = -1;  // 1: select(p, lhs, rhs); 0: select(p, rhs, lhs).
  for (int64_t i = 0; i < n; ++i) {
    const HloInstruction* select = root->operand(i);
    if (select->opcode() != HloOpcode::kSelect) return false;
    const int64_t a = parameter(select->operand(1)), b = parameter(select->operand(2));
    const int64_t orientation = a == i && b == n + i ? 1 : (a == n + i && b == i ? 0 : -1);
    if (orientation < 0 || (lhs_first >= 0 && orientation != lhs_first)) return false;
    predicates.push_back(select->operand(0));
    lhs_first = orientation;
  }
  // One predicate, or ones that differ from it only on elements the inputs share.
  for (const HloInstruction* q : predicates) {
    if (!SameChoice(q, predicates[0], predicates, n)) return false;
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

namespace {

// Whether `a` computes from element x's parameters what `b` computes from y's: the same tree
// of deterministic elementwise ops and constants, parameter 2i in one where the other has 2i+1.
bool SwappedKeys(const HloInstruction& a, const HloInstruction& b, int depth = 0) {
  if (depth > 64 || a.opcode() != b.opcode() || !a.shape().Compatible(b.shape()) ||
      a.operand_count() != b.operand_count()) {
    return false;
  }
  if (a.opcode() == HloOpcode::kParameter) {
    return (a.parameter_number() ^ 1) == b.parameter_number();
  }
  if (a.opcode() == HloOpcode::kConstant) {
    return a.attrs().literal.has_value() && b.attrs().literal.has_value() &&
           *a.attrs().literal == *b.attrs().literal;
  }
  // Deterministic elementwise ops (the opcode table's families), whose only attributes are a
  // comparison's (default, so equal, for the others); reduce-precision's bit counts are not
  // compared, so it is not one of them.
  const bool elementwise =
      (IsElementwiseOpcode(a.opcode()) && a.opcode() != HloOpcode::kReducePrecision) ||
      a.opcode() == HloOpcode::kBitcastConvert;
  if (!elementwise || a.attrs().comparison_direction != b.attrs().comparison_direction ||
      a.attrs().comparison_type != b.attrs().comparison_type) {
    return false;
  }
  for (int64_t i = 0; i < a.operand_count(); ++i) {
    if (!SwappedKeys(*a.operand(i), *b.operand(i), depth + 1)) return false;
  }
  return true;
}

bool IsCompare(const HloInstruction& instr, std::initializer_list<ComparisonDirection> directions) {
  if (instr.opcode() != HloOpcode::kCompare || instr.operand_count() != 2) return false;
  for (ComparisonDirection d : directions) {
    if (instr.attrs().comparison_direction == d) return true;
  }
  return false;
}

// Whether `key` reads the parameters of one element alone (all even or all odd numbers).
bool OneElement(const HloInstruction& key, int* parity, int depth = 0) {
  if (depth > 64) return false;
  if (key.opcode() == HloOpcode::kParameter) {
    const int p = static_cast<int>(key.parameter_number() & 1);
    if (*parity >= 0 && *parity != p) return false;
    *parity = p;
    return true;
  }
  for (const HloInstruction* operand : key.operands()) {
    if (!OneElement(*operand, parity, depth + 1)) return false;
  }
  return true;
}

// `compare(K(x), K(y))`, LT or GT, K a function of one element.
bool IsStrictComparison(const HloInstruction& instr) {
  int parity = -1;
  return IsCompare(instr, {ComparisonDirection::kLt, ComparisonDirection::kGt}) &&
         SwappedKeys(*instr.operand(0), *instr.operand(1)) &&
         OneElement(*instr.operand(0), &parity);
}

// Whether `tie` says that the strict comparison `order` ties x and y.
bool TiesOf(const HloInstruction& tie, const HloInstruction& order) {
  if (!IsCompare(tie, {ComparisonDirection::kEq})) return false;
  const HloInstruction& a = *tie.operand(0);
  const HloInstruction& b = *tie.operand(1);
  const HloInstruction& kx = *order.operand(0);
  const HloInstruction& ky = *order.operand(1);
  // compare(K(x), K(y)), EQ, either way round.
  if ((&a == &kx && &b == &ky) || (&a == &ky && &b == &kx)) return true;
  // compare(S(x, y), S(y, x)), EQ: one of them is `order`, the other its mirror.
  const auto mirrored = [&](const HloInstruction& s, const HloInstruction& m) {
    return &s == &order && IsCompare(m, {order.attrs().comparison_direction}) &&
           m.attrs().comparison_type == order.attrs().comparison_type && m.operand(0) == &ky &&
           m.operand(1) == &kx;
  };
  return mirrored(a, b) || mirrored(b, a);
}

bool IsStrictWeakOrder(const HloInstruction& instr, int depth) {
  if (depth > 16) return false;
  if (IsStrictComparison(instr)) return true;
  if (instr.opcode() == HloOpcode::kSelect) {
    const HloInstruction& order = *instr.operand(2);
    return IsStrictComparison(order) && TiesOf(*instr.operand(0), order) &&
           IsStrictWeakOrder(*instr.operand(1), depth + 1);
  }
  if (instr.opcode() != HloOpcode::kOr || instr.operand_count() != 2) return false;
  for (int s = 0; s < 2; ++s) {
    const HloInstruction& order = *instr.operand(s);
    const HloInstruction& tie_break = *instr.operand(1 - s);
    if (!IsStrictComparison(order) || tie_break.opcode() != HloOpcode::kAnd) continue;
    for (int e = 0; e < 2; ++e) {
      if (TiesOf(*tie_break.operand(e), order) &&
          IsStrictWeakOrder(*tie_break.operand(1 - e), depth + 1)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

bool IsStrictWeakOrder(const HloComputation& computation) {
  const HloInstruction* root = computation.root_instruction();
  if (root == nullptr || computation.num_parameters() % 2 != 0) return false;
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    if (computation.parameter_instruction(i) == nullptr) return false;
  }
  return IsStrictWeakOrder(*root, 0);
}

}  // namespace hlo

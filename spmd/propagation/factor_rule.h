// Op semantics for sharding propagation, as data.
//
// A FactorRule says how an instruction's operand dimensions and result dimensions correspond.
// Each Factor is one logical dimension of the op: the dimension it is on every "side" (operands
// 0..n-1, then the result at side n), or -1 where the side does not have it. A factor's kind
// says what a tiling of it means:
//   kPassThrough      the factor is on the result too (elementwise dims, dot batch/free dims);
//                     a tiling moves freely between every side that has it.
//   kContracting      the factor is on operands only (dot contracting dims, reduced dims); a
//                     tiling moves between operands (both sides of a dot split alike) but never
//                     reaches the result.
//   kNeedReplication  the factor must stay whole (a sliced, padded or concatenated dim); no
//                     tiling crosses the op through it.
// A reshape has no factors: its operand and result are related by hlo::ReshapeSharding, which
// is symmetric (ReshapeRule).
//
// The same rule is read in both directions by ProjectSharding (factor_projection.h); the
// propagation pass never names an opcode. Example, `dot(f32[8,16] a, f32[16,4] b)` with
// lhs_contracting_dims={1}, rhs_contracting_dims={0}:
//   factor m: dims {0, -1, 0}  pass-through
//   factor n: dims {-1, 1, 1}  pass-through
//   factor k: dims {1, 0, -1}  contracting
#ifndef SPMD_PROPAGATION_FACTOR_RULE_H_
#define SPMD_PROPAGATION_FACTOR_RULE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"

namespace spmd {

struct Factor {
  enum class Kind { kPassThrough, kContracting, kNeedReplication };
  Kind kind = Kind::kPassThrough;
  // dims[side]: this factor's dimension on `side` (operands first, then the result), or -1.
  std::vector<int64_t> dims;
};

// A manual conversion with open dims (hlo/sharding/manual_conversion.h): the global side's
// sharding as written (`structure`: its tiles are the manual values), the local side's (its
// manual groups), the global shape, and which side is global (0: the operand, 1: the result).
struct ConversionSides {
  hlo::HloSharding structure;
  hlo::HloSharding groups;
  hlo::Shape global_shape;
  int64_t global_side = 0;
};

struct FactorRule {
  std::string name;  // The op family, for the explanation log ("elementwise", "dot", ...).
  int64_t num_operands = 0;
  std::vector<Factor> factors;
  // True for a reshape: no factors; operand 0 and the result map by hlo::ReshapeSharding.
  bool reshape = false;
  // Set for a manual conversion with open dims: no factors; its global and local sides map by
  // hlo::LocalFromGlobal and hlo::GlobalFromLocal.
  std::shared_ptr<const ConversionSides> conversion;
  // A reverse's dims: each side takes the other's tiles along them in reverse device order
  // (XLA's ReverseSharding), so that the reverse runs locally.
  std::vector<int64_t> mirrored;

  // The side index of the result.
  int64_t result_side() const { return num_operands; }
};

// Builds a rule one factor at a time; every factor must give one entry per side.
class FactorRuleBuilder {
 public:
  FactorRuleBuilder(std::string name, int64_t num_operands);
  // Adds a factor with `dims` (one per side, -1 for absent). REQUIRES: dims.size() == sides.
  FactorRuleBuilder& Add(Factor::Kind kind, std::vector<int64_t> dims);
  FactorRule Build() && { return std::move(rule_); }

 private:
  FactorRule rule_;
};

// The rule of `instr`, or nullopt when propagation does not look through it (tuple-shaped
// results, ops the partitioner computes whole, side-effecting ops, barriers). Tuple plumbing
// (tuple, get-tuple-element, while, call, conditional) is not a factor rule: those
// instructions alias values (value_classes.h).
std::optional<FactorRule> FactorRuleFor(const hlo::HloInstruction& instr);

// An op of n operands with a tuple result, for any one result leaf (the result side is that
// leaf). A sort (every operand and result leaf of one shape): each dim passes through except
// the sort dims, which stay whole. A reduce of n arrays of one shape and n scalar inits: the
// arrays' reduced dims are contracting, the others pass through. nullopt for other
// instructions. Propagation builds one edge per result leaf from it (RuleEdge::result_leaf).
std::optional<FactorRule> VariadicLeafRule(const hlo::HloInstruction& instr);

// A rule between values of different instructions (an instruction's and its callee's): side 0
// is leaf `from.second` of `from.first` (-1: the array itself), side 1 is `to`.
struct LinkedRule {
  FactorRule rule;
  std::pair<const hlo::HloInstruction*, int64_t> from, to;
};

// The rules that tie `instr`'s values to those of the computation it calls, beyond the values
// the classes join (value_classes.h): for a scan, each input to its body parameter (the
// slices: the scan dim the array's alone), each init to the carry it starts (the same dims),
// each body output to the stacked output, and each input's scan dim to each output's of its
// dims (the blocks a device holds). Empty for other instructions.
std::vector<LinkedRule> CalleeRules(const hlo::HloInstruction& instr);

// How much of an opcode's partitioning its factor rule is. The partitioner handles every
// opcode of each kind but kOwn with one handler, so a new op of such a kind registers only its
// rule here (with set_dimension_map or set_local):
//   kOwn           the partitioner has a handler of the op's own, or none.
//   kDimensionMap  one operand whose dimensions map to result dimensions (FactorDimMap), and
//                  attributes that do not depend on dimension sizes: each device runs the op as
//                  written on its shard of the operand in the result's tiling seen through the
//                  map (HandleDimensionMap): broadcast, transpose.
//   kLocal         every factor passes through or stays whole, and the attributes speak only
//                  of whole dims: each device runs the op as written on its shard of every
//                  operand in the result's tiling, whole dims made whole, seen through the rule
//                  (HandleLocalRule): fft, cholesky, triangular-solve.
enum class RuleKind { kOwn, kDimensionMap, kLocal };
RuleKind RuleKindOf(hlo::HloOpcode opcode);
std::vector<hlo::HloOpcode> OpcodesOfRuleKind(RuleKind kind);

// Whether the partitioner builds `value` in whatever tiling a user asks for instead of
// resharding it (a broadcast of a scalar), so no proposal costs a reshard of it.
bool RebuiltInAnyTiling(const hlo::HloInstruction& value);

}  // namespace spmd

#endif  // SPMD_PROPAGATION_FACTOR_RULE_H_

#include "hlo/analysis/uniform_values.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/ir/hlo_computation.h"

namespace hlo {
namespace {

// Pure ops that move or combine their operands' elements without reading anything else.
constexpr HloOpcode kDataMovement[] = {
    HloOpcode::kBroadcast,   HloOpcode::kReshape, HloOpcode::kTranspose, HloOpcode::kSlice,
    HloOpcode::kConcatenate, HloOpcode::kCopy,    HloOpcode::kBitcast,   HloOpcode::kTuple};

// Uniformity inside one computation, where the leaves of parameter 0 (a loop's state) are
// uniform as `state` says (nullptr: no parameter is).
class Uniformity {
 public:
  explicit Uniformity(const std::vector<bool>* state) : state_(state) {}

  bool Of(const HloInstruction* v) {
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    memo_[v] = false;  // Cycles are impossible in HLO; this only guards the recursion.
    const bool uniform = Compute(v);
    memo_[v] = uniform;
    return uniform;
  }

 private:
  bool Compute(const HloInstruction* v) {
    switch (v->opcode()) {
      case HloOpcode::kConstant:
      case HloOpcode::kIota:
        return true;
      case HloOpcode::kGetTupleElement: {
        const HloInstruction* tuple = v->operand(0);
        const int64_t index = v->tuple_index();
        if (tuple->opcode() == HloOpcode::kParameter && tuple->parameter_number() == 0 &&
            state_ != nullptr) {
          return index < static_cast<int64_t>(state_->size()) && (*state_)[index];
        }
        if (tuple->opcode() == HloOpcode::kTuple && index < tuple->operand_count()) {
          return Of(tuple->operand(index));
        }
        return false;
      }
      case HloOpcode::kCustomCall:
        return v->attrs().custom_call_target == "Sharding" && v->operand_count() == 1 &&
               Of(v->operand(0));
      default:
        break;
    }
    const bool pure = IsElementwise(*v) ||
                      std::find(std::begin(kDataMovement), std::end(kDataMovement), v->opcode()) !=
                          std::end(kDataMovement);
    if (!pure || !v->called_computations().empty()) return false;
    return std::all_of(v->operands().begin(), v->operands().end(),
                       [&](const HloInstruction* operand) { return Of(operand); });
  }

  const std::vector<bool>* state_;
  absl::flat_hash_map<const HloInstruction*, bool> memo_;
};

}  // namespace

bool LoopDecidesUniformly(const HloInstruction& loop) {
  const HloInstruction* init = loop.operand(0);
  const HloInstruction* root = loop.while_body()->root_instruction();
  if (!init->shape().IsTuple() || root->opcode() != HloOpcode::kTuple) return false;
  const int64_t n = static_cast<int64_t>(init->shape().tuple_shapes().size());
  std::vector<bool> state(n, false);
  Uniformity outside(nullptr);
  if (init->opcode() == HloOpcode::kTuple) {
    for (int64_t k = 0; k < n; ++k) state[k] = outside.Of(init->operand(k));
  }
  // Drop the elements the body does not keep uniform until none is dropped.
  for (bool changed = true; changed;) {
    changed = false;
    Uniformity body(&state);
    std::vector<bool> next = state;
    for (int64_t k = 0; k < n && k < root->operand_count(); ++k) {
      next[k] = state[k] && body.Of(root->operand(k));
    }
    changed = next != state;
    state = std::move(next);
  }
  Uniformity condition(&state);
  return condition.Of(loop.while_condition()->root_instruction());
}

}  // namespace hlo

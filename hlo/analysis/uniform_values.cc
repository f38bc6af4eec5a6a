#include "hlo/analysis/uniform_values.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/ir/hlo_computation.h"

namespace hlo {
namespace {

// Values alike everywhere by themselves.
constexpr HloOpcode kSources[] = {HloOpcode::kConstant, HloOpcode::kIota};

// Pure ops that move or combine their operands' elements without reading anything else.
constexpr HloOpcode kDataMovement[] = {
    HloOpcode::kBroadcast,   HloOpcode::kReshape, HloOpcode::kTranspose, HloOpcode::kSlice,
    HloOpcode::kConcatenate, HloOpcode::kCopy,    HloOpcode::kBitcast,   HloOpcode::kTuple};

template <size_t N>
bool Contains(const HloOpcode (&table)[N], HloOpcode opcode) {
  return std::find(std::begin(table), std::end(table), opcode) != std::end(table);
}

// Uniformity inside one computation, where the leaves of parameter 0 (a loop's state) are
// uniform as `state` says (nullptr: no parameter is).
class Uniformity {
 public:
  explicit Uniformity(const std::vector<bool>* state) : state_(state) {}

  bool Of(const HloInstruction* v) {
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    const bool uniform = Compute(v);  // HLO is acyclic: the recursion ends.
    memo_[v] = uniform;
    return uniform;
  }

 private:
  bool Compute(const HloInstruction* v) {
    if (Contains(kSources, v->opcode())) return true;
    if (v->opcode() == HloOpcode::kGetTupleElement) return ElementOf(v);
    // The Sharding marker is its operand's value; other custom-calls are opaque.
    if (v->opcode() == HloOpcode::kCustomCall) {
      return v->attrs().custom_call_target == "Sharding" && v->operand_count() == 1 &&
             Of(v->operand(0));
    }
    const bool pure = IsElementwise(*v) || Contains(kDataMovement, v->opcode());
    if (!pure || !v->called_computations().empty()) return false;
    return std::all_of(v->operands().begin(), v->operands().end(),
                       [&](const HloInstruction* operand) { return Of(operand); });
  }

  // Element `index` of a tuple: of the loop state (parameter 0), or of a tuple instruction.
  bool ElementOf(const HloInstruction* gte) {
    const HloInstruction* tuple = gte->operand(0);
    const int64_t index = gte->tuple_index();
    if (tuple->opcode() == HloOpcode::kParameter && tuple->parameter_number() == 0 &&
        state_ != nullptr) {
      return index < static_cast<int64_t>(state_->size()) && (*state_)[index];
    }
    return tuple->opcode() == HloOpcode::kTuple && index < tuple->operand_count() &&
           Of(tuple->operand(index));
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

// The fixed-point iteration of sharding propagation over value classes.
//
// Each RuleEdge is one instruction with a FactorRule, connecting the classes of its operands
// and its result. Visiting an edge proposes, for every side whose class is not held fixed, the
// projection (ProjectSharding) of every other side's sharding; ChooseSharding folds the
// proposals into the class's sharding. A class changes when its tile count grows, or once to
// a strictly cheaper sharding with as many tiles (a sideways move), so the iteration ends
// after at most log2(devices)+2 changes per class. Changed classes requeue the
// edges that touch them; a requeued edge projects only the sides that changed since its last
// visit (what it saw before was already merged into, or lost against, its neighbours).
#ifndef SPMD_PROPAGATION_PROPAGATION_ENGINE_H_
#define SPMD_PROPAGATION_PROPAGATION_ENGINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir/hlo_instruction.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/propagation/factor_projection.h"
#include "spmd/propagation/factor_rule.h"
#include "spmd/propagation/sharding_choice.h"
#include "spmd/propagation/user_shardings.h"
#include "spmd/reshard/reshard_planner.h"

namespace spmd {

// One class's sharding and how it was obtained.
struct ClassState {
  std::optional<hlo::HloSharding> sharding;
  Hold hold = Hold::kFree;
  std::vector<bool> open_dims;  // kRefinable: dims propagation may still split.
  // The global side of a manual conversion with open dims: every sharding it takes splits the
  // structure's tiles (the manual values), whatever its hold (ConversionSides).
  std::shared_ptr<const ConversionSides> refines;
  bool default_root = false;     // See UserSharding::default_root.
  bool loop_carried = false;     // A while loop's state (in the class of a while's leaf).
  int64_t sideways_moves = 0;    // Changes to a sharding with as many tiles (ChooseSharding).
  // Provenance: the user shardings it derives from; the instruction whose rule produced it and
  // the values it came from through that rule (empty for a user sharding); the rule, the
  // direction and the choice made.
  std::vector<const hlo::HloInstruction*> annotations;
  const hlo::HloInstruction* via = nullptr;
  std::vector<const hlo::HloInstruction*> from;
  std::vector<int64_t> from_classes;  // The classes of the values it came from.
  std::string how;
};

struct RuleEdge {
  const hlo::HloInstruction* instr = nullptr;
  FactorRule rule;
  std::vector<int64_t> classes;  // Per side (operands, then the result).
  // For an instruction with a tuple result whose leaves each relate to the operands by `rule`
  // (a variadic sort): the leaf the result side is; -1 when the result is an array.
  int64_t result_leaf = -1;
  // Set for an edge between values of different instructions (a scan's input and its body's
  // parameter): side s is leaf sides[s].second (-1: the array itself) of sides[s].first,
  // instead of `instr`'s operand s or its result. `instr` names the edge in provenance.
  std::vector<std::pair<const hlo::HloInstruction*, int64_t>> sides;
  // Per side: built in any tiling a user asks for (RebuiltInAnyTiling), so costs no reshard.
  // Set by PropagationEngine.
  std::vector<bool> rebuilt;
  // Per side: how many dots read that operand alike (hlo::CountDotsReadingAlike), this one
  // included; the partitioner reshards it once for them all, so each is charged its share.
  // Set by PropagationEngine.
  std::vector<int64_t> sharers;
};

class PropagationEngine {
 public:
  // REQUIRES: every class index in `edges` is below `states.size()`. Fills each edge's
  // `rebuilt`.
  PropagationEngine(std::vector<ClassState> states, std::vector<RuleEdge> edges,
                    int64_t num_devices, ReshardPlanner* planner);

  // Whether ClassState::how is written (for the --explain provenance lines); off, the
  // engine builds no description strings.
  void set_keep_provenance(bool keep) { keep_provenance_ = keep; }
  // Iterates to the fixed point.
  void Run();
  const std::vector<ClassState>& states() const { return states_; }
  // The states, moved out (the engine is spent).
  std::vector<ClassState> TakeStates() { return std::move(states_); }
  const std::vector<RuleEdge>& edges() const { return edges_; }
  int64_t visits() const { return visits_; }

 private:
  void Visit(int64_t edge);
  // `seen`: the edge's per-side versions at its last visit.
  bool UpdateSide(const RuleEdge& edge, int64_t side, const std::vector<int64_t>& seen);
  std::vector<Proposal> Proposals(const RuleEdge& edge, int64_t side,
                                  const std::vector<int64_t>& seen) const;
  // The estimated reshard cost, in µs, for the other sides of `edge` if side `side` took
  // `candidate`; sides whose sharding was derived from class `followed` are skipped.
  double Cost(const RuleEdge& edge, int64_t side, const hlo::HloSharding& candidate,
              int64_t followed = -1);
  // What `candidate`, proposed at side `proposing_side` of `proposing`, costs the neighbourhood
  // of that side's class: Cost over every edge side in the class, skipping neighbours whose
  // sharding merely follows the class (they would follow a change too), so that a class does
  // not trade a layout its independent neighbours share for one that only the proposing edge
  // prefers. A class in more than kMaxClassCostEdges edges is costed at `proposing` alone.
  double ClassCost(const RuleEdge& proposing, int64_t proposing_side,
                   const hlo::HloSharding& candidate);
  void Record(const RuleEdge& edge, int64_t side, const Choice& choice);
  void Enqueue(int64_t edge);

  std::vector<ClassState> states_;
  std::vector<RuleEdge> edges_;
  std::vector<std::vector<int64_t>> edges_of_class_;
  // Every change of a class bumps its version; an edge remembers, per side, the version it last
  // proposed from, so a visit only projects shardings it has not seen yet.
  std::vector<int64_t> class_version_;
  std::vector<std::vector<int64_t>> seen_version_;
  std::vector<int64_t> queue_;
  std::vector<bool> queued_;
  int64_t num_devices_;
  ReshardPlanner* planner_;
  int64_t visits_ = 0;
  bool keep_provenance_ = true;
  // Proposals and costs project the same shardings through equal maps many times.
  mutable ProjectionCache projections_;
};

// The shape of side `side` of `edge`'s instruction (an operand's, or the result's).
const hlo::Shape& SideShape(const RuleEdge& edge, int64_t side);
// The instruction holding side `side` of `edge` (RuleEdge::sides, else its operand or itself).
const hlo::HloInstruction* SideValue(const RuleEdge& edge, int64_t side);

}  // namespace spmd

#endif  // SPMD_PROPAGATION_PROPAGATION_ENGINE_H_

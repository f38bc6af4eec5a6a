// The worklist holds edge indices, initially every edge in module order (callees first, then
// instructions in order), so one sweep already carries shardings forward; later visits carry
// them backward and sideways. Within a visit the result side is updated first (forward), then
// the operands (backward). Costs for conflicting proposals come from the reshard planner: the
// µs to bring every other side of the instruction to the layout the candidate implies (an
// operand several dots read alike is charged its share, as the dot handler charges it), with
// full rematerializations penalized so that a cheaper compatible candidate always wins, and
// sides the partitioner rebuilds in any tiling (broadcasts of scalars) free.
#include "spmd/propagation/propagation_engine.h"

#include <algorithm>

#include "hlo/analysis/dot_readers.h"
#include "hlo/sharding/manual_conversion.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/propagation/factor_projection.h"

namespace spmd {
namespace {

using hlo::HloSharding;

constexpr double kFullRematerializationPenaltyUs = 1e6;
// How often a class may trade its sharding for a cheaper one with as many tiles. Once keeps
// the fixed point finite (a class cannot swing back and forth) and lets a value first reached
// from one side take the layout its other sides make cheaper.
constexpr int64_t kMaxSidewaysMoves = 1;
// Operand-to-operand proposals are skipped for wider ops (e.g. long concatenations) to keep
// visits linear in the operand count; their operands still get the result's sharding.
constexpr int64_t kMaxSidewaysOperands = 4;

// A rough cost when the planner cannot plan: every device receives the whole array.
double BytesCostUs(const hlo::Shape& shape) {
  return 1e-3 * static_cast<double>(shape.byte_size());
}

bool IsManual(const HloSharding& s) { return s.kind() == HloSharding::Kind::kManual; }

// A class taking part in more instructions than this (a value read by a thousand ops) is costed
// on the proposing instruction alone, so that a conflict costs a bounded number of plans.
constexpr int64_t kMaxClassCostEdges = 64;

// The reshard planner searches over device states; past this many devices its estimate is
// replaced by a bytes-moved one so that propagation stays fast on huge meshes.
constexpr int64_t kMaxPlannedDevices = 256;

// Whether `state` may trade its sharding for a cheaper one with as many tiles: only an
// inferred sharding, and only kMaxSidewaysMoves times; a user's (held, a constraint's specified
// dims, or a starting point the flags let propagation refine) only gains tiles.
bool MayMoveSideways(const ClassState& state) {
  return state.hold == Hold::kFree && state.via != nullptr &&
         state.sideways_moves < kMaxSidewaysMoves;
}

// Counts `choice` against `state`'s sideways moves when it has no more tiles than the sharding
// it replaces, and says in its reason what it replaced.
void NoteSidewaysMove(ClassState& state, Choice& choice, bool describe) {
  if (!state.sharding || DataTiles(choice.sharding) != DataTiles(*state.sharding)) return;
  ++state.sideways_moves;
  if (!describe) return;
  choice.reason = hlo::StrCat(choice.reason, "; moved sideways from ", state.sharding->ToString(),
                              " (", state.how, ")");
}

void AddUnique(std::vector<const hlo::HloInstruction*>& v, const hlo::HloInstruction* x) {
  if (x != nullptr && std::find(v.begin(), v.end(), x) == v.end() && v.size() < 4) v.push_back(x);
}

// Per side of `edge`: whether the partitioner builds that value in any tiling.
std::vector<bool> RebuiltSides(const RuleEdge& edge) {
  std::vector<bool> rebuilt;
  for (int64_t side = 0; side <= edge.rule.result_side(); ++side) {
    rebuilt.push_back(RebuiltInAnyTiling(*SideValue(edge, side)));
  }
  return rebuilt;
}

// Per side of `edge`: how many dots read that operand alike (1 for the result side).
std::vector<int64_t> SharerCounts(const RuleEdge& edge) {
  std::vector<int64_t> sharers(edge.rule.result_side() + 1, 1);
  for (int64_t side = 0; edge.sides.empty() && side < edge.rule.result_side(); ++side) {
    sharers[side] = hlo::CountDotsReadingAlike(*edge.instr, side,
                                               [](const hlo::HloInstruction&) { return true; });
  }
  return sharers;
}

}  // namespace

const hlo::HloInstruction* SideValue(const RuleEdge& edge, int64_t side) {
  if (!edge.sides.empty()) return edge.sides[side].first;
  return side == edge.rule.result_side() ? edge.instr : edge.instr->operand(side);
}

const hlo::Shape& SideShape(const RuleEdge& edge, int64_t side) {
  if (!edge.sides.empty()) {
    const auto& [value, leaf] = edge.sides[side];
    return leaf < 0 ? value->shape() : value->shape().tuple_shapes(leaf);
  }
  if (side != edge.rule.result_side()) return edge.instr->operand(side)->shape();
  return edge.result_leaf < 0 ? edge.instr->shape()
                              : edge.instr->shape().tuple_shapes(edge.result_leaf);
}

PropagationEngine::PropagationEngine(std::vector<ClassState> states, std::vector<RuleEdge> edges,
                                     int64_t num_devices, ReshardPlanner* planner)
    : states_(std::move(states)),
      edges_(std::move(edges)),
      edges_of_class_(states_.size()),
      queued_(edges_.size(), false),
      num_devices_(num_devices),
      planner_(planner) {
  class_version_.assign(states_.size(), 0);
  seen_version_.resize(edges_.size());
  for (int64_t e = 0; e < static_cast<int64_t>(edges_.size()); ++e) {
    seen_version_[e].assign(edges_[e].classes.size(), -1);
    edges_[e].rebuilt = RebuiltSides(edges_[e]);
    edges_[e].sharers = SharerCounts(edges_[e]);
    for (int64_t cls : edges_[e].classes) {
      std::vector<int64_t>& list = edges_of_class_[cls];
      if (list.empty() || list.back() != e) list.push_back(e);
    }
    if (const std::shared_ptr<const ConversionSides>& sides = edges_[e].rule.conversion) {
      states_[edges_[e].classes[sides->global_side]].refines = sides;
    }
  }
}

void PropagationEngine::Enqueue(int64_t edge) {
  if (queued_[edge]) return;
  queued_[edge] = true;
  queue_.push_back(edge);
}

void PropagationEngine::Run() {
  for (int64_t e = 0; e < static_cast<int64_t>(edges_.size()); ++e) Enqueue(e);
  // FIFO over a growing vector; `head` only moves forward.
  for (size_t head = 0; head < queue_.size(); ++head) {
    const int64_t e = queue_[head];
    queued_[e] = false;
    Visit(e);
    if (head > (1 << 20) && head * 2 > queue_.size()) {
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<int64_t>(head) + 1);
      head = static_cast<size_t>(-1);
    }
  }
  queue_.clear();
}

void PropagationEngine::Visit(int64_t e) {
  ++visits_;
  const RuleEdge& edge = edges_[e];
  const int64_t result = edge.rule.result_side();
  std::vector<int64_t> changed;
  // What this visit sees: the versions before it. A side it changes is proposed to the sides
  // updated before it (the result) on the edge's next visit.
  std::vector<int64_t> seen_now(edge.classes.size());
  for (size_t side = 0; side < edge.classes.size(); ++side) {
    seen_now[side] = class_version_[edge.classes[side]];
  }
  const std::vector<int64_t>& seen = seen_version_[e];
  if (UpdateSide(edge, result, seen)) changed.push_back(edge.classes[result]);
  for (int64_t side = 0; side < result; ++side) {
    if (UpdateSide(edge, side, seen)) changed.push_back(edge.classes[side]);
  }
  seen_version_[e] = std::move(seen_now);
  for (int64_t cls : changed) {
    for (int64_t other : edges_of_class_[cls]) Enqueue(other);
  }
}

namespace {

// What a kRefinable `target` (a constraint with unspecified_dims) may take of `proposed`: its
// open dims' splits, merged into the splits the constraint gives its other dims. Those stay as
// annotated whatever the proposal's tile count: a split that does not fit beside them (other
// devices than the constraint's replicas) fails.
absl::StatusOr<HloSharding> WithinConstraint(const ClassState& target,
                                             const HloSharding& proposed) {
  std::vector<int64_t> open, closed;
  for (int64_t d = 0; d < static_cast<int64_t>(target.open_dims.size()); ++d) {
    (target.open_dims[d] ? open : closed).push_back(d);
  }
  ASSIGN_OR_RETURN(HloSharding splits, hlo::PartiallyReplicate(proposed, closed));
  if (closed.empty() || !target.sharding.has_value() || !target.sharding->IsTiled() ||
      target.sharding->HasManualSubgroup()) {
    return splits;
  }
  ASSIGN_OR_RETURN(HloSharding kept, hlo::PartiallyReplicate(*target.sharding, open));
  return hlo::MergeShardings(kept, splits);
}

}  // namespace

std::vector<Proposal> PropagationEngine::Proposals(const RuleEdge& edge, int64_t side,
                                                   const std::vector<int64_t>& seen) const {
  std::vector<Proposal> out;
  const int64_t result = edge.rule.result_side();
  const ClassState& target = states_[edge.classes[side]];
  // An elementwise op whose result is held replicated takes each operand whole on its own:
  // aligning one operand with another gains nothing there and may move one of them twice.
  const ClassState& produced = states_[edge.classes[result]];
  const bool whole_elementwise = edge.instr != nullptr && hlo::IsElementwise(*edge.instr) &&
                                 produced.hold == Hold::kFixed && produced.sharding.has_value() &&
                                 produced.sharding->IsReplicated();
  for (int64_t from = 0; from <= result; ++from) {
    if (from == side || edge.classes[from] == edge.classes[side]) continue;
    if (side != result && from != result && (result > kMaxSidewaysOperands || whole_elementwise)) {
      continue;
    }
    if (seen[from] == class_version_[edge.classes[from]]) continue;
    const std::optional<HloSharding>& s = states_[edge.classes[from]].sharding;
    if (!s || !(s->IsTiled() || IsManual(*s))) continue;
    absl::StatusOr<HloSharding> p =
        projections_.Project(edge.rule, from, side, *s, SideShape(edge, from),
                             SideShape(edge, side));
    if (!p.ok()) continue;
    if (IsManual(*p)) return {Proposal{*std::move(p), from}};
    if (!p->IsTiled()) continue;
    if (target.hold == Hold::kRefinable) {
      p = WithinConstraint(target, *p);
      if (!p.ok() || !p->IsTiled()) continue;
    }
    if (target.refines != nullptr) {
      const ConversionSides& sides = *target.refines;
      // A split of the structure's tiles (a dim the manual axes split split further by the
      // free axes too) is taken as it is; another split merges beside the structure's.
      if (!hlo::LocalFromGlobal(*p, sides.structure, sides.groups, sides.global_shape).ok()) {
        p = hlo::MergeShardings(sides.structure, *p);
      }
      if (!p.ok() || !p->IsTiled()) continue;
    }
    if (!p->Validate(SideShape(edge, side), num_devices_).ok()) continue;
    out.push_back(Proposal{*std::move(p), from});
  }
  return out;
}

bool PropagationEngine::UpdateSide(const RuleEdge& edge, int64_t side,
                                   const std::vector<int64_t>& seen) {
  ClassState& target = states_[edge.classes[side]];
  if (target.hold == Hold::kFixed && !target.default_root) return false;
  if (target.sharding && IsManual(*target.sharding)) return false;
  if (!SideShape(edge, side).IsArray()) return false;
  std::vector<Proposal> proposals = Proposals(edge, side, seen);
  if (target.hold == Hold::kFixed) {
    // A default-replicated root: a manual region claims it outright. A manual value has no
    // more data tiles than the replicated default, so ChooseSharding would keep the default
    // (and each device's own value would leave as if it were everyone's).
    const auto manual = std::find_if(proposals.begin(), proposals.end(), [](const Proposal& p) {
      return IsManual(p.sharding) || p.sharding.HasManualSubgroup();
    });
    if (manual != proposals.end()) {
      Record(
          edge, side,
          Choice{
              manual->sharding, {manual->source}, "a manual region claims the unannotated root"});
      target.default_root = false;
      return true;
    }
    // A loop's state that the root returns is freed by other proposals: held replicated, the
    // loop would gather it on every iteration. The root itself stays unannotated (replicated:
    // the partitioner gathers the state once, after the loop, as XLA's propagation has it).
    // Other values joined to the root stay replicated, so that their handlers choose how to
    // produce a replicated result (e.g. a convolution computed split and gathered, or not).
    if (proposals.empty() || !target.loop_carried) return false;
    target.hold = Hold::kFree;
    target.default_root = false;
  }
  if (proposals.empty()) return false;
  std::optional<Choice> choice = ChooseSharding(
      target.sharding, std::move(proposals),
      [&](const HloSharding& candidate) { return ClassCost(edge, side, candidate); },
      MayMoveSideways(target));
  if (!choice) return false;
  NoteSidewaysMove(target, *choice, keep_provenance_);
  Record(edge, side, *choice);
  return true;
}

double PropagationEngine::ClassCost(const RuleEdge& proposing, int64_t proposing_side,
                                    const HloSharding& candidate) {
  const int64_t cls = proposing.classes[proposing_side];
  if (static_cast<int64_t>(edges_of_class_[cls].size()) > kMaxClassCostEdges) {
    return Cost(proposing, proposing_side, candidate);
  }
  double total = 0;
  for (int64_t e : edges_of_class_[cls]) {
    const RuleEdge& edge = edges_[e];
    for (int64_t side = 0; side < static_cast<int64_t>(edge.classes.size()); ++side) {
      if (edge.classes[side] == cls && SideShape(edge, side).IsArray()) {
        total += Cost(edge, side, candidate, cls);
      }
    }
  }
  return total;
}

double PropagationEngine::Cost(const RuleEdge& edge, int64_t side, const HloSharding& candidate,
                               int64_t followed) {
  double total = 0;
  const hlo::Shape& shape = SideShape(edge, side);
  for (int64_t other = 0; other <= edge.rule.result_side(); ++other) {
    // A value the partitioner rebuilds in any tiling costs nothing to bring to `wanted`.
    // A side of the candidate's own class takes the candidate too.
    if (other == side || edge.rebuilt[other] || edge.classes[other] == edge.classes[side]) {
      continue;
    }
    const ClassState& neighbour = states_[edge.classes[other]];
    if (followed >= 0 && MayMoveSideways(neighbour) &&
        std::find(neighbour.from_classes.begin(), neighbour.from_classes.end(), followed) !=
            neighbour.from_classes.end()) {
      continue;
    }
    const std::optional<HloSharding>& held = neighbour.sharding;
    const hlo::Shape& other_shape = SideShape(edge, other);
    if (!held || !other_shape.IsArray()) continue;
    absl::StatusOr<HloSharding> wanted =
        projections_.Project(edge.rule, side, other, candidate, shape, other_shape);
    if (!wanted.ok()) {
      total += BytesCostUs(other_shape);
      continue;
    }
    if (*wanted == *held) continue;
    if (num_devices_ > kMaxPlannedDevices) {
      total += BytesCostUs(other_shape) / static_cast<double>(DataTiles(*wanted)) /
               static_cast<double>(edge.sharers[other]);
      continue;
    }
    absl::StatusOr<std::shared_ptr<const ReshardPlan>> plan =
        planner_->Plan(other_shape, *held, *wanted, num_devices_);
    if (!plan.ok()) {
      total += BytesCostUs(other_shape);
      continue;
    }
    total += (*plan)->cost_us / static_cast<double>(edge.sharers[other]);
    if ((*plan)->full_rematerialization) total += kFullRematerializationPenaltyUs;
  }
  return total;
}

void PropagationEngine::Record(const RuleEdge& edge, int64_t side, const Choice& choice) {
  ClassState& target = states_[edge.classes[side]];
  const int64_t result = edge.rule.result_side();
  ++class_version_[edge.classes[side]];
  target.sharding = choice.sharding;
  target.via = edge.instr;
  target.from.clear();
  target.from_classes.clear();
  std::string directions;
  for (int64_t source : choice.sources) {
    AddUnique(target.from, SideValue(edge, source));
    target.from_classes.push_back(edge.classes[source]);
    for (const hlo::HloInstruction* a : states_[edge.classes[source]].annotations) {
      AddUnique(target.annotations, a);
    }
    if (!keep_provenance_) continue;
    if (!directions.empty()) directions += ", ";
    directions += source == result ? "result" : "operand " + std::to_string(source);
  }
  if (!keep_provenance_) return;
  directions += " -> ";
  directions += side == result ? "result" : "operand " + std::to_string(side);
  target.how = edge.rule.name + " " + directions + "; " + choice.reason;
}

}  // namespace spmd

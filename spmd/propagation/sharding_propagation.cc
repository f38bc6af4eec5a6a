// The pass in five steps: the call graph flattened, each call site given its own callee
// (hlo/transforms/flatten_call_graph.h); value classes (value_classes.h), user shardings as the
// classes' starting states (user_shardings.h) with manual regions closed over every op
// (manual_regions.h), one RuleEdge per instruction with a FactorRule, then the engine's fixed
// point (propagation_engine.h). Finally every unannotated instruction that can
// hold a sharding takes its classes' shardings (a tuple sharding leaf by leaf, {replicated}
// where a leaf has none), checked with HloSharding::Validate, and the log records each
// instruction's sharding with its provenance. Shard barriers are removed at the end.
#include "spmd/propagation/sharding_propagation.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "hlo/ir/custom_call_config.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/sharding/implied_sharding.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "hlo/transforms/call_inliner.h"
#include "spmd/propagation/manual_regions.h"
#include "spmd/propagation/propagation_engine.h"
#include "spmd/propagation/shard_barriers.h"
#include "spmd/propagation/value_classes.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;

std::vector<ClassState> InitialStates(const hlo::HloModule& module, const ValueClasses& classes) {
  std::vector<std::optional<UserSharding>> user = CollectUserShardings(module, classes);
  std::vector<ClassState> states(classes.num_classes());
  for (size_t c = 0; c < states.size(); ++c) {
    if (!user[c]) continue;
    states[c].sharding = user[c]->sharding.WithoutMetadata();
    states[c].hold = user[c]->hold;
    states[c].open_dims = user[c]->open_dims;
    states[c].default_root = user[c]->default_root;
    states[c].annotations = {user[c]->source};
    states[c].how = "annotation";
  }
  for (const auto& comp : module.computations()) {
    for (const auto& instr : comp->instructions()) {
      if (instr->opcode() != HloOpcode::kWhile) continue;
      for (int64_t k = 0; k < instr->shape().leaf_count(); ++k) {
        states[classes.ClassOf(instr.get(), k)].loop_carried = true;
      }
    }
  }
  return states;
}

// One RuleEdge per instruction with a rule whose sides all have classes.
std::vector<RuleEdge> BuildEdges(const hlo::HloModule& module, const ValueClasses& classes) {
  std::vector<RuleEdge> edges;
  for (const hlo::HloComputation* comp : module.MakeComputationPostOrder()) {
    for (const auto& instr : comp->instructions()) {
      // Rules between the instruction's values and its callee's (a scan's slices).
      for (LinkedRule& linked : CalleeRules(*instr)) {
        RuleEdge edge{instr.get(), std::move(linked.rule), {}};
        edge.sides = {linked.from, linked.to};
        edge.classes = {
            classes.ClassOf(linked.from.first, std::max<int64_t>(linked.from.second, 0)),
            classes.ClassOf(linked.to.first, std::max<int64_t>(linked.to.second, 0))};
        if (edge.classes[0] >= 0 && edge.classes[1] >= 0) edges.push_back(std::move(edge));
      }
      std::optional<FactorRule> rule = FactorRuleFor(*instr);
      // A variadic sort or reduce: one edge per result leaf, each with every operand.
      std::optional<FactorRule> per_leaf = rule ? std::nullopt : VariadicLeafRule(*instr);
      if (!rule && !per_leaf) continue;
      const int64_t leaves = rule ? 1 : instr->shape().tuple_shapes_size();
      for (int64_t leaf = 0; leaf < leaves; ++leaf) {
        RuleEdge edge{instr.get(), rule ? *rule : *per_leaf, {}};
        edge.result_leaf = rule ? -1 : leaf;
        for (const HloInstruction* op : instr->operands()) {
          edge.classes.push_back(classes.ClassOf(op, 0));
        }
        edge.classes.push_back(classes.ClassOf(instr.get(), rule ? 0 : leaf));
        bool complete = true;
        for (int64_t c : edge.classes) complete &= c >= 0;
        if (complete) edges.push_back(std::move(edge));
      }
    }
  }
  return edges;
}

// Whether propagation may give `instr` a sharding: data-flow ops the rules or value classes
// describe. Side-effecting ops, collectives and custom-calls keep what they have.
bool CanAssign(const HloInstruction& instr, bool has_rule) {
  // Values the classes join (the header's table), parameters, constants and iotas.
  static constexpr HloOpcode kAlwaysAssignable[] = {HloOpcode::kParameter, HloOpcode::kConstant,
                                                    HloOpcode::kIota};
  if (instr.opcode() == HloOpcode::kCustomCall) return false;
  return has_rule || JoinsResultsToOperands(instr.opcode()) ||
         std::find(std::begin(kAlwaysAssignable), std::end(kAlwaysAssignable), instr.opcode()) !=
             std::end(kAlwaysAssignable);
}

bool HasUnknownLeaf(const HloInstruction& instr) {
  if (!instr.has_sharding()) return false;
  const HloSharding& s = instr.sharding();
  if (!s.IsTuple()) return s.IsUnknown();
  for (const HloSharding& leaf : s.tuple_elements()) {
    if (leaf.IsUnknown()) return true;
  }
  return false;
}

// Whether propagation may replace what `instr` holds: no sharding, an {unknown} one, or a
// constraint with unspecified_dims; entry parameters and the root change only where the user
// allowed it.
bool MayChange(const hlo::HloModule& module, const HloInstruction& instr) {
  const bool refinable = instr.opcode() == HloOpcode::kCustomCall &&
                         hlo::ParseUnspecifiedDims(instr.attrs().backend_config).has_value();
  const bool open = !instr.has_sharding() || HasUnknownLeaf(instr) || refinable;
  if (instr.parent() != module.entry_computation()) return open;
  const hlo::HloModuleConfig& config = module.config();
  if (instr.parent()->root_instruction() == &instr) {
    // Leaves whose flag is false keep their annotation through their held classes.
    const std::vector<bool>& flags = config.allow_spmd_sharding_propagation_to_output;
    return std::find(flags.begin(), flags.end(), true) != flags.end() || HasUnknownLeaf(instr);
  }
  if (instr.opcode() == HloOpcode::kParameter) {
    return PropagationAllowed(config.allow_spmd_sharding_propagation_to_parameters,
                              instr.parameter_number()) ||
           HasUnknownLeaf(instr);
  }
  return open;
}

bool IsCollective(const HloInstruction& instr) {
  return hlo::GetHloOpcodeFamily(instr.opcode()) == hlo::HloOpcodeFamily::kCollective;
}

// Whether `s` (or a leaf of it) is manual, wholly or in subgroups.
bool InManualRegion(const HloSharding& s) {
  for (const HloSharding& leaf : s.Leaves()) {
    if (leaf.IsManual() || leaf.HasManualSubgroup()) return true;
  }
  return false;
}

// Whether `instr` is an unannotated entry root whose value a manual region claimed (a leaf's
// class is manual or has manual subgroups; UserSharding::default_root): it must then
// say so, as a manual value cannot be replicated without SPMDShardToFullShape.
bool ClaimedByManualRegion(const hlo::HloModule& module, const HloInstruction& instr,
                           const ValueClasses& classes, const std::vector<ClassState>& states) {
  if (instr.has_sharding() || instr.parent() != module.entry_computation() ||
      instr.parent()->root_instruction() != &instr) {
    return false;
  }
  for (int64_t k = 0; k < instr.shape().leaf_count(); ++k) {
    const std::optional<HloSharding>& s = states[classes.ClassOf(&instr, k)].sharding;
    if (s && (s->IsManual() || s->HasManualSubgroup())) return true;
  }
  return false;
}

// The sharding `instr` should hold after propagation, or nullopt to leave it as it is: its
// classes' shardings (values joined by aliasing may carry any kind, e.g. {manual}), with
// {replicated} for leaves that have none. {unknown} is always resolved.
std::optional<HloSharding> InferredSharding(const HloInstruction& instr,
                                            const ValueClasses& classes,
                                            const std::vector<ClassState>& states,
                                            int64_t num_devices) {
  const hlo::Shape& shape = instr.shape();
  const int64_t leaves = shape.leaf_count();
  std::vector<HloSharding> leaf_shardings;
  bool informative = HasUnknownLeaf(instr);
  for (int64_t k = 0; k < leaves; ++k) {
    const std::optional<HloSharding>& s = states[classes.ClassOf(&instr, k)].sharding;
    const bool usable = s && !s->IsUnknown() && !s->IsTuple();
    leaf_shardings.push_back(usable ? s->WithShardGroup({}) : HloSharding::Replicate());
    informative |= usable && !s->IsReplicated();
  }
  if (!informative) return std::nullopt;
  absl::StatusOr<HloSharding> result = hlo::FromLeaves(shape, std::move(leaf_shardings));
  if (!result.ok() || !result->Validate(shape, num_devices).ok()) return std::nullopt;
  return *std::move(result);
}

// A conditional whose branch index is in manual subgroups lets each group take its own branch,
// so its results differ between groups: leaves the fixed point left replicated (or open)
// become whole within each group, as the partitioner will compute them.
void MakeBranchResultsPerGroup(const hlo::HloModule& module, const ValueClasses& classes,
                               std::vector<ClassState>& states) {
  for (const hlo::HloComputation* comp : module.MakeComputationPostOrder()) {
    for (const auto& instr : comp->instructions()) {
      if (instr->opcode() != HloOpcode::kConditional || instr->operand_count() == 0) continue;
      const std::optional<HloSharding>& selector =
          states[classes.ClassOf(instr->operand(0), 0)].sharding;
      if (!selector || !selector->HasManualSubgroup()) continue;
      const std::vector<hlo::Shape> leaves = instr->shape().leaf_shapes();
      for (size_t k = 0; k < leaves.size(); ++k) {
        ClassState& state = states[classes.ClassOf(instr.get(), static_cast<int64_t>(k))];
        if (state.sharding && !state.sharding->IsReplicated()) continue;
        const int64_t rank = leaves[k].IsArray() ? leaves[k].rank() : 0;
        absl::StatusOr<HloSharding> whole = hlo::WholeInManualSubgroups(*selector, rank);
        if (!whole.ok()) continue;
        state.sharding = *std::move(whole);
        state.via = instr.get();
        state.from = {instr->operand(0)};
        state.how = "per manual group (the branch index is in manual subgroups)";
      }
    }
  }
}

std::string ProvenanceLine(const HloInstruction& instr, const ClassState* state) {
  std::string line = hlo::StrCat("%", instr.name(), ": ", instr.sharding().ToString(), " <- ");
  if (state == nullptr || state->via == nullptr) return line + "annotation";
  for (size_t i = 0; i < state->from.size(); ++i) {
    hlo::StrAppend(&line, i ? ", %" : "%", state->from[i]->name());
  }
  hlo::StrAppend(&line, " via %", state->via->name(), " (", state->how, ")");
  for (size_t i = 0; i < state->annotations.size(); ++i) {
    hlo::StrAppend(&line, i ? ", %" : "; from annotation on %", state->annotations[i]->name());
  }
  return line;
}

}  // namespace

absl::StatusOr<bool> ShardingPropagation::RunImpl(hlo::HloModule* module) {
  log_ = PropagationLog();
  const int64_t num_devices = module->config().num_partitions;
  if (module->entry_computation() == nullptr) {
    return absl::InvalidArgumentError("module has no entry computation");
  }
  log_.clones = hlo::FlattenCallGraph(*module);
  ASSIGN_OR_RETURN(log_.inlined_calls, hlo::InlineCalls(*module));
  RETURN_IF_ERROR(CheckWhileDeviceAssignments(*module));
  const ValueClasses classes(*module);
  std::vector<ClassState> initial = InitialStates(*module, classes);
  const absl::flat_hash_set<const HloInstruction*> manual =
      ClaimManualRegions(*module, classes, initial);
  ReshardPlanner planner;
  PropagationEngine engine(std::move(initial), BuildEdges(*module, classes), num_devices, &planner);
  engine.set_keep_provenance(keep_lines_);
  engine.Run();
  log_.visits = engine.visits();
  absl::flat_hash_set<const HloInstruction*> with_rule;
  for (const RuleEdge& edge : engine.edges()) with_rule.insert(edge.instr);
  std::vector<ClassState> states = engine.TakeStates();
  MakeBranchResultsPerGroup(*module, classes, states);
  for (hlo::HloComputation* comp : module->MakeComputationPostOrder()) {
    for (const auto& instr : comp->instructions()) {
      const bool keep = !MayChange(*module, *instr) && !ClaimedByManualRegion(*module, *instr,
                                                                             classes, states);
      const ClassState* state = nullptr;
      if (!keep && (CanAssign(*instr, with_rule.contains(instr.get())) || HasUnknownLeaf(*instr) ||
                    instr->opcode() == HloOpcode::kCustomCall || manual.contains(instr.get()))) {
        std::optional<HloSharding> s = InferredSharding(*instr, classes, states, num_devices);
        // A collective of the input program takes a sharding only in a manual region, where
        // the partitioner runs it per group (its rule carries shardings through it anywhere).
        if (s && IsCollective(*instr) && !InManualRegion(*s)) s.reset();
        if (s && (!instr->has_sharding() || *s != instr->sharding())) {
          instr->set_sharding(*std::move(s));
          ++log_.assigned;
          // A tuple's line tells how its first leaf got its sharding.
          const int64_t first = classes.ClassOf(instr.get(), 0);
          if (first >= 0) state = &states[first];
        }
      }
      if (keep_lines_ && instr->has_sharding()) {
        log_.lines.push_back(ProvenanceLine(*instr, keep ? nullptr : state));
      }
    }
  }
  ASSIGN_OR_RETURN(const int64_t barriers, RemoveShardBarriers(module));
  return log_.assigned > 0 || barriers > 0 || !log_.clones.computations.empty() ||
         log_.inlined_calls > 0;
}

}  // namespace spmd

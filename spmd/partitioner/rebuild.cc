#include "spmd/partitioner/rebuild.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "hlo/transforms/common_subexpression_elimination.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

// Ops deeper than this below the wanted value are not rebuilt (their work repeats per user).
constexpr int kMaxDepth = 4;

// How an instruction is rebuilt in a wanted layout: the layouts its operands are taken in, and
// the one it is computed in (the wanted one, or whole, then sliced locally).
struct Rule {
  std::vector<HloSharding> operands;
  HloSharding computed = HloSharding::Replicate();
  bool forwards = false;  // The value is its one operand's (a marking custom-call).
};

// Replicated, or tiled with replicated or manual subgroups only (inside manual subgroups a
// value is rebuilt alike in each group: "whole" is whole in the groups, ReplicatedIn).
bool Plain(const HloSharding& s, int64_t rank) {
  if (s.IsReplicated()) return true;
  if (!s.IsTiled() || s.TiledDataRank() != rank) return false;
  return std::all_of(
      s.subgroup_types().begin(), s.subgroup_types().end(), [](hlo::OpShardingType t) {
        return t == hlo::OpShardingType::kReplicated || t == hlo::OpShardingType::kManual;
      });
}

// Whole where `to` lives (ReplicatedIn), for a value of `shape`; nullopt when not to be had.
std::optional<HloSharding> Whole(const HloSharding& to, const Shape& shape) {
  absl::StatusOr<HloSharding> whole = ReplicatedIn(to, shape);
  if (!whole.ok()) return std::nullopt;
  return *std::move(whole);
}

// The operand layout that makes an op mapping operand dim i to result dim map[i] produce `to`.
std::optional<HloSharding> Through(const HloSharding& to, int64_t rank,
                                   const std::vector<int64_t>& map) {
  absl::StatusOr<HloSharding> s = hlo::OperandShardingFromResult(to, rank, map);
  if (!s.ok()) return std::nullopt;
  return *std::move(s);
}

// The rule of an op that moves data without computing: `rule` has `to` as its computed layout.
using MoveRule = bool (*)(const HloInstruction& instr, const HloSharding& to, Rule& rule);

bool BroadcastRule(const HloInstruction& instr, const HloSharding& to, Rule& rule) {
  std::optional<HloSharding> s = Through(to, instr.shape().rank(), instr.attrs().dimensions);
  if (s) rule.operands = {*std::move(s)};
  return s.has_value();
}

bool TransposeRule(const HloInstruction& instr, const HloSharding& to, Rule& rule) {
  const std::vector<int64_t>& perm = instr.attrs().dimensions;
  std::vector<int64_t> map(perm.size());
  for (size_t j = 0; j < perm.size(); ++j) map[perm[j]] = static_cast<int64_t>(j);
  std::optional<HloSharding> s = Through(to, instr.shape().rank(), map);
  if (s) rule.operands = {*std::move(s)};
  return s.has_value();
}

// Whole from whole operands (then sliced locally): the ops whose tilings do not map through
// (a reshape that splits a tile) or whose operands' layouts depend on data (gather,
// dynamic-slice).
bool WholeRule(const HloInstruction& instr, const HloSharding& to, Rule& rule) {
  for (const HloInstruction* operand : instr.operands()) {
    std::optional<HloSharding> whole = Whole(to, operand->shape());
    if (!operand->shape().IsArray() || !whole) return false;
    rule.operands.push_back(*std::move(whole));
  }
  std::optional<HloSharding> whole = Whole(to, instr.shape());
  if (!whole) return false;
  rule.computed = *std::move(whole);
  return true;
}

// A reshape whose tiling maps onto its operand exactly and evenly is rebuilt locally from the
// operand in that tiling; another, whole from the whole operand, then sliced.
bool ReshapeRule(const HloInstruction& instr, const HloSharding& to, Rule& rule) {
  if (std::optional<HloSharding> s = DirectOperandSharding(instr, to)) {
    rule.operands = {*std::move(s)};
    return true;
  }
  return WholeRule(instr, to, rule);
}

// From nothing (PartitionContext::LocalIota), for the types and layouts it builds.
bool IotaRule(const HloInstruction& instr, const HloSharding& to, Rule&) {
  const hlo::PrimitiveType type = instr.shape().element_type();
  return (hlo::IsIntegralType(type) || hlo::IsFloatingPointType(type)) && !to.HasManualSubgroup();
}

// Constants that cleanup's CSE merges (hlo::IsMergeableConstant: known and at most 1 KiB) are
// cloned whole (then sliced locally) where a user wants them in another layout: after cleanup
// the program holds the literal once, and nothing moves.
bool ConstantRule(const HloInstruction& instr, const HloSharding& to, Rule& rule) {
  std::optional<HloSharding> whole = Whole(to, instr.shape());
  if (!whole) return false;
  rule.computed = *std::move(whole);
  return hlo::IsMergeableConstant(instr);
}

const MoveRule* FindMoveRule(HloOpcode op) {
  static const auto* rules = new absl::flat_hash_map<HloOpcode, MoveRule>{
      {HloOpcode::kBroadcast, &BroadcastRule},  // Operand tiled through the dimension map.
      {HloOpcode::kTranspose, &TransposeRule},  // Likewise.
      {HloOpcode::kReshape, &ReshapeRule},      // Tiled through when exact, else whole.
      {HloOpcode::kGather, &WholeRule},         // Whole from whole operands, then sliced.
      {HloOpcode::kSlice, &WholeRule},          // Likewise.
      {HloOpcode::kDynamicSlice, &WholeRule},   // Likewise.
      {HloOpcode::kPad, &WholeRule},            // Likewise.
      {HloOpcode::kIota, &IotaRule},            // From nothing.
      {HloOpcode::kConstant, &ConstantRule},    // Cloned whole, then sliced.
  };
  auto it = rules->find(op);
  return it == rules->end() ? nullptr : &it->second;
}

// Elementwise: array operands in `to`, scalars replicated.
bool ElementwiseRule(const HloInstruction& instr, const HloSharding& to, Rule& rule) {
  for (const HloInstruction* operand : instr.operands()) {
    const Shape& s = operand->shape();
    if (!s.IsArray()) return false;
    if (s.rank() == 0 && instr.shape().rank() > 0) {
      std::optional<HloSharding> whole = Whole(to, s);
      if (!whole) return false;
      rule.operands.push_back(*std::move(whole));
    } else if (s.dimensions() == instr.shape().dimensions()) {
      rule.operands.push_back(to);
    } else {
      return false;
    }
  }
  return true;
}

std::optional<Rule> RuleFor(const HloInstruction& instr, const HloSharding& to) {
  const Shape& shape = instr.shape();
  if (!shape.IsArray()) return std::nullopt;
  // On one device: computed whole, every device holding it.
  if (to.IsTileMaximal() && !to.IsReplicated()) return RuleFor(instr, HloSharding::Replicate());
  if (!Plain(to, shape.rank())) return std::nullopt;
  Rule rule;
  rule.computed = to;
  bool ok = false;
  if (MarksItsOperand(instr)) {
    rule.operands = {to};
    rule.forwards = ok = true;
  } else if (hlo::IsElementwise(instr)) {
    ok = ElementwiseRule(instr, to, rule);
  } else if (const MoveRule* move = FindMoveRule(instr.opcode())) {
    ok = (*move)(instr, to, rule);
  }
  if (!ok) return std::nullopt;
  // Inside manual subgroups every layout stays in `to`'s groups.
  for (const HloSharding& s : rule.operands) {
    if (!SameManualGroupsOrNone(s, to)) return std::nullopt;
  }
  if (!SameManualGroupsOrNone(rule.computed, to)) return std::nullopt;
  return rule;
}

// Whether `original` reaches `to` with no bytes moved: it is there, was resharded there, or
// gets there by local slices.
bool Available(const HloInstruction* original, const HloSharding& to, PartitionContext& ctx) {
  absl::StatusOr<const PartitionedValue*> pv = ctx.Get(original);
  if (!pv.ok()) return false;
  if ((*pv)->sharding == to) return true;
  const std::vector<HloSharding>& made = ctx.ReshardedShardings(original);
  if (std::find(made.begin(), made.end(), to) != made.end()) return true;
  if (!original->shape().IsArray() || !Plain(to, original->shape().rank())) return false;
  return ReshardReceived(original->shape(), (*pv)->sharding, to, ctx).bytes == 0;
}

// The local work of computing `instr` in `computed` from operands in `operands`.
double LocalUs(const HloInstruction& instr, const Rule& rule, PartitionContext& ctx) {
  absl::StatusOr<Shape> local = hlo::PaddedShardShape(rule.computed, instr.shape());
  if (!local.ok()) return 0;
  double bytes = static_cast<double>(local->byte_size());
  for (size_t i = 0; i < rule.operands.size(); ++i) {
    absl::StatusOr<Shape> in = hlo::PaddedShardShape(rule.operands[i], instr.operand(i)->shape());
    if (in.ok()) bytes += static_cast<double>(in->byte_size());
  }
  const DeviceModel& model = ctx.options().device_model;
  const double flops = hlo::IsElementwise(instr) ? static_cast<double>(local->num_elements()) : 0;
  return std::max(model.ComputeTimeUs(flops, instr.shape().element_type()),
                  model.MemoryTimeUs(bytes));
}

// Values this small are computed again rather than moved even when that is more work per
// device: a few hundred operations cost nanoseconds, a collective microseconds.
constexpr int64_t kTinyElements = 128;

// Whether computing `instr` as `rule` says does no more work per device than its partitioned
// original did, beyond a tiny value's: a rebuild re-lays a computation out (other devices,
// finer tiles), it never turns a split computation into a whole one (that is its handler's
// choice, costed there) unless the whole is tiny.
bool NoMoreWork(const HloInstruction& instr, const Rule& rule, PartitionContext& ctx) {
  absl::StatusOr<const PartitionedValue*> pv = ctx.Get(&instr);
  absl::StatusOr<Shape> local = hlo::PaddedShardShape(rule.computed, instr.shape());
  return pv.ok() && local.ok() && (*pv)->value->shape().IsArray() &&
         (local->num_elements() <= (*pv)->value->shape().num_elements() ||
          local->num_elements() <= kTinyElements);
}

// With `any_work`, a rebuild that does more work per device than the original is allowed
// (RebuildsAnywhere asks whether the chain reaches available values at all).
// With `again`, `original` itself is priced as rebuilt even where it is available.
std::optional<double> RebuildUs(const HloInstruction* original, const HloSharding& to, int depth,
                                PartitionContext& ctx, bool any_work = false, bool again = false) {
  if (!again && Available(original, to, ctx)) return 0.0;
  if (depth >= kMaxDepth) return std::nullopt;
  std::optional<Rule> rule = RuleFor(*original, to);
  if (!rule) return std::nullopt;
  // Computed whole for a layout that slices it (or holds it on one device) locally.
  if (rule->computed != to &&
      ReshardReceived(original->shape(), rule->computed, to, ctx).bytes != 0) {
    return std::nullopt;
  }
  if (!any_work && hlo::IsElementwise(*original) && !NoMoreWork(*original, *rule, ctx)) {
    return std::nullopt;
  }
  double us = rule->forwards ? 0 : LocalUs(*original, *rule, ctx);
  for (size_t i = 0; i < rule->operands.size(); ++i) {
    std::optional<double> operand =
        RebuildUs(original->operand(i), rule->operands[i], depth + 1, ctx, any_work);
    if (!operand) return std::nullopt;
    us += *operand;
  }
  return us;
}

}  // namespace

std::optional<double> RebuildUs(const HloInstruction* original, const HloSharding& to,
                                PartitionContext& ctx) {
  return RebuildUs(original, to, 0, ctx);
}

std::optional<double> RebuildAgainUs(const HloInstruction* original, const HloSharding& to,
                                     PartitionContext& ctx) {
  return RebuildUs(original, to, 0, ctx, /*any_work=*/false, /*again=*/true);
}

bool RebuildsAnywhere(const HloInstruction* original, PartitionContext& ctx) {
  absl::StatusOr<const PartitionedValue*> pv = ctx.Get(original);
  if (!pv.ok() || (*pv)->sharding.IsReplicated() || !original->shape().IsArray()) return false;
  // Computed by a rule of its own (being available replicated, e.g. gathered for an earlier
  // user, says nothing about other layouts), from operands that reach replicated values.
  const HloSharding replicated = HloSharding::Replicate();
  std::optional<Rule> rule = RuleFor(*original, replicated);
  if (!rule) return false;
  for (size_t i = 0; i < rule->operands.size(); ++i) {
    if (!RebuildUs(original->operand(i), rule->operands[i], 1, ctx, /*any_work=*/true)) {
      return false;
    }
  }
  return true;
}

bool RebuiltAsOperand(const HloInstruction& original) { return MarksItsOperand(original); }

absl::StatusOr<HloInstruction*> Rebuild(const HloInstruction* original, const HloSharding& to,
                                        PartitionContext& ctx) {
  std::optional<Rule> rule = RuleFor(*original, to);
  if (!rule) {
    return absl::InternalError(
        hlo::StrCat("rebuild: %", original->name(), " has no rebuild rule for ", to.ToString()));
  }
  HloInstruction* value = nullptr;
  if (original->opcode() == HloOpcode::kIota) {
    ASSIGN_OR_RETURN(value, ctx.LocalIota(*original, rule->computed));
    if (value == nullptr) {
      return absl::InternalError(hlo::StrCat("rebuild: no local iota for %", original->name()));
    }
  } else if (rule->forwards) {
    ASSIGN_OR_RETURN(value, ctx.GetInSharding(original->operand(0), rule->computed));
  } else {
    std::vector<HloInstruction*> operands;
    for (size_t i = 0; i < rule->operands.size(); ++i) {
      ASSIGN_OR_RETURN(HloInstruction * operand,
                       ctx.GetInSharding(original->operand(i), rule->operands[i]));
      operands.push_back(operand);
    }
    ASSIGN_OR_RETURN(Shape local, LocalShape(rule->computed, original->shape()));
    value = CloneWithOperands(*original, std::move(local), std::move(operands), ctx);
  }
  if (rule->computed == to) return value;
  return ctx.Reshard(value, original->shape(), rule->computed, to);
}

}  // namespace spmd

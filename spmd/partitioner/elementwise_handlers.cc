// Elementwise ops (unary, binary, compare, select, clamp, convert, copy, ..., and a cross-replica
// all-reduce): every array operand of the result's rank is asked for in one sharding; scalars
// stay replicated; the op runs locally on the padded shards (padding stays in the padding).
// That sharding is the result's, or an operand's current one when computing there and
// resharding the result once is cheaper (ComputeSharding):
//
//   %r = f32[16] add(%a, %b), sharding={devices=[4]<=[4]}
//   -> %r.spmd = f32[4] add(%a.shard, %b.shard)
//   %r = f32[16] multiply(%a, %b), replicated, with %a, %b split alike
//   -> %r.spmd = f32[4] multiply(%a.shard, %b.shard), all-gathered for its users (one gather,
//      not two)
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/sharding/unreduced.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/cost/device_model.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

// Whether `original`, run on each device's partial values (combined by `op`), gives partial
// values of its result: for sums, sums, differences, negation and copies; for maxima (minima),
// maxima (minima) and copies; of operands that are all partial alike (a replicated or scalar
// operand would be counted once per device; a convert rounds each part).
bool KeepsPartials(const HloInstruction& original, hlo::ReductionOp op) {
  using Op = hlo::ReductionOp;
  static const auto* keeping = new absl::flat_hash_map<Op, absl::flat_hash_set<HloOpcode>>{
      {Op::kSum, {HloOpcode::kAdd, HloOpcode::kSubtract, HloOpcode::kNegate, HloOpcode::kCopy}},
      {Op::kMax, {HloOpcode::kMaximum, HloOpcode::kCopy}},
      {Op::kMin, {HloOpcode::kMinimum, HloOpcode::kCopy}}};
  if (!keeping->at(op).contains(original.opcode())) return false;
  for (const HloInstruction* operand : original.operands()) {
    if (!operand->shape().IsArray() || operand->shape().rank() != original.shape().rank()) {
      return false;
    }
  }
  return true;
}

// Whether `s` is a plain layout an elementwise op can be computed in and resharded from.
bool PlainTiledOrReplicated(const HloSharding& s) {
  return s.IsReplicated() || (s.IsTiled() && !s.HasManualSubgroup() && !hlo::HasUnreduced(s));
}

// The sharding every operand of `original` holds partial sums in (unreduced alike, no manual
// subgroup), when `original` keeps partial sums: computed there, it is summed once, as a
// result, rather than operand by operand.
std::optional<HloSharding> CommonPartialSums(const HloInstruction& original,
                                             PartitionContext& ctx) {
  std::optional<HloSharding> common;
  for (const HloInstruction* operand : original.operands()) {
    absl::StatusOr<const PartitionedValue*> pv = ctx.Get(operand);
    if (!pv.ok() || (common && *common != (*pv)->sharding)) return std::nullopt;
    common = (*pv)->sharding;
  }
  if (!common || !hlo::HasUnreduced(*common) || common->HasManualSubgroup() || common->IsManual() ||
      !KeepsPartials(original, common->reduction_op())) {
    return std::nullopt;
  }
  return common;
}

// What computing `original` in `candidate` costs: its array operands brought there, and the
// result then brought to `wanted` (once: the context caches it for every user).
Received CandidateReceived(const HloInstruction& original, const HloSharding& candidate,
                           const HloSharding& wanted, PartitionContext& ctx) {
  Received total;
  for (size_t i = 0; i < original.operands().size(); ++i) {
    const HloInstruction* operand = original.operand(i);
    const auto first = original.operands().begin() + static_cast<int64_t>(i);
    if (operand->shape().IsArray() && operand->shape().rank() == original.shape().rank() &&
        std::find(original.operands().begin(), first, operand) == first) {
      total = total + ReshardReceived(operand, candidate, ctx);  // Once per distinct operand.
    }
  }
  if (candidate != wanted)
    total = total + ReshardReceived(original.shape(), candidate, wanted, ctx);
  return total;
}

// The sharding to compute `original` in: `wanted`, or the current sharding of one of its array
// operands when computing there and resharding the result beats bringing every operand to
// `wanted` (an op whose operands are split alike, wanted whole: one gather of its result rather
// than one per operand; a sum of partial sums, CommonPartialSums: one all-reduce). Among candidates
// within kEstimateTolerance of the least estimated time, the one receiving the fewest bytes;
// `wanted` on ties.
HloSharding ComputeSharding(const HloInstruction& original, const HloSharding& wanted,
                            PartitionContext& ctx) {
  if (original.operand_count() < 1 || !PlainTiledOrReplicated(wanted)) return wanted;
  std::vector<HloSharding> candidates = {wanted};
  const std::optional<HloSharding> partial = CommonPartialSums(original, ctx);
  if (partial) candidates.push_back(*partial);
  for (const HloInstruction* operand : original.operands()) {
    if (!operand->shape().IsArray() || operand->shape().rank() != original.shape().rank()) {
      continue;
    }
    absl::StatusOr<const PartitionedValue*> pv = ctx.Get(operand);
    if (!pv.ok()) return wanted;
    if (!PlainTiledOrReplicated((*pv)->sharding)) {
      if (partial == (*pv)->sharding) continue;  // Already a candidate.
      return wanted;
    }
    if (std::find(candidates.begin(), candidates.end(), (*pv)->sharding) == candidates.end()) {
      candidates.push_back((*pv)->sharding);
    }
  }
  if (candidates.size() == 1) return wanted;
  std::vector<Received> costs;
  std::vector<double> us;
  std::vector<int64_t> bytes;
  for (const HloSharding& c : candidates) {
    costs.push_back(CandidateReceived(original, c, wanted, ctx));
    us.push_back(costs.back().us);
    bytes.push_back(costs.back().bytes);
  }
  const size_t best = ChooseNearFastest(us, bytes, [](size_t, size_t) { return false; });
  if (best != 0 && ctx.log().keep_lines) {
    ctx.log().lines.push_back(hlo::StrCat(
        "%", original.name(), ": computed in ", candidates[best].ToString(), " (",
        costs[best].bytes, " B, ", costs[best].us, " us with the result's reshard) rather than in ",
        wanted.ToString(), " (", costs[0].bytes, " B, ", costs[0].us, " us)"));
  }
  return candidates[best];
}

absl::Status HandleElementwise(const HloInstruction& original, const HloSharding& wanted,
                               PartitionContext& ctx) {
  if (!original.shape().IsArray() || wanted.IsTuple()) {
    return FallBackToReplicated(original, wanted, ctx, "an elementwise op with a tuple result");
  }
  // A non-linear op (exp, multiply, ...) needs whole values: it runs on the summed operands,
  // and the result is made partial again only where a user asks for that.
  std::optional<HloSharding> reduced;
  if (hlo::HasUnreduced(wanted) && !KeepsPartials(original, wanted.reduction_op())) {
    ASSIGN_OR_RETURN(reduced, hlo::UnreducedAsReplicated(wanted));
  }
  const HloSharding sharding =
      reduced ? *reduced
              : (hlo::HasUnreduced(wanted) ? wanted : ComputeSharding(original, wanted, ctx));
  static const HloSharding* const kReplicated = new HloSharding(HloSharding::Replicate());
  std::vector<HloInstruction*> operands;
  operands.reserve(original.operand_count());
  for (const HloInstruction* operand : original.operands()) {
    const bool scalar_operand = operand->shape().IsArray() && operand->shape().rank() == 0 &&
                                original.shape().rank() > 0;
    ASSIGN_OR_RETURN(HloInstruction * value,
                     ctx.GetInSharding(operand, scalar_operand ? *kReplicated : sharding));
    operands.push_back(value);
  }
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, original.shape()));
  HloInstruction* result = CloneWithOperands(original, std::move(local), std::move(operands), ctx);
  ctx.Set(&original, {result, sharding, original.shape()});
  return absl::OkStatus();
}

// An all-reduce without a channel reduces across replicas only (XLA's kCrossReplica mode):
// across partitions it acts element by element, so it runs on each device's tile. One with a
// channel reduces across partitions and is computed whole.
absl::Status HandleAllReduce(const HloInstruction& original, const HloSharding& wanted,
                             PartitionContext& ctx) {
  if (original.attrs().channel_id.has_value()) {
    return HandleReplicated(original, wanted, ctx);
  }
  return HandleElementwise(original, wanted, ctx);
}

// Ops elementwise in some forms only (hlo::IsElementwise): a bitcast-convert between types of
// one width reads each element's bits as another type, on each device's tile (between widths
// it changes the minor dim); a map over every dim runs its computation on each tile. Other
// forms are computed whole.
absl::Status HandleIfElementwise(const HloInstruction& original, const HloSharding& wanted,
                                 PartitionContext& ctx) {
  if (!hlo::IsElementwise(original)) return HandleReplicated(original, wanted, ctx);
  return HandleElementwise(original, wanted, ctx);
}

}  // namespace

void RegisterElementwiseHandlers(HandlerTable& table) {
  for (int op = 0; op < hlo::kNumHloOpcodes; ++op) {
    HloOpcode opcode = static_cast<HloOpcode>(op);
    if (hlo::IsElementwiseOpcode(opcode)) table[opcode] = &HandleElementwise;
  }
  table[HloOpcode::kAllReduce] = &HandleAllReduce;
  table[HloOpcode::kBitcastConvert] = &HandleIfElementwise;
  table[HloOpcode::kMap] = &HandleIfElementwise;
}

}  // namespace spmd

// Data-movement ops (sort: sort_handler.cc). Every op whose factor rule is a dimension map
// (spmd/propagation/factor_rule.h's RuleKind::kDimensionMap, the table propagation reads:
// broadcast, transpose) maps the result's tiling onto the operand through it and runs locally.
// Reshape takes the cheapest of: the tiling when dimensions split or merge compatibly; the result's
// tiles that do map (the others sliced locally afterwards); the operand's current tiles that do map
// (the others gathered first); the reshape in full. Constants and iotas are built locally. (Slice,
// pad, concatenate and reverse: window_handlers.cc; dynamic-slice: dynamic_slice_handler.cc;
// dynamic-update-slice: dynamic_update_slice_handler.cc.)
//
//   %t = f32[8,4] transpose(f32[4,8] %x), dimensions={1,0}, sharding={devices=[2,1]<=[2]}
//   -> %x in {devices=[1,2]<=[2]}, %t.spmd = f32[4,4] transpose(%x.shard), dimensions={1,0}
#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/sharding/unreduced.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/propagation/factor_projection.h"
#include "spmd/propagation/factor_rule.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

bool IsTiledArray(const HloInstruction& original, const HloSharding& sharding) {
  // Manual subgroups run alike inside each group (reshards stay in the groups); unreduced
  // values are partial sums no data movement may touch.
  return original.shape().IsArray() && sharding.IsTiled() && !hlo::HasUnreduced(sharding);
}

absl::Status EmitWithOperandSharding(const HloInstruction& original, const HloSharding& sharding,
                                     const HloSharding& operand_sharding, PartitionContext& ctx) {
  ASSIGN_OR_RETURN(HloInstruction * operand,
                   ctx.GetInSharding(original.operand(0), operand_sharding));
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, original.shape()));
  ctx.Set(&original, {CloneWithOperands(original, std::move(local), {operand}, ctx), sharding,
                      original.shape()});
  return absl::OkStatus();
}

// Each dimension-map op: the operand in the result's tiling seen through the op's factor rule
// (each operand dimension's result dimension, FactorDimMap), then the op run locally.
absl::Status HandleDimensionMap(const HloInstruction& original, const HloSharding& sharding,
                                PartitionContext& ctx) {
  if (!IsTiledArray(original, sharding)) {
    return FallBackToReplicated(original, sharding, ctx,
                                hlo::StrCat("the ", hlo::HloOpcodeString(original.opcode()),
                                            " is not a plain tiled array"));
  }
  const std::optional<FactorRule> rule = FactorRuleFor(original);
  if (rule.has_value()) {
    const std::vector<int64_t> dim_map =
        FactorDimMap(*rule, rule->result_side(), /*to=*/0, original.operand(0)->shape().rank());
    absl::StatusOr<HloSharding> operand_sharding =
        hlo::OperandShardingFromResult(sharding, original.shape().rank(), dim_map);
    if (operand_sharding.ok()) {
      return EmitWithOperandSharding(original, sharding, *operand_sharding, ctx);
    }
  }
  return FallBackToReplicated(original, sharding, ctx,
                              "the result's split does not map onto the operand's dimensions");
}

// The dims of `from` that a reshape to `to` leaves as they are: each paired with a dim of `to`
// of the same size, as hlo::ReshapeSharding pairs them (size-1 dims aside); the others are
// merged or split.
std::vector<bool> KeptDims(const Shape& from, const Shape& to) {
  const int64_t n = from.rank(), m = to.rank();
  std::vector<bool> kept(n, false);
  int64_t i = 0, j = 0;
  while (i < n && j < m) {
    if (from.dimensions(i) == to.dimensions(j)) {
      kept[i++] = true;
      ++j;
    } else if (from.dimensions(i) == 1) {
      ++i;
    } else if (to.dimensions(j) == 1) {
      ++j;
    } else {
      // A group whose sizes have equal products: merged or split, none kept.
      int64_t a = from.dimensions(i++), b = to.dimensions(j++);
      while (a != b && (i < n || j < m)) {
        if ((a < b && i < n) || j >= m) {
          a *= from.dimensions(i++);
        } else {
          b *= to.dimensions(j++);
        }
      }
    }
  }
  return kept;
}

// Whether `sharding`'s tiles run the reshape of `shape` (to `other`) locally: every tiled dim
// divides its size, except dims the reshape keeps as they are, whose padding stays padding.
bool Even(const HloSharding& sharding, const Shape& shape, const Shape& other) {
  if (!sharding.IsTiled()) return true;
  const std::vector<bool> kept = KeptDims(shape, other);
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dimensions(d) % sharding.tile_assignment().dim(d) != 0 && !kept[d]) return false;
  }
  return true;
}

// The reshape run locally from the operand in `operand_sharding` to the result in
// `local_sharding` (its exact image), then resharded to `sharding`.
absl::Status ReshapeThen(const HloInstruction& original, const HloSharding& operand_sharding,
                         const HloSharding& local_sharding, const HloSharding& sharding,
                         PartitionContext& ctx) {
  ASSIGN_OR_RETURN(HloInstruction * operand,
                   ctx.GetInSharding(original.operand(0), operand_sharding));
  ASSIGN_OR_RETURN(Shape local, LocalShape(local_sharding, original.shape()));
  HloInstruction* reshaped = CloneWithOperands(original, std::move(local), {operand}, ctx);
  ASSIGN_OR_RETURN(HloInstruction * result,
                   ctx.Reshard(reshaped, original.shape(), local_sharding, sharding));
  ctx.Set(&original, {result, sharding, original.shape()});
  return absl::OkStatus();
}

// One way to run a reshape: the operand brought to `operand`, reshaped locally into `local`
// (its exact image), then resharded to the wanted sharding.
struct ReshapeCandidate {
  HloSharding operand;
  HloSharding local;
};

// The candidate whose local reshape takes the operand in `operand` (when it is a tiling the
// reshape maps exactly, evenly), or nullopt.
std::optional<ReshapeCandidate> CandidateFromOperand(const HloInstruction& original,
                                                     const HloSharding& operand) {
  const Shape& operand_shape = original.operand(0)->shape();
  if (!operand.IsTiled() || !Even(operand, operand_shape, original.shape())) return std::nullopt;
  absl::StatusOr<HloSharding> local =
      hlo::ReshapeSharding(operand, operand_shape, original.shape());
  if (!local.ok() || !Even(*local, original.shape(), operand_shape)) return std::nullopt;
  return ReshapeCandidate{operand, *std::move(local)};
}

// The candidates, in order of preference on equal cost: the result's tiling seen on the
// operand (`direct`); the result's tiles that map onto the operand (the rest sliced locally
// after, e.g. [2,64,8] {devices=[1,2,4]} from [128,8]: the 4 tiles of dim 2 survive); the
// operand's current tiles that map onto the result (the rest gathered first, e.g. [80,64,32]
// {devices=[16,8,1]} to [5120,4,8]: dim 0's 16 tiles survive, dim 1's are gathered); and the
// reshape in full.
std::vector<ReshapeCandidate> ReshapeCandidates(const HloInstruction& original,
                                                const HloSharding& sharding,
                                                const std::optional<HloSharding>& direct,
                                                const HloSharding& current) {
  const Shape& operand_shape = original.operand(0)->shape();
  std::vector<ReshapeCandidate> candidates;
  if (direct.has_value()) candidates.push_back({*direct, sharding});
  absl::StatusOr<HloSharding> kept =
      hlo::ReshapeShardingReplicatingUnmapped(sharding, original.shape(), operand_shape);
  if (kept.ok()) {
    if (std::optional<ReshapeCandidate> c = CandidateFromOperand(original, *kept)) {
      candidates.push_back(*std::move(c));
    }
  }
  if (IsTiledArray(*original.operand(0), current)) {
    absl::StatusOr<HloSharding> image =
        hlo::ReshapeShardingReplicatingUnmapped(current, operand_shape, original.shape());
    absl::StatusOr<HloSharding> preimage =
        image.ok() ? hlo::ReshapeSharding(*image, original.shape(), operand_shape) : image;
    if (preimage.ok()) {
      if (std::optional<ReshapeCandidate> c = CandidateFromOperand(original, *preimage)) {
        candidates.push_back(*std::move(c));
      }
    }
  }
  // Whole: on every device, or inside each manual group.
  if (sharding.HasManualSubgroup()) {
    absl::StatusOr<HloSharding> whole_operand = WholeInManualGroups(sharding, operand_shape);
    absl::StatusOr<HloSharding> whole = WholeInManualGroups(sharding, original.shape());
    if (whole_operand.ok() && whole.ok()) candidates.push_back({*whole_operand, *whole});
    return candidates;
  }
  candidates.push_back({HloSharding::Replicate(), HloSharding::Replicate()});
  return candidates;
}

absl::Status HandleReshape(const HloInstruction& original, const HloSharding& sharding,
                           PartitionContext& ctx) {
  if (!IsTiledArray(original, sharding))
    return FallBackToReplicated(original, sharding, ctx, "the reshape is not a plain tiled array");
  ASSIGN_OR_RETURN(const PartitionedValue* input, ctx.Get(original.operand(0)));
  // The common case first: the result's tiling seen on the operand is where the operand is.
  const std::optional<HloSharding> direct = DirectOperandSharding(original, sharding);
  if (direct.has_value() && *direct == input->sharding) {
    return EmitWithOperandSharding(original, sharding, *direct, ctx);
  }
  const std::vector<ReshapeCandidate> candidates =
      ReshapeCandidates(original, sharding, direct, input->sharding);
  const ReshapeCandidate* best = nullptr;
  double best_cost = 0;
  for (const ReshapeCandidate& c : candidates) {
    ASSIGN_OR_RETURN(double in, ReshardCost(original.operand(0), c.operand, ctx));
    if (best != nullptr && in >= best_cost) continue;
    ASSIGN_OR_RETURN(double out, ResultCost(original.shape(), c.local, sharding, ctx));
    if (best == nullptr || in + out < best_cost) {
      best = &c;
      best_cost = in + out;
    }
    if (best_cost == 0) break;  // Nothing moves: no candidate does better.
  }
  if (best == nullptr) {
    return FallBackToReplicated(original, sharding, ctx, "no reshape candidate applies");
  }
  if (best->local == sharding) {
    return EmitWithOperandSharding(original, sharding, best->operand, ctx);
  }
  return ReshapeThen(original, best->operand, best->local, sharding, ctx);
}

// Constants: the full value on every device, sliced to the sharding (a local dynamic-slice).
absl::Status HandleConstant(const HloInstruction& original, const HloSharding& sharding,
                            PartitionContext& ctx) {
  HloInstruction* full = CloneWithOperands(original, original.shape(), {}, ctx);
  // Inside manual subgroups the whole value serves every tiling its users ask for.
  if (!IsTiledArray(original, sharding) || sharding.HasManualSubgroup()) {
    ctx.Set(&original, {full, HloSharding::Replicate(), original.shape()});
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(HloInstruction * result,
                   ctx.Reshard(full, original.shape(), HloSharding::Replicate(), sharding));
  ctx.Set(&original, {result, sharding, original.shape()});
  return absl::OkStatus();
}

// Iota: a local iota plus this device's offset along the iota dimension.
absl::Status HandleIota(const HloInstruction& original, const HloSharding& sharding,
                        PartitionContext& ctx) {
  ASSIGN_OR_RETURN(HloInstruction * result, ctx.LocalIota(original, sharding));
  if (result == nullptr) return HandleConstant(original, sharding, ctx);
  ctx.Set(&original, {result, sharding, original.shape()});
  return absl::OkStatus();
}

}  // namespace

std::optional<HloSharding> DirectOperandSharding(const HloInstruction& original,
                                                 const HloSharding& sharding) {
  const Shape& operand_shape = original.operand(0)->shape();
  absl::StatusOr<HloSharding> direct =
      hlo::ReshapeSharding(sharding, original.shape(), operand_shape);
  if (!direct.ok() || !Even(sharding, original.shape(), operand_shape) ||
      !Even(*direct, operand_shape, original.shape())) {
    return std::nullopt;
  }
  return *std::move(direct);
}

void RegisterDataMovementHandlers(HandlerTable& table) {
  for (HloOpcode opcode : OpcodesOfRuleKind(RuleKind::kDimensionMap)) {
    table[opcode] = &HandleDimensionMap;
  }
  table[HloOpcode::kReshape] = &HandleReshape;
  table[HloOpcode::kConstant] = &HandleConstant;
  table[HloOpcode::kIota] = &HandleIota;
  // Slice, pad, concatenate, reverse: window_handlers.cc; dynamic-update-slice:
  // dynamic_update_slice_handler.cc.
}

}  // namespace spmd

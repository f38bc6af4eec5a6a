// Dots with extra structure, partitioned along the result's batch and free dimensions with the
// contracting dims whole, so each device's op is the original op on its tiles.
//
// Ragged-dot: the ragged and group dimensions stay whole.
//
// ragged-dot(lhs, rhs, group_sizes) lays its result out like a dot (batch, lhs free, rhs
// free), with a leading group dimension when the ragged dimension r is contracting. Every
// device computes the ragged-dot of its tiles: lhs and rhs tiled like the result along the
// batch and free dimensions they share with it, whole along contracting dims, r and rhs's
// group dim; group_sizes ([B..., G], its B leading dims indexing lhs's leading dims) tiled like
// the lhs along those. The result is then the op's own result in the local tiling: rows keep
// their groups because r is whole, and no partial sums arise. The result dims it cannot split
// (r's, and the group dim of contracting mode) become replication. On 4 devices:
//
//   %d = f32[16,32,8] ragged-dot(f32[16,32,64] %a, f32[4,16,64,8] %b, u32[16,4] %c),
//        lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2},
//        rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={0},
//        sharding={devices=[2,1,2]<=[4]}
//   -> %a in {devices=[2,1,1,2]<=[4] last_tile_dim_replicate}, %b in {devices=[1,2,1,2]<=[4]},
//      %c in {devices=[2,1,2]<=[4] last_tile_dim_replicate}: %d.spmd = f32[8,32,4] ragged-dot
#include <algorithm>
#include <optional>

#include "hlo/sharding/device_groups.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "spmd/cost/collective_cost.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Result dim of each lhs / rhs dim (-1: none or kept whole) and the result dims kept whole.
struct RaggedLayout {
  std::vector<int64_t> lhs_map, rhs_map;
  std::vector<int64_t> whole;
};

absl::StatusOr<RaggedLayout> Layout(const HloInstruction& dot) {
  const hlo::DotDimensionNumbers& dn = *dot.attrs().dot_dimension_numbers;
  ASSIGN_OR_RETURN(std::vector<int64_t> ragged,
                   hlo::RawDimsAttribute(dot, {"lhs_ragged_dims", "lhs_ragged_dimensions"}));
  ASSIGN_OR_RETURN(std::vector<int64_t> group,
                   hlo::RawDimsAttribute(dot, {"rhs_group_dims", "rhs_group_dimensions"}));
  if (ragged.size() != 1) return absl::InvalidArgumentError("ragged-dot: one ragged dim");
  const int64_t lhs_rank = dot.operand(0)->shape().rank();
  const int64_t rhs_rank = dot.operand(1)->shape().rank();
  auto in_range = [](const std::vector<int64_t>& dims, int64_t rank) {
    return std::all_of(dims.begin(), dims.end(), [&](int64_t d) { return d >= 0 && d < rank; });
  };
  if (!in_range(ragged, lhs_rank) || !in_range(dn.lhs_batch_dimensions, lhs_rank) ||
      !in_range(dn.lhs_contracting_dimensions, lhs_rank) || !in_range(group, rhs_rank) ||
      !in_range(dn.rhs_batch_dimensions, rhs_rank) ||
      !in_range(dn.rhs_contracting_dimensions, rhs_rank) ||
      dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size() ||
      dn.lhs_contracting_dimensions.size() != dn.rhs_contracting_dimensions.size()) {
    return absl::InvalidArgumentError("ragged-dot: a dimension number is out of range");
  }
  const int64_t r = ragged[0];
  const bool contracting_mode = Contains(dn.lhs_contracting_dimensions, r);
  RaggedLayout layout;
  layout.lhs_map.assign(dot.operand(0)->shape().rank(), -1);
  layout.rhs_map.assign(dot.operand(1)->shape().rank(), -1);
  int64_t next = contracting_mode ? 1 : 0;
  if (contracting_mode) layout.whole.push_back(0);
  for (size_t i = 0; i < dn.lhs_batch_dimensions.size(); ++i) {
    layout.lhs_map[dn.lhs_batch_dimensions[i]] = next;
    layout.rhs_map[dn.rhs_batch_dimensions[i]] = next;
    ++next;
  }
  for (int64_t d = 0; d < dot.operand(0)->shape().rank(); ++d) {
    if (Contains(dn.lhs_batch_dimensions, d) || Contains(dn.lhs_contracting_dimensions, d)) {
      continue;
    }
    layout.lhs_map[d] = next++;
  }
  for (int64_t d = 0; d < dot.operand(1)->shape().rank(); ++d) {
    if (Contains(dn.rhs_batch_dimensions, d) || Contains(dn.rhs_contracting_dimensions, d) ||
        (!contracting_mode && Contains(group, d))) {
      continue;
    }
    layout.rhs_map[d] = next++;
  }
  if (next != dot.shape().rank()) {
    return absl::InvalidArgumentError("ragged-dot: result rank does not match its dimensions");
  }
  // The ragged dim stays whole (rows keep their groups); so does its result dim.
  if (layout.lhs_map[r] >= 0) layout.whole.push_back(layout.lhs_map[r]);
  for (int64_t& d : layout.lhs_map) {
    if (Contains(layout.whole, d)) d = -1;
  }
  for (int64_t& d : layout.rhs_map) {
    if (Contains(layout.whole, d)) d = -1;
  }
  return layout;
}

absl::Status HandleRaggedDot(const HloInstruction& original, const HloSharding& sharding,
                             PartitionContext& ctx) {
  const bool plain = original.shape().IsArray() && original.operand_count() == 3 &&
                     MovesDataInTiling(sharding) &&
                     original.attrs().dot_dimension_numbers.has_value();
  if (!plain)
    return FallBackToReplicated(original, sharding, ctx,
                                "a ragged dot with partial sums in its sharding");
  absl::StatusOr<RaggedLayout> layout = Layout(original);
  if (!layout.ok())
    return FallBackToReplicated(original, sharding, ctx,
                                "the ragged dot has no layout the partitioner knows");
  ASSIGN_OR_RETURN(HloSharding local, hlo::PartiallyReplicate(sharding, layout->whole));
  if (WholeWhereItLives(local))
    return FallBackToReplicated(original, sharding, ctx, "no ragged-dot dimension can stay split");
  const int64_t rank = original.shape().rank();
  // group_sizes [B..., G]: dim b < B indexes lhs dim b.
  const int64_t sizes_rank = original.operand(2)->shape().rank();
  std::vector<int64_t> sizes_map(sizes_rank, -1);
  for (int64_t b = 0; b + 1 < sizes_rank; ++b) sizes_map[b] = layout->lhs_map[b];
  ASSIGN_OR_RETURN(HloSharding lhs_sharding,
                   hlo::OperandShardingFromResult(local, rank, layout->lhs_map));
  ASSIGN_OR_RETURN(HloSharding rhs_sharding,
                   hlo::OperandShardingFromResult(local, rank, layout->rhs_map));
  ASSIGN_OR_RETURN(HloSharding sizes_sharding,
                   hlo::OperandShardingFromResult(local, rank, sizes_map));
  ASSIGN_OR_RETURN(HloInstruction * lhs, ctx.GetInSharding(original.operand(0), lhs_sharding));
  ASSIGN_OR_RETURN(HloInstruction * rhs, ctx.GetInSharding(original.operand(1), rhs_sharding));
  ASSIGN_OR_RETURN(HloInstruction * sizes, ctx.GetInSharding(original.operand(2), sizes_sharding));
  ASSIGN_OR_RETURN(Shape local_shape, LocalShape(local, original.shape()));
  ctx.Set(&original, {CloneWithOperands(original, local_shape, {lhs, rhs, sizes}, ctx), local,
                      original.shape()});
  return absl::OkStatus();
}

// The result dims along which the operand x ([B.., F, K], F at result dim `free_out`) cannot
// be split with its block scales: a scale dim k times smaller than x's must split on block
// boundaries (x's dim divisible by tiles * k).
void UnalignedScaleDims(const Shape& x, const Shape& scale, const HloSharding& sharding,
                        int64_t free_out, std::vector<int64_t>& whole) {
  for (int64_t d = 0; d + 1 < x.rank(); ++d) {
    const int64_t out = d + 2 == x.rank() ? free_out : d;
    const int64_t tiles = sharding.tile_assignment().dim(out);
    const int64_t n = x.dimensions(d), s = scale.dimensions(d);
    if (tiles == 1 || s == 0 || n % s != 0) continue;
    if (n % (tiles * (n / s)) != 0) whole.push_back(out);
  }
}

// A way to run a block-scaled dot: its result tiled `local`, its operands (each with its scale)
// tiled alike along B and their free dim, K whole; costed with the result's reshard to the
// wanted sharding.
struct BlockScaledPlan {
  HloSharding local = HloSharding::Replicate();
  HloSharding lhs = HloSharding::Replicate();
  HloSharding rhs = HloSharding::Replicate();
  double cost_us = 0;
  // With K split: the layout of the partial results (K's devices replicated), the groups whose
  // partial results are summed, and the result dim they are reduce-scattered along (-1:
  // all-reduced); `local` is then the layout the sum leaves.
  HloSharding partial = HloSharding::Replicate();
  std::vector<std::vector<int64_t>> sum_groups;
  int64_t scatter_dim = -1;
};

absl::StatusOr<BlockScaledPlan> PlanBlockScaled(const HloInstruction& original,
                                                const HloSharding& result,
                                                const HloSharding& wanted, PartitionContext& ctx) {
  const int64_t rank = original.shape().rank();
  if (!result.IsTiled()) return absl::UnimplementedError("no dimension stays split");
  std::vector<int64_t> whole;
  UnalignedScaleDims(original.operand(0)->shape(), original.operand(2)->shape(), result, rank - 2,
                     whole);
  UnalignedScaleDims(original.operand(1)->shape(), original.operand(3)->shape(), result, rank - 1,
                     whole);
  BlockScaledPlan plan;
  ASSIGN_OR_RETURN(plan.local, hlo::PartiallyReplicate(result, whole));
  if (plan.local.IsReplicated()) return absl::UnimplementedError("no dimension stays split");
  std::vector<int64_t> lhs_map(rank), rhs_map(rank);
  for (int64_t d = 0; d < rank; ++d) lhs_map[d] = rhs_map[d] = d;
  lhs_map[rank - 1] = rhs_map[rank - 1] = -1;  // K.
  rhs_map[rank - 2] = rank - 1;                // N.
  ASSIGN_OR_RETURN(plan.lhs, hlo::OperandShardingFromResult(plan.local, rank, lhs_map));
  ASSIGN_OR_RETURN(plan.rhs, hlo::OperandShardingFromResult(plan.local, rank, rhs_map));
  for (int64_t i = 0; i < 4; ++i) {
    ASSIGN_OR_RETURN(double cost,
                     ReshardCost(original.operand(i), i % 2 == 0 ? plan.lhs : plan.rhs, ctx));
    plan.cost_us += cost;
  }
  ASSIGN_OR_RETURN(double out, ResultCost(original.shape(), plan.local, wanted, ctx));
  plan.cost_us += out;
  return plan;
}

// K split like the lhs is now (its scale's blocks aligned with the K tiles; its batch and M
// tiles kept): every device runs the op on its K block of all four operands -- the rhs and its
// scale tiled like the lhs along batch and K, whole along N -- and the partial results are
// summed over each K group, reduce-scattered along a result dim `wanted` splits as many ways
// (XLA all-reduces) or all-reduced. None when the lhs is not so tiled.
std::vector<BlockScaledPlan> PlanBlockScaledContracting(const HloInstruction& original,
                                                        const HloSharding& wanted,
                                                        PartitionContext& ctx) {
  const int64_t rank = original.shape().rank();
  absl::StatusOr<const PartitionedValue*> now = ctx.Get(original.operand(0));
  if (!now.ok()) return {};
  const HloSharding& k_split = (*now)->sharding;
  if (!k_split.IsTiled() || !k_split.subgroup_types().empty() || k_split.TiledDataRank() != rank) {
    return {};
  }
  const int64_t tiles = k_split.tile_assignment().dim(rank - 1);
  if (tiles == 1) return {};
  for (int64_t side = 0; side < 2; ++side) {
    const int64_t k = original.operand(side)->shape().dimensions(rank - 1);
    const int64_t blocks = original.operand(side + 2)->shape().dimensions(rank - 1);
    if (blocks == 0 || k % blocks != 0 || k % (tiles * (k / blocks)) != 0) return {};
  }
  absl::StatusOr<HloSharding> rhs = hlo::PartiallyReplicate(k_split, {rank - 2});
  absl::StatusOr<HloSharding> partial = hlo::PartiallyReplicate(k_split, {rank - 1});
  if (!rhs.ok() || !partial.ok()) return {};
  // The batch and M tiles the lhs keeps must cut both operands' scales on block boundaries.
  if (partial->IsTiled()) {
    std::vector<int64_t> unaligned;
    UnalignedScaleDims(original.operand(0)->shape(), original.operand(2)->shape(), *partial,
                       rank - 2, unaligned);
    UnalignedScaleDims(original.operand(1)->shape(), original.operand(3)->shape(), *partial,
                       rank - 1, unaligned);
    if (!unaligned.empty()) return {};
  }
  double inputs_us = 0;
  for (int64_t i = 0; i < 4; ++i) {
    absl::StatusOr<double> cost =
        ReshardCost(original.operand(i), i % 2 == 0 ? k_split : *rhs, ctx);
    if (!cost.ok()) return {};
    inputs_us += *cost;
  }
  absl::StatusOr<hlo::TileAssignment> groups =
      hlo::DeviceGroupsAlongDims(k_split.tile_assignment(), {rank - 1});
  absl::StatusOr<Shape> partial_shape = LocalShape(*partial, original.shape());
  if (!groups.ok() || !partial_shape.ok()) return {};
  const int64_t bytes = partial_shape->byte_size();
  std::vector<BlockScaledPlan> plans;
  auto add = [&](HloSharding local, int64_t dim) {
    absl::StatusOr<double> out = ResultCost(original.shape(), local, wanted, ctx);
    if (!out.ok()) return;
    BlockScaledPlan plan;
    plan.local = std::move(local);
    plan.lhs = k_split;
    plan.rhs = *rhs;
    plan.partial = *partial;
    plan.sum_groups = hlo::GroupLists(*groups);
    plan.scatter_dim = dim;
    const CollectiveKind kind =
        dim < 0 ? CollectiveKind::kAllReduce : CollectiveKind::kReduceScatter;
    plan.cost_us =
        inputs_us + *out + EstimateCollective(kind, bytes, tiles, CollectiveLink(ctx)).time_us;
    plans.push_back(std::move(plan));
  };
  add(*partial, -1);
  for (int64_t d = 0; d < rank; ++d) {
    // K's tiles move onto a result dim the lhs does not split (N's is free).
    if (!wanted.IsTiled() || wanted.tile_assignment().dim(d) != tiles ||
        (d != rank - 1 && k_split.tile_assignment().dim(d) != 1)) {
      continue;
    }
    absl::StatusOr<HloSharding> scattered = d == rank - 1 ? absl::StatusOr<HloSharding>(k_split)
                                                          : hlo::MoveTileDim(k_split, rank - 1, d);
    if (scattered.ok()) add(*std::move(scattered), d);
  }
  return plans;
}

// Result tilings worth costing: the wanted one, and each operand's current tiling seen on the
// result (lhs [B.., M, K] -> [B.., M, -]; rhs [B.., N, K] -> [B.., -, N]; K's tiles replicated):
// computing where the operands are and moving the result may beat moving the operands.
std::vector<HloSharding> BlockScaledCandidates(const HloInstruction& original,
                                               const HloSharding& wanted, PartitionContext& ctx) {
  const int64_t rank = original.shape().rank();
  std::vector<HloSharding> out = {wanted};
  for (int64_t side = 0; side < 2; ++side) {
    absl::StatusOr<const PartitionedValue*> v = ctx.Get(original.operand(side));
    if (!v.ok() || !(*v)->sharding.IsTiled() || !(*v)->sharding.subgroup_types().empty() ||
        (*v)->sharding.TiledDataRank() != rank) {
      continue;
    }
    absl::StatusOr<HloSharding> s = hlo::PartiallyReplicate((*v)->sharding, {rank - 1});
    if (s.ok() && side == 1 && s->IsTiled()) {
      std::vector<int64_t> perm(rank);
      for (int64_t d = 0; d < rank; ++d) perm[d] = d;
      std::swap(perm[rank - 2], perm[rank - 1]);
      s = hlo::TransposeSharding(*s, perm);
    }
    if (s.ok() && s->IsTiled() && *s != wanted) out.push_back(*std::move(s));
  }
  return out;
}

}  // namespace

// __op$block_scaled_dot(lhs [B.., M, K], rhs [B.., N, K], lhs_scale, rhs_scale) -> [B.., M, N]:
// each operand and its scale tiled like the result along B and its free dim (when the scale's
// blocks align with the tiles), K whole; or all four split along K like the lhs, the partial
// results summed (PlanBlockScaledContracting). The result is computed in the cheapest of the
// wanted tiling, the operands' current ones (BlockScaledCandidates) and the K split, then
// resharded.
absl::Status HandleBlockScaledDot(const HloInstruction& original, const HloSharding& sharding,
                                  PartitionContext& ctx) {
  const Shape& out = original.shape();
  bool plain =
      out.IsArray() && out.rank() >= 2 && original.operand_count() == 4 &&
      (sharding.IsReplicated() || (sharding.IsTiled() && sharding.subgroup_types().empty()));
  for (int64_t i = 0; plain && i < 4; ++i) {
    plain = original.operand(i)->shape().IsArray() &&
            original.operand(i)->shape().rank() == out.rank();
  }
  if (!plain)
    return FallBackToReplicated(original, sharding, ctx,
                                "a block-scaled dot with subgroups, or operands of another rank");
  std::optional<BlockScaledPlan> best;
  for (const HloSharding& candidate : BlockScaledCandidates(original, sharding, ctx)) {
    absl::StatusOr<BlockScaledPlan> plan = PlanBlockScaled(original, candidate, sharding, ctx);
    if (plan.ok() && (!best || plan->cost_us < best->cost_us)) best = *std::move(plan);
  }
  for (BlockScaledPlan& plan : PlanBlockScaledContracting(original, sharding, ctx)) {
    if (!best || plan.cost_us < best->cost_us) best = std::move(plan);
  }
  if (!best)
    return FallBackToReplicated(original, sharding, ctx,
                                "no block-scaled-dot dimension can stay split");
  std::vector<HloInstruction*> operands;
  for (int64_t i = 0; i < 4; ++i) {
    ASSIGN_OR_RETURN(HloInstruction * value,
                     ctx.GetInSharding(original.operand(i), i % 2 == 0 ? best->lhs : best->rhs));
    operands.push_back(value);
  }
  HloInstruction* result = nullptr;
  if (best->sum_groups.empty()) {
    ASSIGN_OR_RETURN(Shape local_shape, LocalShape(best->local, out));
    result = CloneWithOperands(original, local_shape, operands, ctx);
  } else {  // Partial results over K blocks, summed.
    ASSIGN_OR_RETURN(Shape partial, LocalShape(best->partial, out));
    result = CloneWithOperands(original, partial, operands, ctx);
    if (best->scatter_dim < 0) {
      ASSIGN_OR_RETURN(result, ctx.AllReduceSum(result, best->sum_groups));
    } else {
      ASSIGN_OR_RETURN(result, ctx.ReduceScatterSum(result, best->sum_groups, best->scatter_dim));
    }
  }
  ASSIGN_OR_RETURN(result, ctx.Reshard(result, out, best->local, sharding));
  ctx.Set(&original, {result, sharding, out});
  return absl::OkStatus();
}

void RegisterRaggedDotHandler(HandlerTable& table) {
  table[hlo::HloOpcode::kRaggedDot] = &HandleRaggedDot;
}

}  // namespace spmd

// Dot: the cost-aware strategy choice of spmd/dot, then its emission.
//
// The handler states the problem (operand shardings as they are, the dot's own sharding as
// wanted), lets ChooseDotStrategy cost every candidate, logs the table (--explain), and emits
// the winner: operands asked for in the candidate's shardings, padding of unevenly split
// contracting dims masked to zero, the local dot (or a windowed loop), and the finishing
// all-reduce or reduce-scatter. The result is recorded in the sharding the strategy produced;
// consumers that want the dot's own sharding get the reshard the candidate was costed with.
#include <algorithm>
#include <map>
#include <optional>

#include "hlo/analysis/dot_readers.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/dot/dot_strategy.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/partitioner/rebuild.h"
#include "spmd/partitioner/windowed_einsum.h"
#include "spmd/propagation/factor_projection.h"
#include "spmd/propagation/factor_rule.h"
#include "spmd/reshard/reshard_plan.h"

namespace spmd {

struct CachedDotDecision {
  DotDecision decision;
  std::string table;  // Its --explain table; empty when the log is not kept.
};

namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

// Whether `sharding` splits one of `dims` of `shape` unevenly (its padding must be zeroed
// before the dot contracts over it).
bool SplitsUnevenly(const HloSharding& sharding, const Shape& shape,
                    const std::vector<int64_t>& dims) {
  if (!sharding.IsTiled()) return false;
  for (int64_t d : dims) {
    const int64_t tiles = sharding.tile_assignment().dim(d);
    if (tiles > 1 && shape.dimensions()[d] % tiles != 0) return true;
  }
  return false;
}

absl::StatusOr<HloInstruction*> Operand(const HloInstruction& dot, int64_t i,
                                        const HloSharding& sharding, PartitionContext& ctx) {
  const HloInstruction* operand = dot.operand(i);
  ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(operand, sharding));
  const hlo::DotDimensionNumbers& dn = *dot.attrs().dot_dimension_numbers;
  const std::vector<int64_t>& contracting =
      i == 0 ? dn.lhs_contracting_dimensions : dn.rhs_contracting_dimensions;
  if (!SplitsUnevenly(sharding, operand->shape(), contracting)) return value;
  return ctx.MaskPadding(value, operand->shape(), sharding);
}

// When `c` contracts dims split unevenly in both operands and every device's block along
// them is wholly data or wholly padding (3 positions on 4 devices; a size-1 window dim split
// 2 ways), and the local result is smaller than the two operand blocks: whether each device's
// blocks hold data (1) or padding (0). The devices holding padding then zero their partial
// result instead of both operands' padding (XLA's ConvAsDotOnTrivialDims).
std::optional<std::vector<int64_t>> DataHolders(const HloInstruction& dot, const DotCandidate& c,
                                                const Shape& local, PartitionContext& ctx) {
  const hlo::DotDimensionNumbers& dn = *dot.attrs().dot_dimension_numbers;
  const std::vector<int64_t>* contracting[2] = {&dn.lhs_contracting_dimensions,
                                                &dn.rhs_contracting_dimensions};
  const HloSharding* shardings[2] = {&c.lhs, &c.rhs};
  std::vector<int64_t> holds(ctx.num_devices(), 1);
  int64_t operand_elements = 0;
  for (int64_t i = 0; i < 2; ++i) {
    const Shape& shape = dot.operand(i)->shape();
    if (!SplitsUnevenly(*shardings[i], shape, *contracting[i])) return std::nullopt;
    absl::StatusOr<Shape> block = LocalShape(*shardings[i], shape);
    if (!block.ok()) return std::nullopt;
    operand_elements += block->num_elements();
    for (int64_t d : *contracting[i]) {
      const int64_t tiles = shardings[i]->tile_assignment().dim(d);
      if (tiles == 1 || shape.dimensions(d) % tiles == 0) continue;
      const std::vector<int64_t> offsets = ctx.ShardBounds(*shardings[i], shape, d);
      const std::vector<int64_t> limits = ctx.ShardBounds(*shardings[i], shape, d, true);
      for (int64_t device = 0; device < ctx.num_devices(); ++device) {
        const int64_t valid = limits[device] - offsets[device];
        if (valid != 0 && valid != block->dimensions(d)) return std::nullopt;
        if (valid == 0) holds[device] = 0;
      }
    }
  }
  if (local.num_elements() >= operand_elements) return std::nullopt;
  return holds;
}

// All-reduce or reduce-scatter of the local partial sums.
absl::StatusOr<HloInstruction*> Finish(const DotCandidate& c, HloInstruction* local,
                                       PartitionContext& ctx) {
  if (c.finish == DotFinish::kNone || c.finish == DotFinish::kKeepUnreduced) return local;
  if (c.finish == DotFinish::kAllReduce) return ctx.AllReduceSum(local, c.pending_groups);
  // Pads only an untiled scatter dim (ReduceScatterVariant refuses uneven blocks in a tile).
  return ctx.ReduceScatterSum(local, c.pending_groups, c.scatter_dim);
}

absl::StatusOr<HloInstruction*> EmitCandidate(const HloInstruction& dot, const DotProblem& p,
                                              const DotCandidate& c, PartitionContext& ctx) {
  if (c.windowed.kind == WindowedKind::kReduceScatterLoop) {
    ASSIGN_OR_RETURN(HloInstruction * lhs, Operand(dot, 0, c.lhs, ctx));
    ASSIGN_OR_RETURN(HloInstruction * rhs, Operand(dot, 1, c.rhs, ctx));
    return EmitReduceScatterLoop(dot, p, c, lhs, rhs, ctx);
  }
  HloInstruction* local = nullptr;
  if (c.windowed.kind == WindowedKind::kAllGatherLoop) {
    const int64_t moving = c.windowed.operand;
    const HloSharding& current = moving == 0 ? p.lhs_current : p.rhs_current;
    ASSIGN_OR_RETURN(HloInstruction * block, Operand(dot, moving, current, ctx));
    ASSIGN_OR_RETURN(HloInstruction * other,
                     Operand(dot, 1 - moving, moving == 0 ? c.rhs : c.lhs, ctx));
    ASSIGN_OR_RETURN(local, EmitAllGatherLoop(dot, p, c, block, other, ctx));
  } else {
    ASSIGN_OR_RETURN(Shape shape, LocalShape(c.local, p.result_shape));
    // Operands with their padding zeroed, or, where the padding devices' result is zeroed
    // instead, as they are.
    const std::optional<std::vector<int64_t>> holds = DataHolders(dot, c, shape, ctx);
    auto fetch = [&](int64_t i, const HloSharding& s) {
      return holds ? ctx.GetInSharding(dot.operand(i), s) : Operand(dot, i, s, ctx);
    };
    ASSIGN_OR_RETURN(HloInstruction * lhs, fetch(0, c.lhs));
    ASSIGN_OR_RETURN(HloInstruction * rhs, fetch(1, c.rhs));
    local = CloneWithOperands(dot, shape, {lhs, rhs}, ctx);
    if (holds) local = ctx.builder().KeepOnDevices(local, *holds);
  }
  return Finish(c, local, ctx);
}

absl::StatusOr<DotProblem> MakeProblem(const HloInstruction& dot, const HloSharding& wanted,
                                       PartitionContext& ctx) {
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  ASSIGN_OR_RETURN(DotSpace space, DotSpace::Make(lhs, rhs, *dot.attrs().dot_dimension_numbers));
  ASSIGN_OR_RETURN(const PartitionedValue* l, ctx.Get(dot.operand(0)));
  ASSIGN_OR_RETURN(const PartitionedValue* r, ctx.Get(dot.operand(1)));
  return DotProblem{std::move(space), lhs,          rhs,     dot.shape(), l->sharding,
                    r->sharding,      wanted, ctx.num_devices()};
}

// What decides a dot's strategy (see DotProblemKey).
DotProblemKey ProblemKey(const HloInstruction& dot, const DotProblem& problem,
                         const PartitionerOptions& options) {
  DotProblemKey key{{problem.lhs_shape, problem.rhs_shape, problem.result_shape},
                    {problem.lhs_current, problem.rhs_current, problem.wanted},
                    *dot.attrs().dot_dimension_numbers,
                    options.device_model.name,
                    problem.lhs_available,
                    problem.rhs_available,
                    {problem.lhs_sharers, problem.rhs_sharers}};
  for (Shape& shape : key.shapes) shape.clear_layout();
  return key;
}

// Whether `a` and `b` carry the same sharding (or both none).
bool SameSharding(const HloInstruction& a, const HloInstruction& b) {
  if (a.has_sharding() != b.has_sharding()) return false;
  return !a.has_sharding() || a.sharding() == b.sharding();
}

// The dots not yet partitioned, `dot` included, that read `dot`'s operand `i` alike
// (hlo::DotsReadAlike) with the same sharding, and whose other operand has the same sharding.
// They pose the same problem, so one reshard of the operand (the context caches it) likely
// serves them all (XLA's EinsumRHSWindowedNonContractingNoDoubleAG).
int64_t DotsReadingAlike(const HloInstruction& dot, int64_t i, PartitionContext& ctx) {
  return hlo::CountDotsReadingAlike(dot, i, [&](const HloInstruction& user) {
    return !ctx.Get(&user).ok() && SameSharding(user, dot) &&
           SameSharding(*user.operand(1 - i), *dot.operand(1 - i));
  });
}

// For --explain: which operands' reshards the candidates count a share of.
std::string SharersNote(const DotProblem& p) {
  std::string note;
  for (const auto& [name, sharers] : {std::pair<const char*, int64_t>{"lhs", p.lhs_sharers},
                                      std::pair<const char*, int64_t>{"rhs", p.rhs_sharers}}) {
    if (sharers > 1) {
      hlo::StrAppend(&note, "; the ", name, " is read alike by ", sharers,
                     " dots, each counting 1/", sharers, " of its reshard");
    }
  }
  return note;
}

// A dot whose values the free axes of a partly manual region split inside their manual
// groups: each group computes it in the result's tiling, every operand resharded inside the
// group to the result's tiles of its dims (its contracting dims whole). Without this the dot
// would run whole in each group.
absl::Status DotInGroups(const HloInstruction& original, const HloSharding& sharding,
                         PartitionContext& ctx) {
  std::optional<FactorRule> rule = FactorRuleFor(original);
  if (!rule.has_value()) {
    return FallBackToReplicated(original, sharding, ctx, "a dot without a factor rule");
  }
  std::vector<HloInstruction*> operands;
  for (int64_t i = 0; i < 2; ++i) {
    const HloInstruction* operand = original.operand(i);
    const std::vector<int64_t> dim_map =
        FactorDimMap(*rule, rule->result_side(), i, operand->shape().rank());
    ASSIGN_OR_RETURN(HloSharding want,
                     hlo::OperandShardingFromResult(sharding, original.shape().rank(), dim_map));
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(operand, want));
    operands.push_back(value);
  }
  if (ctx.log().keep_lines) {
    ctx.log().lines.push_back(hlo::StrCat("dot %", original.name(), ": inside manual groups, in ",
                                          "its result's tiling ", sharding.ToString()));
  }
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, original.shape()));
  ctx.Set(&original, {CloneWithOperands(original, std::move(local), std::move(operands), ctx),
                      sharding, original.shape()});
  return absl::OkStatus();
}

// The device groups whose blocks of a value sharded `s` differ only along `split` (data dims):
// per manual group and replica, the devices holding its successive blocks there. Empty when a
// dim of `split` does not divide its size in `shape`.
std::vector<std::vector<int64_t>> BlockGroups(const HloSharding& s, const hlo::Shape& shape,
                                              const std::vector<int64_t>& split) {
  std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
  for (int64_t d : split) {
    if (shape.dimensions(d) % s.tile_assignment().dim(d) != 0) return {};
  }
  s.tile_assignment().ForEach([&](absl::Span<const int64_t> index, int64_t device) {
    std::vector<int64_t> key(index.begin(), index.end());
    for (int64_t d : split) key[d] = 0;
    groups[key].push_back(device);
  });
  std::vector<std::vector<int64_t>> lists;
  for (auto& [key, devices] : groups) lists.push_back(std::move(devices));
  return lists;
}

// Whether `s` splits no data dim but those of `dims`.
bool SplitOnlyAlong(const HloSharding& s, const std::vector<int64_t>& dims) {
  for (int64_t d = 0; d < s.TiledDataRank(); ++d) {
    if (s.tile_assignment().dim(d) > 1 && std::find(dims.begin(), dims.end(), d) == dims.end()) {
      return false;
    }
  }
  return true;
}

// Each device's block index along `dims` under `s`.
std::map<int64_t, std::vector<int64_t>> BlocksAlong(const HloSharding& s,
                                                    const std::vector<int64_t>& dims) {
  std::map<int64_t, std::vector<int64_t>> blocks;
  s.tile_assignment().ForEach([&](absl::Span<const int64_t> index, int64_t device) {
    for (int64_t d : dims) blocks[device].push_back(index[d]);
  });
  return blocks;
}

// A dot inside manual groups whose result is whole there while the free axes split its
// operands alike along contracting dims only (a weight gradient over a batch split inside a
// partly manual region): each device multiplies its blocks and each group sums the partials.
// False when the operands are not so, or when gathering their blocks receives fewer bytes.
absl::StatusOr<bool> PartialSumsInGroups(const HloInstruction& original,
                                         const HloSharding& sharding, PartitionContext& ctx) {
  const hlo::DotDimensionNumbers& dn = *original.attrs().dot_dimension_numbers;
  ASSIGN_OR_RETURN(const PartitionedValue* lhs, ctx.Get(original.operand(0)));
  ASSIGN_OR_RETURN(const PartitionedValue* rhs, ctx.Get(original.operand(1)));
  const HloSharding& l = lhs->sharding;
  const HloSharding& r = rhs->sharding;
  const std::vector<int64_t>& lc = dn.lhs_contracting_dimensions;
  const std::vector<int64_t>& rc = dn.rhs_contracting_dimensions;
  if (!l.HasManualSubgroup() || !r.HasManualSubgroup() || !SameManualGroups(l, sharding) ||
      !SameManualGroups(r, sharding) || IsWholeOnEveryDevice(l) || !SplitOnlyAlong(l, lc) ||
      !SplitOnlyAlong(r, rc)) {
    return false;
  }
  // Each device holds the same block of every contracted pair on both sides.
  for (size_t i = 0; i < lc.size(); ++i) {
    if (l.tile_assignment().dim(lc[i]) != r.tile_assignment().dim(rc[i])) return false;
  }
  if (BlocksAlong(l, lc) != BlocksAlong(r, rc)) return false;
  std::vector<std::vector<int64_t>> groups = BlockGroups(l, original.operand(0)->shape(), lc);
  if (groups.empty() || BlockGroups(r, original.operand(1)->shape(), rc).empty()) return false;
  // Every device must take part (a sharding over some of the devices leaves the others out).
  size_t members = 0;
  for (const std::vector<int64_t>& group : groups) members += group.size();
  if (static_cast<int64_t>(members) != ctx.num_devices()) return false;
  // Worth it when the sum receives fewer bytes than gathering both operands' blocks would.
  const double g = static_cast<double>(groups.front().size());
  const double sum_bytes = 2 * (g - 1) / g * static_cast<double>(original.shape().byte_size());
  const double gather_bytes = (g - 1) / g *
                              static_cast<double>(original.operand(0)->shape().byte_size() +
                                                  original.operand(1)->shape().byte_size());
  if (sum_bytes >= gather_bytes) return false;
  HloInstruction* partial =
      CloneWithOperands(original, original.shape(), {lhs->value, rhs->value}, ctx);
  hlo::ReplicaGroups replica_groups;
  replica_groups.groups = std::move(groups);
  ASSIGN_OR_RETURN(HloInstruction * sum,
                   ctx.builder().AllReduceSum(partial, std::move(replica_groups)));
  if (ctx.log().keep_lines) {
    ctx.log().lines.push_back(
        hlo::StrCat("dot %", original.name(),
                    ": inside manual groups, contracted blocks summed in each group"));
  }
  ctx.Set(&original, {sum, sharding, original.shape()});
  return true;
}

absl::Status HandleDot(const HloInstruction& original, const HloSharding& sharding,
                       PartitionContext& ctx) {
  if (original.shape().IsArray() && original.operand_count() == 2 && sharding.HasManualSubgroup() &&
      original.attrs().dot_dimension_numbers.has_value()) {
    if (!IsWholeOnEveryDevice(sharding)) return DotInGroups(original, sharding, ctx);
    ASSIGN_OR_RETURN(const bool summed, PartialSumsInGroups(original, sharding, ctx));
    if (summed) return absl::OkStatus();
  }
  bool plain_sharding = sharding.IsReplicated() ||
                        sharding.kind() == HloSharding::Kind::kUnreduced || sharding.IsTiled();
  for (hlo::OpShardingType t : sharding.IsTiled() ? sharding.subgroup_types()
                                                  : std::vector<hlo::OpShardingType>{}) {
    plain_sharding = plain_sharding && t != hlo::OpShardingType::kManual;
  }
  if (!original.shape().IsArray() || !original.attrs().dot_dimension_numbers ||
      !plain_sharding || original.operand_count() != 2) {
    return FallBackToReplicated(
        original, sharding, ctx,
        "a dot with subgroups other than replication, or not two array operands");
  }
  ASSIGN_OR_RETURN(DotProblem problem, MakeProblem(original, sharding, ctx));
  problem.lhs_available = ctx.ReshardedShardings(original.operand(0));
  problem.rhs_available = ctx.ReshardedShardings(original.operand(1));
  problem.lhs_sharers = DotsReadingAlike(original, 0, ctx);
  problem.rhs_sharers = DotsReadingAlike(original, 1, ctx);
  // An operand computed from values available in any layout (a copy of a replicated
  // parameter) is rebuilt where a candidate wants it rather than moved (rebuild.h).
  const bool rebuildable =
      RebuildsAnywhere(original.operand(0), ctx) || RebuildsAnywhere(original.operand(1), ctx);
  if (rebuildable) {
    problem.rebuild_us = [&original, &ctx](int64_t i, const HloSharding& to) {
      return RebuildUs(original.operand(i), to, ctx);
    };
  }
  const PartitionerOptions& options = ctx.options();
  // The same problem (common in stacks of layers) is decided once per run; a problem whose
  // costs depend on how its operands are computed (rebuildable ones) is decided for itself.
  std::shared_ptr<const CachedDotDecision> uncached;
  std::shared_ptr<const CachedDotDecision>& cached =
      rebuildable ? uncached : ctx.dot_decisions()[ProblemKey(original, problem, options)];
  if (cached == nullptr) {
    absl::StatusOr<DotDecision> decision =
        ChooseDotStrategy(problem, options.device_model, ctx.planner(), options.dot);
    if (!decision.ok()) {
      if (!options.dot.forced_family.empty()) return decision.status();
      ctx.log().lines.push_back(hlo::StrCat("dot %", original.name(), ": no strategy (",
                                            hlo::ToStd(decision.status().message()),
                                            "); computed replicated"));
      return FallBackToReplicated(original, sharding, ctx, "no dot strategy applies");
    }
    std::string table = ctx.log().keep_lines ? decision->Table() : std::string();
    cached = std::make_shared<const CachedDotDecision>(
        CachedDotDecision{*std::move(decision), std::move(table)});
  }
  const DotDecision* decision = &cached->decision;
  const DotCandidate& winner = decision->candidates[decision->winner];
  if (ctx.log().keep_lines) {
    ctx.log().lines.push_back(
        hlo::StrCat("dot %", original.name(), " ", original.shape().ToString(false), ": lhs ",
                    problem.lhs_current.ToStringWithoutMetadata(), ", rhs ",
                    problem.rhs_current.ToStringWithoutMetadata(), ", wanted ",
                    sharding.ToStringWithoutMetadata(), " (device model ",
                    options.device_model.name, ")", SharersNote(problem), "\n", cached->table));
  }
  ASSIGN_OR_RETURN(HloInstruction * value, EmitCandidate(original, problem, winner, ctx));
  if (winner.full_rematerialization) ++ctx.log().full_rematerializations;
  ctx.Set(&original, {value, winner.produced, original.shape()});
  return absl::OkStatus();
}

}  // namespace

void RegisterDotHandlers(HandlerTable& table) { table[HloOpcode::kDot] = &HandleDot; }

}  // namespace spmd

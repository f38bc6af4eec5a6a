// Candidate enumeration, costing and choice for one dot (see dot_strategy.h).
#include "spmd/dot/dot_strategy.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/sharding/unreduced.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/dot/dot_windowed.h"

namespace spmd {
namespace {

using hlo::HloSharding;
using hlo::Shape;
using hlo::TileAssignment;

struct SpaceTiling {
  std::string family;
  HloSharding space;
};

// `space` (tiled, its last tile dim replication only) with `f` of its replicating devices
// splitting space dim `d` further (the minor part of d's tiles); fails when `f` does not
// divide the replication.
absl::StatusOr<HloSharding> SplitReplication(const HloSharding& space, int64_t d, int64_t f) {
  if (!space.IsTiled() || !space.replicate_on_last_tile_dim() ||
      space.subgroup_types().size() > 1) {
    return absl::InvalidArgumentError("no replication to split");
  }
  const TileAssignment& ta = space.tile_assignment();
  const int64_t n = ta.rank() - 1;
  const int64_t replicas = ta.dim(n);
  if (replicas % f != 0) return absl::InvalidArgumentError("replication not divisible");
  std::vector<int64_t> split(ta.dims().begin(), ta.dims().end() - 1);
  split.push_back(f);
  split.push_back(replicas / f);
  std::vector<int64_t> perm, dims;
  for (int64_t i = 0; i < n; ++i) {
    perm.push_back(i);
    dims.push_back(ta.dim(i) * (i == d ? f : 1));
    if (i == d) perm.push_back(n);
  }
  perm.push_back(n + 1);
  dims.push_back(replicas / f);
  ASSIGN_OR_RETURN(TileAssignment reshaped, ta.Reshape(split));
  ASSIGN_OR_RETURN(TileAssignment moved, reshaped.Transpose(perm));
  ASSIGN_OR_RETURN(TileAssignment merged, moved.Reshape(dims));
  return HloSharding::PartialTile(std::move(merged));  // A replication of 1 is dropped.
}

// The space tilings worth costing, in a fixed order (ties go to the earlier).
std::vector<SpaceTiling> SpaceTilings(const DotProblem& p) {
  const DotSpace& s = p.space;
  absl::StatusOr<HloSharding> lhs = s.Lift(p.lhs_current, s.lhs_to_space());
  absl::StatusOr<HloSharding> rhs = s.Lift(p.rhs_current, s.rhs_to_space());
  // An unreduced result is tiled like its reduced form.
  absl::StatusOr<HloSharding> wanted = hlo::UnreducedAsReplicated(p.wanted);
  absl::StatusOr<HloSharding> result =
      wanted.ok() ? s.Lift(*wanted, s.result_to_space()) : wanted.status();
  std::vector<SpaceTiling> out;
  auto add = [&](std::string family, absl::StatusOr<HloSharding> space) {
    if (space.ok()) out.push_back({std::move(family), *std::move(space)});
  };
  absl::StatusOr<HloSharding> operands = absl::InvalidArgumentError("an operand does not lift");
  if (lhs.ok() && rhs.ok()) operands = hlo::MergeShardings(*lhs, *rhs);
  add("operands", operands);
  // The operands' tiling with a result dim split over the devices that hold the same operand
  // tiles (XLA's use of partial replication): each computes a block of the result, the other
  // operand sliced locally where it is replicated, and the result is resharded.
  if (operands.ok() && result.ok()) {
    for (int64_t sd : s.result_to_space()) {
      const int64_t f = result->TilesAlong(sd);
      if (f > 1 && operands->TilesAlong(sd) == 1 && s.dim(sd).size % f == 0) {
        add("operands+replicas", SplitReplication(*operands, sd, f));
      }
    }
  }
  if (result.ok()) add("result", *result);
  if (lhs.ok()) add("lhs", *lhs);
  if (rhs.ok()) add("rhs", *rhs);
  if (result.ok() && lhs.ok()) add("result+lhs", hlo::MergeShardings(*result, *lhs));
  if (result.ok() && rhs.ok()) add("result+rhs", hlo::MergeShardings(*result, *rhs));
  add("replicated", HloSharding::Replicate());
  return out;
}

int64_t ShardBytes(const HloSharding& sharding, const Shape& shape) {
  absl::StatusOr<Shape> local = hlo::PaddedShardShape(sharding, shape);
  return local.ok() ? local->byte_size() : shape.byte_size();
}

// The result sharding after reduce-scattering the pending sums of `space` along result dim d:
// the tiles of d grow by the group size, the group rank (row-major over the tiled
// contracting dims) becoming the minor part of the new tile index.
absl::StatusOr<HloSharding> ReduceScatterSharding(const DotSpace& s, const HloSharding& space,
                                                  int64_t d, int64_t num_devices) {
  ASSIGN_OR_RETURN(TileAssignment full, s.FullAssignment(space, num_devices));
  std::vector<int64_t> split;
  for (int64_t k : s.ContractingDims()) {
    if (full.dim(k) > 1) split.push_back(k);
  }
  std::vector<int64_t> perm, dims;
  for (int64_t r = 0; r < static_cast<int64_t>(s.result_to_space().size()); ++r) {
    const int64_t sd = s.result_to_space()[r];
    perm.push_back(sd);
    int64_t tiles = full.dim(sd);
    if (r == d) {
      for (int64_t k : split) {
        perm.push_back(k);
        tiles *= full.dim(k);
      }
    }
    dims.push_back(tiles);
  }
  int64_t rest = 1;
  for (int64_t i = 0; i <= s.rank(); ++i) {
    if (std::find(perm.begin(), perm.end(), i) == perm.end()) {
      perm.push_back(i);
      rest *= full.dim(i);
    }
  }
  dims.push_back(rest);
  ASSIGN_OR_RETURN(TileAssignment transposed, full.Transpose(perm));
  ASSIGN_OR_RETURN(TileAssignment merged, transposed.Reshape(dims));
  return HloSharding::PartialTile(std::move(merged));
}

// The local result sharding of `space` with its pending sums kept: tiles of contracting dims
// become an unreduced subgroup.
absl::StatusOr<HloSharding> PendingAsUnreduced(const DotSpace& s, const HloSharding& space,
                                               int64_t num_devices) {
  ASSIGN_OR_RETURN(TileAssignment full, s.FullAssignment(space, num_devices));
  std::vector<int64_t> perm, dims;
  for (int64_t sd : s.result_to_space()) {
    perm.push_back(sd);
    dims.push_back(full.dim(sd));
  }
  int64_t pending = 1;
  for (int64_t k : s.ContractingDims()) {
    perm.push_back(k);
    pending *= full.dim(k);
  }
  perm.push_back(s.rank());
  dims.push_back(pending);
  dims.push_back(full.dim(s.rank()));
  ASSIGN_OR_RETURN(TileAssignment transposed, full.Transpose(perm));
  ASSIGN_OR_RETURN(TileAssignment reshaped, transposed.Reshape(dims));
  return HloSharding::Subgroup(std::move(reshaped), {hlo::OpShardingType::kUnreduced,
                                                     hlo::OpShardingType::kReplicated});
}

class CandidateBuilder {
 public:
  CandidateBuilder(const DotProblem& p, const DeviceModel& model, ReshardPlanner& planner,
                   const DotStrategyOptions& options)
      : p_(p), model_(model), planner_(planner), options_(options) {}

  // Adds the candidates of `tiling`. Those whose compute time alone exceeds `prune_above` are
  // counted in `pruned` instead, unplanned (no candidate costs less than its compute time).
  absl::Status AddFor(const SpaceTiling& tiling, double prune_above,
                      std::vector<DotCandidate>& out, int64_t& pruned) {
    DotCandidate base;
    base.family = tiling.family;
    base.space = tiling.space;
    const DotSpace& s = p_.space;
    ASSIGN_OR_RETURN(base.lhs, s.Project(base.space, s.lhs_to_space()));
    ASSIGN_OR_RETURN(base.rhs, s.Project(base.space, s.rhs_to_space()));
    ASSIGN_OR_RETURN(base.local, s.Project(base.space, s.result_to_space()));
    ASSIGN_OR_RETURN(base.pending_groups, s.PendingSumGroups(base.space));
    // The partial sums are combined by a collective every device must join; a tiling over some
    // of the devices only (a subset sharding) cannot finish that way.
    int64_t grouped = 0;
    for (const std::vector<int64_t>& group : base.pending_groups) grouped += group.size();
    if (!base.pending_groups.empty() && grouped != p_.num_devices) {
      return absl::InvalidArgumentError("partial sums over some of the devices only");
    }
    base.flops = LocalFlops(base.space);
    base.compute_us = model_.ComputeTimeUs(base.flops, p_.result_shape.element_type());
    if (base.compute_us > prune_above) {
      ++pruned;
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(CostOperands(base));
    std::vector<DotCandidate> finished;
    if (base.pending_groups.empty()) {
      base.produced = base.local;
      finished.push_back(base);
    } else {
      DotCandidate all_reduce = base;
      all_reduce.finish = DotFinish::kAllReduce;
      all_reduce.produced = base.local;
      finished.push_back(std::move(all_reduce));
      for (int64_t d = 0; d < p_.result_shape.rank(); ++d) {
        absl::StatusOr<DotCandidate> rs = ReduceScatterVariant(base, d);
        if (rs.ok()) finished.push_back(*std::move(rs));
      }
      // A dot's partial results are partial sums: kept only where sums are wanted.
      if (hlo::HasUnreduced(p_.wanted) && p_.wanted.reduction_op() == hlo::ReductionOp::kSum) {
        absl::StatusOr<HloSharding> unreduced = PendingAsUnreduced(p_.space, base.space,
                                                                   p_.num_devices);
        if (unreduced.ok()) {
          DotCandidate keep = base;
          keep.finish = DotFinish::kKeepUnreduced;
          keep.produced = *std::move(unreduced);
          finished.push_back(std::move(keep));
        }
      }
    }
    for (DotCandidate& c : finished) {
      RETURN_IF_ERROR(CostFinish(c));
      Total(c);
      const bool windowable = options_.enable_windowed_einsum && c.family != "replicated";
      if (windowable) AddWindowed(c, out);
      out.push_back(std::move(c));
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<std::shared_ptr<const ReshardPlan>> Plan(const Shape& shape,
                                                          const HloSharding& from,
                                                          const HloSharding& to) {
    return planner_.Plan(shape, from, to, p_.num_devices);
  }

  // The plan that brings an operand from `current` to `to`; none needed when the operand
  // already exists in `to`.
  absl::StatusOr<std::shared_ptr<const ReshardPlan>> OperandPlan(
      const Shape& shape, const HloSharding& current, const HloSharding& to,
      const std::vector<HloSharding>& available) {
    const bool present = std::find(available.begin(), available.end(), to) != available.end();
    return Plan(shape, present ? to : current, to);
  }

  // Brings operand `i` to `to` in `c`: its reshard, counted at 1/sharers, or computing it
  // again there when that is quicker (DotProblem::rebuild_us).
  absl::Status CostOperand(int64_t i, const HloSharding& to, DotCandidate& c) {
    const bool lhs = i == 0;
    ASSIGN_OR_RETURN(auto plan, OperandPlan(lhs ? p_.lhs_shape : p_.rhs_shape,
                                            lhs ? p_.lhs_current : p_.rhs_current, to,
                                            lhs ? p_.lhs_available : p_.rhs_available));
    const double share =
        1.0 / static_cast<double>(std::max<int64_t>(lhs ? p_.lhs_sharers : p_.rhs_sharers, 1));
    c.operand_us[i] = plan->cost_us * share;
    c.operand_bytes[i] = static_cast<double>(plan->bytes_received_per_device) * share;
    c.operand_rebuilt[i] = false;
    if (plan->bytes_received_per_device > 0 && p_.rebuild_us) {
      // As GetInSharding decides; the rebuilt value is cached for the other readers alike.
      if (std::optional<double> us = p_.rebuild_us(i, to); us && *us < plan->cost_us) {
        c.operand_us[i] = *us * share;
        c.operand_bytes[i] = 0;
        c.operand_rebuilt[i] = true;
      }
    }
    c.full_rematerialization =
        c.full_rematerialization || (!c.operand_rebuilt[i] && plan->full_rematerialization);
    return absl::OkStatus();
  }

  absl::Status CostOperands(DotCandidate& c) {
    c.full_rematerialization = false;
    RETURN_IF_ERROR(CostOperand(0, c.lhs, c));
    RETURN_IF_ERROR(CostOperand(1, c.rhs, c));
    c.operands_us = c.operand_us[0] + c.operand_us[1];
    c.comm_bytes = static_cast<int64_t>(c.operand_bytes[0] + c.operand_bytes[1]);
    return absl::OkStatus();
  }

  double LocalFlops(const HloSharding& space) const {
    absl::StatusOr<TileAssignment> full = p_.space.FullAssignment(space, p_.num_devices);
    double flops = 2;
    for (int64_t i = 0; i < p_.space.rank(); ++i) {
      const int64_t tiles = full.ok() ? full->dim(i) : 1;
      flops *= static_cast<double>((p_.space.dim(i).size + tiles - 1) / tiles);
    }
    return flops;
  }

  absl::StatusOr<DotCandidate> ReduceScatterVariant(const DotCandidate& base, int64_t d) {
    ASSIGN_OR_RETURN(HloSharding produced,
                     ReduceScatterSharding(p_.space, base.space, d, p_.num_devices));
    ASSIGN_OR_RETURN(Shape local, hlo::PaddedShardShape(base.local, p_.result_shape));
    const int64_t g = static_cast<int64_t>(base.pending_groups.front().size());
    const int64_t tiles = p_.space.TileCounts(base.space)[p_.space.result_to_space()[d]];
    if (tiles > 1 && local.dimensions()[d] % g != 0) {
      return absl::FailedPreconditionError("uneven reduce-scatter inside a tile");
    }
    DotCandidate rs = base;
    rs.finish = DotFinish::kReduceScatter;
    rs.scatter_dim = d;
    rs.produced = std::move(produced);
    return rs;
  }

  absl::Status CostFinish(DotCandidate& c) {
    const int64_t local_bytes = ShardBytes(c.local, p_.result_shape);
    if (c.finish == DotFinish::kAllReduce || c.finish == DotFinish::kReduceScatter) {
      const int64_t g = static_cast<int64_t>(c.pending_groups.front().size());
      const CollectiveKind kind = c.finish == DotFinish::kAllReduce
                                      ? CollectiveKind::kAllReduce
                                      : CollectiveKind::kReduceScatter;
      const int64_t buffer =
          c.finish == DotFinish::kAllReduce ? local_bytes : RoundUp(local_bytes, g);
      const CollectiveCost cost = EstimateCollective(kind, buffer, g, planner_.link());
      c.finish_us = cost.time_us;
      c.comm_bytes += cost.bytes_received;
    }
    ASSIGN_OR_RETURN(auto result_plan, Plan(p_.result_shape, c.produced, p_.wanted));
    c.result_us = result_plan->cost_us;
    c.comm_bytes += result_plan->bytes_received_per_device;
    c.full_rematerialization |= result_plan->full_rematerialization;
    c.memory_bytes = ShardBytes(p_.lhs_current, p_.lhs_shape) +
                     ShardBytes(p_.rhs_current, p_.rhs_shape) +
                     ShardBytes(c.lhs, p_.lhs_shape) + ShardBytes(c.rhs, p_.rhs_shape) +
                     local_bytes + ShardBytes(p_.wanted, p_.result_shape);
    return absl::OkStatus();
  }

  static int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

  void Total(DotCandidate& c) const {
    c.total_us = c.operands_us + c.compute_us + c.finish_us + c.result_us;
    if (c.memory_bytes > model_.memory_bytes) {
      c.eligible = false;
      c.note = hlo::StrCat("needs ", c.memory_bytes, " B per device, over the model's ",
                           static_cast<int64_t>(model_.memory_bytes), " B");
    }
  }

  void AddWindowed(const DotCandidate& c, std::vector<DotCandidate>& out) {
    WindowedCostInputs in{p_, model_, planner_, options_.windowed_threshold_bytes};
    for (int64_t operand : {0, 1}) {
      for (bool bidirectional : {false, true}) {
        absl::StatusOr<DotCandidate> w = AllGatherLoopVariant(c, operand, bidirectional, in);
        if (w.ok()) {
          Total(*w);
          out.push_back(*std::move(w));
        }
      }
    }
    for (bool bidirectional : {false, true}) {
      absl::StatusOr<DotCandidate> w = ReduceScatterLoopVariant(c, bidirectional, in);
      if (w.ok()) {
        Total(*w);
        out.push_back(*std::move(w));
      }
    }
  }

  const DotProblem& p_;
  const DeviceModel& model_;
  ReshardPlanner& planner_;
  const DotStrategyOptions& options_;
};

std::string Letters(const DotProblem& p, const DotCandidate& c) {
  std::string out;
  if (c.family == "replicated") return "all-gather both";
  if (c.windowed.kind != WindowedKind::kNone) out += "(f)";
  const std::vector<int64_t> counts = p.space.TileCounts(c.space);
  bool batch = false, free_dims = false, contracting = false;
  for (int64_t i = 0; i < p.space.rank(); ++i) {
    if (counts[i] <= 1) continue;
    switch (p.space.dim(i).kind) {
      case DotDimKind::kBatch: batch = true; break;
      case DotDimKind::kContracting: contracting = true; break;
      default: free_dims = true;
    }
  }
  if (batch) out += "(a)";
  if (free_dims) out += "(b)";
  if (contracting) out += "(c)";
  if ((c.family == "operands" || c.family == "operands+replicas") && !(c.produced == p.wanted)) {
    out += "(d)";
  }
  if (c.family.rfind("result", 0) == 0) out += "(e)";
  int64_t tiled = 0;
  for (int64_t i = 0; i < p.space.rank(); ++i) tiled += counts[i] > 1;
  if (tiled > 1) out += "(g)";
  return out;
}

// Dedupes candidates that do the same thing under different family names (keeping the
// first, which is the more specific name in SpaceTilings' order).
void Dedupe(std::vector<DotCandidate>& candidates) {
  std::vector<DotCandidate> kept;
  for (DotCandidate& c : candidates) {
    bool dup = std::any_of(kept.begin(), kept.end(), [&](const DotCandidate& k) {
      return k.space == c.space && k.finish == c.finish && k.scatter_dim == c.scatter_dim &&
             k.windowed.kind == c.windowed.kind && k.windowed.operand == c.windowed.operand &&
             k.windowed.bidirectional == c.windowed.bidirectional;
    });
    if (!dup) kept.push_back(std::move(c));
  }
  candidates = std::move(kept);
}

std::string Us(double us) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(us < 100 ? 2 : 0) << us;
  return out.str();
}

// Whether `a` beats `b` (null: nothing yet): less estimated time, then fewer bytes moved.
bool Better(const DotCandidate& a, const DotCandidate* b) {
  if (b == nullptr) return true;
  if (a.total_us != b->total_us) return a.total_us < b->total_us;
  return a.comm_bytes < b->comm_bytes;
}

// No candidate fits `model`'s memory (with no forced family, Total's memory cap is the only
// thing that makes a candidate ineligible). The least memory wins, rather than none (which the
// partitioner would answer by computing the dot replicated, the most memory of all); among the
// candidates within kMemorySlack of that least memory (they differ mostly in what they move),
// the Better one. REQUIRES: at least one candidate.
DotDecision LeastMemoryDecision(DotDecision decision, const DeviceModel& model) {
  constexpr double kMemorySlack = 1.1;
  int64_t least = decision.candidates.front().memory_bytes;
  for (const DotCandidate& c : decision.candidates) least = std::min(least, c.memory_bytes);
  const DotCandidate* best = nullptr;
  for (const DotCandidate& c : decision.candidates) {
    if (c.memory_bytes <= kMemorySlack * static_cast<double>(least) && Better(c, best)) best = &c;
  }
  decision.winner = best - decision.candidates.data();
  decision.over_memory = true;
  decision.reason = hlo::StrCat(
      "no candidate fits the device model's ", static_cast<int64_t>(model.memory_bytes),
      " B per device; least estimated time among those within ",
      std::llround((kMemorySlack - 1) * 100), "% of the least memory (", least, " B per device)");
  return decision;
}

}  // namespace

std::string DotCandidate::Name() const {
  std::string name = family;
  if (windowed.kind == WindowedKind::kAllGatherLoop) {
    hlo::StrAppend(&name, "(", windowed.operand == 0 ? "lhs" : "rhs", " d",
                   windowed.operand_dim, ")");
  }
  if (finish == DotFinish::kAllReduce) name += "+all-reduce";
  if (finish == DotFinish::kKeepUnreduced) name += "+unreduced";
  if (finish == DotFinish::kReduceScatter && windowed.kind != WindowedKind::kReduceScatterLoop) {
    hlo::StrAppend(&name, "+reduce-scatter(d", scatter_dim, ")");
  }
  if (windowed.kind == WindowedKind::kReduceScatterLoop) {
    hlo::StrAppend(&name, "(d", scatter_dim, ")");
  }
  return name;
}

const std::vector<std::string>& DotStrategyFamilies() {
  static const auto* families = new std::vector<std::string>{
      "operands",    "operands+replicas", "result",      "lhs",
      "rhs",         "result+lhs",        "result+rhs",  "replicated",
      "windowed-ag", "windowed-ag-bidir", "windowed-rs", "windowed-rs-bidir"};
  return *families;
}

absl::StatusOr<DotDecision> ChooseDotStrategy(const DotProblem& problem,
                                              const DeviceModel& model,
                                              ReshardPlanner& planner,
                                              const DotStrategyOptions& options) {
  if (!options.forced_family.empty() &&
      std::find(DotStrategyFamilies().begin(), DotStrategyFamilies().end(),
                options.forced_family) == DotStrategyFamilies().end()) {
    std::string known;
    for (const std::string& f : DotStrategyFamilies()) hlo::StrAppend(&known, " ", f);
    return absl::InvalidArgumentError(hlo::StrCat("unknown dot strategy \"",
                                                  options.forced_family, "\"; known:", known));
  }
  DotDecision decision;
  CandidateBuilder builder(problem, model, planner, options);
  const std::vector<SpaceTiling> tilings = SpaceTilings(problem);
  std::vector<absl::Status> statuses;
  // The best eligible total so far, above which a candidate cannot win (when pruning).
  const bool prune = !options.cost_every_candidate && options.forced_family.empty();
  double prune_above = std::numeric_limits<double>::infinity();
  for (size_t t = 0; t < tilings.size(); ++t) {
    // A tiling equal to an earlier one would add the same candidates under a later name, which
    // Dedupe drops: costed once.
    size_t same = 0;
    while (same < t && !(tilings[same].space == tilings[t].space)) ++same;
    absl::Status s = same < t ? statuses[same]
                              : builder.AddFor(tilings[t], prune_above, decision.candidates,
                                               decision.pruned);
    for (const DotCandidate& c : decision.candidates) {
      if (prune && c.eligible) {
        prune_above = std::min(prune_above, c.total_us * (1 + kEstimateTolerance));
      }
    }
    if (!s.ok() && tilings[t].family == "replicated") return s;  // Always plannable otherwise.
    statuses.push_back(std::move(s));
  }
  Dedupe(decision.candidates);
  for (DotCandidate& c : decision.candidates) {
    c.letters = Letters(problem, c);
    c.tiling = problem.space.Describe(c.space);
    if (!options.forced_family.empty() && c.family != options.forced_family && c.eligible) {
      c.eligible = false;
      c.note = "not the forced strategy";
    }
  }
  const DotCandidate* best = nullptr;
  const DotCandidate* second = nullptr;
  for (const DotCandidate& c : decision.candidates) {
    if (!c.eligible) continue;
    if (Better(c, best)) {
      second = best;
      best = &c;
    } else if (Better(c, second)) {
      second = &c;
    }
  }
  if (best == nullptr && options.forced_family.empty()) {
    return LeastMemoryDecision(std::move(decision), model);
  }
  if (best == nullptr) {
    return absl::FailedPreconditionError(
        hlo::StrCat("dot strategy \"", options.forced_family,
                    "\" does not apply to this dot (or exceeds memory)"));
  }
  // Within kEstimateTolerance of the least time, the fewest bytes.
  const DotCandidate* fastest = best;
  std::vector<double> us;
  std::vector<int64_t> bytes;
  for (const DotCandidate& c : decision.candidates) {
    us.push_back(c.eligible ? c.total_us : std::numeric_limits<double>::infinity());
    bytes.push_back(c.comm_bytes);
  }
  best = &decision.candidates[ChooseNearFastest(us, bytes)];
  decision.winner = best - decision.candidates.data();
  if (!options.forced_family.empty()) {
    decision.reason = hlo::StrCat("forced by --dot-strategy=", options.forced_family);
  } else if (second == nullptr) {
    decision.reason = "the only eligible candidate";
  } else if (best != fastest) {
    decision.reason = hlo::StrCat("fewest bytes (", best->comm_bytes, ") among those within ",
                                  std::llround(kEstimateTolerance * 100),
                                  "% of the least estimated time: ", Us(best->total_us),
                                  " us against ", Us(fastest->total_us), " us for ",
                                  fastest->Name(), ", which moves ", fastest->comm_bytes);
  } else {
    decision.reason = hlo::StrCat("least estimated time: ", Us(best->total_us), " us against ",
                                  Us(second->total_us), " us for ", second->Name());
  }
  if (decision.pruned > 0) {
    hlo::StrAppend(&decision.reason, " (", decision.pruned,
                   " tilings not costed: their compute time alone is more)");
  }
  return decision;
}

std::string DotDecision::Explain(std::string_view title) const {
  return hlo::StrCat(title, "\n", Table());
}

std::string DotDecision::Table() const {
  std::ostringstream out;
  out << "    " << std::left << std::setw(40) << "candidate" << std::setw(24) << "strategy" << std::setw(22) << "tiling"
      << std::right << std::setw(12) << "operands_us" << std::setw(12) << "compute_us"
      << std::setw(12) << "finish_us" << std::setw(12) << "result_us" << std::setw(12)
      << "total_us" << std::setw(14) << "comm_bytes" << std::setw(14) << "memory_bytes" << "\n";
  for (size_t i = 0; i < candidates.size(); ++i) {
    const DotCandidate& c = candidates[i];
    out << (static_cast<int64_t>(i) == winner ? "  * " : "    ") << std::left << std::setw(40)
        << c.Name() << std::setw(24) << c.letters << std::setw(22) << c.tiling << std::right << std::setw(12)
        << Us(c.operands_us) << std::setw(12) << Us(c.compute_us) << std::setw(12)
        << Us(c.finish_us) << std::setw(12) << Us(c.result_us) << std::setw(12)
        << Us(c.total_us) << std::setw(14) << c.comm_bytes << std::setw(14) << c.memory_bytes;
    if (c.full_rematerialization) out << "  full-remat";
    if (!c.note.empty()) out << "  (" << c.note << ")";
    out << "\n";
  }
  if (winner >= 0) {
    out << "  chose " << candidates[winner].Name() << ": " << reason << "\n";
  }
  return out.str();
}

}  // namespace spmd

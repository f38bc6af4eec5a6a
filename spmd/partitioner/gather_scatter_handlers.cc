// Gather and scatter, partitioned where every device can compute its part locally.
//
// Gather: an output dimension can be split without moving data when it is
//   - an offset dimension whose operand dimension is taken whole (slice size = operand size,
//     not collapsed; a start index there is clamped to 0): operand passthrough;
//   - a batch dimension (an indices dimension other than index_vector_dim): index parallel; when
//     the indices dimension is an explicit batching dimension, the matching operand batching
//     dimension is split alike, otherwise the operand is replicated across those devices;
//     so is an indexed operand dimension that the indices address by an iota along that
//     indices dimension (IotaIndexedDims: XLA's index-parallel dims), whose local indices are
//     then a local iota.
// A candidate is a result sharding over those dimensions; the operand and indices shardings
// follow from it (OperandShardingFromResult), so one device's tiles always belong together. The
// candidates are the wanted sharding, the operand's and the indices' current shardings seen
// through the op, their merge, and replicated; each is costed as the reshards it needs
// (operand, indices, and result to the wanted sharding) and the cheapest wins (--explain logs
// the table). Padding of uneven shards only ever reaches padding of the result.
//
// Scatter mirrors this over the updates' dimensions: update window dimensions that cover a
// whole operand dimension (not inserted; indexed or not, as such a window is in bounds only at
// start 0, on the whole operand and on every shard alike) split the operand alike; update scatter
// dimensions of explicit batching dimensions (or of iota-addressed ones) split the operand's
// batching (or addressed) dimension alike. An
// update scatter dimension without a batching partner can be split only when the combiner is a
// single commutative op with an identity (add, multiply, maximum, minimum, and, or) and there is
// one operand: devices then scatter their updates (padding masked to the identity) into an
// identity-filled copy (the operand on the first device of each group), the partials are
// all-reduced over the devices that split those dimensions, so the operand is combined once (a
// bf16 or f16 sum in f32, rounded once; a narrow product is not split). Anything else runs
// replicated (HandleReplicated).
//
// Masked plans (gather_scatter_masked.h) keep the operand split along the dims the indices
// pick from (start index dims with slice or window size 1): each candidate above is merged
// with the operand's tiling there and costed again, with the gather's all-reduce of masked
// partials (or, for scatter, nothing) added.
//
//   %g = f32[3,9] gather(f32[2,9] %x {devices=[1,2]}, s32[3] %i {replicated}),
//        offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, slice_sizes={1,9}
//   -> %g.spmd = f32[3,5] gather(f32[2,5] %x.shard, %i), slice_sizes={1,5}  {devices=[1,2]}
#include <algorithm>
#include <limits>
#include <optional>

#include "hlo/sharding/device_groups.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/cost/collective_cost.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/combiners.h"
#include "spmd/partitioner/gather_scatter_masked.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/reshard/reshard_plan.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Whether `sharding` is replicated or tiles over every device (a tiling over a subset of the
// devices would leave the others out of the local op's collectives).
bool CoversAllDevices(const HloSharding& sharding, const PartitionContext& ctx) {
  return !sharding.IsTiled() || sharding.tile_assignment().num_devices() == ctx.num_devices();
}

// A sharding for an array whose dimension t takes the tiling of `source`'s dimension
// `source_dim[t]` (-1: whole); tiles of source dimensions nothing takes become replication.
absl::StatusOr<HloSharding> Project(const HloSharding& source,
                                    const std::vector<int64_t>& source_dim) {
  if (!source.IsReplicated() && !MovesDataInTiling(source)) {
    return absl::UnimplementedError(hlo::StrCat("cannot project ", source.ToString()));
  }
  const int64_t rank = source.IsTiled() ? source.TiledDataRank() : 0;
  for (int64_t d : source_dim) {
    if (d >= rank) return HloSharding::Replicate();  // Replicated source: nothing to map.
  }
  return hlo::OperandShardingFromResult(source, rank, source_dim);
}

// `to_dims[from]` inverted over `rank` target dimensions (-1 where nothing maps).
std::vector<int64_t> Invert(const std::vector<int64_t>& to_dims, int64_t rank) {
  std::vector<int64_t> inverse(rank, -1);
  for (size_t from = 0; from < to_dims.size(); ++from) {
    if (to_dims[from] >= 0) inverse[to_dims[from]] = static_cast<int64_t>(from);
  }
  return inverse;
}

// The dimensions of an array of rank `rank` other than `skip` (which may equal rank), in order.
std::vector<int64_t> DimsExcept(int64_t rank, const std::vector<int64_t>& skip) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(skip, d)) dims.push_back(d);
  }
  return dims;
}

// The current sharding of `operand`, or nullopt when it is not a plain array sharding.
std::optional<HloSharding> CurrentSharding(const HloInstruction* operand, PartitionContext& ctx) {
  absl::StatusOr<const PartitionedValue*> value = ctx.Get(operand);
  if (!value.ok() || !(*value)->value->shape().IsArray()) return std::nullopt;
  const HloSharding& s = (*value)->sharding;
  if (s.IsReplicated() || s.kind() == HloSharding::Kind::kMaximal) return s;
  if (MovesDataInTiling(s)) return s;
  return std::nullopt;
}

// One way to run the op locally: the sharding each operand is asked for, the result's.
struct LocalPlan {
  std::string source;  // Where the candidate came from (for --explain).
  HloSharding result = HloSharding::Replicate();
  HloSharding operand = HloSharding::Replicate();
  HloSharding indices = HloSharding::Replicate();
  HloSharding updates = HloSharding::Replicate();  // Scatter only.
  std::vector<int64_t> combine_dims;               // Scatter: updates dims split by index.
  std::vector<int64_t> masked_dims;                // Operand dims split along indexed dims.
  int64_t scatter_dim = -1;  // Partials reduce-scattered along this result dim; -1: all-reduced.
  std::optional<HloSharding> scattered;  // The result's sharding after that reduce-scatter.
  // Scatter: the element type the partials are summed in (kInvalid: not said).
  hlo::PrimitiveType sum_type = hlo::PrimitiveType::kInvalid;

  // The sharding the plan leaves its result in.
  const HloSharding& Finished() const { return scattered ? *scattered : result; }
  Received moved;  // What its reshards and sums receive per device, and their time.
  int64_t local_elements = 0;
};

using Candidates = std::vector<std::pair<std::string, hlo::HloSharding>>;

// Appends `s` as `name` unless it failed, is neither replicated nor tiled, or is listed.
void AddCandidate(Candidates& out, std::string name, absl::StatusOr<HloSharding> s) {
  if (!s.ok() || !(s->IsReplicated() || s->IsTiled())) return;
  for (const auto& [n, existing] : out) {
    if (existing == *s) return;
  }
  out.emplace_back(std::move(name), *std::move(s));
}

// `p`, unless a reshard it needs has no plan.
absl::StatusOr<LocalPlan> Plannable(LocalPlan p) {
  if (p.moved.bytes >= kUnplannable) {
    return absl::UnimplementedError(
        hlo::StrCat("a reshard the ", p.source, " plan needs has no plan"));
  }
  return p;
}

// A masked operand and the shardings of the other array (the result, or the updates) to cost
// with it.
struct MaskedCandidateSet {
  MaskedOperand operand;
  Candidates others;
};

// Each source with the dims it keeps: its passthrough dims, or none but the indexed ones.
std::vector<std::pair<HloSharding, const std::vector<int64_t>*>> MaskedSources(
    const std::vector<HloSharding>& sources, const std::vector<int64_t>& operand_to_other,
    const std::vector<int64_t>& indexed_only) {
  std::vector<std::pair<HloSharding, const std::vector<int64_t>*>> out;
  for (const auto* kept : {&operand_to_other, &indexed_only}) {
    for (const HloSharding& source : sources) out.emplace_back(source, kept);
  }
  return out;
}

// For masked plans: each of `sources` (operand shardings) kept along the indexed dims it
// splits, with its other dims kept too or made whole (so that the other array may use those
// devices elsewhere, e.g. updates split along their batch while the table is split along its
// rows), and each of `candidates` (shardings of the other array) merged with what that
// operand sharding gives the other array. Empty when no source splits an indexed dim.
std::vector<MaskedCandidateSet> MaskedCandidates(const std::vector<HloSharding>& sources,
                                                 const std::vector<IndexedDim>& indexed,
                                                 const std::vector<int64_t>& operand_to_other,
                                                 const std::vector<int64_t>& other_to_operand,
                                                 const Candidates& candidates,
                                                 PartitionContext& ctx) {
  std::vector<MaskedCandidateSet> out;
  const std::vector<int64_t> indexed_only(operand_to_other.size(), -1);
  for (const auto& [source, kept] : MaskedSources(sources, operand_to_other, indexed_only)) {
    absl::StatusOr<MaskedOperand> masked =
        MaskedOperandSharding(source, indexed, *kept, ctx.num_devices());
    if (!masked.ok()) continue;
    absl::StatusOr<HloSharding> base = Project(masked->sharding, other_to_operand);
    const bool seen = std::any_of(out.begin(), out.end(), [&](const MaskedCandidateSet& set) {
      return set.operand.sharding == masked->sharding;
    });
    if (!base.ok() || seen) continue;
    MaskedCandidateSet set{*std::move(masked), {}};
    AddCandidate(set.others, "masked", base);
    for (const auto& [name, other] : candidates) {
      AddCandidate(set.others, "masked + " + name, hlo::MergeShardings(*base, other));
    }
    out.push_back(std::move(set));
  }
  return out;
}

// An all-reduce of `bytes` over the devices that split `masked.dims`.
Received MaskedAllReduceCost(const MaskedOperand& masked, int64_t bytes, PartitionContext& ctx) {
  int64_t group = 1;
  for (int64_t d : masked.dims) group *= masked.sharding.tile_assignment().dim(d);
  return Received::Of(
      EstimateCollective(CollectiveKind::kAllReduce, bytes, group, ctx.planner().link()));
}

// How a plan's partial results are summed, for --explain.
std::string SumText(const LocalPlan& p) {
  std::string text = p.scatter_dim < 0 ? std::string("all-reduced")
                                       : hlo::StrCat("reduce-scattered along dim ", p.scatter_dim);
  if (p.sum_type != hlo::PrimitiveType::kInvalid) {
    hlo::StrAppend(&text, " in ", hlo::PrimitiveTypeName(p.sum_type));
  }
  return text;
}

// Picks the plan as every strategy choice does (ChooseNearFastest: the fewest bytes received
// among those within kEstimateTolerance of the least time; on equal bytes the smaller local
// result, then the lesser time, then the earlier candidate) and logs the table.
const LocalPlan* Choose(const std::vector<LocalPlan>& plans, const HloInstruction& original,
                        PartitionContext& ctx) {
  std::vector<double> us;
  std::vector<int64_t> bytes;
  for (const LocalPlan& p : plans) {
    us.push_back(p.moved.us);
    bytes.push_back(p.moved.bytes);
  }
  const LocalPlan* best = &plans[ChooseNearFastest(us, bytes, [&](size_t a, size_t b) {
    if (plans[a].local_elements != plans[b].local_elements) {
      return plans[a].local_elements < plans[b].local_elements;
    }
    return plans[a].moved.us < plans[b].moved.us;
  })];
  std::string line = hlo::StrCat(hlo::HloOpcodeString(original.opcode()), " %", original.name(),
                                 ": chose ", best->source, " -> ", best->Finished().ToString());
  for (const LocalPlan& p : plans) {
    hlo::StrAppend(&line, "\n  ", p.source, ": operand ", p.operand.ToString(), ", indices ",
                   p.indices.ToString());
    if (original.opcode() == HloOpcode::kScatter) {
      hlo::StrAppend(&line, ", updates ", p.updates.ToString());
      if (!p.combine_dims.empty()) hlo::StrAppend(&line, " (partials ", SumText(p), ")");
      if (!p.masked_dims.empty()) hlo::StrAppend(&line, " (masked: indices shifted into shards)");
    } else if (!p.masked_dims.empty()) {
      hlo::StrAppend(&line, " (masked: local gather, partials ", SumText(p), ")");
    }
    hlo::StrAppend(&line, ", result ", p.Finished().ToString(), ": ", p.moved.bytes,
                   " bytes per device, ", p.moved.us, " us");
  }
  ctx.log().lines.push_back(std::move(line));
  return best;
}

// ---- Gather --------------------------------------------------------------------------------

// Which operand and indices dimensions each output dimension can be split along.
struct GatherMaps {
  std::vector<int64_t> operand_to_output;  // Passthrough and batching dims; else -1.
  std::vector<int64_t> indices_to_output;  // Every dim but index_vector_dim; else -1.
  std::vector<int64_t> output_to_operand;
  std::vector<int64_t> output_to_indices;
  std::vector<IndexedDim> indexed;  // Start index dims with slice size 1.
  std::vector<IotaDim> iota;        // Indexed dims addressed by an iota: split like batching.
};

GatherMaps AnalyzeGather(const HloInstruction& gather) {
  const hlo::GatherDimensionNumbers& dn = *gather.attrs().gather_dimension_numbers;
  const std::vector<int64_t>& slice_sizes = gather.attrs().gather_slice_sizes;
  const Shape& operand = gather.operand(0)->shape();
  const int64_t indices_rank = gather.operand(1)->shape().rank();
  const int64_t output_rank = gather.shape().rank();
  GatherMaps m;
  m.operand_to_output.assign(operand.rank(), -1);
  m.indices_to_output.assign(indices_rank, -1);
  const std::vector<int64_t> batch_out = DimsExcept(output_rank, dn.offset_dims);
  const std::vector<int64_t> batch_in = DimsExcept(indices_rank, {dn.index_vector_dim});
  for (size_t k = 0; k < batch_in.size() && k < batch_out.size(); ++k) {
    m.indices_to_output[batch_in[k]] = batch_out[k];
  }
  std::vector<int64_t> not_window = dn.collapsed_slice_dims;
  not_window.insert(not_window.end(), dn.operand_batching_dims.begin(),
                    dn.operand_batching_dims.end());
  const std::vector<int64_t> window = DimsExcept(operand.rank(), not_window);
  for (size_t k = 0; k < window.size() && k < dn.offset_dims.size(); ++k) {
    const int64_t d = window[k];
    if (slice_sizes[d] == operand.dimensions(d)) m.operand_to_output[d] = dn.offset_dims[k];
  }
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    m.operand_to_output[dn.operand_batching_dims[i]] =
        m.indices_to_output[dn.start_indices_batching_dims[i]];
  }
  for (size_t j = 0; j < dn.start_index_map.size(); ++j) {
    const int64_t d = dn.start_index_map[j];
    if (slice_sizes[d] == 1) m.indexed.push_back({d, static_cast<int64_t>(j)});
  }
  m.iota = IotaIndexedDims(*gather.operand(1), dn.index_vector_dim, m.indexed,
                           dn.start_indices_batching_dims, operand);
  for (const IotaDim& d : m.iota) {
    m.operand_to_output[d.operand_dim] = m.indices_to_output[d.indices_dim];
  }
  m.output_to_operand = Invert(m.operand_to_output, output_rank);
  m.output_to_indices = Invert(m.indices_to_output, output_rank);
  return m;
}

// Whether operand dim `d` of a gather keeps its slice size when split (an indexed dim
// addressed by an iota, or an explicit batching dim): it is not a passthrough window.
bool KeepsSliceSize(const GatherMaps& m, const hlo::GatherDimensionNumbers& dn, int64_t d) {
  return Contains(dn.operand_batching_dims, d) ||
         std::any_of(m.iota.begin(), m.iota.end(),
                     [d](const IotaDim& i) { return i.operand_dim == d; });
}

// Costs the local gather producing `result`; with `masked`, the operand keeps its tiles along
// indexed dims and an all-reduce sums the masked partials.
absl::StatusOr<LocalPlan> CostGatherPlan(std::string source, const HloSharding& result,
                                         const GatherMaps& m, const HloInstruction& gather,
                                         const HloSharding& wanted, const MaskedOperand* masked,
                                         PartitionContext& ctx) {
  LocalPlan p;
  p.source = std::move(source);
  p.result = result;
  if (masked == nullptr) {
    ASSIGN_OR_RETURN(p.operand, Project(result, m.operand_to_output));
  } else if (TilesAgree(masked->sharding, m.operand_to_output, masked->dims, result,
                        ctx.num_devices())) {
    p.operand = masked->sharding;
    p.masked_dims = masked->dims;
  } else {
    return absl::UnimplementedError("the operand's tiles do not match the result's");
  }
  ASSIGN_OR_RETURN(p.indices, Project(result, m.indices_to_output));
  p.moved = ReshardReceived(gather.operand(0), p.operand, ctx) +
            ReshardReceived(gather.operand(1), p.indices, ctx);
  ASSIGN_OR_RETURN(Shape local, LocalShape(result, gather.shape()));
  p.local_elements = local.num_elements();
  if (masked == nullptr) {
    p.moved = p.moved + ReshardReceived(gather.shape(), result, wanted, ctx);
    return Plannable(std::move(p));
  }
  ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                   hlo::DeviceGroupsAlongDims(masked->sharding.tile_assignment(), masked->dims));
  // A sum of pred is an or: all-reduced only (PartitionContext::ReduceScatterSum sums).
  const hlo::PrimitiveType type = local.element_type();
  const std::vector<std::vector<int64_t>> lists = type == hlo::PrimitiveType::kPred
                                                      ? std::vector<std::vector<int64_t>>{}
                                                      : hlo::GroupLists(groups);
  ASSIGN_OR_RETURN(PartialSum sum,
                   PlanPartialSum(gather.shape(), result, lists, wanted, type,
                                  MaskedAllReduceCost(*masked, local.byte_size(), ctx), ctx));
  p.scatter_dim = sum.scatter_dim;
  if (sum.scatter_dim >= 0) p.scattered = sum.result;
  p.moved = p.moved + sum.moved;
  return Plannable(std::move(p));
}

// Result shardings worth costing: the wanted one, the operand's and the indices', their merge,
// and replicated, each restricted to the dimensions that can be split.
Candidates GatherCandidates(const HloInstruction& gather, const HloSharding& wanted,
                            const GatherMaps& m, PartitionContext& ctx) {
  Candidates out;
  auto add = [&](std::string name, absl::StatusOr<HloSharding> s) {
    AddCandidate(out, std::move(name), std::move(s));
  };
  std::vector<int64_t> splittable(gather.shape().rank(), -1);
  for (int64_t d = 0; d < gather.shape().rank(); ++d) {
    if (m.output_to_operand[d] >= 0 || m.output_to_indices[d] >= 0) splittable[d] = d;
  }
  add("wanted", Project(wanted, splittable));
  std::optional<HloSharding> operand = CurrentSharding(gather.operand(0), ctx);
  std::optional<HloSharding> indices = CurrentSharding(gather.operand(1), ctx);
  absl::StatusOr<HloSharding> from_operand =
      operand ? Project(*operand, m.output_to_operand)
              : absl::StatusOr<HloSharding>(absl::UnimplementedError("no operand sharding"));
  absl::StatusOr<HloSharding> from_indices =
      indices ? Project(*indices, m.output_to_indices)
              : absl::StatusOr<HloSharding>(absl::UnimplementedError("no indices sharding"));
  add("operand passthrough", from_operand);
  add("index parallel", from_indices);
  if (from_operand.ok() && from_indices.ok()) {
    add("operand passthrough + index parallel", hlo::MergeShardings(*from_operand, *from_indices));
  }
  add("replicated", ReplicatedIn(wanted, gather.shape()));
  return out;
}

// Emits the chosen gather plan: the local gather (indices shifted into the operand's shards
// and the partials summed for a masked plan).
absl::Status EmitGather(const HloInstruction& original, const LocalPlan& plan, const GatherMaps& m,
                        PartitionContext& ctx) {
  ASSIGN_OR_RETURN(HloInstruction * operand, ctx.GetInSharding(original.operand(0), plan.operand));
  ASSIGN_OR_RETURN(HloInstruction * indices, ctx.GetInSharding(original.operand(1), plan.indices));
  ASSIGN_OR_RETURN(Shape local, LocalShape(plan.result, original.shape()));
  const hlo::GatherDimensionNumbers& dn = *original.attrs().gather_dimension_numbers;
  const MaskedOperand masked{plan.operand, plan.masked_dims};
  ShardIndices shifted{indices, nullptr};
  if (!plan.masked_dims.empty()) {
    shifted = ShiftIndicesIntoShard(indices, dn.index_vector_dim, m.indexed, masked,
                                    original.operand(0)->shape(), OutsideShard::kClamp, ctx);
  }
  ASSIGN_OR_RETURN(shifted.indices,
                   LocalIotaComponents(shifted.indices, dn.index_vector_dim, m.iota, plan.operand,
                                       plan.indices, plan.masked_dims, ctx));
  HloInstruction* gather = CloneWithOperands(original, local, {operand, shifted.indices}, ctx);
  // Passthrough dims take the whole local operand dimension.
  std::vector<int64_t>& slice_sizes = gather->mutable_attrs()->gather_slice_sizes;
  for (size_t d = 0; d < slice_sizes.size(); ++d) {
    const int64_t out = m.operand_to_output[d];
    if (out >= 0 && !KeepsSliceSize(m, dn, static_cast<int64_t>(d))) {
      slice_sizes[d] = operand->shape().dimensions(d);
      RET_CHECK(local.dimensions(out) == slice_sizes[d]);
    }
  }
  if (!plan.masked_dims.empty()) {
    ASSIGN_OR_RETURN(
        gather, SumMaskedShards(gather, shifted.in_shard, DimsExcept(local.rank(), dn.offset_dims),
                                masked, plan.scatter_dim, ctx));
  }
  ctx.Set(&original, {gather, plan.Finished(), original.shape()});
  return absl::OkStatus();
}

absl::Status HandleGather(const HloInstruction& original, const HloSharding& sharding,
                          PartitionContext& ctx) {
  if (!original.shape().IsArray() || sharding.IsTuple() || sharding.IsManual() ||
      (sharding.IsTiled() && !MovesDataInTiling(sharding)) ||
      !CurrentSharding(original.operand(0), ctx) || !CurrentSharding(original.operand(1), ctx)) {
    return FallBackToReplicated(
        original, sharding, ctx,
        "a gather with partial sums in its sharding, or operands without a sharding");
  }
  const GatherMaps m = AnalyzeGather(original);
  const Candidates candidates = GatherCandidates(original, sharding, m, ctx);
  std::vector<LocalPlan> plans;
  for (const auto& [name, result] : candidates) {
    if (!CoversAllDevices(result, ctx)) continue;
    absl::StatusOr<LocalPlan> plan =
        CostGatherPlan(name, result, m, original, sharding, nullptr, ctx);
    if (plan.ok()) plans.push_back(*std::move(plan));
  }
  for (const MaskedCandidateSet& set :
       MaskedCandidates({*CurrentSharding(original.operand(0), ctx)}, m.indexed,
                        m.operand_to_output, m.output_to_operand, candidates, ctx)) {
    for (const auto& [name, result] : set.others) {
      if (!CoversAllDevices(result, ctx)) continue;
      absl::StatusOr<LocalPlan> plan =
          CostGatherPlan(name, result, m, original, sharding, &set.operand, ctx);
      if (plan.ok()) plans.push_back(*std::move(plan));
    }
  }
  if (plans.empty())
    return FallBackToReplicated(original, sharding, ctx, "no gather plan covers every device");
  return EmitGather(original, *Choose(plans, original, ctx), m, ctx);
}

// ---- Scatter -------------------------------------------------------------------------------

// Which operand and indices dimensions each updates dimension can be split along.
struct ScatterMaps {
  std::vector<int64_t> operand_to_updates;  // Passthrough window and batching dims; else -1.
  std::vector<int64_t> indices_to_updates;  // Every dim but index_vector_dim; else -1.
  std::vector<int64_t> updates_to_operand;
  std::vector<int64_t> updates_to_indices;
  std::vector<bool> needs_combine;  // Update scatter dims without a batching partner.
  std::vector<IndexedDim> indexed;  // Scatter dims to operand dims with window size 1.
  std::vector<IotaDim> iota;        // Indexed dims addressed by an iota: split like batching.
};

ScatterMaps AnalyzeScatter(const HloInstruction& scatter, int64_t n) {
  const hlo::ScatterDimensionNumbers& dn = *scatter.attrs().scatter_dimension_numbers;
  const Shape& operand = scatter.operand(0)->shape();
  const int64_t indices_rank = scatter.operand(n)->shape().rank();
  const Shape& updates = scatter.operand(n + 1)->shape();
  ScatterMaps m;
  m.operand_to_updates.assign(operand.rank(), -1);
  m.indices_to_updates.assign(indices_rank, -1);
  const std::vector<int64_t> scatter_dims = DimsExcept(updates.rank(), dn.update_window_dims);
  const std::vector<int64_t> batch_in = DimsExcept(indices_rank, {dn.index_vector_dim});
  for (size_t k = 0; k < batch_in.size() && k < scatter_dims.size(); ++k) {
    m.indices_to_updates[batch_in[k]] = scatter_dims[k];
  }
  std::vector<int64_t> not_window = dn.inserted_window_dims;
  not_window.insert(not_window.end(), dn.input_batching_dims.begin(), dn.input_batching_dims.end());
  const std::vector<int64_t> window = DimsExcept(operand.rank(), not_window);
  std::vector<bool> one_wide(operand.rank(), true);  // Inserted dims are 1 wide.
  for (int64_t d : dn.input_batching_dims) one_wide[d] = false;
  for (size_t k = 0; k < window.size() && k < dn.update_window_dims.size(); ++k) {
    const int64_t d = window[k];
    const int64_t u = dn.update_window_dims[k];
    // A window as wide as the operand dim is in bounds only at start 0; split alike, each
    // device's window is as wide as its shard and in bounds only at start 0 too, so an indexed
    // dim passes through as well (the update is applied, or skipped, on every shard alike).
    if (updates.dimensions(u) == operand.dimensions(d)) m.operand_to_updates[d] = u;
    if (updates.dimensions(u) != 1) one_wide[d] = false;
  }
  for (size_t j = 0; j < dn.scatter_dims_to_operand_dims.size(); ++j) {
    const int64_t d = dn.scatter_dims_to_operand_dims[j];
    if (one_wide[d]) m.indexed.push_back({d, static_cast<int64_t>(j)});
  }
  m.needs_combine.assign(updates.rank(), false);
  for (int64_t u : scatter_dims) m.needs_combine[u] = true;
  for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
    const int64_t u = m.indices_to_updates[dn.scatter_indices_batching_dims[i]];
    m.operand_to_updates[dn.input_batching_dims[i]] = u;
    if (u >= 0) m.needs_combine[u] = false;
  }
  m.iota = IotaIndexedDims(*scatter.operand(n), dn.index_vector_dim, m.indexed,
                           dn.scatter_indices_batching_dims, operand);
  for (const IotaDim& d : m.iota) {
    const int64_t u = m.indices_to_updates[d.indices_dim];
    m.operand_to_updates[d.operand_dim] = u;
    if (u >= 0) m.needs_combine[u] = false;
  }
  m.updates_to_operand = Invert(m.operand_to_updates, updates.rank());
  m.updates_to_indices = Invert(m.indices_to_updates, updates.rank());
  return m;
}

// Everything the scatter handler needs to know about one scatter.
struct ScatterProblem {
  const HloInstruction* scatter;
  int64_t n;  // Number of operands (and of updates).
  ScatterMaps maps;
  std::optional<HloOpcode> combiner;  // Set when split scatter dims can be combined.
  std::optional<hlo::Literal> identity;
  // A narrow float sum (bf16, f16, f8) accumulates its local scatters in f32 (the operand and
  // updates converted). kInvalid: the scatter's own type.
  hlo::PrimitiveType accumulate = hlo::PrimitiveType::kInvalid;
  // Whether the partials cross devices in `accumulate` too (rounded once, after the sum:
  // PartitionerOptions::wide_partial_sums) rather than each rounded to the scatter's type and
  // summed in it, as a dot's partial results are (half the bytes for bf16; each partial is an
  // f32 sum rounded once, so the result is at least as close to the exact sum as XLA's, whose
  // local scatters add in the narrow type).
  bool wide_across_devices = false;

  // The element type the local scatters of a scatter of `type` accumulate in.
  hlo::PrimitiveType CombineType(hlo::PrimitiveType type) const {
    return accumulate == hlo::PrimitiveType::kInvalid ? type : accumulate;
  }
  // The element type the partials are summed across devices in.
  hlo::PrimitiveType SumType(hlo::PrimitiveType type) const {
    return wide_across_devices ? CombineType(type) : type;
  }
};

// How partial sums of a narrow type, combined in the wider `wide` type (exactly), travel among
// groups of `g`: one all-reduce in the wide type, or a reduce-scatter in the wide type, the
// block narrowed, and an all-gather of the narrow blocks along `scatter_dim` (for f32 over bf16
// three quarters of the bytes, one more latency). The cheaper by estimated time.
struct WideSum {
  Received moved;
  int64_t scatter_dim = -1;  // -1: the all-reduce.
};
WideSum PlanWideSum(const Shape& local, hlo::PrimitiveType wide, int64_t g, const LinkModel& link) {
  const int64_t widen = hlo::BitWidth(wide) / hlo::BitWidth(local.element_type());
  const CollectiveCost all_reduce =
      EstimateCollective(CollectiveKind::kAllReduce, local.byte_size() * widen, g, link);
  WideSum best{Received::Of(all_reduce)};
  if (widen == 1 || g <= 1 || local.rank() == 0) return best;
  int64_t dim = 0;
  for (int64_t d = 1; d < local.rank(); ++d) {
    if (local.dimensions(d) > local.dimensions(dim)) dim = d;
  }
  const int64_t n = local.dimensions(dim);
  if (n < g) return best;
  const int64_t padded = (n + g - 1) / g * g;
  const int64_t narrow_bytes = local.byte_size() / n * padded;
  const CollectiveCost scatter =
      EstimateCollective(CollectiveKind::kReduceScatter, narrow_bytes * widen, g, link);
  const CollectiveCost gather =
      EstimateCollective(CollectiveKind::kAllGather, narrow_bytes, g, link);
  const Received moved = Received::Of(scatter) + Received::Of(gather);
  if (moved.us < best.moved.us) best = {moved, dim};
  return best;
}

// The sum of the wide `partial` over `groups`, narrowed to `local` as PlanWideSum says.
absl::StatusOr<HloInstruction*> EmitWideSum(HloInstruction* partial, const Shape& local,
                                            const hlo::TileAssignment& groups,
                                            hlo::HloComputation* reducer, PartitionContext& ctx) {
  const int64_t g = groups.dim(1);
  const WideSum plan = PlanWideSum(local, partial->shape().element_type(), g, ctx.planner().link());
  if (plan.scatter_dim < 0) {
    return ctx.Add(HloOpcode::kConvert, local, {AllReduceInGroups(partial, groups, reducer, ctx)});
  }
  const int64_t d = plan.scatter_dim;
  const std::vector<std::vector<int64_t>> lists = hlo::GroupLists(groups);
  ASSIGN_OR_RETURN(HloInstruction * block, ctx.ReduceScatterSum(partial, lists, d));
  std::vector<int64_t> dims = block->shape().dimensions();
  block = ctx.Add(HloOpcode::kConvert, Shape::Array(local.element_type(), dims), {block});
  HloInstruction* gathered = ctx.builder().AllGather({block}, d, MakeReplicaGroups(lists), g);
  if (gathered->shape().dimensions(d) == local.dimensions(d)) return gathered;
  return ctx.builder().SliceTo(gathered, local.dimensions());
}

// Costs the local scatter of `updates`; with `masked`, the operand keeps its tiles along
// indexed dims and the indices are shifted into them.
absl::StatusOr<LocalPlan> CostScatterPlan(std::string source, HloSharding updates,
                                          const ScatterProblem& sp, const HloSharding& wanted,
                                          const MaskedOperand* masked, PartitionContext& ctx) {
  const HloInstruction& s = *sp.scatter;
  const ScatterMaps& m = sp.maps;
  LocalPlan p;
  p.source = std::move(source);
  if (updates.IsTiled()) {
    for (int64_t u = 0; u < updates.TiledDataRank(); ++u) {
      if (m.needs_combine[u] && updates.tile_assignment().dim(u) > 1) p.combine_dims.push_back(u);
    }
  }
  // The combining all-reduce needs every device in a group: a sharding over some devices
  // only keeps the combined dims whole instead.
  const bool all_devices = updates.IsTiled() &&
                           updates.tile_assignment().num_devices() == ctx.num_devices();
  if (!p.combine_dims.empty() && (!sp.combiner || !all_devices)) {
    ASSIGN_OR_RETURN(updates, hlo::PartiallyReplicate(updates, p.combine_dims));
    p.combine_dims.clear();
  }
  p.updates = updates;
  if (masked == nullptr) {
    ASSIGN_OR_RETURN(p.operand, Project(updates, m.operand_to_updates));
  } else if (TilesAgree(updates, m.updates_to_operand, p.combine_dims, masked->sharding,
                        ctx.num_devices())) {
    p.operand = masked->sharding;
    p.masked_dims = masked->dims;
  } else {
    return absl::UnimplementedError("the updates' tiles do not match the operand's");
  }
  ASSIGN_OR_RETURN(p.indices, Project(updates, m.indices_to_updates));
  p.result = p.operand;
  const HloSharding& wanted_leaf = wanted.IsTuple() ? wanted.tuple_elements()[0] : wanted;
  Received moved;
  for (int64_t i = 0; i < sp.n; ++i) {
    moved = moved + ReshardReceived(s.operand(i), p.operand, ctx) +
            ReshardReceived(s.operand(sp.n + 1 + i), p.updates, ctx);
    if (!p.combine_dims.empty()) continue;  // Costed with the sum below (n == 1).
    const HloSharding& want = wanted.IsTuple() ? wanted.tuple_elements()[i] : wanted_leaf;
    moved = moved + ReshardReceived(s.operand(i)->shape(), p.result, want, ctx);
  }
  moved = moved + ReshardReceived(s.operand(sp.n), p.indices, ctx);
  ASSIGN_OR_RETURN(Shape local, LocalShape(p.result, s.operand(0)->shape()));
  p.local_elements = local.num_elements();
  if (!p.combine_dims.empty()) {
    ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                     hlo::DeviceGroupsAlongDims(updates.tile_assignment(), p.combine_dims));
    const hlo::PrimitiveType type = sp.SumType(local.element_type());
    const Received all_reduce = PlanWideSum(local, type, groups.dim(1), ctx.planner().link()).moved;
    // Only a sum is reduce-scattered (PartitionContext::ReduceScatterSum).
    const std::vector<std::vector<int64_t>> lists = sp.combiner == HloOpcode::kAdd
                                                        ? hlo::GroupLists(groups)
                                                        : std::vector<std::vector<int64_t>>{};
    ASSIGN_OR_RETURN(PartialSum sum, PlanPartialSum(s.operand(0)->shape(), p.operand, lists,
                                                    wanted_leaf, type, all_reduce, ctx));
    p.scatter_dim = sum.scatter_dim;
    p.sum_type = type;
    if (sum.scatter_dim >= 0) p.scattered = sum.result;
    moved = moved + sum.moved;
  }
  p.moved = moved;
  return Plannable(std::move(p));
}

// Updates shardings worth costing: the wanted result's, the operand's, the updates' and the
// indices' (restricted to splittable dims), merges of the operand's with the others, and
// replicated.
Candidates ScatterCandidates(const ScatterProblem& sp, const HloSharding& wanted,
                             PartitionContext& ctx) {
  const HloInstruction& s = *sp.scatter;
  const ScatterMaps& m = sp.maps;
  Candidates out;
  auto add = [&](std::string name, absl::StatusOr<HloSharding> c) {
    AddCandidate(out, std::move(name), std::move(c));
  };
  auto project = [](const std::optional<HloSharding>& from, const std::vector<int64_t>& map) {
    return from ? Project(*from, map)
                : absl::StatusOr<HloSharding>(absl::UnimplementedError("no sharding"));
  };
  const HloSharding& wanted_leaf = wanted.IsTuple() ? wanted.tuple_elements()[0] : wanted;
  const int64_t updates_rank = s.operand(sp.n + 1)->shape().rank();
  std::vector<int64_t> splittable(updates_rank, -1);
  for (int64_t u = 0; u < updates_rank; ++u) {
    if (m.updates_to_operand[u] >= 0 || (m.needs_combine[u] && sp.combiner)) splittable[u] = u;
  }
  absl::StatusOr<HloSharding> from_operand =
      project(CurrentSharding(s.operand(0), ctx), m.updates_to_operand);
  absl::StatusOr<HloSharding> from_updates =
      project(CurrentSharding(s.operand(sp.n + 1), ctx), splittable);
  absl::StatusOr<HloSharding> from_indices =
      project(CurrentSharding(s.operand(sp.n), ctx), m.updates_to_indices);
  add("wanted", project(wanted_leaf, m.updates_to_operand));
  add("operand passthrough", from_operand);
  add("updates", from_updates);
  add("index parallel", from_indices);
  if (from_operand.ok() && from_updates.ok()) {
    add("operand passthrough + updates", hlo::MergeShardings(*from_operand, *from_updates));
  }
  if (from_operand.ok() && from_indices.ok()) {
    add("operand passthrough + index parallel", hlo::MergeShardings(*from_operand, *from_indices));
  }
  add("replicated", ReplicatedIn(wanted_leaf, s.operand(sp.n + 1)->shape()));
  return out;
}

// Scatters the local updates into the operand on the first device of each combining group and
// into an identity-filled copy on the others, then all-reduces over the groups (the devices
// that split the combined dims): the operand is combined once, and nothing is added after.
absl::StatusOr<HloInstruction*> EmitCombinedScatter(const ScatterProblem& sp, const LocalPlan& plan,
                                                    const Shape& local, HloInstruction* operand,
                                                    HloInstruction* indices,
                                                    HloInstruction* updates,
                                                    PartitionContext& ctx) {
  const HloInstruction& original = *sp.scatter;
  const hlo::PrimitiveType type = sp.CombineType(local.element_type());
  const bool widen = type != local.element_type();
  // Whether the partials cross devices wide too (else each is rounded once, then summed in the
  // scatter's type): SumType, as CostScatterPlan costed it.
  const bool wide_sum = sp.SumType(local.element_type()) != local.element_type();
  const Shape wide = Shape::Array(type, local.dimensions());
  HloInstruction* identity = ctx.Add(HloOpcode::kConstant, Shape::Array(type, {}), {});
  identity->mutable_attrs()->literal = *sp.identity;
  if (widen) {
    updates =
        ctx.Add(HloOpcode::kConvert, Shape::Array(type, updates->shape().dimensions()), {updates});
    operand = ctx.Add(HloOpcode::kConvert, wide, {operand});
  }
  ASSIGN_OR_RETURN(updates,
                   ctx.MaskPadding(updates, original.operand(2)->shape(), plan.updates, identity));
  std::vector<int64_t> first(ctx.num_devices(), 0);
  for (int64_t device = 0; device < ctx.num_devices(); ++device) {
    ASSIGN_OR_RETURN(std::vector<int64_t> tile, hlo::TileIndexForDevice(plan.updates, device));
    first[device] = std::all_of(plan.combine_dims.begin(), plan.combine_dims.end(),
                                [&](int64_t u) { return tile[u] == 0; });
  }
  HloInstruction* base = ctx.builder().KeepOnDevices(operand, first, identity);
  HloInstruction* partial = CloneWithOperands(original, wide, {base, indices, updates}, ctx);
  hlo::HloComputation* reducer = original.to_apply();
  if (widen) {
    ASSIGN_OR_RETURN(hlo::HloComputation * wide_reducer, ctx.AddReducer(type));
    partial->set_called_computation(0, wide_reducer);
    if (wide_sum) {
      reducer = wide_reducer;
    } else {
      partial = ctx.Add(HloOpcode::kConvert, local, {partial});
    }
  }
  ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                   hlo::DeviceGroupsAlongDims(plan.updates.tile_assignment(), plan.combine_dims));
  if (plan.scatter_dim >= 0) {
    ASSIGN_OR_RETURN(HloInstruction * block,
                     ctx.ReduceScatterSum(partial, hlo::GroupLists(groups), plan.scatter_dim));
    if (!wide_sum) return block;
    return ctx.Add(HloOpcode::kConvert,
                   Shape::Array(local.element_type(), block->shape().dimensions()), {block});
  }
  if (wide_sum) return EmitWideSum(partial, local, groups, reducer, ctx);
  return AllReduceInGroups(partial, groups, reducer, ctx);
}

absl::Status HandleScatter(const HloInstruction& original, const HloSharding& sharding,
                           PartitionContext& ctx) {
  const int64_t n = (original.operand_count() - 1) / 2;
  bool plain = n >= 1 && original.operand_count() == 2 * n + 1 && !sharding.IsManual() &&
               (n == 1) == original.shape().IsArray();
  const HloSharding& leaf = sharding.IsTuple() ? sharding.tuple_elements()[0] : sharding;
  plain = plain && !(leaf.IsTiled() && !MovesDataInTiling(leaf));
  for (int64_t i = 0; plain && i < original.operand_count(); ++i) {
    plain = CurrentSharding(original.operand(i), ctx).has_value();
  }
  if (sharding.IsTuple()) {
    for (const HloSharding& e : sharding.tuple_elements()) {
      plain = plain && !e.IsManual() && !(e.IsTiled() && !MovesDataInTiling(e));
    }
  }
  if (!plain)
    return FallBackToReplicated(original, sharding, ctx,
                                "a scatter with partial sums or manual leaves in its sharding");
  ScatterProblem sp{&original, n, AnalyzeScatter(original, n), std::nullopt, std::nullopt};
  if (n == 1 &&
      original.operand(0)->shape().element_type() == original.operand(2)->shape().element_type()) {
    std::optional<HloOpcode> op = hlo::MatchCombiner(*original.to_apply());
    const hlo::PrimitiveType type = original.shape().element_type();
    // A narrow float sum or product in another order can round far from the sequential one:
    // a sum is accumulated in f32 instead (ScatterProblem::accumulate); a product is not split.
    const bool narrow = hlo::IsFloatingPointType(type) && hlo::BitWidth(type) < 32;
    if (narrow && op == HloOpcode::kAdd) {
      sp.accumulate = hlo::PrimitiveType::kF32;
      sp.wide_across_devices = ctx.options().wide_partial_sums;
    }
    if (op && !(narrow && op == HloOpcode::kMultiply)) {
      sp.identity = CombinerIdentity(*op, sp.CombineType(type));
    }
    if (sp.identity) sp.combiner = op;
  }
  std::vector<LocalPlan> plans;
  const Candidates candidates = ScatterCandidates(sp, sharding, ctx);
  for (const auto& [name, updates] : candidates) {
    if (!CoversAllDevices(updates, ctx)) continue;
    absl::StatusOr<LocalPlan> plan = CostScatterPlan(name, updates, sp, sharding, nullptr, ctx);
    if (plan.ok()) plans.push_back(*std::move(plan));
  }
  // The operand's tiling, or the wanted one (a broadcast operand is rebuilt in any tiling).
  for (const MaskedCandidateSet& set :
       MaskedCandidates({*CurrentSharding(original.operand(0), ctx), leaf}, sp.maps.indexed,
                        sp.maps.operand_to_updates, sp.maps.updates_to_operand, candidates, ctx)) {
    for (const auto& [name, updates] : set.others) {
      if (!CoversAllDevices(updates, ctx)) continue;
      absl::StatusOr<LocalPlan> plan =
          CostScatterPlan(name, updates, sp, sharding, &set.operand, ctx);
      if (plan.ok()) plans.push_back(*std::move(plan));
    }
  }
  if (plans.empty())
    return FallBackToReplicated(original, sharding, ctx, "no scatter plan covers every device");
  const LocalPlan& plan = *Choose(plans, original, ctx);
  std::vector<HloInstruction*> operands;
  for (int64_t i = 0; i < original.operand_count(); ++i) {
    const HloSharding& want = i < n ? plan.operand : (i == n ? plan.indices : plan.updates);
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(original.operand(i), want));
    operands.push_back(value);
  }
  const int64_t index_vector_dim = original.attrs().scatter_dimension_numbers->index_vector_dim;
  if (!plan.masked_dims.empty()) {
    // Updates for other shards land out of bounds and are dropped.
    operands[n] =
        ShiftIndicesIntoShard(operands[n], index_vector_dim, sp.maps.indexed,
                              {plan.operand, plan.masked_dims}, original.operand(0)->shape(),
                              OutsideShard::kOutOfBounds, ctx)
            .indices;
  }
  ASSIGN_OR_RETURN(operands[n],
                   LocalIotaComponents(operands[n], index_vector_dim, sp.maps.iota, plan.operand,
                                       plan.indices, plan.masked_dims, ctx));
  ASSIGN_OR_RETURN(Shape local, LocalShape(plan.result, original.operand(0)->shape()));
  HloInstruction* result = nullptr;
  HloSharding result_sharding = plan.Finished();
  if (!plan.combine_dims.empty()) {
    ASSIGN_OR_RETURN(
        result, EmitCombinedScatter(sp, plan, local, operands[0], operands[1], operands[2], ctx));
  } else if (n == 1) {
    result = CloneWithOperands(original, local, operands, ctx);
  } else {
    result_sharding = HloSharding::SingleTuple(original.shape(), plan.result);
    ASSIGN_OR_RETURN(Shape local_tuple, LocalShape(result_sharding, original.shape()));
    result = CloneWithOperands(original, local_tuple, operands, ctx);
  }
  ctx.Set(&original, {result, result_sharding, original.shape()});
  return absl::OkStatus();
}

}  // namespace

void RegisterGatherScatterHandlers(HandlerTable& table) {
  table[HloOpcode::kGather] = &HandleGather;
  table[HloOpcode::kScatter] = &HandleScatter;
}

}  // namespace spmd

// Top-k: the opcode topk and XLA's custom-call "TopK" (largest first, k from the result shape):
// operand [batch..., n] -> (values [batch..., k], s32 indices [batch..., k]).
//
// Batch dims run locally in any tiling. Along the top-k dim n a device can run a local top-k on
// its shard and a merge finishes (XLA's PartitionTopK): each device keeps the k' = min(k, shard)
// best of its shard, adds its shard's offset to their indices, the t*k' candidates of a row are
// all-gathered along that dim (shard order = index order), and a stable sort by value with the
// op's order (totalOrder for floats) followed by a slice to k gives exactly the unpartitioned
// result: equal values keep their candidates' order, which is the order of their indices (ties
// by lower index, as topk's). Padding of an uneven last shard is filled with the value ordered
// after every other (the NaN of the far sign with every bit set, or the integer type's end), so
// it sorts after any real element, equal ones included (its indices are higher).
//
// Candidates, each costed as the reshards it needs (operand in, the candidates' all-gather, the
// results to the wanted leaves), the cheapest wins and --explain logs the table: the wanted
// tiling and the operand's current one, each as it is (a merge when it splits the top-k dim)
// and with the top-k dim whole, and replicated. On 2 devices:
//
//   %t = (bf16[2,2000], s32[2,2000]) custom-call(bf16[2,209664] %x {devices=[1,2]}),
//        custom_call_target="TopK", sharding={replicated}
//   -> local top-2000 of bf16[2,104832], indices + 104832 * shard, all-gather of
//      (bf16[2,2000], s32[2,2000]) candidates, stable sort of [2,4000], slice to 2000
//      (24000 bytes received per device instead of gathering the 419328-byte operand).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "hlo/sharding/device_groups.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/cost/collective_cost.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/reshard/reshard_plan.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::PrimitiveType;
using hlo::Shape;

// One way to run the top-k: the operand's sharding, the results' (both leaves) and the cost.
struct TopKPlan {
  std::string source;  // Where the candidate came from (for --explain).
  HloSharding operand = HloSharding::Replicate();
  HloSharding result = HloSharding::Replicate();
  int64_t merge_tiles = 1;  // Tiles along the top-k dim (1: no merge).
  double cost_us = 0;
};

bool Largest(const HloInstruction& original) {
  return original.opcode() != HloOpcode::kTopK || original.attrs().largest;
}

// The scalar ordered after every value of `type` by topk's order, as the constant that writes
// it: floats by totalOrder get the NaN of the far sign with every bit set (an integer of their
// width, bitcast back), integers their type's min (max when !largest). Nullopt when it cannot be
// written exactly (a double holds it).
struct LastValue {
  PrimitiveType constant_type;
  double value;
};

std::optional<LastValue> LastInOrderValue(PrimitiveType type, bool largest) {
  const int bits = hlo::BitWidth(type);
  if (hlo::IsIntegralType(type)) {
    const bool is_signed = hlo::IsSignedIntegralType(type);
    if (bits > 32 && !(largest && is_signed)) return std::nullopt;
    const double low = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
    const double high = is_signed ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
    return LastValue{type, largest ? low : high};
  }
  static constexpr struct {
    PrimitiveType type, pattern;  // A float type and the integer type of its width.
  } kBits[] = {{PrimitiveType::kBF16, PrimitiveType::kS16},
               {PrimitiveType::kF16, PrimitiveType::kS16},
               {PrimitiveType::kF32, PrimitiveType::kS32},
               {PrimitiveType::kF64, PrimitiveType::kS64}};
  for (const auto& entry : kBits) {
    if (entry.type != type || (!largest && bits > 32)) continue;
    return LastValue{entry.pattern, largest ? -1.0 : std::ldexp(1.0, bits - 1) - 1};
  }
  return std::nullopt;
}

// LastInOrderValue as a scalar of `type`. REQUIRES: it has one.
HloInstruction* LastInOrder(PrimitiveType type, bool largest, PartitionContext& ctx) {
  const LastValue last = *LastInOrderValue(type, largest);
  HloInstruction* constant = ctx.ScalarConstant(last.constant_type, last.value);
  if (last.constant_type == type) return constant;
  return ctx.Add(HloOpcode::kBitcastConvert, Shape::Array(type, {}), {constant});
}

// Whether a merge along the top-k dim of `shape` split `tiles` ways can mask its padding.
bool CanMerge(const Shape& shape, int64_t tiles, bool largest) {
  return shape.dimensions(shape.rank() - 1) % tiles == 0 ||
         LastInOrderValue(shape.element_type(), largest).has_value();
}

// The per-device k of a local top-k whose operand shard holds `shard` elements of the row.
int64_t LocalK(int64_t k, int64_t shard) { return std::min(k, shard); }

// An array of `type` shaped `dims` with `length` along the last dim.
Shape WithLastDim(PrimitiveType type, std::vector<int64_t> dims, int64_t length) {
  dims.back() = length;
  return Shape::Array(type, dims);
}

// Whether a consumer reads result `leaf` of `original` (a root, or any user other than a
// get-tuple-element of another leaf, reads both).
bool LeafUsed(const HloInstruction& original, int64_t leaf) {
  if (original.parent() != nullptr && original.parent()->root_instruction() == &original) {
    return true;
  }
  for (const HloInstruction* user : original.users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement || user->attrs().tuple_index == leaf) {
      return true;
    }
  }
  return false;
}

// Costs `plan`: the operand's reshard, the merge's all-gather of the candidates of the leaves
// read, the reshards of the leaves read to `wanted` (one sharding per leaf).
absl::Status CostPlan(const HloInstruction& original, const std::vector<HloSharding>& wanted,
                      TopKPlan& plan, PartitionContext& ctx) {
  const Shape& operand = original.operand(0)->shape();
  const int64_t last = operand.rank() - 1;
  ASSIGN_OR_RETURN(plan.cost_us, ReshardCost(original.operand(0), plan.operand, ctx));
  ASSIGN_OR_RETURN(Shape shard, LocalShape(plan.operand, operand));
  const int64_t rows = shard.num_elements() / std::max<int64_t>(1, shard.dimensions(last));
  const int64_t local_k =
      LocalK(original.shape().tuple_shapes(0).dimensions(last), shard.dimensions(last));
  int64_t gathered_bytes = 0;
  for (int64_t i = 0; i < 2; ++i) {
    if (!LeafUsed(original, i)) continue;
    const Shape& leaf = original.shape().tuple_shapes(i);
    gathered_bytes += rows * plan.merge_tiles * local_k * hlo::ByteWidth(leaf.element_type());
    ASSIGN_OR_RETURN(double result, ResultCost(leaf, plan.result, wanted[i], ctx));
    plan.cost_us += result;
  }
  if (plan.merge_tiles > 1) {
    plan.cost_us += EstimateCollective(CollectiveKind::kAllGather, gathered_bytes, plan.merge_tiles,
                                       ctx.planner().link())
                        .time_us;
  }
  return absl::OkStatus();
}

// The candidate plans for a top-k wanted in `wanted` (one sharding per leaf), costed.
absl::StatusOr<std::vector<TopKPlan>> Candidates(const HloInstruction& original,
                                                 const std::vector<HloSharding>& wanted,
                                                 PartitionContext& ctx) {
  const Shape& shape = original.operand(0)->shape();
  const int64_t last = shape.rank() - 1;
  std::vector<std::pair<std::string, HloSharding>> sources = {{"wanted", wanted[0]}};
  ASSIGN_OR_RETURN(const PartitionedValue* now, ctx.Get(original.operand(0)));
  sources.emplace_back("operand's", now->sharding);
  std::vector<TopKPlan> plans;
  auto add = [&](std::string source, const HloSharding& operand) -> absl::Status {
    for (const TopKPlan& plan : plans) {
      if (plan.operand == operand) return absl::OkStatus();
    }
    TopKPlan plan;
    plan.source = std::move(source);
    plan.operand = operand;
    plan.merge_tiles = operand.IsTiled() ? operand.tile_assignment().dim(last) : 1;
    if (plan.merge_tiles > 1 && !CanMerge(shape, plan.merge_tiles, Largest(original))) {
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(plan.result, hlo::PartiallyReplicate(operand, {last}));
    RETURN_IF_ERROR(CostPlan(original, wanted, plan, ctx));
    plans.push_back(std::move(plan));
    return absl::OkStatus();
  };
  for (const auto& [source, sharding] : sources) {
    if (!IsPlainTiling(sharding)) continue;
    ASSIGN_OR_RETURN(HloSharding whole, hlo::PartiallyReplicate(sharding, {last}));
    RETURN_IF_ERROR(add(source + " tiling, top-k dim whole", whole));
    RETURN_IF_ERROR(add(source + " tiling, local top-k and merge", sharding));
  }
  RETURN_IF_ERROR(add("replicated", HloSharding::Replicate()));
  return plans;
}

// The stable merge's comparator over values (and, with `indices`, s32 indices carried along):
// values by topk's order (totalOrder for floats); found by name when the module has it.
absl::StatusOr<hlo::HloComputation*> MergeComparator(PrimitiveType type, bool largest, bool indices,
                                                     PartitionContext& ctx) {
  hlo::HloModule* module = ctx.output()->parent();
  RET_CHECK(module != nullptr);
  const std::string name = hlo::StrCat("topk.merge.", largest ? "gt." : "lt.",
                                       hlo::PrimitiveTypeName(type), indices ? ".indices" : "");
  if (hlo::HloComputation* found = module->GetComputation(name)) return found;
  auto computation = std::make_unique<hlo::HloComputation>(name);
  std::vector<HloInstruction*> params;
  for (int64_t i = 0; i < (indices ? 4 : 2); ++i) {
    auto param = HloInstruction::Create(HloOpcode::kParameter,
                                        Shape::Array(i < 2 ? type : PrimitiveType::kS32, {}), {});
    param->mutable_attrs()->parameter_number = i;
    params.push_back(computation->AddInstruction(std::move(param)));
    params.back()->set_name(hlo::StrCat("p", i));
  }
  HloInstruction* compare = computation->AddInstruction(HloInstruction::Create(
      HloOpcode::kCompare, Shape::Array(PrimitiveType::kPred, {}), {params[0], params[1]}));
  compare->set_name("compare");
  compare->mutable_attrs()->comparison_direction =
      largest ? hlo::ComparisonDirection::kGt : hlo::ComparisonDirection::kLt;
  if (hlo::IsFloatingPointType(type)) {
    compare->mutable_attrs()->comparison_type = hlo::ComparisonType::kTotalOrder;
  }
  computation->set_root_instruction(compare);
  hlo::HloComputation* added = module->AddComputation(std::move(computation));
  // Module-wide unique names, as SpmdBuilder::AddReducer makes them.
  for (const auto& instr : added->instructions()) {
    instr->set_name(hlo::StrCat(instr->name(), ".topk", instr->unique_id()));
  }
  return added;
}

// A top-k of `operand` (a per-device value) keeping `k` per row, shaped like `original`'s
// results with the operand's batch dims.
HloInstruction* LocalTopK(const HloInstruction& original, HloInstruction* operand, int64_t k,
                          PartitionContext& ctx) {
  std::vector<Shape> leaves;
  for (const Shape& leaf : original.shape().tuple_shapes()) {
    leaves.push_back(WithLastDim(leaf.element_type(), operand->shape().dimensions(), k));
  }
  HloInstruction* topk = CloneWithOperands(original, Shape::Tuple(leaves), {operand}, ctx);
  if (original.opcode() == HloOpcode::kTopK) topk->mutable_attrs()->k = k;
  return topk;
}

// The stable sort of the gathered candidates `leaves` (values, then indices when given) along
// `dim`, each sliced to `k`.
absl::StatusOr<std::vector<HloInstruction*>> SortAndSlice(std::vector<HloInstruction*> leaves,
                                                          int64_t dim, int64_t k, bool largest,
                                                          PartitionContext& ctx) {
  SpmdBuilder& b = ctx.builder();
  std::vector<Shape> shapes;
  for (const HloInstruction* leaf : leaves) shapes.push_back(leaf->shape());
  const bool indices = leaves.size() > 1;
  HloInstruction* sort =
      ctx.Add(HloOpcode::kSort, indices ? Shape::Tuple(shapes) : shapes[0], leaves);
  sort->mutable_attrs()->dimensions = {dim};
  sort->mutable_attrs()->is_stable = true;
  ASSIGN_OR_RETURN(hlo::HloComputation * comparator,
                   MergeComparator(shapes[0].element_type(), largest, indices, ctx));
  sort->AppendCalledComputation(comparator);
  std::vector<HloInstruction*> sliced;
  for (size_t i = 0; i < leaves.size(); ++i) {
    std::vector<int64_t> dims = shapes[i].dimensions();
    dims[dim] = k;
    sliced.push_back(b.SliceTo(indices ? b.GetTupleElement(sort, i) : sort, dims));
  }
  return sliced;
}

// The merge plan: local top-k, global indices, the candidates all-gathered along the top-k
// dim (one collective), a stable sort and a slice to k. When no consumer reads the indices
// (LeafUsed), the values merge alone -- equal values are the same bits, so their order does not
// matter -- and the indices leaf is a zeros placeholder nothing reads (as XLA's dead-code
// elimination drops the unread sort operand).
absl::StatusOr<HloInstruction*> EmitMerge(const HloInstruction& original, const TopKPlan& plan,
                                          HloInstruction* operand, PartitionContext& ctx) {
  const Shape& shape = original.operand(0)->shape();
  const int64_t last = shape.rank() - 1;
  const bool largest = Largest(original);
  if (shape.dimensions(last) % plan.merge_tiles != 0) {
    RET_CHECK(CanMerge(shape, plan.merge_tiles, largest));
    ASSIGN_OR_RETURN(operand, ctx.MaskPadding(operand, shape, plan.operand,
                                              LastInOrder(shape.element_type(), largest, ctx)));
  }
  const int64_t k = original.shape().tuple_shapes(0).dimensions(last);
  HloInstruction* topk =
      LocalTopK(original, operand, LocalK(k, operand->shape().dimensions(last)), ctx);
  SpmdBuilder& b = ctx.builder();
  HloInstruction* values = b.GetTupleElement(topk, 0);
  HloInstruction* indices = b.GetTupleElement(topk, 1);
  HloInstruction* offset = ctx.PerDeviceScalar(ctx.ShardBounds(plan.operand, shape, last));
  indices = b.Binary(HloOpcode::kAdd, indices,
                     ctx.Add(HloOpcode::kBroadcast, indices->shape(), {offset}));
  ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                   hlo::DeviceGroupsAlongDims(plan.operand.tile_assignment(), {last}));
  const hlo::ReplicaGroups replica_groups = MakeReplicaGroups(hlo::GroupLists(groups));
  std::vector<HloInstruction*> merged;
  if (LeafUsed(original, 1)) {
    HloInstruction* both = b.AllGather({values, indices}, last, replica_groups, plan.merge_tiles);
    ASSIGN_OR_RETURN(merged, SortAndSlice({b.GetTupleElement(both, 0), b.GetTupleElement(both, 1)},
                                          last, k, largest, ctx));
  } else {
    HloInstruction* gathered = b.AllGather({values}, last, replica_groups, plan.merge_tiles);
    ASSIGN_OR_RETURN(merged, SortAndSlice({gathered}, last, k, largest, ctx));
    std::vector<int64_t> dims = merged[0]->shape().dimensions();
    merged.push_back(b.Zeros(Shape::Array(PrimitiveType::kS32, dims)));
  }
  return ctx.Add(HloOpcode::kTuple, Shape::Tuple({merged[0]->shape(), merged[1]->shape()}), merged);
}

std::string ExplainLine(const HloInstruction& original, const std::vector<TopKPlan>& plans,
                        const TopKPlan& chosen) {
  std::string line = hlo::StrCat("topk %", original.name(), ":");
  for (const TopKPlan& plan : plans) {
    hlo::StrAppend(&line, " [", plan.source, " ", plan.operand.ToStringWithoutMetadata(), ": ",
                   plan.cost_us, " us]");
  }
  hlo::StrAppend(&line, " -> ", chosen.source);
  return line;
}

}  // namespace

absl::Status HandleTopK(const HloInstruction& original, const HloSharding& sharding,
                        PartitionContext& ctx) {
  const Shape& shape = original.operand(0)->shape();
  const bool plain = original.operand_count() == 1 && shape.IsArray() && shape.rank() >= 1 &&
                     original.shape().IsTuple() && original.shape().tuple_shapes().size() == 2;
  std::vector<HloSharding> wanted;
  if (sharding.IsTuple()) {
    wanted = sharding.tuple_elements();
  } else {
    wanted = {sharding, sharding};
  }
  if (!plain || wanted.size() != 2 || !IsPlainTiling(wanted[0]) || !IsPlainTiling(wanted[1])) {
    return FallBackToReplicated(original, sharding, ctx,
                                "a top-k with subgroups in its sharding, or not one array operand");
  }
  ASSIGN_OR_RETURN(std::vector<TopKPlan> plans, Candidates(original, wanted, ctx));
  RET_CHECK(!plans.empty());
  const TopKPlan* best = &plans.front();
  for (const TopKPlan& plan : plans) {
    if (plan.cost_us < best->cost_us) best = &plan;
  }
  ctx.log().lines.push_back(ExplainLine(original, plans, *best));
  if (best->operand.IsReplicated() && !sharding.IsTileMaximal()) {
    RETURN_IF_ERROR(
        ctx.RecordFallback(original, sharding, "computing the top-k whole is cheapest"));
  }
  ASSIGN_OR_RETURN(HloInstruction * operand, ctx.GetInSharding(original.operand(0), best->operand));
  HloInstruction* result = nullptr;
  if (best->merge_tiles > 1) {
    ASSIGN_OR_RETURN(result, EmitMerge(original, *best, operand, ctx));
  } else {
    result = LocalTopK(original, operand,
                       original.shape().tuple_shapes(0).dimensions(shape.rank() - 1), ctx);
  }
  ctx.Set(&original,
          {result, HloSharding::SingleTuple(original.shape(), best->result), original.shape()});
  return absl::OkStatus();
}

void RegisterTopKHandler(HandlerTable& table) { table[HloOpcode::kTopK] = &HandleTopK; }

}  // namespace spmd

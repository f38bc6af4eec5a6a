// Manual sharding: values the user has already partitioned by hand.
//
// An instruction whose sharding is `{manual}` (or a tuple of them) is left alone: each device
// runs it as written on its own per-device values (its shape is already the per-device
// shape). A value enters a manual region only through SPMDFullToShardShape (the device's
// shard of a value sharded as the custom-call's operand is, which becomes its manual value)
// or as a replicated value (every device's copy is its manual value), and leaves it only
// through SPMDShardToFullShape (the manual values become the shards of the result's
// sharding). On 2 devices:
//
//   %s = f32[4,2] custom-call(f32[8,2] %x), custom_call_target="SPMDFullToShardShape",
//        sharding={manual}                        (%x sharded {devices=[2,1]<=[2]})
//   %n = f32[4,2] negate(%s), sharding={manual}
//   %f = f32[8,2] custom-call(%n), custom_call_target="SPMDShardToFullShape",
//        sharding={devices=[2,1]<=[2]}
//   -> %n.spmd = f32[4,2] negate(%x), and %f's per-device value is %n.spmd, sharded [2,1].
//
// Manual subgroups (`last_tile_dims={manual}`: manual along some mesh axes, tiled along the
// others): an instruction whose value is whole on every device (all data dims untiled) runs as
// written too, as does a collective of the input program (its replica groups already name
// real devices); other instructions are partitioned by their handlers inside each group, and
// reshards stay inside the groups (PartitionContext::ReshardManual). SPMDShardToFullShape may
// also leave manual mode along some mesh axes only (a result with manual subgroups, as nested
// shard_maps do): each device's value becomes its tile of the result there too.
#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>
#include <vector>

#include "hlo/sharding/device_groups.h"
#include "hlo/sharding/implied_sharding.h"
#include "hlo/sharding/manual_conversion.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/reshard/reshard_grouped.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

HloSharding ManualFor(const Shape& shape) {
  return shape.IsTuple() ? HloSharding::SingleTuple(shape, HloSharding::Manual())
                         : HloSharding::Manual();
}

// The sharding `operand` was annotated with (replicated when it has none).
HloSharding AnnotatedSharding(const HloInstruction& operand) {
  if (!operand.has_sharding()) return HloSharding::Replicate();
  return operand.sharding();
}

// The device sets of `sharding`'s manual groups (the devices sharing an index along its
// manual dim), each sorted, in sorted order; nullopt without a manual subgroup.
std::optional<std::vector<std::vector<int64_t>>> ManualGroupLists(const HloSharding& s) {
  if (!s.HasManualSubgroup()) return std::nullopt;
  std::vector<int64_t> within;
  for (int64_t d = 0; d < s.tile_assignment().rank(); ++d) {
    if (d != s.SubgroupManualDim()) within.push_back(d);
  }
  absl::StatusOr<hlo::TileAssignment> groups =
      hlo::DeviceGroupsAlongDims(s.tile_assignment(), within);
  if (!groups.ok()) return std::nullopt;
  std::vector<std::vector<int64_t>> lists = hlo::GroupLists(*groups);
  for (std::vector<int64_t>& devices : lists) std::sort(devices.begin(), devices.end());
  std::sort(lists.begin(), lists.end());
  return lists;
}

// A conversion into a nested manual region (its operand already manual along some mesh axes,
// `outer`) must keep each of its manual values inside one outer group: `inner` is {manual}, or
// its manual groups each lie in one group of `outer`.
absl::Status CheckNestsInManualGroups(const HloSharding& inner, const HloSharding& outer) {
  if (!outer.HasManualSubgroup() || inner.IsManual()) return absl::OkStatus();
  const auto outer_groups = ManualGroupLists(outer);
  const auto inner_groups = ManualGroupLists(inner);
  bool nests = outer_groups.has_value() && inner_groups.has_value();
  for (size_t g = 0; nests && g < inner_groups->size(); ++g) {
    const std::vector<int64_t>& devices = (*inner_groups)[g];
    nests = std::any_of(
        outer_groups->begin(), outer_groups->end(), [&](const std::vector<int64_t>& group) {
          return std::includes(group.begin(), group.end(), devices.begin(), devices.end());
        });
  }
  if (nests) return absl::OkStatus();
  return absl::InvalidArgumentError(hlo::StrCat(
      "SPMDFullToShardShape enters a nested manual region: its operand is manual along some "
      "mesh axes (",
      outer.ToString(), "), so its result must be {manual} or manual in groups inside those, not ",
      inner.ToString()));
}

absl::Status CheckShapesMatch(const HloInstruction& original, const Shape& local,
                              const Shape& want, std::string_view what) {
  if (local.Compatible(want)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      hlo::StrCat("custom-call \"", original.attrs().custom_call_target, "\": ", what, " is ",
                  local.ToString(false), " per device, but the custom-call's ",
                  original.attrs().custom_call_target == "SPMDFullToShardShape" ? "result"
                                                                                 : "operand",
                  " is ", want.ToString(false)));
}

// SPMDFullToShardShape gives every device its shard of the operand as its manual value: a
// tiling over some of the devices (which the partitioner otherwise accepts) leaves the others'
// values undefined.
absl::Status CheckUsesEveryDevice(const HloSharding& from, int64_t num_devices) {
  if (!from.IsTiled()) return absl::OkStatus();
  std::vector<int64_t> unused;
  for (int64_t d = 0; d < num_devices; ++d) {
    if (!from.UsesDevice(d)) unused.push_back(d);
  }
  if (unused.empty()) return absl::OkStatus();
  const std::string which =
      unused.size() == 1 ? hlo::StrCat("device ", unused.front())
      : unused.back() - unused.front() + 1 == static_cast<int64_t>(unused.size())
          ? hlo::StrCat("devices ", unused.front(), "-", unused.back())
          : hlo::StrCat(unused.size(), " of the devices (", unused.front(), ", ...)");
  return absl::InvalidArgumentError(
      hlo::StrCat("custom-call \"SPMDFullToShardShape\": the operand's sharding ", from.ToString(),
                  " does not use ", which, " of the ", num_devices,
                  " devices, whose manual values would then be undefined"));
}

// The sharding `operand` must be in for `original` (sharded `sharding`) to run as written.
absl::StatusOr<HloSharding> OperandShardingForManual(const HloInstruction& original,
                                                     const HloSharding& sharding,
                                                     const HloInstruction& operand) {
  if (sharding.IsManual()) return ManualFor(operand.shape());
  if (operand.shape().Compatible(original.shape())) return sharding;
  // A collective on tiles (CollectiveSharding): the dims it changes are whole there.
  if (!sharding.IsTuple() && !IsWholeOnEveryDevice(sharding)) return sharding;
  return WholeInManualGroups(sharding, operand.shape());
}

// Appends, for every leaf of `shape` in flattened order, the sharding that keeps it whole
// inside the manual subgroups of `leaf` (a non-array leaf keeps `leaf`'s rank).
absl::Status AppendWholeLeaves(const HloSharding& leaf, const Shape& shape,
                               std::vector<HloSharding>& leaves) {
  if (!shape.IsTuple()) {
    ASSIGN_OR_RETURN(HloSharding s, hlo::WholeInManualSubgroups(
                                        leaf, shape.IsArray() ? shape.rank()
                                                              : leaf.TiledDataRank()));
    leaves.push_back(std::move(s));
    return absl::OkStatus();
  }
  for (const Shape& element : shape.tuple_shapes()) {
    RETURN_IF_ERROR(AppendWholeLeaves(leaf, element, leaves));
  }
  return absl::OkStatus();
}

// The device sets collective `original` of the input program combines, with one replica (XLA's
// CollectiveOpGroupMode): without a channel_id each device alone; with one, its pairs, or its
// groups of partitions (none: every device), except that an all-reduce, all-gather or
// reduce-scatter without use_global_device_ids groups replicas, and so every partition.
std::vector<std::vector<int64_t>> CombinedDevices(const HloInstruction& original,
                                                  int64_t num_devices) {
  static constexpr hlo::HloOpcode kReplicaGrouped[] = {
      hlo::HloOpcode::kAllReduce, hlo::HloOpcode::kAllReduceStart, hlo::HloOpcode::kAllGather,
      hlo::HloOpcode::kAllGatherStart, hlo::HloOpcode::kReduceScatter};
  const hlo::InstructionAttributes& attrs = original.attrs();
  std::vector<std::vector<int64_t>> groups;
  if (!attrs.channel_id.has_value()) return groups;
  for (const auto& [from, to] : attrs.source_target_pairs) groups.push_back({from, to});
  if (!groups.empty()) return groups;
  if (attrs.replica_groups) groups = attrs.replica_groups->Expanded();
  const bool by_replica = !attrs.use_global_device_ids &&
                          std::find(std::begin(kReplicaGrouped), std::end(kReplicaGrouped),
                                    original.opcode()) != std::end(kReplicaGrouped);
  if (groups.empty() || by_replica) {
    groups.assign(1, std::vector<int64_t>(num_devices));
    std::iota(groups[0].begin(), groups[0].end(), 0);
  }
  return groups;
}

// A collective of the input program that runs as written under manual subgroups may only
// combine devices that differ in their manual index alone (hold the same tile).
absl::Status CheckCollectiveStaysOnItsTile(const HloInstruction& original,
                                           const HloSharding& sharding, int64_t num_devices) {
  const HloSharding* leaf = ManualSubgroupLeaf(sharding);
  if (leaf == nullptr || IsWholeOnEveryDevice(*leaf)) return absl::OkStatus();
  const hlo::TileAssignment& ta = leaf->tile_assignment();
  const int64_t manual = leaf->SubgroupManualDim();
  std::map<int64_t, std::vector<int64_t>> tile_of;  // Device -> index without the manual dim.
  ta.ForEach([&](absl::Span<const int64_t> index, int64_t device) {
    std::vector<int64_t> key(index.begin(), index.end());
    key.erase(key.begin() + manual);
    tile_of[device] = std::move(key);
  });
  for (const std::vector<int64_t>& group : CombinedDevices(original, num_devices)) {
    for (int64_t device : group) {
      if (tile_of.count(device) && tile_of.count(group.front()) &&
          tile_of[device] == tile_of[group.front()]) {
        continue;
      }
      return absl::InvalidArgumentError(hlo::StrCat(
          hlo::HloOpcodeString(original.opcode()), " groups devices ", group.front(), " and ",
          device, ", which hold different tiles of ", leaf->ToString(),
          "; inside manual subgroups a collective may only combine devices of one tile"));
    }
  }
  return absl::OkStatus();
}

// The two sides of manual conversion `original` as the partitioner moves the value across:
// `global`, whose tile on each device is that device's `local` tile.
struct ManualSides {
  HloSharding global;
  HloSharding local;
};

// The sides of `original` given its global side's sharding and its local side's (`local`):
// each device's manual value, its tile under `local`, is its tile of `global` taken whole
// along the open dims the value is whole along (hlo::ConversionGlobalSharding), as XLA has
// it. Where `local` also splits the manual values inside their groups (a partly manual region
// whose open dims propagation split), that reading must agree with the reference's -- each
// group's whole value is its tile of the global side, and a device's tile is its piece of that
// (hlo::StructureFromGlobal) -- else the reference's is taken: the global side is the group
// tiling split as `local` splits it (hlo::GlobalFromLocal), or, when the two do not fit so,
// the value crosses whole in each group and moves to `local` inside the region.
absl::StatusOr<ManualSides> ConversionSides(const HloInstruction& original,
                                            const HloSharding& global, const HloSharding& local) {
  const bool to_shard = original.attrs().custom_call_target == "SPMDFullToShardShape";
  const Shape& global_shape = to_shard ? original.operand(0)->shape() : original.shape();
  const Shape& local_shape = to_shard ? original.shape() : original.operand(0)->shape();
  ASSIGN_OR_RETURN(Shape value, LocalShape(local, local_shape));
  ASSIGN_OR_RETURN(HloSharding tiles, hlo::ConversionGlobalSharding(original, global, value));
  if (!local.HasManualSubgroup() || IsWholeOnEveryDevice(local)) {
    return ManualSides{std::move(tiles), local};
  }
  absl::StatusOr<Shape> tile = LocalShape(tiles, global_shape);
  if ((tile.ok() && tile->Compatible(value) &&
       hlo::StructureFromGlobal(tiles, local, global_shape).ok()) ||
      global.HasManualSubgroup()) {
    return ManualSides{std::move(tiles), local};
  }
  ASSIGN_OR_RETURN(HloSharding whole, WholeInManualGroups(local, local_shape));
  ASSIGN_OR_RETURN(value, LocalShape(whole, local_shape));
  ASSIGN_OR_RETURN(tiles, hlo::ConversionGlobalSharding(original, global, value));
  // Each group's value must be its tile of the global side (else the shapes' check refuses).
  tile = LocalShape(tiles, global_shape);
  if (!tile.ok() || !tile->Compatible(value))
    return ManualSides{std::move(tiles), std::move(whole)};
  absl::StatusOr<HloSharding> split = hlo::GlobalFromLocal(local, tiles, global_shape);
  if (split.ok()) return ManualSides{*std::move(split), local};
  return ManualSides{std::move(tiles), std::move(whole)};
}

// The sharding collective `original` of the input program runs in, asked for `sharding`: on
// each device's tile where the free axes split the values inside their manual groups, when the
// dims it changes (gathered, scattered, exchanged) are whole there; otherwise on each group's
// whole value, which its users then split. Fails when its groups combine devices of different
// tiles (CheckCollectiveStaysOnItsTile).
absl::StatusOr<HloSharding> CollectiveSharding(const HloInstruction& original,
                                               const HloSharding& sharding, int64_t num_devices) {
  // Groups that combine devices of different tiles are refused, as XLA refuses them.
  RETURN_IF_ERROR(CheckCollectiveStaysOnItsTile(original, sharding, num_devices));
  if (sharding.IsTuple() || !sharding.HasManualSubgroup() || IsWholeOnEveryDevice(sharding)) {
    return sharding;
  }
  bool fits = true;
  const Shape& result = original.shape();
  for (const HloInstruction* operand : original.operands()) {
    const Shape& shape = operand->shape();
    if (!shape.IsArray() || shape.rank() != result.rank()) {
      fits = false;
      continue;
    }
    for (int64_t d = 0; d < shape.rank(); ++d) {
      fits = fits && (shape.dimensions(d) == result.dimensions(d) ||
                      sharding.tile_assignment().dim(d) == 1);
    }
  }
  if (fits) return sharding;
  return WholeInManualGroups(sharding, result);
}

}  // namespace

const HloSharding* ManualSubgroupLeaf(const HloSharding& sharding) {
  if (!sharding.IsTuple()) return sharding.HasManualSubgroup() ? &sharding : nullptr;
  for (const HloSharding& leaf : sharding.tuple_elements()) {
    if (leaf.HasManualSubgroup()) return &leaf;
  }
  return nullptr;
}

bool SameManualGroups(const HloSharding& a, const HloSharding& b) {
  const auto a_groups = ManualGroupLists(a);
  return a_groups.has_value() && a_groups == ManualGroupLists(b);
}

absl::StatusOr<HloSharding> ReplicatedIn(const HloSharding& like, const Shape& shape) {
  if (ManualSubgroupLeaf(like) == nullptr) {
    return shape.IsTuple() ? HloSharding::SingleTuple(shape, HloSharding::Replicate())
                           : HloSharding::Replicate();
  }
  return WholeInManualGroups(like, shape);
}

bool WholeWhereItLives(const HloSharding& sharding) {
  return sharding.IsReplicated() ||
         (sharding.HasManualSubgroup() && IsWholeOnEveryDevice(sharding));
}

bool SameManualGroupsOrNone(const HloSharding& a, const HloSharding& b) {
  if (!a.HasManualSubgroup() && !b.HasManualSubgroup()) return true;
  return SameManualGroups(a, b);
}

absl::Status CheckStaysInManualGroups(const HloInstruction& instr, const HloSharding& groups,
                                      int64_t num_devices, bool per_group_decisions) {
  const HloSharding* leaf = ManualSubgroupLeaf(groups);
  if (leaf == nullptr ||
      hlo::GetHloOpcodeFamily(instr.opcode()) != hlo::HloOpcodeFamily::kCollective) {
    return absl::OkStatus();
  }
  std::map<int64_t, int64_t> group_of;  // Device -> its manual index.
  const int64_t manual = leaf->SubgroupManualDim();
  leaf->tile_assignment().ForEach(
      [&](absl::Span<const int64_t> index, int64_t device) { group_of[device] = index[manual]; });
  // A device outside the sharding is a group of its own.
  auto group = [&](int64_t d) { return group_of.count(d) ? group_of[d] : -1 - d; };
  for (const std::vector<int64_t>& devices : CombinedDevices(instr, num_devices)) {
    for (int64_t device : devices) {
      if (group(device) == group(devices.front())) continue;
      const std::string why =
          per_group_decisions
              ? ", which decide on their own (a branch index or loop condition per group), so "
                "the devices may never meet there; shard the value inside the groups"
              : ", which hold different values; a collective made inside manual subgroups must "
                "stay inside one group (the operands mix values from inside and outside the "
                "manual region)";
      return absl::UnimplementedError(hlo::StrCat(
          "its ", hlo::HloOpcodeString(instr.opcode()), " would combine devices ", devices.front(),
          " and ", device, " of different manual groups of ", leaf->ToString(), why));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<HloSharding> WholeInManualGroups(const HloSharding& like, const Shape& shape) {
  const HloSharding* leaf = ManualSubgroupLeaf(like);
  if (leaf == nullptr) {
    return absl::InvalidArgumentError(
        hlo::StrCat(like.ToString(), " has no manual subgroup to keep a value whole in"));
  }
  std::vector<HloSharding> leaves;
  RETURN_IF_ERROR(AppendWholeLeaves(*leaf, shape, leaves));
  if (!shape.IsTuple()) return leaves.front();
  return HloSharding::Tuple(std::move(leaves));
}

bool RunsAsWritten(const HloInstruction& instr, const HloSharding& sharding) {
  if (sharding.IsManual()) return true;
  const absl::Span<const HloSharding> leaves = sharding.Leaves();
  bool any_subgroup = false;
  bool all_whole = !leaves.empty();
  for (const HloSharding& leaf : leaves) {
    const bool subgroup = leaf.HasManualSubgroup();
    any_subgroup = any_subgroup || subgroup;
    all_whole = all_whole && (leaf.IsManual() || (subgroup && IsWholeOnEveryDevice(leaf)));
  }
  if (all_whole) return true;
  return any_subgroup &&
         hlo::GetHloOpcodeFamily(instr.opcode()) == hlo::HloOpcodeFamily::kCollective;
}

// Whether `computation`, or one it calls, converts values into or out of a manual region.
bool CallsManualConversions(const hlo::HloComputation& computation) {
  for (const auto& instr : computation.instructions()) {
    if (hlo::IsManualConversion(*instr)) return true;
    for (const hlo::HloComputation* callee : instr->called_computations()) {
      if (CallsManualConversions(*callee)) return true;
    }
  }
  return false;
}

// Whether an operand of `original` is split inside its manual groups where it is now (the
// free axes of a partly manual region split it).
absl::StatusOr<bool> OperandSplitInGroups(const HloInstruction& original, PartitionContext& ctx) {
  for (const HloInstruction* operand : original.operands()) {
    ASSIGN_OR_RETURN(const PartitionedValue* value, ctx.Get(operand));
    for (const HloSharding& leaf : value->sharding.Leaves()) {
      if (leaf.HasManualSubgroup() && !IsWholeOnEveryDevice(leaf)) return true;
    }
  }
  return false;
}

absl::Status HandleManual(const HloInstruction& original, const HloSharding& sharding,
                          PartitionContext& ctx) {
  // An op whose result is whole in its groups but whose operands the free axes split inside
  // them goes to its own handler (run as written, its operands would be gathered first): a
  // call partitions its body like any other computation's, a dot sums the partials of a
  // contracted split, a gather masks its local rows and sums. A call that nests a manual region
  // always partitions its body: its conversions are not code a device can run. The input's
  // collectives run as written (on tiles where they can, CollectiveSharding).
  const bool call = original.opcode() == hlo::HloOpcode::kCall;
  if (call && CallsManualConversions(*original.to_apply())) {
    return FindPartitionHandler(original.opcode())(original, sharding, ctx);
  }
  if (ManualSubgroupLeaf(sharding) != nullptr &&
      hlo::GetHloOpcodeFamily(original.opcode()) != hlo::HloOpcodeFamily::kCollective) {
    ASSIGN_OR_RETURN(const bool split, OperandSplitInGroups(original, ctx));
    if (split) return FindPartitionHandler(original.opcode())(original, sharding, ctx);
  }
  return HandleManualAsWritten(original, sharding, ctx);
}

absl::Status HandleManualAsWritten(const HloInstruction& original, const HloSharding& sharding,
                                   PartitionContext& ctx) {
  HloSharding run = sharding;
  if (hlo::GetHloOpcodeFamily(original.opcode()) == hlo::HloOpcodeFamily::kCollective) {
    ASSIGN_OR_RETURN(run, CollectiveSharding(original, sharding, ctx.num_devices()));
  }
  std::vector<HloInstruction*> operands;
  for (const HloInstruction* operand : original.operands()) {
    ASSIGN_OR_RETURN(HloSharding want, OperandShardingForManual(original, run, *operand));
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(operand, want));
    operands.push_back(value);
  }
  ASSIGN_OR_RETURN(Shape local, LocalShape(run, original.shape()));
  HloInstruction* clone = CloneWithOperands(original, std::move(local), std::move(operands), ctx);
  ctx.Set(&original, {clone, run, original.shape()});
  return absl::OkStatus();
}

absl::Status HandleFullToShardShape(const HloInstruction& original, const HloSharding& sharding,
                                    PartitionContext& ctx) {
  if (original.operand_count() != 1 || !original.shape().IsArray() ||
      !(sharding.IsManual() || sharding.HasManualSubgroup())) {
    return absl::InvalidArgumentError(
        "SPMDFullToShardShape takes one array operand and must be sharded {manual} or with a "
        "manual subgroup");
  }
  const HloInstruction* operand = original.operand(0);
  RETURN_IF_ERROR(CheckNestsInManualGroups(sharding, AnnotatedSharding(*operand)));
  // Each device's shard becomes its manual value: with manual subgroups, its (padded) tile of
  // the group's value under the result's sharding. The operand is taken whole along the open
  // dims that value is whole along, whatever propagation split there.
  ASSIGN_OR_RETURN(ManualSides sides,
                   ConversionSides(original, AnnotatedSharding(*operand), sharding));
  RETURN_IF_ERROR(CheckUsesEveryDevice(sides.global, ctx.num_devices()));
  ASSIGN_OR_RETURN(HloInstruction * shard, ctx.GetInSharding(operand, sides.global));
  ASSIGN_OR_RETURN(Shape want, LocalShape(sides.local, original.shape()));
  RETURN_IF_ERROR(
      CheckShapesMatch(original, shard->shape(), want,
                       hlo::StrCat("the operand's shard under ", sides.global.ToString())));
  // The region's code may read (or move) a padded tile's padding: it is zeros there, as the
  // per-device reference has it (runtime/cpu/ops/manual_ops.cc), not what the reshard left.
  ASSIGN_OR_RETURN(shard, ctx.MaskPadding(shard, operand->shape(), sides.global));
  ctx.Set(&original, {shard, sides.local, original.shape()});
  return absl::OkStatus();
}

absl::Status HandleShardToFullShape(const HloInstruction& original, const HloSharding& sharding,
                                    PartitionContext& ctx) {
  if (original.operand_count() != 1 || !original.shape().IsArray() || sharding.IsTuple()) {
    return absl::InvalidArgumentError("SPMDShardToFullShape takes one array operand");
  }
  // A result with manual subgroups leaves manual mode along some mesh axes only (nested
  // manual regions); either way each device's manual value becomes its tile of the result.
  if (sharding.IsManual()) {
    return absl::InvalidArgumentError(
        "SPMDShardToFullShape's result must not be manual: it leaves the manual region");
  }
  const HloInstruction* operand = original.operand(0);
  // The operand stays in its manual sharding ({manual}, or its manual subgroups' tiling).
  ASSIGN_OR_RETURN(const PartitionedValue* current, ctx.Get(operand));
  HloSharding from = AnnotatedSharding(*operand);
  if (!from.IsManual() && !from.HasManualSubgroup()) from = current->sharding;
  if (!from.IsManual() && !from.HasManualSubgroup()) from = HloSharding::Manual();
  // The manual values become tiles of the result whole along the open dims they are whole
  // along; where propagation split the result further, its users reshard from those tiles.
  ASSIGN_OR_RETURN(ManualSides sides, ConversionSides(original, sharding, from));
  ASSIGN_OR_RETURN(HloInstruction * manual, ctx.GetInSharding(operand, sides.local));
  ASSIGN_OR_RETURN(Shape local, LocalShape(sides.global, original.shape()));
  RETURN_IF_ERROR(
      CheckShapesMatch(original, local, manual->shape(),
                       hlo::StrCat("the result's shard under ", sides.global.ToString())));
  ctx.Set(&original, {manual, sides.global, original.shape()});
  return absl::OkStatus();
}

}  // namespace spmd

// The oracle's steps (see verify.h): random arguments, per-device slicing by parameter
// shardings, two runs, assembly by the root sharding, element-wise comparison. Tuple-shaped
// values are handled leaf by leaf in flattened order, which is also the order of a tuple
// sharding's elements.
#include "runtime/cpu/verify.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <map>

#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/sharding/unreduced.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/collective_groups.h"
#include "runtime/common/tuple_leaves.h"
#include "runtime/cpu/box_copy.h"
#include "runtime/cpu/multi_device_runner.h"
#include "runtime/cpu/ops/manual_ops.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;
using hlo::ShapeIndex;

// ---- Random values --------------------------------------------------------------------------

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double UniformMinusOneToOne(uint64_t& state) {
  return static_cast<double>(SplitMix64(state) >> 11) * 0x1.0p-52 - 1.0;
}

// Stores `draw(state)`, converted to T, into each of the `count` elements at `data`.
template <typename T, typename Draw>
void FillTyped(uint8_t* data, int64_t count, uint64_t& state, Draw draw) {
  for (int64_t i = 0; i < count; ++i) {
    const T value = static_cast<T>(draw(state));
    std::memcpy(data + i * sizeof(T), &value, sizeof(T));
  }
}

void FillRandomArray(Literal& literal, uint64_t state) {
  if (!literal.shape().IsArray()) return;
  const int64_t count = literal.element_count();
  uint8_t* data = literal.mutable_data()->data();
  // The commonest types in a typed loop: the same draws and conversions as SetRandomElement.
  const PrimitiveType type = literal.shape().element_type();
  if (type == PrimitiveType::kF32) {
    return FillTyped<float>(data, count, state, UniformMinusOneToOne);
  }
  if (type == PrimitiveType::kS32) {
    return FillTyped<int32_t>(data, count, state, [](uint64_t& s) {
      return static_cast<int64_t>(SplitMix64(s) % 16) - 8;
    });
  }
  for (int64_t i = 0; i < count; ++i) SetRandomElement(literal, i, state);
}

// ---- Manual values ---------------------------------------------------------------------------

// Which independent value `device` holds of a leaf sharded `s`: its own ({manual}), its manual
// group's (manual subgroups: the index along the manual dim), or -1 (the one global value).
int64_t ManualValueIndex(const HloSharding& s, int64_t device) {
  if (s.IsManual()) return device;
  if (!s.HasManualSubgroup()) return -1;
  std::optional<std::vector<int64_t>> index = s.tile_assignment().TileIndexOf(device);
  return index ? (*index)[s.SubgroupManualDim()] : 0;
}

// The tiling that manual group `group` of `s` gives its value: `s`'s tile array at that manual
// index, over the group's devices only.
absl::StatusOr<HloSharding> GroupTiling(const HloSharding& s, int64_t group) {
  const hlo::TileAssignment& ta = s.tile_assignment();
  const int64_t manual = s.SubgroupManualDim();
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < ta.rank(); ++d) {
    if (d != manual) dims.push_back(ta.dim(d));
  }
  std::vector<int64_t> devices;
  ta.ForEach([&](absl::Span<const int64_t> index, int64_t device) {
    if (index[manual] == group) devices.push_back(device);
  });
  std::vector<hlo::OpShardingType> types;
  for (size_t i = 0; i < s.subgroup_types().size(); ++i) {
    if (s.TiledDataRank() + static_cast<int64_t>(i) != manual) types.push_back(s.subgroup_types()[i]);
  }
  bool whole = true;  // No data dim is split: the group's first device holds the value.
  for (int64_t d = 0; d < s.TiledDataRank(); ++d) whole = whole && ta.dim(d) == 1;
  if (whole || devices.size() == 1) return HloSharding::Maximal(devices.front());
  ASSIGN_OR_RETURN(hlo::TileAssignment group_ta, hlo::TileAssignment::Explicit(dims, devices));
  return HloSharding::Subgroup(std::move(group_ta), types);
}

// ---- Slicing arguments ----------------------------------------------------------------------

// Device arguments for every device: parameter i of the SPMD program on device d is cut from
// full argument i by the unpartitioned parameter's sharding.
absl::StatusOr<std::vector<std::vector<Literal>>> ShardEntryArguments(
    const hlo::HloComputation& unpartitioned, const hlo::HloComputation& spmd,
    const std::vector<Literal>& arguments, int64_t num_devices) {
  std::vector<std::vector<Literal>> per_device(num_devices);
  for (int64_t p = 0; p < unpartitioned.num_parameters(); ++p) {
    const HloInstruction* full_param = unpartitioned.parameter_instruction(p);
    const HloInstruction* device_param = spmd.parameter_instruction(p);
    const Shape& full_shape = full_param->shape();
    const Shape& device_shape = device_param->shape();
    const std::vector<ShapeIndex> leaves = LeafIndices(full_shape);
    if (LeafIndices(device_shape).size() != leaves.size()) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "parameter ", p, ": the unpartitioned module takes ", full_shape.ToString(false),
          " but the SPMD program takes ", device_shape.ToString(false)));
    }
    for (int64_t d = 0; d < num_devices; ++d) per_device[d].emplace_back(device_shape);
    for (size_t k = 0; k < leaves.size(); ++k) {
      const std::string where =
          LeafName(hlo::StrCat("parameter ", p, " (%", full_param->name(), ")"), leaves[k]);
      absl::StatusOr<HloSharding> sharding =
          LeafSharding(full_param->sharding_ptr(), full_shape, static_cast<int64_t>(k));
      if (!sharding.ok()) {
        return absl::InvalidArgumentError(
            hlo::StrCat(where, ": ", hlo::ToStd(sharding.status().message())));
      }
      if (sharding->IsManual()) {
        for (int64_t d = 0; d < num_devices; ++d) {
          MutableLeafOf(per_device[d][p], leaves[k]) =
              ManualLeafForDevice(LeafOf(arguments[p], leaves[k]), d, p, static_cast<int64_t>(k));
        }
        continue;
      }
      for (int64_t d = 0; d < num_devices; ++d) {
        // Manual groups hold independent values (group 0 the argument itself).
        const int64_t group = ManualValueIndex(*sharding, d);
        std::optional<Literal> own;
        if (group > 0) {
          own = ManualLeafForDevice(LeafOf(arguments[p], leaves[k]), group, p,
                                    static_cast<int64_t>(k));
        }
        absl::StatusOr<Literal> shard = ShardForDevice(own ? *own : LeafOf(arguments[p], leaves[k]),
                                                       *sharding,
                                                       LeafShape(device_shape, leaves[k]), d);
        if (!shard.ok()) {
          return absl::InvalidArgumentError(
              hlo::StrCat(where, ": ", hlo::ToStd(shard.status().message())));
        }
        MutableLeafOf(per_device[d][p], leaves[k]) = *std::move(shard);
      }
    }
  }
  return per_device;
}

absl::Status CheckArguments(const hlo::HloComputation& entry,
                            const std::vector<Literal>& arguments) {
  if (static_cast<int64_t>(arguments.size()) != entry.num_parameters()) {
    return absl::InvalidArgumentError(hlo::StrCat("the module takes ", entry.num_parameters(),
                                                  " arguments, got ", arguments.size()));
  }
  for (size_t p = 0; p < arguments.size(); ++p) {
    const Shape& want = entry.parameter_instruction(p)->shape();
    if (!arguments[p].shape().Compatible(want)) {
      return absl::InvalidArgumentError(
          hlo::StrCat("argument ", p, " is ", arguments[p].shape().ToString(false), ", parameter ",
                      p, " is ", want.ToString(false)));
    }
  }
  return absl::OkStatus();
}

// Compares a manual root leaf device by device with the per-device reference results: the
// verdict is the first device's that fails, else the one with the largest error.
absl::StatusOr<LeafVerdict> VerifyManualLeaf(LeafVerdict verdict, const ShapeIndex& index,
                                             const std::vector<Literal>& device_results,
                                             const std::vector<Literal>& expected,
                                             Literal& assembled) {
  if (expected.size() != device_results.size()) {
    return absl::InvalidArgumentError(hlo::StrCat(
        verdict.name, " is manual but the reference ran on ", expected.size(), " device(s)"));
  }
  std::optional<ArrayComparison> worst;
  size_t worst_device = 0;
  for (size_t d = 0; d < expected.size(); ++d) {
    ArrayComparison c = CompareArrays(LeafOf(expected[d], index), LeafOf(device_results[d], index),
                                      verdict.tolerance);
    if (!worst || (worst->ok() && (!c.ok() || c.max_abs_error > worst->max_abs_error))) {
      worst = std::move(c);
      worst_device = d;
    }
  }
  verdict.name += hlo::StrCat(" (manual; worst device ", worst_device, " of ", expected.size(), ")");
  verdict.comparison = *std::move(worst);
  MutableLeafOf(assembled, index) = LeafOf(device_results.front(), index);
  return verdict;
}

// Compares a root leaf sharded with manual subgroups group by group: each group's devices
// assemble the group's value by its tiling, compared with the reference result of the group's
// first device. The verdict is the first failing group's, else the one with the largest error.
absl::StatusOr<LeafVerdict> VerifyManualGroupsLeaf(LeafVerdict verdict, const ShapeIndex& index,
                                                   const HloSharding& sharding,
                                                   const std::vector<Literal>& device_results,
                                                   const std::vector<Literal>& expected,
                                                   Literal& assembled) {
  if (expected.size() != device_results.size()) {
    return absl::InvalidArgumentError(hlo::StrCat(
        verdict.name, " has manual subgroups but the reference ran on ", expected.size(),
        " device(s)"));
  }
  std::vector<const Literal*> shards;
  for (const Literal& result : device_results) shards.push_back(&LeafOf(result, index));
  const int64_t groups = sharding.tile_assignment().dim(sharding.SubgroupManualDim());
  std::optional<LeafVerdict> worst;
  int64_t worst_group = 0;
  for (int64_t g = 0; g < groups; ++g) {
    ASSIGN_OR_RETURN(HloSharding tiling, GroupTiling(sharding, g));
    int64_t first = -1;
    for (int64_t d = 0; d < static_cast<int64_t>(shards.size()) && first < 0; ++d) {
      if (ManualValueIndex(sharding, d) == g) first = d;
    }
    if (first < 0) continue;
    absl::StatusOr<Assembled> parts = AssembleFromShards(shards, tiling, verdict.shape);
    if (!parts.ok()) {
      return absl::InvalidArgumentError(
          hlo::StrCat(verdict.name, ": group ", g, ": ", hlo::ToStd(parts.status().message())));
    }
    LeafVerdict v = verdict;
    v.disagreement = std::move(parts->disagreement);
    v.comparison = CompareArrays(LeafOf(expected[first], index), parts->value, v.tolerance);
    if (g == 0) MutableLeafOf(assembled, index) = std::move(parts->value);
    if (!worst || (worst->ok() && (!v.ok() || v.comparison.max_abs_error >
                                                  worst->comparison.max_abs_error))) {
      worst = std::move(v);
      worst_group = g;
    }
  }
  if (!worst) return absl::InvalidArgumentError(verdict.name + ": no manual group holds it");
  worst->name += hlo::StrCat(" (manual groups; worst group ", worst_group, " of ", groups, ")");
  return *std::move(worst);
}

constexpr char kDeviceDependentUrl[] = "spmd/verify/device-dependent-input";

// Fails (IsDeviceDependentInput) when the per-device reference runs give `leaf` different
// values; OK otherwise.
absl::Status ReferenceAgrees(const HloInstruction& root, const LeafVerdict& leaf,
                             const HloSharding& sharding, const ShapeIndex& index,
                             const std::vector<Literal>& expected) {
  for (size_t d = 1; d < expected.size(); ++d) {
    ArrayComparison c =
        CompareArrays(LeafOf(expected.front(), index), LeafOf(expected[d], index), leaf.tolerance);
    if (c.ok()) continue;
    return DeviceDependentInputError(hlo::StrCat(
        "%", root.name(), " ", leaf.name, ": the unpartitioned module itself gives devices 0 and ",
        d, " different values (", c.mismatches, " of ", c.elements, " elements; first at ",
        FormatIndex(c.first_mismatch), ": ", c.expected_value, " and ", c.actual_value,
        ") though its sharding ", sharding.ToString(),
        " makes it one value: the module's manual code does not make the devices agree where "
        "its shardings say they do (e.g. SPMDShardToFullShape to a replicated sharding of "
        "values that differ), so its result is not defined"));
  }
  return absl::OkStatus();
}

// A replicated root leaf computed inside manual subgroups is replicated within each group (the
// partitioner reads it so, as XLA does): the groups hold independent values. Returns the
// leaf's sharding whole in the manual groups of the first manual-subgroup sharding of the
// module's entry within whose groups the per-device reference results agree; nullopt if none.
std::optional<HloSharding> ReplicatedWithinManualGroups(const HloInstruction& root,
                                                        const LeafVerdict& leaf,
                                                        const ShapeIndex& index,
                                                        const std::vector<Literal>& expected) {
  const int64_t rank = leaf.shape.rank();
  for (const auto& instr : root.parent()->instructions()) {
    if (!instr->has_sharding()) continue;
    for (const HloSharding& s : instr->sharding().Leaves()) {
      if (!s.HasManualSubgroup() || s.tile_assignment().num_devices() != expected.size()) continue;
      absl::StatusOr<HloSharding> whole = hlo::WholeInManualSubgroups(s, rank);
      if (!whole.ok()) continue;
      std::map<int64_t, int64_t> first_of_group;
      bool agree = true;
      for (int64_t d = 0; d < static_cast<int64_t>(expected.size()) && agree; ++d) {
        auto [it, fresh] = first_of_group.try_emplace(ManualValueIndex(*whole, d), d);
        agree = fresh || CompareArrays(LeafOf(expected[it->second], index),
                                       LeafOf(expected[d], index), leaf.tolerance)
                             .ok();
      }
      if (agree) return *std::move(whole);
    }
  }
  return std::nullopt;
}

// Assembles and compares root leaf `index` (flattened position `k`).
absl::StatusOr<LeafVerdict> VerifyLeaf(const HloInstruction& root, const ShapeIndex& index,
                                       int64_t k, const std::vector<Literal>& device_results,
                                       const std::vector<Literal>& expected_per_device,
                                       Literal& assembled, const VerifyOptions& options) {
  LeafVerdict verdict;
  verdict.name = LeafName("output", index);
  verdict.shape = LeafShape(root.shape(), index);
  ASSIGN_OR_RETURN(HloSharding sharding, LeafSharding(root.sharding_ptr(), root.shape(), k));
  verdict.tolerance = options.tolerance.value_or(DefaultTolerance(verdict.shape.element_type()));
  if (sharding.IsManual()) {
    return VerifyManualLeaf(std::move(verdict), index, device_results, expected_per_device,
                            assembled);
  }
  if (sharding.HasManualSubgroup()) {
    return VerifyManualGroupsLeaf(std::move(verdict), index, sharding, device_results,
                                  expected_per_device, assembled);
  }
  const Literal& expected = expected_per_device.front();
  std::vector<const Literal*> shards;
  for (const Literal& result : device_results) shards.push_back(&LeafOf(result, index));
  absl::StatusOr<Assembled> parts = AssembleFromShards(shards, sharding, verdict.shape);
  if (!parts.ok()) {
    return absl::InvalidArgumentError(
        hlo::StrCat(verdict.name, ": ", hlo::ToStd(parts.status().message())));
  }
  LeafVerdict whole = verdict;
  verdict.disagreement = std::move(parts->disagreement);
  verdict.comparison = CompareArrays(LeafOf(expected, index), parts->value, verdict.tolerance);
  MutableLeafOf(assembled, index) = std::move(parts->value);
  if (verdict.ok() || expected_per_device.size() < 2) return verdict;
  if (sharding.IsReplicated()) {
    if (std::optional<HloSharding> groups =
            ReplicatedWithinManualGroups(root, whole, index, expected_per_device)) {
      return VerifyManualGroupsLeaf(std::move(whole), index, *groups, device_results,
                                    expected_per_device, assembled);
    }
  }
  RETURN_IF_ERROR(ReferenceAgrees(root, verdict, sharding, index, expected_per_device));
  return verdict;
}

}  // namespace

void SetRandomElement(Literal& literal, int64_t i, uint64_t& state) {
  const PrimitiveType type = literal.shape().element_type();
  if (hlo::IsComplexType(type)) {
    const double re = UniformMinusOneToOne(state);
    literal.SetComplex(i, {re, UniformMinusOneToOne(state)});
  } else if (type == PrimitiveType::kF8E8M0FNU) {
    // Unsigned powers of two (block scales): 2^-3 .. 2^3, not the tiny codes that negative
    // draws would round to (their products would be subnormal).
    literal.SetDouble(i, std::ldexp(1.0, static_cast<int>(SplitMix64(state) % 7) - 3));
  } else if (hlo::IsFloatingPointType(type)) {
    literal.SetDouble(i, UniformMinusOneToOne(state));
  } else if (type == PrimitiveType::kPred) {
    literal.SetInt(i, static_cast<int64_t>(SplitMix64(state) & 1));
  } else if (hlo::IsUnsignedIntegralType(type)) {
    literal.SetUint(i, SplitMix64(state) % 16);
  } else {
    literal.SetInt(i, static_cast<int64_t>(SplitMix64(state) % 16) - 8);
  }
}

namespace {

// "an" before a vowel ("an all-reduce"), else "a".
std::string_view Article(std::string_view word) {
  return !word.empty() && std::string_view("aeiou").find(word[0]) != std::string_view::npos ? "an"
                                                                                            : "a";
}

}  // namespace

std::optional<std::string> PerDeviceReferenceReason(const hlo::HloModule& module,
                                                    PerDeviceModel model) {
  const bool regions = model == PerDeviceModel::kManualRegions;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      const hlo::HloOpcode op = instr->opcode();
      if (IsIdentityAllReduce(*instr)) continue;  // No SPMD program for it.
      // Whether some leaf of its value is manual, on every device or in subgroups.
      bool manual = false;
      if (instr->has_sharding()) {
        const absl::Span<const HloSharding> leaves = instr->sharding().Leaves();
        manual = std::any_of(leaves.begin(), leaves.end(), [](const HloSharding& e) {
          return e.IsManual() || e.HasManualSubgroup();
        });
      }
      if ((hlo::GetHloOpcodeFamily(op) == hlo::HloOpcodeFamily::kCollective ||
           op == hlo::HloOpcode::kPartitionId || op == hlo::HloOpcode::kReplicaId) &&
          !(regions && manual)) {
        return hlo::StrCat("%", instr->name(), " is ", Article(hlo::HloOpcodeString(op)), " ",
                           hlo::HloOpcodeString(op), regions ? " outside manual regions" : "");
      }
      if (regions) continue;
      if (IsManualConversion(*instr)) {
        return hlo::StrCat("%", instr->name(), " converts between manual and global values");
      }
      if (manual) return hlo::StrCat("%", instr->name(), " is manual");
    }
  }
  return std::nullopt;
}

bool NeedsPerDeviceReference(const hlo::HloModule& module) {
  return PerDeviceReferenceReason(module, PerDeviceModel::kNone).has_value();
}

Literal ManualLeafForDevice(const Literal& full, int64_t device, int64_t parameter,
                            int64_t leaf) {
  if (device == 0) return full;
  return RandomLiteral(full.shape(), static_cast<uint64_t>(device),
                       1000003ULL * static_cast<uint64_t>(parameter + 1) +
                           static_cast<uint64_t>(leaf));
}

absl::StatusOr<std::vector<Literal>> RunReference(const hlo::HloModule& unpartitioned,
                                                  std::vector<Literal> arguments,
                                                  int64_t num_devices,
                                                  double collective_timeout_seconds) {
  MultiDeviceOptions devices;
  devices.collective_timeout_seconds = collective_timeout_seconds;
  if (!NeedsPerDeviceReference(unpartitioned) || num_devices <= 1) {
    std::vector<std::vector<Literal>> one;
    one.push_back(std::move(arguments));  // Not a copy: the arguments can be GiBs.
    return RunOnDevices(unpartitioned, std::move(one), devices);
  }
  const hlo::HloComputation* entry = unpartitioned.entry_computation();
  RETURN_IF_ERROR(CheckArguments(*entry, arguments));
  std::vector<std::vector<Literal>> per_device(num_devices, arguments);
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    const HloInstruction* param = entry->parameter_instruction(p);
    const std::vector<ShapeIndex> leaves = LeafIndices(param->shape());
    for (size_t k = 0; k < leaves.size(); ++k) {
      ASSIGN_OR_RETURN(HloSharding sharding, LeafSharding(param->sharding_ptr(), param->shape(),
                                                          static_cast<int64_t>(k)));
      // Device 0 need not be in manual group 0 (as ShardEntryArguments gives it).
      for (int64_t d = 0; d < num_devices; ++d) {
        const int64_t value = ManualValueIndex(sharding, d);
        if (value <= 0) continue;
        MutableLeafOf(per_device[d][p], leaves[k]) = ManualLeafForDevice(
            LeafOf(arguments[p], leaves[k]), value, p, static_cast<int64_t>(k));
      }
    }
  }
  devices.num_partitions = num_devices;
  return RunOnDevices(unpartitioned, std::move(per_device), devices);
}

Literal RandomLiteral(const Shape& shape, uint64_t seed, uint64_t stream) {
  Literal literal(shape);
  const std::vector<ShapeIndex> leaves = LeafIndices(shape);
  for (size_t k = 0; k < leaves.size(); ++k) {
    uint64_t state = seed;
    state ^= SplitMix64(state) + stream * 0x2545f4914f6cdd1dULL;
    state ^= SplitMix64(state) + k;
    FillRandomArray(MutableLeafOf(literal, leaves[k]), state);
  }
  return literal;
}

std::vector<Literal> RandomArguments(const hlo::HloModule& module, uint64_t seed) {
  std::vector<Literal> args;
  const hlo::HloComputation* entry = module.entry_computation();
  for (int64_t p = 0; entry != nullptr && p < entry->num_parameters(); ++p) {
    args.push_back(RandomLiteral(entry->parameter_instruction(p)->shape(), seed, p));
  }
  return args;
}

absl::StatusOr<HloSharding> LeafSharding(const HloSharding* sharding, const Shape& shape,
                                         int64_t leaf) {
  if (sharding == nullptr) return HloSharding::Replicate();
  HloSharding normalized = sharding->NormalizeTupleSharding(shape);
  if (!normalized.IsTuple()) return normalized;
  if (leaf < 0 || leaf >= static_cast<int64_t>(normalized.tuple_elements().size())) {
    return absl::InvalidArgumentError(
        hlo::StrCat("sharding ", sharding->ToString(), " has no leaf ", leaf));
  }
  return normalized.tuple_elements()[leaf];
}

absl::StatusOr<int64_t> UnreducedHolder(const HloSharding& sharding, int64_t device) {
  if (!sharding.IsTiled()) return 0;  // {unreduced}: device 0 of all.
  ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups,
                   hlo::UnreducedGroups(sharding, sharding.tile_assignment().num_devices()));
  for (const std::vector<int64_t>& group : groups) {
    if (std::find(group.begin(), group.end(), device) != group.end()) return group.front();
  }
  return -1;
}

// A NaN in any part makes a maximum or minimum NaN, as XLA's maximum and minimum do.
absl::StatusOr<Literal> CombinePartials(const std::vector<const Literal*>& parts,
                                        hlo::ReductionOp op) {
  Literal out(parts.front()->shape());
  const PrimitiveType type = out.shape().element_type();
  const bool sum = op == hlo::ReductionOp::kSum;
  const bool max = op == hlo::ReductionOp::kMax;
  if (!sum && hlo::IsComplexType(type)) {
    return absl::UnimplementedError("unreduced max or min of a complex value");
  }
  auto pick = [&](auto a, auto b) { return max ? std::max(a, b) : std::min(a, b); };
  for (int64_t i = 0; i < out.element_count(); ++i) {
    if (hlo::IsComplexType(type)) {
      std::complex<double> total = 0;
      for (const Literal* p : parts) total += p->GetComplex(i);
      out.SetComplex(i, total);
    } else if (hlo::IsFloatingPointType(type)) {
      double total = parts.front()->GetDouble(i);
      for (size_t k = 1; k < parts.size(); ++k) {
        const double v = parts[k]->GetDouble(i);
        total = sum ? total + v : (std::isnan(total) || std::isnan(v) ? NAN : pick(total, v));
      }
      out.SetDouble(i, total);
    } else {
      int64_t total = parts.front()->GetInt(i);
      for (size_t k = 1; k < parts.size(); ++k) {
        total = sum ? total + parts[k]->GetInt(i) : pick(total, parts[k]->GetInt(i));
      }
      out.SetInt(i, total);
    }
  }
  return out;
}

absl::Status FillWithReductionIdentity(hlo::ReductionOp op, Literal* l) {
  if (op == hlo::ReductionOp::kSum) {
    std::fill(l->mutable_data()->begin(), l->mutable_data()->end(), 0);
    return absl::OkStatus();
  }
  const PrimitiveType type = l->shape().element_type();
  const bool max = op == hlo::ReductionOp::kMax;
  if (hlo::IsComplexType(type)) {
    return absl::UnimplementedError("unreduced max or min of a complex value");
  }
  const int bits = hlo::BitWidth(type);
  const uint64_t high_bit = bits >= 64 ? uint64_t{1} << 63 : uint64_t{1} << (bits - 1);
  for (int64_t i = 0; i < l->element_count(); ++i) {
    if (hlo::IsFloatingPointType(type)) {
      l->SetDouble(i, max ? -std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::infinity());
    } else if (hlo::IsSignedIntegralType(type)) {  // Two's complement: -high_bit .. high_bit-1.
      l->SetUint(i, max ? ~(high_bit - 1) : high_bit - 1);
    } else {  // Unsigned and pred: 0 .. all ones.
      l->SetUint(i, max ? 0 : (high_bit - 1) | high_bit);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> ShardForDevice(const Literal& full, const HloSharding& sharding,
                                       const Shape& device_shape, int64_t device) {
  if (hlo::HasUnreduced(sharding)) {
    // Partial values: the group's first member holds the value, the others the identity of
    // the reduction (zeros for sums).
    ASSIGN_OR_RETURN(const int64_t holder, UnreducedHolder(sharding, device));
    ASSIGN_OR_RETURN(HloSharding reduced, hlo::UnreducedAsReplicated(sharding));
    if (holder == device) return ShardForDevice(full, reduced, device_shape, device);
    Literal identity(device_shape);
    if (device_shape.IsArray())
      RETURN_IF_ERROR(FillWithReductionIdentity(sharding.reduction_op(), &identity));
    return identity;
  }
  Literal shard(device_shape);
  if (!full.shape().IsArray()) return shard;  // Tokens carry no data.
  // A tiling over a subset of the devices: the others hold nothing.
  if (sharding.IsTiled() && !sharding.UsesDevice(device)) return shard;
  if (!device_shape.IsArray() || device_shape.element_type() != full.shape().element_type() ||
      device_shape.rank() != full.shape().rank()) {
    return absl::InvalidArgumentError(hlo::StrCat("cannot pass a shard of ",
                                                  full.shape().ToString(false), " as ",
                                                  device_shape.ToString(false)));
  }
  ASSIGN_OR_RETURN(hlo::ShardRegion region,
                   hlo::ShardRegionForDevice(sharding, full.shape(), device));
  const std::vector<int64_t> sizes = region.sizes();
  for (int64_t i = 0; i < device_shape.rank(); ++i) {
    if (sizes[i] > device_shape.dimensions(i)) {
      return absl::InvalidArgumentError(
          hlo::StrCat("device ", device, "'s shard of ", full.shape().ToString(false), " under ",
                      sharding.ToString(), " has ", sizes[i], " elements in dimension ", i,
                      " but the SPMD program's parameter is ", device_shape.ToString(false)));
    }
  }
  // Padding poisoned: a program must not read it unmasked (runtimes leave it undefined).
  std::fill(shard.mutable_data()->begin(), shard.mutable_data()->end(), kPaddingPoison);
  if (region.empty()) return shard;
  RETURN_IF_ERROR(
      CopyBox(full, region.offsets, shard, std::vector<int64_t>(sizes.size(), 0), sizes));
  return shard;
}

namespace {

// Compares the region that devices `first` and `other` both hold; empty when they agree.
absl::StatusOr<std::string> CompareHolders(const Literal& a, int64_t first, const Literal& b,
                                           int64_t other, const hlo::ShardRegion& region) {
  const std::vector<int64_t> sizes = region.sizes();
  const std::vector<int64_t> origin(sizes.size(), 0);
  const Shape box = Shape::Array(a.shape().element_type(), sizes);
  Literal from_a(box);
  Literal from_b(box);
  RETURN_IF_ERROR(CopyBox(a, origin, from_a, origin, sizes));
  RETURN_IF_ERROR(CopyBox(b, origin, from_b, origin, sizes));
  ArrayComparison c = CompareArrays(from_a, from_b, DefaultTolerance(a.shape().element_type()));
  if (c.ok()) return std::string();
  std::vector<int64_t> at = c.first_mismatch;
  for (size_t i = 0; i < at.size(); ++i) at[i] += region.offsets[i];
  return hlo::StrCat("devices ", first, " and ", other,
                     " should hold the same values but differ in ", c.mismatches,
                     " elements; first at ", FormatIndex(at), ": device ", first, " has ",
                     c.expected_value, ", device ", other, " has ", c.actual_value);
}

}  // namespace

absl::StatusOr<Assembled> AssembleFromShards(absl::Span<const Literal* const> shards,
                                             const HloSharding& sharding, const Shape& full_shape) {
  if (!full_shape.IsArray()) return Assembled{Literal(full_shape), ""};
  if (hlo::HasUnreduced(sharding)) {
    // Combine each unreduced group; every member then holds the group's value.
    const int64_t n = static_cast<int64_t>(shards.size());
    ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups, hlo::UnreducedGroups(sharding, n));
    ASSIGN_OR_RETURN(HloSharding reduced, hlo::UnreducedAsReplicated(sharding));
    std::vector<Literal> sums(n);
    std::vector<const Literal*> summed(shards.begin(), shards.end());
    for (const std::vector<int64_t>& group : groups) {
      std::vector<const Literal*> parts;
      for (int64_t d : group) {
        if (d >= n || !shards[d]->shape().Compatible(shards[group.front()]->shape())) {
          return absl::InvalidArgumentError("unreduced group members returned different shapes");
        }
        parts.push_back(shards[d]);
      }
      ASSIGN_OR_RETURN(sums[group.front()], CombinePartials(parts, sharding.reduction_op()));
      for (int64_t d : group) summed[d] = &sums[group.front()];
    }
    return AssembleFromShards(summed, reduced, full_shape);
  }
  Assembled out{Literal(Shape::Array(full_shape.element_type(), full_shape.dimensions())), ""};
  if (sharding.kind() == HloSharding::Kind::kUnknown) {
    return absl::UnimplementedError(
        hlo::StrCat("cannot assemble a value with sharding ", sharding.ToString()));
  }
  RETURN_IF_ERROR(sharding.Validate(full_shape, static_cast<int64_t>(shards.size())));
  std::map<std::vector<int64_t>, int64_t> holder;  // Region offsets -> first device.
  for (int64_t d = 0; d < static_cast<int64_t>(shards.size()); ++d) {
    if (sharding.IsTiled() && !sharding.UsesDevice(d)) continue;
    ASSIGN_OR_RETURN(hlo::ShardRegion region, hlo::ShardRegionForDevice(sharding, full_shape, d));
    if (region.empty()) continue;
    const Literal& shard = *shards[d];
    const std::vector<int64_t> sizes = region.sizes();
    const std::vector<int64_t> origin(sizes.size(), 0);
    auto [it, first] = holder.emplace(region.offsets, d);
    if (first) {
      absl::Status s = CopyBox(shard, origin, out.value, region.offsets, sizes);
      if (!s.ok()) {
        return absl::InvalidArgumentError(
            hlo::StrCat("device ", d, " returned ", shard.shape().ToString(false),
                        ", which does not hold its ", FormatIndex(sizes), " region of ",
                        full_shape.ToString(false), " under ", sharding.ToString()));
      }
    } else if (out.disagreement.empty()) {
      ASSIGN_OR_RETURN(out.disagreement,
                       CompareHolders(*shards[it->second], it->second, shard, d, region));
    }
  }
  return out;
}

bool VerifyResult::ok() const {
  for (const LeafVerdict& leaf : leaves) {
    if (!leaf.ok()) return false;
  }
  return true;
}

std::string VerifyResult::ToString() const {
  std::string out;
  for (const LeafVerdict& leaf : leaves) {
    const ArrayComparison& c = leaf.comparison;
    hlo::StrAppend(&out, leaf.name, ": ", leaf.shape.ToString(false), ": ");
    if (!c.problem.empty()) {
      hlo::StrAppend(&out, "MISMATCH: ", c.problem, "\n");
      continue;
    }
    hlo::StrAppend(&out, "max abs error ", c.max_abs_error);
    if (leaf.tolerance.exact()) {
      out += " (exact)";
    } else if (c.worst.empty()) {
      hlo::StrAppend(&out, " (rtol ", leaf.tolerance.rtol, ", atol ", leaf.tolerance.atol, ")");
    } else {
      hlo::StrAppend(&out, "; worst element ", FormatIndex(c.worst), ": expected ",
                     c.worst_expected, ", got ", c.worst_actual, ", error ", c.worst_error,
                     c.worst_error <= c.worst_allowed ? " within " : " beyond ", c.worst_allowed,
                     " allowed (atol ", leaf.tolerance.atol, " x ", c.scale,
                     ", max(1, largest |expected|), + rtol ", leaf.tolerance.rtol,
                     " x |expected|)");
    }
    if (c.mismatches > 0 && leaf.exact.has_value()) {
      const ExactCheck& e = *leaf.exact;
      hlo::StrAppend(&out, "; against the exact (f64) result: max error ", e.spmd_error,
                     ", the reference's own ", e.reference_error, ", held to ", e.bound, " (",
                     kErrorFactor, "x the reference's + atol)");
    }
    if (c.mismatches > 0 && !(leaf.exact.has_value() && leaf.exact->ok())) {
      hlo::StrAppend(&out, ": MISMATCH: ", c.mismatches, " of ", c.elements,
                     " elements differ; first at ", FormatIndex(c.first_mismatch), ": expected ",
                     c.expected_value, ", got ", c.actual_value);
    } else if (leaf.disagreement.empty()) {
      out += ": ok";
    }
    if (!leaf.disagreement.empty()) hlo::StrAppend(&out, ": MISMATCH: ", leaf.disagreement);
    out += "\n";
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<Literal>>> ShardArguments(
    const hlo::HloModule& unpartitioned, const hlo::HloModule& spmd,
    const std::vector<Literal>& arguments, int64_t num_devices) {
  const hlo::HloComputation* full_entry = unpartitioned.entry_computation();
  const hlo::HloComputation* spmd_entry = spmd.entry_computation();
  if (full_entry == nullptr || spmd_entry == nullptr) {
    return absl::InvalidArgumentError("a module has no entry computation");
  }
  if (spmd.config().replica_count > 1) {
    return absl::UnimplementedError("verifying programs with replica_count > 1 is not supported");
  }
  if (full_entry->num_parameters() != spmd_entry->num_parameters()) {
    return absl::InvalidArgumentError(
        hlo::StrCat("the unpartitioned module takes ", full_entry->num_parameters(),
                    " parameters but the SPMD program takes ", spmd_entry->num_parameters()));
  }
  RETURN_IF_ERROR(CheckArguments(*full_entry, arguments));
  return ShardEntryArguments(*full_entry, *spmd_entry, arguments, num_devices);
}

absl::Status DeviceDependentInputError(std::string message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kDeviceDependentUrl, absl::Cord("1"));
  return status;
}

bool IsDeviceDependentInput(const absl::Status& status) {
  return status.GetPayload(kDeviceDependentUrl).has_value();
}

namespace {

// `shape`'s tuple structure with empty leaves, for leaves that are assigned whole (allocating
// them first only to overwrite them would cost the result's size again).
Literal TupleSkeleton(const Shape& shape) {
  if (!shape.IsTuple()) return Literal();
  std::vector<Literal> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(TupleSkeleton(element));
  return Literal::Tuple(shape, std::move(elements));
}

}  // namespace

absl::StatusOr<VerifyResult> CompareResults(const hlo::HloModule& unpartitioned,
                                            std::vector<Literal> expected,
                                            const std::vector<Literal>& device_results,
                                            const VerifyOptions& options) {
  if (expected.empty()) return absl::InvalidArgumentError("no reference result");
  const HloInstruction& root = *unpartitioned.entry_computation()->root_instruction();
  const std::vector<ShapeIndex> leaves = LeafIndices(root.shape());
  for (const Literal& r : device_results) {
    if (LeafIndices(r.shape()).size() != leaves.size()) {
      return absl::InvalidArgumentError(
          hlo::StrCat("the unpartitioned module returns ", root.shape().ToString(false),
                      " but the SPMD program returns ", r.shape().ToString(false)));
    }
  }
  VerifyResult result;
  result.assembled = TupleSkeleton(root.shape());
  for (size_t k = 0; k < leaves.size(); ++k) {
    ASSIGN_OR_RETURN(LeafVerdict verdict,
                     VerifyLeaf(root, leaves[k], static_cast<int64_t>(k), device_results, expected,
                                result.assembled, options));
    result.leaves.push_back(std::move(verdict));
    Literal& assembled = MutableLeafOf(result.assembled, leaves[k]);
    if (assembled.shape().element_type() == hlo::PrimitiveType::kInvalid) {
      assembled = Literal(result.leaves.back().shape);  // No device assembled it: zeros.
    }
  }
  result.expected = std::move(expected.front());
  return result;
}

namespace {

// Whether some floating leaf of `result` failed its element-wise comparison.
bool FloatingLeafFailed(const VerifyResult& result) {
  for (const LeafVerdict& leaf : result.leaves) {
    const hlo::PrimitiveType type = leaf.shape.element_type();
    const bool floating = hlo::IsFloatingPointType(type) || hlo::IsComplexType(type);
    if (floating && !leaf.comparison.ok() && leaf.comparison.problem.empty()) return true;
  }
  return false;
}

}  // namespace

bool NeedsExactRecheck(const hlo::HloModule& unpartitioned, const VerifyOptions& options,
                       const VerifyResult& result) {
  return !options.tolerance && !NeedsPerDeviceReference(unpartitioned) &&
         FloatingLeafFailed(result);
}

void RecheckAgainstExact(const hlo::HloModule& unpartitioned, std::vector<Literal> arguments,
                         const VerifyOptions& options, VerifyResult& result) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> wide = WidenToF64(unpartitioned);
  if (!wide.ok()) return;
  for (Literal& argument : arguments) argument = WidenLiteral(argument);
  absl::StatusOr<std::vector<Literal>> exact =
      RunReference(**wide, std::move(arguments), 1, options.collective_timeout_seconds);
  if (!exact.ok() || exact->empty()) return;
  const std::vector<ShapeIndex> leaves = LeafIndices(result.expected.shape());
  for (size_t k = 0; k < leaves.size() && k < result.leaves.size(); ++k) {
    LeafVerdict& leaf = result.leaves[k];
    if (leaf.comparison.ok() || !leaf.comparison.problem.empty()) continue;
    leaf.exact =
        CheckAgainstExact(LeafOf(result.expected, leaves[k]), LeafOf(result.assembled, leaves[k]),
                          LeafOf(exact->front(), leaves[k]), leaf.tolerance);
  }
}

absl::StatusOr<VerifyResult> VerifyAgainst(const hlo::HloModule& unpartitioned,
                                           const hlo::HloModule& spmd,
                                           const VerifyOptions& options) {
  auto full_arguments = [&] {
    return options.arguments ? *options.arguments : RandomArguments(unpartitioned, options.seed);
  };
  std::vector<Literal> arguments = full_arguments();
  ASSIGN_OR_RETURN(std::vector<std::vector<Literal>> device_args,
                   ShardArguments(unpartitioned, spmd, arguments, options.num_partitions));
  ASSIGN_OR_RETURN(std::vector<Literal> expected,
                   RunReference(unpartitioned, std::move(arguments), options.num_partitions,
                                options.collective_timeout_seconds));
  MultiDeviceOptions devices;
  devices.collective_timeout_seconds = options.collective_timeout_seconds;
  devices.num_partitions = options.num_partitions;
  ASSIGN_OR_RETURN(std::vector<Literal> results,
                   RunOnDevices(spmd, std::move(device_args), devices));
  ASSIGN_OR_RETURN(VerifyResult result,
                   CompareResults(unpartitioned, std::move(expected), results, options));
  // The rerun draws the same arguments again rather than keeping a copy through both runs.
  if (NeedsExactRecheck(unpartitioned, options, result)) {
    RecheckAgainstExact(unpartitioned, full_arguments(), options, result);
  }
  return result;
}

}  // namespace runtime

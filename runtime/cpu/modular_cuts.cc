// The stand-in values of modular verification (modular_cuts.h).
#include "runtime/cpu/modular_cuts.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "hlo/sharding/implied_sharding.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/opcode_table.h"
#include "runtime/cpu/ops/manual_ops.h"
#include "runtime/cpu/point_elements.h"
#include "runtime/cpu/sampled_verify.h"
#include "runtime/cpu/verify.h"
#include "runtime/cpu/verify_exact.h"

namespace runtime {
namespace modular {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Literal;
using hlo::Shape;

namespace {

// The value element `index` (row-major in `full`) of `cut` keeps because it lies in an iota
// piece of the original, or nullopt.
std::optional<int64_t> IotaElement(const CutValue& cut, const Shape& full, int64_t index) {
  if (cut.iota_pieces.empty() || !full.IsArray()) return std::nullopt;
  std::vector<int64_t> coordinates(full.rank());
  points::Unravel(index, full.dimensions(), coordinates.data());
  return hlo::IotaValueAt(cut.iota_pieces, coordinates);
}

// Whether `instr`'s value is fixed by the program text: computed from constants and iotas
// alone, with no parameter, state, randomness, I/O or opaque call in between (`fixed`
// memoizes). partition-id and the like have no operands and are not constants: not fixed.
bool IsFixed(const HloInstruction& instr, absl::flat_hash_map<const HloInstruction*, bool>& fixed) {
  const auto found = fixed.find(&instr);
  if (found != fixed.end()) return found->second;
  const HloOpcode op = instr.opcode();
  bool is = !hlo::HasOpcodeFlag(op, hlo::op_traits::kSideEffect) &&
            !hlo::HasOpcodeFlag(op, hlo::op_traits::kRunsCallees) && op != HloOpcode::kCustomCall &&
            (instr.operand_count() > 0 || IsOneOf(op, {HloOpcode::kConstant, HloOpcode::kIota}));
  for (const HloInstruction* operand : instr.operands()) {
    if (!is) break;
    is = IsFixed(*operand, fixed);
  }
  fixed[&instr] = is;
  return is;
}

// `index` (row-major in `shape`) with its coordinates along `dims` set to 0.
int64_t FirstAlong(const Shape& shape, const std::vector<int64_t>& dims, int64_t index) {
  int64_t result = 0, stride = 1;
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    const int64_t n = shape.dimensions(d);
    const int64_t coordinate = n == 0 ? 0 : index % n;
    index = n == 0 ? index : index / n;
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) result += coordinate * stride;
    stride *= n;
  }
  return result;
}

uint64_t ElementState(const CutValue& cut, int64_t leaf, int64_t index) {
  if (!cut.constant_dims.empty()) {
    index = FirstAlong(cut.original->shape(), cut.constant_dims, index);
  }
  return SampleHash(cut.stream + static_cast<uint64_t>(leaf) * 0x9e3779b97f4a7c15ULL +
                    SampleHash(static_cast<uint64_t>(index)));
}

// Elements `indices` of leaf `leaf` of `cut`, each drawn from `state(index)` in the
// original's type (then widened when `out` is the f64 reference's).
template <typename State>
void FillStates(const CutValue& cut, int64_t leaf, absl::Span<const int64_t> indices, Literal& out,
                State state) {
  const Shape& full = *points::LeafAt(cut.original->shape(), leaf);
  Literal narrow(Shape::Array(full.element_type(), {static_cast<int64_t>(indices.size())}));
  for (size_t i = 0; i < indices.size(); ++i) {
    if (std::optional<int64_t> iota = IotaElement(cut, full, indices[i])) {
      narrow.SetInt(static_cast<int64_t>(i), *iota);
      continue;
    }
    uint64_t s = state(indices[i]);
    SetRandomElement(narrow, static_cast<int64_t>(i), s);
  }
  out = narrow.shape().element_type() == out.shape().element_type() ? std::move(narrow)
                                                                    : WidenLiteral(narrow);
}

// A manual value is a different array in each manual group (each device when fully manual):
// its elements' states mix the group in, unless it is a global value every group holds.
uint64_t ManualElementState(const CutValue& cut, int64_t leaf, int64_t index, int64_t group) {
  if (cut.global) return ElementState(cut, leaf, index);
  return SampleHash(ElementState(cut, leaf, index) ^
                    SampleHash(0x6d616e75616cULL + static_cast<uint64_t>(group)));
}

// The manual group of `device` under manual leaf sharding `s`: the device itself when fully
// manual, else its index along the manual subgroup dim.
absl::StatusOr<int64_t> ManualGroup(const HloSharding& s, int64_t device) {
  if (s.IsManual()) return device;
  if (!s.UsesDevice(device)) {
    return absl::InvalidArgumentError(
        hlo::StrCat(s.ToString(), " does not place anything on device ", device));
  }
  return ManualGroupOf(s, device + 1)[device];
}

// `group` after the agreements of `cut` (AgreeingGroups).
int64_t Agreed(const CutValue& cut, int64_t group) {
  return group >= 0 && group < static_cast<int64_t>(cut.agree.size()) ? cut.agree[group] : group;
}

}  // namespace

bool Rebuildable(const HloInstruction& instr,
                 absl::flat_hash_map<const HloInstruction*, bool>& fixed) {
  return instr.opcode() == HloOpcode::kBroadcast || IsFixed(instr, fixed);
}

bool IsManual(const HloSharding& s) { return s.IsManual() || s.HasManualSubgroup(); }

// Device `device`'s elements `indices` of manual leaf `leaf` of `cut`, whole: its manual
// group's value (what the reference computes as that device).
absl::Status FillManual(const CutValue& cut, int64_t leaf, int64_t device,
                        absl::Span<const int64_t> indices, Literal& out) {
  if (device < 0) {
    return absl::UnimplementedError(
        hlo::StrCat("%", cut.original->name(),
                    " is manual (a different value on each device) but is read "
                    "where the program has one value for all devices"));
  }
  ASSIGN_OR_RETURN(HloSharding sharding, LeafSharding(&cut.sharding, cut.original->shape(), leaf));
  ASSIGN_OR_RETURN(int64_t group, ManualGroup(sharding, device));
  group = Agreed(cut, group);
  FillStates(cut, leaf, indices, out,
             [&](int64_t index) { return ManualElementState(cut, leaf, index, group); });
  return absl::OkStatus();
}

bool IsManualLeaf(const CutValue& cut, int64_t leaf) {
  absl::StatusOr<HloSharding> s = LeafSharding(&cut.sharding, cut.original->shape(), leaf);
  return s.ok() && IsManual(*s);
}

// Device `device`'s elements `indices` of its padded shard (shaped `local`) of leaf `leaf`: of
// the one value, or of its manual group's when the leaf has manual subgroups.
absl::Status FillShard(const CutValue& cut, const Shape& local, int64_t leaf, int64_t device,
                       absl::Span<const int64_t> indices, Literal& out) {
  const Shape& full = *points::LeafAt(cut.original->shape(), leaf);
  ASSIGN_OR_RETURN(HloSharding sharding, LeafSharding(&cut.sharding, cut.original->shape(), leaf));
  ASSIGN_OR_RETURN(hlo::ShardRegion region, DeviceRegion(sharding, full, device));
  std::optional<int64_t> group;
  if (IsManual(sharding)) {
    ASSIGN_OR_RETURN(group, ManualGroup(sharding, device));
    group = Agreed(cut, *group);
  }
  if (local.rank() != full.rank()) {
    return absl::InvalidArgumentError(hlo::StrCat(
        "a value of %", cut.original->name(), " has rank ", local.rank(), ", not ", full.rank()));
  }
  points::ForEachShardElement(
      local.dimensions(), full.dimensions(), region, indices, [&](size_t i, int64_t global) {
        if (std::optional<int64_t> iota =
                global >= 0 ? IotaElement(cut, full, global) : std::nullopt) {
          out.SetInt(static_cast<int64_t>(i), *iota);
          return;
        }
        uint64_t state =
            global >= 0 ? (group ? ManualElementState(cut, leaf, global, *group)
                                 : ElementState(cut, leaf, global))
                        : SampleHash(cut.stream ^ SampleHash(static_cast<uint64_t>(device) << 40 ^
                                                             static_cast<uint64_t>(indices[i])));
        SetRandomElement(out, static_cast<int64_t>(i), state);
      });
  return absl::OkStatus();
}

// The full value's elements `indices`, drawn in the original's type (then widened when `out`
// is the f64 reference's).
void FillFull(const CutValue& cut, int64_t leaf, absl::Span<const int64_t> indices, Literal& out) {
  FillStates(cut, leaf, indices, out,
             [&](int64_t index) { return ElementState(cut, leaf, index); });
}

std::vector<int64_t> AgreeingGroups(const HloInstruction& source, const HloSharding& sharding,
                                    int64_t num_devices) {
  if (!source.shape().IsArray() || !IsManual(sharding) || num_devices < 1) return {};
  // The group of each device, and the classes as a union-find over groups.
  std::vector<int64_t> group_of(num_devices);
  if (sharding.IsManual()) {
    for (int64_t d = 0; d < num_devices; ++d) group_of[d] = d;
  } else {
    group_of = ManualGroupOf(sharding, num_devices);
  }
  const int64_t groups = 1 + *std::max_element(group_of.begin(), group_of.end());
  std::vector<int64_t> parent(groups);
  for (int64_t g = 0; g < groups; ++g) parent[g] = g;
  auto root = [&](int64_t g) {
    while (parent[g] != g) g = parent[g] = parent[parent[g]];
    return g;
  };
  bool joined = false;
  std::vector<const HloInstruction*> stack = {&source};
  absl::flat_hash_map<const HloInstruction*, bool> seen;
  while (!stack.empty()) {
    const HloInstruction* at = stack.back();
    stack.pop_back();
    if (!seen.try_emplace(at, true).second) continue;
    for (const HloInstruction* user : at->users()) {
      if (IsManualConversion(*user) && user->attrs().custom_call_target == "SPMDShardToFullShape" &&
          !user->operand(0)->shape().Compatible(user->shape())) {
        absl::StatusOr<Shape> tile = hlo::PaddedShardShape(sharding, at->shape());
        if (!tile.ok()) continue;
        absl::StatusOr<HloSharding> global =
            hlo::ConversionGlobalSharding(*user, ShardingOrReplicated(*user), *tile);
        if (!global.ok()) continue;
        // The first group seen holding each region; later ones join it.
        absl::flat_hash_map<std::vector<int64_t>, int64_t> first;
        for (int64_t d = 0; d < num_devices; ++d) {
          if (group_of[d] < 0 || (global->IsTiled() && !global->UsesDevice(d))) continue;
          absl::StatusOr<hlo::ShardRegion> region =
              hlo::ShardRegionForDevice(*global, user->shape(), d);
          if (!region.ok() || region->empty()) continue;
          const auto [it, added] = first.try_emplace(region->offsets, group_of[d]);
          const int64_t a = root(it->second), b = root(group_of[d]);
          if (!added && a != b) {
            parent[std::max(a, b)] = std::min(a, b);
            joined = true;
          }
        }
      } else if (hlo::ForwardsOperand(*user) && user->operand_count() == 1 &&
                 user->shape().Compatible(at->shape())) {
        stack.push_back(user);
      }
    }
  }
  if (!joined) return {};
  std::vector<int64_t> agree(groups);
  for (int64_t g = 0; g < groups; ++g) agree[g] = root(g);
  return agree;
}

}  // namespace modular
}  // namespace runtime

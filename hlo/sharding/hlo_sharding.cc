// HloSharding factories (with XLA's canonicalization), printing, validation and equality.
//
// Canonicalization, by example:
//   PartialTile([1,2,2]1,0,3,2)                 => {devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}
//   PartialTile([2,1]<=[2])                     => {devices=[2]<=[2]}
//   PartialTile([1,4]<=[4])                     => {replicated}
//   Subgroup([1,1,2,2]<=[4], {replicated, manual})
//                         => {devices=[1,1,2,2]<=[2,2]T(1,0) last_tile_dims={manual, replicated}}
//   Subgroup([1,1,2]<=[2], {manual})            => {manual}
// The parser lives in hlo_sharding_parser.cc.
#include "hlo/sharding/hlo_sharding.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hlo {
namespace {

bool IsIdentity(absl::Span<const int64_t> perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// `ta` with the devices of each last-dim group in increasing order. An iota input stays iota
// when the sorted array has an iota form.
TileAssignment SortLastDimGroups(const TileAssignment& ta) {
  std::vector<int64_t> devices = ta.Devices();
  const int64_t group = ta.dims().back();
  bool already_sorted = true;
  for (auto it = devices.begin(); it != devices.end(); it += group) {
    if (!std::is_sorted(it, it + group)) {
      already_sorted = false;
      std::sort(it, it + group);
    }
  }
  if (already_sorted) return ta;
  TileAssignment sorted = TileAssignment::Explicit(ta.dims(), devices).value();
  if (ta.is_iota()) {
    std::optional<TileAssignment> iota = sorted.ToIota();
    if (iota.has_value()) return *std::move(iota);
  }
  return sorted;
}

bool IsValidSubgroupType(OpShardingType type) {
  return type == OpShardingType::kReplicated || type == OpShardingType::kManual ||
         type == OpShardingType::kUnreduced;
}

}  // namespace

std::string_view ReductionOpName(ReductionOp op) {
  static constexpr std::string_view kNames[] = {"sum", "max", "min"};  // By enum value.
  return kNames[static_cast<int>(op)];
}

std::string_view SubgroupTypeName(OpShardingType type) {
  switch (type) {
    case OpShardingType::kReplicated:
      return "replicated";
    case OpShardingType::kManual:
      return "manual";
    case OpShardingType::kUnreduced:
      return "unreduced";
    case OpShardingType::kMaximal:
      return "maximal";
    default:
      return "other";
  }
}

const std::vector<HloSharding>& HloSharding::NoElements() {
  static const auto* none = new std::vector<HloSharding>();
  return *none;
}

const HloSharding::Metadata& HloSharding::NoMetadata() {
  static const auto* none = new Metadata();
  return *none;
}

std::shared_ptr<const HloSharding::Metadata> HloSharding::Share(Metadata metadata) {
  if (metadata.empty()) return nullptr;
  return std::make_shared<const Metadata>(std::move(metadata));
}

HloSharding HloSharding::Replicate(Metadata metadata) {
  HloSharding s(Kind::kReplicated);
  s.metadata_ = Share(std::move(metadata));
  return s;
}

HloSharding HloSharding::Manual(Metadata metadata) {
  HloSharding s(Kind::kManual);
  s.metadata_ = Share(std::move(metadata));
  return s;
}

HloSharding HloSharding::Unknown(Metadata metadata) {
  HloSharding s(Kind::kUnknown);
  s.metadata_ = Share(std::move(metadata));
  return s;
}

HloSharding HloSharding::Unreduced(Metadata metadata) {
  HloSharding s(Kind::kUnreduced);
  s.metadata_ = Share(std::move(metadata));
  return s;
}

absl::StatusOr<HloSharding> HloSharding::Maximal(int64_t device, Metadata metadata) {
  if (device < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("maximal sharding device ", device, " is negative"));
  }
  HloSharding s(Kind::kMaximal);
  s.maximal_device_ = device;
  s.metadata_ = Share(std::move(metadata));
  return s;
}

absl::StatusOr<HloSharding> HloSharding::Tile(TileAssignment tile_assignment, Metadata metadata) {
  if (tile_assignment.num_devices() == 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("tile assignment ", tile_assignment.ToString(),
                     " has a single device; use a maximal or replicated sharding instead"));
  }
  HloSharding s(Kind::kTiled);
  s.tile_assignment_ = std::move(tile_assignment);
  s.metadata_ = Share(std::move(metadata));
  return s;
}

absl::StatusOr<HloSharding> HloSharding::PartialTile(TileAssignment tile_assignment,
                                                     Metadata metadata) {
  const int64_t group = tile_assignment.dims().back();
  if (tile_assignment.rank() == 1 || group == tile_assignment.num_devices()) {
    return Replicate(std::move(metadata));
  }
  if (group == 1) {
    absl::Span<const int64_t> dims = tile_assignment.dims();
    absl::StatusOr<TileAssignment> data = tile_assignment.Reshape(dims.subspan(0, dims.size() - 1));
    if (!data.ok()) return data.status();
    return Tile(*std::move(data), std::move(metadata));
  }
  HloSharding s(Kind::kTiled);
  s.tile_assignment_ = SortLastDimGroups(tile_assignment);
  s.replicate_on_last_tile_dim_ = true;
  s.metadata_ = Share(std::move(metadata));
  return s;
}

absl::StatusOr<HloSharding> HloSharding::Subgroup(TileAssignment tile_assignment,
                                                  absl::Span<const OpShardingType> subgroup_types,
                                                  Metadata metadata) {
  const int64_t rank = tile_assignment.rank();
  const int64_t num_types = static_cast<int64_t>(subgroup_types.size());
  if (num_types > rank) {
    return absl::InvalidArgumentError(absl::StrCat(num_types,
                                                   " subgroup types for tile assignment ",
                                                   tile_assignment.ToString(), " of rank ", rank));
  }
  for (OpShardingType type : subgroup_types) {
    if (!IsValidSubgroupType(type)) {
      return absl::InvalidArgumentError(
          absl::StrCat("subgroup type ", static_cast<int>(type),
                       " is not one of replicated, manual or unreduced"));
    }
  }
  if (num_types == 0) return Tile(std::move(tile_assignment), std::move(metadata));
  const int64_t data_rank = rank - num_types;
  absl::Span<const int64_t> dims = tile_assignment.dims();
  int64_t data_tiles = 1;
  for (int64_t i = 0; i < data_rank; ++i) data_tiles *= dims[i];
  const bool one_type = std::all_of(subgroup_types.begin(), subgroup_types.end(),
                                    [&](OpShardingType t) { return t == subgroup_types[0]; });
  if (one_type && data_tiles == 1) {
    if (subgroup_types[0] == OpShardingType::kManual) return Manual(std::move(metadata));
    if (subgroup_types[0] == OpShardingType::kUnreduced) return Unreduced(std::move(metadata));
    return Replicate(std::move(metadata));
  }
  // Merge the subgroup dims of each type, in canonical type order; drop size-1 dims.
  std::vector<int64_t> perm(data_rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::vector<int64_t> merged_dims(dims.begin(), dims.begin() + data_rank);
  std::vector<OpShardingType> merged_types;
  for (OpShardingType type :
       {OpShardingType::kManual, OpShardingType::kUnreduced, OpShardingType::kReplicated}) {
    int64_t size = 1;
    for (int64_t i = 0; i < num_types; ++i) {
      if (subgroup_types[i] != type || dims[data_rank + i] == 1) continue;
      perm.push_back(data_rank + i);
      size *= dims[data_rank + i];
    }
    if (size == 1) continue;
    merged_dims.push_back(size);
    merged_types.push_back(type);
  }
  for (int64_t i = 0; i < num_types; ++i) {
    if (dims[data_rank + i] == 1) perm.push_back(data_rank + i);
  }
  TileAssignment merged = tile_assignment;
  if (!IsIdentity(perm)) {
    absl::StatusOr<TileAssignment> transposed = tile_assignment.Transpose(perm);
    if (!transposed.ok()) return transposed.status();
    merged = *std::move(transposed);
  }
  if (merged_dims.empty()) merged_dims.push_back(1);
  absl::StatusOr<TileAssignment> reshaped = merged.Reshape(merged_dims);
  if (!reshaped.ok()) return reshaped.status();
  if (reshaped->num_devices() == 1) return Replicate(std::move(metadata));
  if (merged_types.empty()) return Tile(*std::move(reshaped), std::move(metadata));
  if (merged_types.size() == 1) {
    if (merged_types[0] == OpShardingType::kReplicated) {
      return PartialTile(*std::move(reshaped), std::move(metadata));
    }
    if (reshaped->num_devices() == merged_dims.back()) {
      if (merged_types[0] == OpShardingType::kManual) return Manual(std::move(metadata));
      return Unreduced(std::move(metadata));
    }
  }
  HloSharding s(Kind::kTiled);
  s.tile_assignment_ = merged_types.back() == OpShardingType::kReplicated
                           ? SortLastDimGroups(*reshaped)
                           : *std::move(reshaped);
  s.subgroup_types_ = std::move(merged_types);
  s.metadata_ = Share(std::move(metadata));
  return s;
}

absl::StatusOr<HloSharding> HloSharding::Tuple(std::vector<HloSharding> elements) {
  for (size_t i = 0; i < elements.size(); ++i) {
    if (elements[i].IsTuple()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tuple sharding element ", i, " is itself a tuple; tuple shardings are flat"));
    }
  }
  HloSharding s(Kind::kTuple);
  if (!elements.empty()) {
    s.tuple_elements_ = std::make_shared<const std::vector<HloSharding>>(std::move(elements));
  }
  return s;
}

absl::StatusOr<HloSharding> HloSharding::Tuple(const Shape& tuple_shape,
                                               std::vector<HloSharding> elements) {
  if (!tuple_shape.IsTuple()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", tuple_shape.ToString(), " of a tuple sharding is not a tuple"));
  }
  const int64_t leaves = tuple_shape.leaf_count();
  const int64_t count = static_cast<int64_t>(elements.size());
  if (count != leaves && !(leaves == 0 && count == 1)) {
    return absl::InvalidArgumentError(absl::StrCat("tuple shape ", tuple_shape.ToString(), " has ",
                                                   leaves, " leaves but the sharding has ", count,
                                                   " elements"));
  }
  return Tuple(std::move(elements));
}

HloSharding HloSharding::SingleTuple(const Shape& tuple_shape, const HloSharding& leaf) {
  HloSharding s(Kind::kTuple);
  s.tuple_elements_ = std::make_shared<const std::vector<HloSharding>>(
      std::max<int64_t>(1, tuple_shape.leaf_count()), leaf);
  return s;
}

OpShardingType HloSharding::proto_type() const {
  switch (kind_) {
    case Kind::kReplicated:
      return OpShardingType::kReplicated;
    case Kind::kMaximal:
      return OpShardingType::kMaximal;
    case Kind::kManual:
      return OpShardingType::kManual;
    case Kind::kUnknown:
      return OpShardingType::kUnknown;
    case Kind::kUnreduced:
      return OpShardingType::kUnreduced;
    case Kind::kTuple:
      return OpShardingType::kTuple;
    case Kind::kTiled:
      break;
  }
  return OpShardingType::kOther;
}

bool HloSharding::IsReplicated() const {
  if (kind_ != Kind::kTuple) return kind_ == Kind::kReplicated;
  return std::all_of(tuple_elements().begin(), tuple_elements().end(),
                     [](const HloSharding& e) { return e.IsReplicated(); });
}

bool HloSharding::IsManual() const {
  if (kind_ != Kind::kTuple) return kind_ == Kind::kManual;
  // An empty tuple holds nothing, so nothing of it is manual (it would make its users manual).
  return !tuple_elements().empty() && std::all_of(tuple_elements().begin(), tuple_elements().end(),
                     [](const HloSharding& e) { return e.IsManual(); });
}

bool HloSharding::IsUnknown() const {
  if (kind_ != Kind::kTuple) return kind_ == Kind::kUnknown;
  return std::all_of(tuple_elements().begin(), tuple_elements().end(),
                     [](const HloSharding& e) { return e.IsUnknown(); });
}

bool HloSharding::IsTileMaximal() const {
  if (kind_ != Kind::kTuple) return kind_ != Kind::kTiled;
  return std::all_of(tuple_elements().begin(), tuple_elements().end(),
                     [](const HloSharding& e) { return e.IsTileMaximal(); });
}

int64_t HloSharding::NumSubgroupDims() const {
  if (kind_ != Kind::kTiled) return 0;
  return replicate_on_last_tile_dim_ ? 1 : static_cast<int64_t>(subgroup_types_.size());
}

int64_t HloSharding::TiledDataRank() const {
  if (kind_ != Kind::kTiled) return 0;
  return tile_assignment_.rank() - NumSubgroupDims();
}

int64_t HloSharding::SubgroupReplicationDim() const {
  if (kind_ != Kind::kTiled) return -1;
  if (replicate_on_last_tile_dim_) return tile_assignment_.rank() - 1;
  for (size_t i = 0; i < subgroup_types_.size(); ++i) {
    if (subgroup_types_[i] == OpShardingType::kReplicated) return TiledDataRank() + i;
  }
  return -1;
}

int64_t HloSharding::SubgroupManualDim() const {
  if (kind_ != Kind::kTiled) return -1;
  for (size_t i = 0; i < subgroup_types_.size(); ++i) {
    if (subgroup_types_[i] == OpShardingType::kManual) return TiledDataRank() + i;
  }
  return -1;
}

bool HloSharding::UsesDevice(int64_t device) const {
  switch (kind_) {
    case Kind::kMaximal:
      return device == maximal_device_;
    case Kind::kTiled:
      return tile_assignment_.TileIndexOf(device).has_value();
    case Kind::kTuple:
      return std::any_of(tuple_elements().begin(), tuple_elements().end(),
                         [&](const HloSharding& e) { return e.UsesDevice(device); });
    default:
      return true;
  }
}

std::optional<int64_t> HloSharding::UniqueDevice() const {
  if (kind_ == Kind::kMaximal) return maximal_device_;
  if (kind_ != Kind::kTuple || tuple_elements().empty()) return std::nullopt;
  std::optional<int64_t> device = tuple_elements()[0].UniqueDevice();
  for (const HloSharding& e : tuple_elements()) {
    if (!device.has_value() || e.UniqueDevice() != device) return std::nullopt;
  }
  return device;
}

HloSharding HloSharding::WithMetadata(Metadata metadata) const {
  HloSharding s = *this;
  std::shared_ptr<const Metadata> shared = Share(std::move(metadata));
  if (s.kind_ != Kind::kTuple) {
    s.metadata_ = std::move(shared);
    return s;
  }
  const std::vector<HloSharding>& elements = tuple_elements();
  if (shared == nullptr && std::all_of(elements.begin(), elements.end(), [](const HloSharding& e) {
        return e.metadata_ == nullptr;
      })) {
    return s;
  }
  std::vector<HloSharding> with(elements);
  for (HloSharding& e : with) e.metadata_ = shared;
  s.tuple_elements_ = std::make_shared<const std::vector<HloSharding>>(std::move(with));
  return s;
}

namespace {

// XLA's metadata entry for a max or min reduction op in the tile-assignment form.
constexpr char kReductionOpType[] = "op_type=\"sdy::reduction_op\"";

std::string ReductionOpEntry(ReductionOp op) {
  std::string upper(ReductionOpName(op));
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return absl::StrCat(kReductionOpType, " op_name=\"", upper, "\"");
}

}  // namespace

absl::StatusOr<HloSharding> HloSharding::WithReductionOp(ReductionOp op) const {
  const bool unreduced =
      kind_ == Kind::kUnreduced || std::find(subgroup_types_.begin(), subgroup_types_.end(),
                                             OpShardingType::kUnreduced) != subgroup_types_.end();
  if (kind_ == Kind::kTuple || (op != ReductionOp::kSum && !unreduced)) {
    return absl::InvalidArgumentError(absl::StrCat("reduction op ",
                                                   std::string(ReductionOpName(op)),
                                                   " on a sharding without unreduced devices"));
  }
  HloSharding s = *this;
  s.reduction_op_ = op;
  return s;
}

HloSharding HloSharding::WithReductionOpOf(const HloSharding& like) const {
  absl::StatusOr<HloSharding> with = WithReductionOp(like.reduction_op());
  return with.ok() ? *std::move(with) : *this;
}

HloSharding::Metadata HloSharding::PrintedMetadata() const {
  Metadata printed = metadata();
  if (reduction_op_ != ReductionOp::kSum) printed.push_back(ReductionOpEntry(reduction_op_));
  return printed;
}

absl::StatusOr<HloSharding> HloSharding::TakeReductionOpFromMetadata() const {
  const Metadata& entries = metadata();
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!absl::StrContains(entries[i], kReductionOpType)) continue;
    for (ReductionOp op : {ReductionOp::kSum, ReductionOp::kMax, ReductionOp::kMin}) {
      if (entries[i] != ReductionOpEntry(op)) continue;
      Metadata rest = entries;
      rest.erase(rest.begin() + static_cast<int64_t>(i));
      return WithMetadata(std::move(rest)).WithReductionOp(op);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "metadata {", entries[i], "} names no reduction op (SUM, MAX or MIN, op_type first)"));
  }
  return *this;
}

HloSharding HloSharding::WithShardGroup(ShardGroup group) const {
  HloSharding s = *this;
  s.shard_group_ = group;
  return s;
}

HloSharding HloSharding::NormalizeTupleSharding(const Shape& shape) const {
  if (shape.IsTuple() && !IsTuple()) return SingleTuple(shape, *this);
  return *this;
}

// ---- Printing -------------------------------------------------------------------------------

void HloSharding::AppendLeaf(std::string* out, bool include_metadata) const {
  switch (kind_) {
    case Kind::kReplicated:
      out->append("{replicated");
      break;
    case Kind::kManual:
      out->append("{manual");
      break;
    case Kind::kUnknown:
      out->append("{unknown");
      break;
    case Kind::kUnreduced:
      out->append("{unreduced");
      break;
    case Kind::kMaximal:
      absl::StrAppend(out, "{maximal device=", maximal_device_);
      break;
    case Kind::kTiled:
      out->append("{devices=");
      tile_assignment_.AppendTo(out);
      if (replicate_on_last_tile_dim_) out->append(" last_tile_dim_replicate");
      if (!subgroup_types_.empty()) {
        out->append(" last_tile_dims={");
        for (size_t i = 0; i < subgroup_types_.size(); ++i) {
          if (i > 0) out->append(", ");
          out->append(SubgroupTypeName(subgroup_types_[i]));
        }
        out->push_back('}');
      }
      break;
    case Kind::kTuple:
      break;
  }
  if (shard_group_.is_set()) {
    absl::StrAppend(out, shard_group_.kind == ShardGroup::Kind::kAs ? " shard_as " : " shard_like ",
                    shard_group_.id);
  }
  // The reduction op is part of the value: printed even without the rest of the metadata.
  const Metadata printed =
      include_metadata ? PrintedMetadata() : WithoutMetadata().PrintedMetadata();
  if (!printed.empty()) {
    out->append(" metadata={");
    if (printed.size() == 1) {
      out->append(printed[0]);
    } else {
      for (size_t i = 0; i < printed.size(); ++i) {
        if (i > 0) out->append(", ");
        absl::StrAppend(out, "{", printed[i], "}");
      }
    }
    out->push_back('}');
  }
  out->push_back('}');
}

void HloSharding::AppendImpl(std::string* out, bool include_metadata) const {
  if (kind_ != Kind::kTuple) {
    AppendLeaf(out, include_metadata);
    return;
  }
  out->push_back('{');
  for (size_t i = 0; i < tuple_elements().size(); ++i) {
    if (i > 0) out->append(", ");
    if (i > 0 && i % 5 == 0) absl::StrAppend(out, "/*index=", i, "*/");
    tuple_elements()[i].AppendImpl(out, include_metadata);
  }
  out->push_back('}');
}

void HloSharding::AppendTo(std::string* out) const { AppendImpl(out, /*include_metadata=*/true); }

std::string HloSharding::ToString() const {
  std::string out;
  AppendImpl(&out, /*include_metadata=*/true);
  return out;
}

std::string HloSharding::ToStringWithoutMetadata() const {
  std::string out;
  AppendImpl(&out, /*include_metadata=*/false);
  return out;
}

// ---- Validation -----------------------------------------------------------------------------

absl::Status HloSharding::ValidateLeaf(const Shape& shape, int64_t num_devices) const {
  if (kind_ == Kind::kMaximal) {
    if (maximal_device_ >= num_devices) {
      return absl::InvalidArgumentError(absl::StrCat(
          "device ", maximal_device_, " is out of range for ", num_devices, " devices"));
    }
    return absl::OkStatus();
  }
  if (kind_ != Kind::kTiled) return absl::OkStatus();
  const int64_t rank = shape.IsArray() ? shape.rank() : 0;
  if (TiledDataRank() != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("sharding ", ToStringWithoutMetadata(), " tiles ", TiledDataRank(),
                     " dimensions but shape ", shape.ToString(false), " has rank ", rank));
  }
  if (tile_assignment_.num_devices() > num_devices) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sharding ", ToStringWithoutMetadata(), " uses ", tile_assignment_.num_devices(),
        " devices but only ", num_devices, " are available"));
  }
  const int64_t max_device = tile_assignment_.MaxDevice();
  if (max_device >= num_devices) {
    return absl::InvalidArgumentError(absl::StrCat("sharding ", ToStringWithoutMetadata(),
                                                   " uses device ", max_device,
                                                   ", out of range for ", num_devices, " devices"));
  }
  return absl::OkStatus();
}

absl::Status HloSharding::Validate(const Shape& shape, int64_t num_devices) const {
  if (shape.IsToken()) return absl::OkStatus();
  if (shape.IsTuple()) {
    const std::vector<const Shape*> leaves = shape.leaves();
    if (kind_ == Kind::kTuple) {
      const size_t count = tuple_elements().size();
      if (count != leaves.size() && !(leaves.empty() && count <= 1)) {
        return absl::InvalidArgumentError(
            absl::StrCat("tuple sharding has ", count, " elements but shape ",
                         shape.ToString(false), " has ", leaves.size(), " leaves"));
      }
    }
    for (size_t i = 0; i < leaves.size(); ++i) {
      const HloSharding& leaf = kind_ == Kind::kTuple ? tuple_elements()[i] : *this;
      if (leaves[i]->IsToken()) continue;
      absl::Status status = leaf.ValidateLeaf(*leaves[i], num_devices);
      if (!status.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("tuple element ", i, ": ", status.message()));
      }
    }
    return absl::OkStatus();
  }
  if (kind_ == Kind::kTuple) {
    return absl::InvalidArgumentError(absl::StrCat("tuple sharding ", ToStringWithoutMetadata(),
                                                   " on non-tuple shape ", shape.ToString(false)));
  }
  return ValidateLeaf(shape, num_devices);
}

// ---- Equality -------------------------------------------------------------------------------

bool operator==(const HloSharding& a, const HloSharding& b) {
  using Kind = HloSharding::Kind;
  if (a.kind_ != b.kind_ || a.shard_group_ != b.shard_group_ ||
      a.reduction_op_ != b.reduction_op_) {
    return false;
  }
  switch (a.kind_) {
    case Kind::kMaximal:
      return a.maximal_device_ == b.maximal_device_;
    case Kind::kTiled:
      return a.replicate_on_last_tile_dim_ == b.replicate_on_last_tile_dim_ &&
             a.subgroup_types_ == b.subgroup_types_ && a.tile_assignment_ == b.tile_assignment_;
    case Kind::kTuple:
      return a.tuple_elements_ == b.tuple_elements_ || a.tuple_elements() == b.tuple_elements();
    default:
      return true;
  }
}

}  // namespace hlo

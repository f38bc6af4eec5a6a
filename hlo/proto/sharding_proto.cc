// HloSharding <-> OpSharding.
//
// The mapping is XLA's: each kind has its OpSharding.Type; a tiled sharding is OTHER with
// tile_assignment_dimensions plus either the iota fields or the explicit device list, and its
// subgroups as replicate_on_last_tile_dim or last_tile_dims; a tuple lists its flattened
// leaves. HloSharding keeps metadata as text (`op_name="a" ...`), so metadata goes through
// ParseMetadataText / MetadataText. Reading goes through the validating factories, which
// canonicalize exactly as XLA does.
#include "hlo/proto/hlo_proto_util.h"
#include "hlo/proto/proto_internal.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

using proto_internal::AssignRepeated;
using proto_internal::ToInt64Vector;

// More devices than this in one tile assignment is rejected on reading: some canonicalizations
// list every device, and no real mesh comes near it.
constexpr int64_t kMaxShardingDevices = int64_t{1} << 24;

xla::OpSharding WriteSharding(const HloSharding& sharding, bool* lossy) {
  xla::OpSharding proto;
  switch (sharding.kind()) {
    case HloSharding::Kind::kTuple:
      proto.set_type(xla::OpSharding::TUPLE);
      for (const HloSharding& element : sharding.tuple_elements()) {
        *proto.add_tuple_shardings() = WriteSharding(element, lossy);
      }
      break;
    case HloSharding::Kind::kReplicated:
      proto.set_type(xla::OpSharding::REPLICATED);
      break;
    case HloSharding::Kind::kManual:
      proto.set_type(xla::OpSharding::MANUAL);
      break;
    case HloSharding::Kind::kUnknown:
      proto.set_type(xla::OpSharding::UNKNOWN);
      break;
    case HloSharding::Kind::kUnreduced:
      proto.set_type(xla::OpSharding::UNREDUCED);
      break;
    case HloSharding::Kind::kMaximal:
      proto.set_type(xla::OpSharding::MAXIMAL);
      proto.add_tile_assignment_dimensions(1);
      proto.add_tile_assignment_devices(sharding.maximal_device());
      break;
    case HloSharding::Kind::kTiled: {
      proto.set_type(xla::OpSharding::OTHER);
      const TileAssignment& ta = sharding.tile_assignment();
      AssignRepeated(ta.dims(), proto.mutable_tile_assignment_dimensions());
      if (ta.is_iota()) {
        AssignRepeated(ta.iota_reshape_dims(), proto.mutable_iota_reshape_dims());
        AssignRepeated(ta.iota_transpose_perm(), proto.mutable_iota_transpose_perm());
      } else {
        AssignRepeated(ta.Devices(), proto.mutable_tile_assignment_devices());
      }
      proto.set_replicate_on_last_tile_dim(sharding.replicate_on_last_tile_dim());
      for (OpShardingType type : sharding.subgroup_types()) {
        proto.add_last_tile_dims(static_cast<xla::OpSharding::Type>(type));
      }
      break;
    }
  }
  for (const std::string& text : sharding.PrintedMetadata()) {
    std::optional<OpMetadata> metadata = proto_internal::ParseMetadataText(text);
    if (!metadata || proto_internal::MetadataText(*metadata) != text) {
      *lossy = true;
      continue;
    }
    *proto.add_metadata() = proto_internal::MetadataToProto(*metadata, lossy);
  }
  const ShardGroup& group = sharding.shard_group();
  if (group.is_set()) {
    proto.set_is_shard_group(true);
    proto.set_shard_group_id(group.id);
    proto.set_shard_group_type(group.kind == ShardGroup::Kind::kAs ? xla::OpSharding::AS
                                                                   : xla::OpSharding::LIKE);
  }
  return proto;
}

absl::StatusOr<TileAssignment> ReadTileAssignment(const xla::OpSharding& proto) {
  std::vector<int64_t> dims = ToInt64Vector(proto.tile_assignment_dimensions());
  if (dims.empty()) return absl::InvalidArgumentError("tiled sharding has no tile dimensions");
  std::optional<int64_t> devices = proto_internal::CheckedProduct(dims);
  if (!devices || *devices > kMaxShardingDevices) {
    return absl::InvalidArgumentError(
        hlo::StrCat("tile assignment has more than ", kMaxShardingDevices, " devices"));
  }
  if (proto.tile_assignment_devices_size() > 0) {
    return TileAssignment::Explicit(dims, ToInt64Vector(proto.tile_assignment_devices()));
  }
  if (proto.iota_reshape_dims_size() == 0) return TileAssignment::Iota(dims);
  return TileAssignment::Iota(dims, ToInt64Vector(proto.iota_reshape_dims()),
                              ToInt64Vector(proto.iota_transpose_perm()));
}

absl::StatusOr<HloSharding> ReadTiled(const xla::OpSharding& proto,
                                      HloSharding::Metadata metadata) {
  ASSIGN_OR_RETURN(TileAssignment ta, ReadTileAssignment(proto));
  if (proto.replicate_on_last_tile_dim()) {
    if (proto.last_tile_dims_size() > 0) {
      return absl::InvalidArgumentError(
          "sharding has both replicate_on_last_tile_dim and last_tile_dims");
    }
    return HloSharding::PartialTile(std::move(ta), std::move(metadata));
  }
  if (proto.last_tile_dims_size() > 0) {
    std::vector<OpShardingType> types;
    for (int type : proto.last_tile_dims()) {
      if (type < 0 || type > static_cast<int>(OpShardingType::kUnreduced)) {
        return absl::InvalidArgumentError(hlo::StrCat("unknown last_tile_dims type ", type));
      }
      types.push_back(static_cast<OpShardingType>(type));
    }
    return HloSharding::Subgroup(std::move(ta), types, std::move(metadata));
  }
  if (ta.num_devices() == 1) {
    // XLA reads a one-device tiling as maximal on that device.
    return HloSharding::Maximal(ta.device_at(0), std::move(metadata));
  }
  return HloSharding::Tile(std::move(ta), std::move(metadata));
}

absl::StatusOr<HloSharding> ReadSharding(const xla::OpSharding& proto) {
  HloSharding::Metadata metadata;
  for (const xla::OpMetadata& m : proto.metadata()) {
    metadata.push_back(proto_internal::MetadataText(proto_internal::MetadataFromProto(m)));
  }
  absl::StatusOr<HloSharding> sharding = absl::InvalidArgumentError("unset");
  switch (proto.type()) {
    case xla::OpSharding::TUPLE: {
      std::vector<HloSharding> elements;
      for (const xla::OpSharding& element : proto.tuple_shardings()) {
        ASSIGN_OR_RETURN(HloSharding e, ReadSharding(element));
        elements.push_back(std::move(e));
      }
      sharding = HloSharding::Tuple(std::move(elements));
      break;
    }
    case xla::OpSharding::REPLICATED:
      sharding = HloSharding::Replicate(std::move(metadata));
      break;
    case xla::OpSharding::MANUAL:
      sharding = HloSharding::Manual(std::move(metadata));
      break;
    case xla::OpSharding::UNKNOWN:
      sharding = HloSharding::Unknown(std::move(metadata));
      break;
    case xla::OpSharding::UNREDUCED:
      sharding = HloSharding::Unreduced(std::move(metadata));
      break;
    case xla::OpSharding::MAXIMAL:
      if (proto.tile_assignment_devices_size() != 1) {
        return absl::InvalidArgumentError(hlo::StrCat(
            "maximal sharding lists ", proto.tile_assignment_devices_size(), " devices, not 1"));
      }
      sharding = HloSharding::Maximal(proto.tile_assignment_devices(0), std::move(metadata));
      break;
    case xla::OpSharding::OTHER:
      sharding = ReadTiled(proto, std::move(metadata));
      break;
    default:
      return absl::InvalidArgumentError(
          hlo::StrCat("unknown sharding type ", static_cast<int>(proto.type())));
  }
  // A max or min reduction op travels as XLA's metadata entry (hlo_sharding.h).
  if (sharding.ok()) sharding = sharding->TakeReductionOpFromMetadata();
  if (!sharding.ok() || !proto.is_shard_group()) return sharding;
  if (proto.shard_group_id() < 0) {
    return absl::InvalidArgumentError(
        hlo::StrCat("negative shard group id ", proto.shard_group_id()));
  }
  switch (proto.shard_group_type()) {
    case xla::OpSharding::AS:
      return sharding->WithShardGroup(ShardGroup::As(proto.shard_group_id()));
    case xla::OpSharding::LIKE:
      return sharding->WithShardGroup(ShardGroup::Like(proto.shard_group_id()));
    default:
      return absl::InvalidArgumentError(
          hlo::StrCat("unknown shard group type ", static_cast<int>(proto.shard_group_type())));
  }
}

}  // namespace

namespace proto_internal {

std::string EncodeShardingMarker(const HloSharding& sharding) {
  std::vector<std::string> fields = {sharding.ToStringWithoutMetadata()};
  for (const HloSharding& leaf : sharding.Leaves()) {
    fields.push_back(hlo::StrCat(leaf.metadata().size()));
    fields.insert(fields.end(), leaf.metadata().begin(), leaf.metadata().end());
  }
  return EncodeStrings(fields);
}

absl::StatusOr<HloSharding> DecodeShardingMarker(std::string_view text) {
  const absl::Status malformed = absl::InvalidArgumentError("malformed spmdp::sharding marker");
  std::optional<std::vector<std::string>> fields = DecodeStrings(text);
  if (!fields || fields->empty()) return malformed;
  absl::StatusOr<HloSharding> sharding = HloSharding::Parse((*fields)[0]);
  if (!sharding.ok()) {
    return absl::InvalidArgumentError(
        hlo::StrCat("spmdp::sharding marker: ", sharding.status().message()));
  }
  std::vector<HloSharding> leaves =
      sharding->IsTuple() ? sharding->tuple_elements() : std::vector<HloSharding>{*sharding};
  size_t next = 1;
  for (HloSharding& leaf : leaves) {
    std::optional<int64_t> count =
        next < fields->size() ? ParseInt64((*fields)[next++]) : std::nullopt;
    if (!count || *count < 0 || *count > static_cast<int64_t>(fields->size() - next)) {
      return malformed;
    }
    leaf = leaf.WithMetadata(
        HloSharding::Metadata(fields->begin() + next, fields->begin() + next + *count));
    next += *count;
  }
  if (next != fields->size()) return malformed;
  if (!sharding->IsTuple()) return leaves[0];
  return HloSharding::Tuple(std::move(leaves));
}

}  // namespace proto_internal

xla::OpSharding ShardingToProto(const HloSharding& sharding, bool* exact) {
  bool lossy = false;
  xla::OpSharding proto = WriteSharding(sharding, &lossy);
  if (exact != nullptr) {
    absl::StatusOr<HloSharding> back = lossy ? absl::InternalError("lossy") : ReadSharding(proto);
    *exact = back.ok() && back->ToString() == sharding.ToString() &&
             back->shard_group() == sharding.shard_group();
  }
  return proto;
}

absl::StatusOr<HloSharding> ShardingFromProto(const xla::OpSharding& proto) {
  absl::StatusOr<HloSharding> sharding = ReadSharding(proto);
  if (!sharding.ok()) {
    return absl::InvalidArgumentError(hlo::StrCat("sharding: ", sharding.status().message()));
  }
  return sharding;
}

}  // namespace hlo

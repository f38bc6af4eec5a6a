// The attribute structs of hlo_attributes.h <-> their XLA messages. The IR structs mirror the
// messages field for field, so most conversions are copies; replica groups are the exception
// (one IR value, up to three proto spellings).
#include <algorithm>

#include "hlo/proto/proto_internal.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {
namespace proto_internal {

xla::DotDimensionNumbers DotDimsToProto(const DotDimensionNumbers& d) {
  xla::DotDimensionNumbers p;
  AssignRepeated(d.lhs_contracting_dimensions, p.mutable_lhs_contracting_dimensions());
  AssignRepeated(d.rhs_contracting_dimensions, p.mutable_rhs_contracting_dimensions());
  AssignRepeated(d.lhs_batch_dimensions, p.mutable_lhs_batch_dimensions());
  AssignRepeated(d.rhs_batch_dimensions, p.mutable_rhs_batch_dimensions());
  return p;
}

DotDimensionNumbers DotDimsFromProto(const xla::DotDimensionNumbers& p) {
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = ToInt64Vector(p.lhs_contracting_dimensions());
  d.rhs_contracting_dimensions = ToInt64Vector(p.rhs_contracting_dimensions());
  d.lhs_batch_dimensions = ToInt64Vector(p.lhs_batch_dimensions());
  d.rhs_batch_dimensions = ToInt64Vector(p.rhs_batch_dimensions());
  return d;
}

xla::ConvolutionDimensionNumbers ConvDimsToProto(const ConvolutionDimensionNumbers& d) {
  xla::ConvolutionDimensionNumbers p;
  p.set_input_batch_dimension(d.input_batch_dimension);
  p.set_input_feature_dimension(d.input_feature_dimension);
  AssignRepeated(d.input_spatial_dimensions, p.mutable_input_spatial_dimensions());
  p.set_kernel_input_feature_dimension(d.kernel_input_feature_dimension);
  p.set_kernel_output_feature_dimension(d.kernel_output_feature_dimension);
  AssignRepeated(d.kernel_spatial_dimensions, p.mutable_kernel_spatial_dimensions());
  p.set_output_batch_dimension(d.output_batch_dimension);
  p.set_output_feature_dimension(d.output_feature_dimension);
  AssignRepeated(d.output_spatial_dimensions, p.mutable_output_spatial_dimensions());
  return p;
}

ConvolutionDimensionNumbers ConvDimsFromProto(const xla::ConvolutionDimensionNumbers& p) {
  ConvolutionDimensionNumbers d;
  d.input_batch_dimension = p.input_batch_dimension();
  d.input_feature_dimension = p.input_feature_dimension();
  d.input_spatial_dimensions = ToInt64Vector(p.input_spatial_dimensions());
  d.kernel_input_feature_dimension = p.kernel_input_feature_dimension();
  d.kernel_output_feature_dimension = p.kernel_output_feature_dimension();
  d.kernel_spatial_dimensions = ToInt64Vector(p.kernel_spatial_dimensions());
  d.output_batch_dimension = p.output_batch_dimension();
  d.output_feature_dimension = p.output_feature_dimension();
  d.output_spatial_dimensions = ToInt64Vector(p.output_spatial_dimensions());
  return d;
}

xla::Window WindowToProto(const Window& w) {
  xla::Window p;
  for (const WindowDimension& d : w.dimensions) {
    xla::WindowDimension* out = p.add_dimensions();
    out->set_size(d.size);
    out->set_stride(d.stride);
    out->set_padding_low(d.padding_low);
    out->set_padding_high(d.padding_high);
    out->set_window_dilation(d.window_dilation);
    out->set_base_dilation(d.base_dilation);
    out->set_window_reversal(d.window_reversal);
  }
  return p;
}

Window WindowFromProto(const xla::Window& p) {
  Window w;
  for (const xla::WindowDimension& d : p.dimensions()) {
    WindowDimension out;
    out.size = d.size();
    out.stride = d.stride();
    out.padding_low = d.padding_low();
    out.padding_high = d.padding_high();
    out.window_dilation = d.window_dilation();
    out.base_dilation = d.base_dilation();
    out.window_reversal = d.window_reversal();
    w.dimensions.push_back(out);
  }
  return w;
}

xla::GatherDimensionNumbers GatherDimsToProto(const GatherDimensionNumbers& d) {
  xla::GatherDimensionNumbers p;
  AssignRepeated(d.offset_dims, p.mutable_offset_dims());
  AssignRepeated(d.collapsed_slice_dims, p.mutable_collapsed_slice_dims());
  AssignRepeated(d.start_index_map, p.mutable_start_index_map());
  p.set_index_vector_dim(d.index_vector_dim);
  AssignRepeated(d.operand_batching_dims, p.mutable_operand_batching_dims());
  AssignRepeated(d.start_indices_batching_dims, p.mutable_start_indices_batching_dims());
  return p;
}

GatherDimensionNumbers GatherDimsFromProto(const xla::GatherDimensionNumbers& p) {
  GatherDimensionNumbers d;
  d.offset_dims = ToInt64Vector(p.offset_dims());
  d.collapsed_slice_dims = ToInt64Vector(p.collapsed_slice_dims());
  d.start_index_map = ToInt64Vector(p.start_index_map());
  d.index_vector_dim = p.index_vector_dim();
  d.operand_batching_dims = ToInt64Vector(p.operand_batching_dims());
  d.start_indices_batching_dims = ToInt64Vector(p.start_indices_batching_dims());
  return d;
}

xla::ScatterDimensionNumbers ScatterDimsToProto(const ScatterDimensionNumbers& d) {
  xla::ScatterDimensionNumbers p;
  AssignRepeated(d.update_window_dims, p.mutable_update_window_dims());
  AssignRepeated(d.inserted_window_dims, p.mutable_inserted_window_dims());
  AssignRepeated(d.scatter_dims_to_operand_dims, p.mutable_scatter_dims_to_operand_dims());
  p.set_index_vector_dim(d.index_vector_dim);
  AssignRepeated(d.input_batching_dims, p.mutable_input_batching_dims());
  AssignRepeated(d.scatter_indices_batching_dims, p.mutable_scatter_indices_batching_dims());
  return p;
}

ScatterDimensionNumbers ScatterDimsFromProto(const xla::ScatterDimensionNumbers& p) {
  ScatterDimensionNumbers d;
  d.update_window_dims = ToInt64Vector(p.update_window_dims());
  d.inserted_window_dims = ToInt64Vector(p.inserted_window_dims());
  d.scatter_dims_to_operand_dims = ToInt64Vector(p.scatter_dims_to_operand_dims());
  d.index_vector_dim = p.index_vector_dim();
  d.input_batching_dims = ToInt64Vector(p.input_batching_dims());
  d.scatter_indices_batching_dims = ToInt64Vector(p.scatter_indices_batching_dims());
  return d;
}

xla::PaddingConfig PaddingToProto(const PaddingConfig& c) {
  xla::PaddingConfig p;
  for (const PaddingDimension& d : c.dimensions) {
    xla::PaddingConfig::PaddingConfigDimension* out = p.add_dimensions();
    out->set_edge_padding_low(d.edge_padding_low);
    out->set_edge_padding_high(d.edge_padding_high);
    out->set_interior_padding(d.interior_padding);
  }
  return p;
}

PaddingConfig PaddingFromProto(const xla::PaddingConfig& p) {
  PaddingConfig c;
  for (const auto& d : p.dimensions()) {
    c.dimensions.push_back({d.edge_padding_low(), d.edge_padding_high(), d.interior_padding()});
  }
  return c;
}

// ---- Replica groups ------------------------------------------------------------------------

namespace {

// Replica groups that expand to more device slots than this are rejected on reading.
constexpr int64_t kMaxReplicaGroupDevices = int64_t{1} << 24;

absl::StatusOr<IotaReplicaGroupList> ReadIota(const xla::IotaReplicaGroupListProto& p,
                                              bool foreign) {
  IotaReplicaGroupList iota;
  iota.num_replica_groups = p.num_replica_groups();
  iota.num_devices_per_group = p.num_devices_per_group();
  iota.iota_reshape_dims = ToInt64Vector(p.iota_reshape_dims());
  iota.iota_transpose_perm = ToInt64Vector(p.iota_transpose_perm());
  std::optional<int64_t> total =
      CheckedProduct({iota.num_replica_groups, iota.num_devices_per_group});
  if (!total || *total > kMaxReplicaGroupDevices) {
    return absl::InvalidArgumentError(hlo::StrCat(
        "iota replica groups [", iota.num_replica_groups, ",", iota.num_devices_per_group,
        "] are negative or larger than ", kMaxReplicaGroupDevices, " devices"));
  }
  std::optional<int64_t> reshaped = CheckedProduct(iota.iota_reshape_dims);
  if (!reshaped || *reshaped != *total) {
    return absl::InvalidArgumentError(
        "iota replica groups: the reshape dims do not multiply to groups x group size");
  }
  const size_t rank = iota.iota_reshape_dims.size();
  if (!iota.iota_transpose_perm.empty()) {
    std::vector<bool> seen(rank, false);
    bool ok = iota.iota_transpose_perm.size() == rank;
    for (int64_t d : iota.iota_transpose_perm) {
      if (!ok || d < 0 || d >= static_cast<int64_t>(rank) || seen[d]) {
        ok = false;
        break;
      }
      seen[d] = true;
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          "iota replica groups: the transpose is not a permutation of the reshape dims");
    }
    bool identity = true;
    for (size_t i = 0; i < rank; ++i)
      identity &= iota.iota_transpose_perm[i] == static_cast<int64_t>(i);
    if (foreign && identity) iota.iota_transpose_perm.clear();
  }
  return iota;
}

std::vector<std::vector<int64_t>> ReadGroups(
    const google::protobuf::RepeatedPtrField<xla::ReplicaGroup>& groups) {
  std::vector<std::vector<int64_t>> out;
  for (const xla::ReplicaGroup& g : groups) out.push_back(ToInt64Vector(g.replica_ids()));
  return out;
}

}  // namespace

// HloInstructionProto.replica_groups (field 49) is deprecated in XLA, which still writes and
// reads it beside collective_device_list; so do we.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void ReplicaGroupsToProto(const ReplicaGroups& groups, xla::HloInstructionProto* proto) {
  xla::CollectiveDeviceListProto* list = proto->mutable_collective_device_list();
  if (groups.iota) {
    const IotaReplicaGroupList& iota = *groups.iota;
    xla::IotaReplicaGroupListProto* out = list->mutable_iota_replica_group_list();
    out->set_num_replica_groups(iota.num_replica_groups);
    out->set_num_devices_per_group(iota.num_devices_per_group);
    AssignRepeated(iota.iota_reshape_dims, out->mutable_iota_reshape_dims());
    AssignRepeated(iota.iota_transpose_perm, out->mutable_iota_transpose_perm());
    return;
  }
  for (const std::vector<int64_t>& group : groups.groups) {
    AssignRepeated(group, proto->add_replica_groups()->mutable_replica_ids());
    AssignRepeated(group, list->add_replica_groups()->mutable_replica_ids());
  }
}

absl::StatusOr<std::optional<ReplicaGroups>> ReplicaGroupsFromProto(
    const xla::HloInstructionProto& proto, bool foreign) {
  ReplicaGroups groups;
  if (proto.has_collective_device_list()) {
    const xla::CollectiveDeviceListProto& list = proto.collective_device_list();
    if (list.has_iota_replica_group_list()) {
      ASSIGN_OR_RETURN(IotaReplicaGroupList iota,
                       ReadIota(list.iota_replica_group_list(), foreign));
      groups.iota = std::move(iota);
    } else if (list.replica_groups_size() > 0) {
      groups.groups = ReadGroups(list.replica_groups());
    } else {
      groups.groups = ReadGroups(proto.replica_groups());
    }
    return groups;
  }
  if (proto.has_iota_collective_device_list()) {
    ASSIGN_OR_RETURN(IotaReplicaGroupList iota,
                     ReadIota(proto.iota_collective_device_list(), foreign));
    groups.iota = std::move(iota);
    return groups;
  }
  if (proto.has_mesh_axes_replica_group_list()) {
    return absl::InvalidArgumentError("mesh-axes replica groups are not supported");
  }
  if (proto.replica_groups_size() > 0) {
    groups.groups = ReadGroups(proto.replica_groups());
    return groups;
  }
  return std::optional<ReplicaGroups>();
}
#pragma GCC diagnostic pop

}  // namespace proto_internal
}  // namespace hlo

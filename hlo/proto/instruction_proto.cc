// HloInstruction <-> HloInstructionProto.
//
// Each InstructionAttributes field goes to the XLA field of the same meaning (iota's dimension
// to `dimensions`, as XLA does; operand precision to `precision_config`; comparison direction
// and type as their strings). What XLA's fields cannot hold exactly travels as markers (see
// proto_internal.h):
//   channel_id <= 0            -> spmdp::channel_id (XLA reads 0 as "no channel")
//   operand_layout_constraints={} (present, empty)  -> spmdp::operand_layout_constraints
//   frontend attributes not strictly sorted by key -> spmdp::frontend_attributes
//   metadata with int64 lines or non-numeric profile types -> spmdp::metadata
//   a sharding whose OpSharding reads back differently  -> spmdp::sharding (its text)
//   the wrapped opcode of a sugared async op (`custom-call-start`) -> spmdp::async_wrapped_opcode
// Reading validates enum values and strings, literal sizes and shardings; links (operands,
// called computations) are resolved by module_proto.cc.
#include <limits>

#include "hlo/proto/hlo_proto_util.h"
#include "hlo/proto/proto_internal.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {
namespace proto_internal {
namespace {

void AddMarker(std::string_view name, std::string value, xla::HloInstructionProto* proto) {
  xla::ExtraAttribute* extra = proto->add_spmdp_extra_attributes();
  extra->set_name(std::string(name));
  extra->set_value(std::move(value));
}

absl::Status CheckedInt32(int64_t value, std::string_view what, int32_t* out) {
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(hlo::StrCat(what, " ", value, " does not fit in int32"));
  }
  *out = static_cast<int32_t>(value);
  return absl::OkStatus();
}

absl::Status WriteLinks(const HloInstruction& instr, const ProtoIds& ids,
                        xla::HloInstructionProto* proto) {
  auto instr_id = [&](const HloInstruction* other,
                      std::string_view role) -> absl::StatusOr<int64_t> {
    auto it = ids.instructions.find(other);
    if (it == ids.instructions.end() || other->parent() != instr.parent()) {
      return absl::InvalidArgumentError(hlo::StrCat(
          role, " ", other->name(), " is not in the same computation as ", instr.name()));
    }
    return it->second;
  };
  for (const HloInstruction* operand : instr.operands()) {
    ASSIGN_OR_RETURN(int64_t id, instr_id(operand, "operand"));
    proto->add_operand_ids(id);
  }
  for (const HloInstruction* pred : instr.control_predecessors()) {
    ASSIGN_OR_RETURN(int64_t id, instr_id(pred, "control predecessor"));
    proto->add_control_predecessor_ids(id);
  }
  const std::vector<HloComputation*>& called = instr.called_computations();
  for (int64_t slot : ProtoCalledOrder(instr.opcode(), called.size())) {
    const HloComputation* callee = called[slot];
    auto it = ids.computations.find(callee);
    if (callee == nullptr || it == ids.computations.end()) {
      return absl::InvalidArgumentError(
          hlo::StrCat(instr.name(), " calls a computation that is not in the module"));
    }
    proto->add_called_computation_ids(it->second);
  }
  return absl::OkStatus();
}

// dimensions, literal, compare, dot, convolution, gather/scatter, slicing and padding.
void WriteShapeAttrs(const HloInstruction& instr, xla::HloInstructionProto* proto) {
  const InstructionAttributes& a = instr.attrs();
  if (instr.opcode() == HloOpcode::kIota) {
    proto->add_dimensions(a.iota_dimension);
  } else {
    AssignRepeated(a.dimensions, proto->mutable_dimensions());
  }
  proto->set_parameter_number(a.parameter_number);
  proto->set_tuple_index(a.tuple_index);
  if (a.literal && !a.literal_elided) *proto->mutable_literal() = LiteralToProto(*a.literal);
  if (instr.opcode() == HloOpcode::kCompare || a.comparison_direction != ComparisonDirection::kEq) {
    proto->set_comparison_direction(std::string(ComparisonDirectionString(a.comparison_direction)));
  }
  if (a.comparison_type != ComparisonType::kDefault) {
    proto->set_comparison_type(std::string(ComparisonTypeString(a.comparison_type)));
  }
  if (a.dot_dimension_numbers) {
    *proto->mutable_dot_dimension_numbers() = DotDimsToProto(*a.dot_dimension_numbers);
    if (instr.opcode() == HloOpcode::kRaggedDot) {
      *proto->mutable_ragged_dot_dimension_numbers()->mutable_dot_dimension_numbers() =
          proto->dot_dimension_numbers();
    }
  }
  if (a.convolution_dimension_numbers) {
    *proto->mutable_convolution_dimension_numbers() =
        ConvDimsToProto(*a.convolution_dimension_numbers);
  }
  if (a.window) *proto->mutable_window() = WindowToProto(*a.window);
  proto->set_feature_group_count(a.feature_group_count);
  proto->set_batch_group_count(a.batch_group_count);
  if (a.gather_dimension_numbers) {
    *proto->mutable_gather_dimension_numbers() = GatherDimsToProto(*a.gather_dimension_numbers);
  }
  AssignRepeated(a.gather_slice_sizes, proto->mutable_gather_slice_sizes());
  if (a.scatter_dimension_numbers) {
    *proto->mutable_scatter_dimension_numbers() = ScatterDimsToProto(*a.scatter_dimension_numbers);
  }
  proto->set_indices_are_sorted(a.indices_are_sorted);
  proto->set_unique_indices(a.unique_indices);
  for (const SliceDimension& d : a.slice_dimensions) {
    xla::HloInstructionProto::SliceDimensions* out = proto->add_slice_dimensions();
    out->set_start(d.start);
    out->set_limit(d.limit);
    out->set_stride(d.stride);
  }
  AssignRepeated(a.dynamic_slice_sizes, proto->mutable_dynamic_slice_sizes());
  if (a.padding_config) *proto->mutable_padding_config() = PaddingToProto(*a.padding_config);
  for (Precision p : a.operand_precision) {
    proto->mutable_precision_config()->add_operand_precision(
        static_cast<xla::PrecisionConfig::Precision>(p));
  }
}

void WriteCollectiveAttrs(const InstructionAttributes& a, xla::HloInstructionProto* proto) {
  if (a.replica_groups) ReplicaGroupsToProto(*a.replica_groups, proto);
  for (const auto& [source, target] : a.source_target_pairs) {
    xla::SourceTarget* pair = proto->add_source_target_pairs();
    pair->set_source(source);
    pair->set_target(target);
  }
  if (a.channel_id) {
    if (*a.channel_id > 0) {
      proto->set_channel_id(*a.channel_id);
    } else {
      AddMarker(kChannelIdMarker, hlo::StrCat(*a.channel_id), proto);
    }
  }
  proto->set_use_global_device_ids(a.use_global_device_ids);
  proto->set_constrain_layout(a.constrain_layout);
}

absl::Status WriteCustomCallAttrs(const InstructionAttributes& a, xla::HloInstructionProto* proto) {
  RETURN_IF_ERROR(CheckUtf8(a.custom_call_target, "custom_call_target"));
  proto->set_custom_call_target(a.custom_call_target);
  proto->set_custom_call_has_side_effect(a.custom_call_has_side_effect);
  if (a.operand_shapes_with_layout) {
    for (const Shape& shape : *a.operand_shapes_with_layout) {
      *proto->add_operand_shapes_with_layout() = ShapeToProto(shape);
    }
    if (a.operand_shapes_with_layout->empty()) AddMarker(kEmptyOperandLayoutsMarker, "", proto);
  }
  for (const OutputOperandAlias& alias : a.output_operand_aliasing) {
    xla::OutputOperandAliasing* out = proto->add_output_operand_aliasing();
    AssignRepeated(alias.output_index, out->mutable_output_shape_index());
    out->set_operand_index(alias.operand);
    AssignRepeated(alias.operand_index, out->mutable_operand_shape_index());
  }
  proto->set_backend_config(a.backend_config);
  return absl::OkStatus();
}

absl::Status WriteMiscAttrs(const HloInstruction& instr, xla::HloInstructionProto* proto) {
  const InstructionAttributes& a = instr.attrs();
  proto->set_is_stable(a.is_stable);
  int32_t bits = 0;
  RETURN_IF_ERROR(CheckedInt32(a.exponent_bits, "exponent_bits", &bits));
  proto->set_exponent_bits(bits);
  RETURN_IF_ERROR(CheckedInt32(a.mantissa_bits, "mantissa_bits", &bits));
  proto->set_mantissa_bits(bits);
  proto->set_epsilon(a.epsilon);
  proto->set_feature_index(a.feature_index);
  proto->set_fft_type(static_cast<xla::FftType>(a.fft_type));
  AssignRepeated(a.fft_length, proto->mutable_fft_length());
  proto->set_distribution(static_cast<xla::RandomDistribution>(a.distribution));
  RETURN_IF_ERROR(CheckUtf8(a.fusion_kind, "fusion kind"));
  proto->set_fusion_kind(a.fusion_kind);
  proto->set_is_host_transfer(a.is_host_transfer);
  proto->set_k(a.k);
  if (instr.opcode() == HloOpcode::kTopK) proto->set_largest(a.largest);
  proto->set_infeed_config(a.infeed_config);
  proto->set_outfeed_config(a.outfeed_config);
  if (a.outfeed_shape) *proto->mutable_outfeed_shape() = ShapeToProto(*a.outfeed_shape);
  if (a.async_wrapped_opcode) {
    AddMarker(kAsyncWrappedOpcodeMarker, std::string(HloOpcodeString(*a.async_wrapped_opcode)),
              proto);
  }
  return absl::OkStatus();
}

absl::Status WriteMetadataAndAttributes(const HloInstruction& instr,
                                        xla::HloInstructionProto* proto) {
  const InstructionAttributes& a = instr.attrs();
  const OpMetadata& m = a.metadata;
  for (const std::string* s :
       {&m.op_type, &m.op_name, &m.source_file, &m.deduplicated_name, &m.scheduling_name}) {
    RETURN_IF_ERROR(CheckUtf8(*s, "metadata"));
  }
  for (const std::string& s : m.profile_type) {
    RETURN_IF_ERROR(CheckUtf8(s, "metadata profile_type"));
  }
  if (!m.empty() || m.scheduling_name_set) {
    bool lossy = false;
    *proto->mutable_metadata() = MetadataToProto(m, &lossy);
    if (lossy) AddMarker(kMetadataMarker, EncodeMetadata(m), proto);
  }
  if (!a.frontend_attributes.empty()) {
    std::optional<std::string> order;
    RETURN_IF_ERROR(FrontendAttributesToProto(a.frontend_attributes,
                                              proto->mutable_frontend_attributes(), &order));
    if (order) AddMarker(kFrontendAttributesMarker, *std::move(order), proto);
  }
  if (instr.has_sharding()) {
    bool exact = false;
    *proto->mutable_sharding() = ShardingToProto(instr.sharding(), &exact);
    if (!exact) {
      std::string text = EncodeShardingMarker(instr.sharding());
      RETURN_IF_ERROR(CheckUtf8(text, "sharding"));
      AddMarker(kShardingMarker, std::move(text), proto);
    }
  }
  for (const RawAttribute& raw : a.raw_attributes) {
    RETURN_IF_ERROR(CheckUtf8(raw.name, "attribute name"));
    RETURN_IF_ERROR(CheckUtf8(raw.value, "attribute value"));
    AddMarker(raw.name, raw.value, proto);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status InstructionToProto(const HloInstruction& instr, const ProtoIds& ids,
                                xla::HloInstructionProto* proto) {
  absl::Status status = [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckUtf8(instr.name(), "name"));
    proto->set_name(instr.name());
    proto->set_opcode(std::string(HloOpcodeString(instr.opcode())));
    *proto->mutable_shape() = ShapeToProto(instr.shape());
    auto it = ids.instructions.find(&instr);
    if (it == ids.instructions.end()) return absl::InternalError("instruction has no id");
    proto->set_id(it->second);
    RETURN_IF_ERROR(WriteLinks(instr, ids, proto));
    WriteShapeAttrs(instr, proto);
    WriteCollectiveAttrs(instr.attrs(), proto);
    RETURN_IF_ERROR(WriteCustomCallAttrs(instr.attrs(), proto));
    RETURN_IF_ERROR(WriteMiscAttrs(instr, proto));
    RETURN_IF_ERROR(WriteMetadataAndAttributes(instr, proto));
    ExportXlaFields(instr, proto);
    return absl::OkStatus();
  }();
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      hlo::StrCat("instruction %", instr.name(), ": ", status.message()));
}

// ---- Reading -------------------------------------------------------------------------------

namespace {

// The markers of `proto` by name (the last one wins), and its verbatim attributes in order.
struct Extras {
  absl::flat_hash_map<std::string, const std::string*> markers;
  std::vector<RawAttribute> raw;

  const std::string* Find(std::string_view name) const {
    auto it = markers.find(std::string(name));
    return it == markers.end() ? nullptr : it->second;
  }
};

Extras ReadExtras(const xla::HloInstructionProto& proto) {
  Extras extras;
  for (const xla::ExtraAttribute& extra : proto.spmdp_extra_attributes()) {
    if (IsMarker(extra.name())) {
      extras.markers[extra.name()] = &extra.value();
    } else {
      extras.raw.push_back({extra.name(), extra.value()});
    }
  }
  return extras;
}

absl::Status ReadShapeAttrs(const xla::HloInstructionProto& proto, HloOpcode opcode,
                            const Shape& shape, InstructionAttributes* a) {
  if (opcode == HloOpcode::kIota) {
    if (proto.dimensions_size() != 1) {
      return absl::InvalidArgumentError(
          hlo::StrCat("iota needs exactly one dimension, has ", proto.dimensions_size()));
    }
    a->iota_dimension = proto.dimensions(0);
  } else {
    a->dimensions = ToInt64Vector(proto.dimensions());
  }
  a->parameter_number = proto.parameter_number();
  a->tuple_index = proto.tuple_index();
  if (opcode == HloOpcode::kConstant && proto.has_literal()) {
    ASSIGN_OR_RETURN(Literal literal, LiteralFromProto(proto.literal()));
    if (!literal.shape().Compatible(shape)) {
      return absl::InvalidArgumentError(hlo::StrCat("literal shape ", literal.shape().ToString(),
                                                    " does not match ", shape.ToString()));
    }
    a->literal = std::move(literal);
  }
  if (!proto.comparison_direction().empty()) {
    std::optional<ComparisonDirection> d =
        StringToComparisonDirection(proto.comparison_direction());
    if (!d) {
      return absl::InvalidArgumentError(
          hlo::StrCat("unknown comparison_direction \"", proto.comparison_direction(), "\""));
    }
    a->comparison_direction = *d;
  } else if (opcode == HloOpcode::kCompare) {
    return absl::InvalidArgumentError("compare has no comparison_direction");
  }
  if (!proto.comparison_type().empty()) {
    std::optional<ComparisonType> t = StringToComparisonType(proto.comparison_type());
    if (!t) {
      return absl::InvalidArgumentError(
          hlo::StrCat("unknown comparison_type \"", proto.comparison_type(), "\""));
    }
    a->comparison_type = *t;
  }
  if (proto.has_dot_dimension_numbers()) {
    a->dot_dimension_numbers = DotDimsFromProto(proto.dot_dimension_numbers());
  } else if (proto.has_ragged_dot_dimension_numbers()) {
    a->dot_dimension_numbers =
        DotDimsFromProto(proto.ragged_dot_dimension_numbers().dot_dimension_numbers());
  }
  if (proto.has_convolution_dimension_numbers()) {
    a->convolution_dimension_numbers = ConvDimsFromProto(proto.convolution_dimension_numbers());
  }
  if (proto.has_window()) a->window = WindowFromProto(proto.window());
  // XLA writes 0 for "unset"; the group counts are at least 1.
  a->feature_group_count = proto.feature_group_count() == 0 ? 1 : proto.feature_group_count();
  a->batch_group_count = proto.batch_group_count() == 0 ? 1 : proto.batch_group_count();
  if (proto.has_gather_dimension_numbers()) {
    a->gather_dimension_numbers = GatherDimsFromProto(proto.gather_dimension_numbers());
  }
  a->gather_slice_sizes = ToInt64Vector(proto.gather_slice_sizes());
  if (proto.has_scatter_dimension_numbers()) {
    a->scatter_dimension_numbers = ScatterDimsFromProto(proto.scatter_dimension_numbers());
  }
  a->indices_are_sorted = proto.indices_are_sorted();
  a->unique_indices = proto.unique_indices();
  for (const auto& d : proto.slice_dimensions()) {
    a->slice_dimensions.push_back({d.start(), d.limit(), d.stride()});
  }
  a->dynamic_slice_sizes = ToInt64Vector(proto.dynamic_slice_sizes());
  if (proto.has_padding_config()) a->padding_config = PaddingFromProto(proto.padding_config());
  for (int p : proto.precision_config().operand_precision()) {
    if (p < 0 || p > static_cast<int>(Precision::kHighest)) {
      return absl::InvalidArgumentError(hlo::StrCat("unknown operand precision ", p));
    }
    a->operand_precision.push_back(static_cast<Precision>(p));
  }
  return absl::OkStatus();
}

absl::Status ReadCollectiveAttrs(const xla::HloInstructionProto& proto, const Extras& extras,
                                 bool foreign, InstructionAttributes* a) {
  ASSIGN_OR_RETURN(std::optional<ReplicaGroups> groups, ReplicaGroupsFromProto(proto, foreign));
  a->replica_groups = std::move(groups);
  for (const xla::SourceTarget& pair : proto.source_target_pairs()) {
    a->source_target_pairs.emplace_back(pair.source(), pair.target());
  }
  if (proto.channel_id() > 0) a->channel_id = proto.channel_id();
  if (const std::string* marker = extras.Find(kChannelIdMarker)) {
    std::optional<int64_t> id = ParseInt64(*marker);
    if (!id) return absl::InvalidArgumentError("malformed spmdp::channel_id marker");
    a->channel_id = *id;
  }
  a->use_global_device_ids = proto.use_global_device_ids();
  a->constrain_layout = proto.constrain_layout();
  return absl::OkStatus();
}

absl::Status ReadCustomCallAttrs(const xla::HloInstructionProto& proto, const Extras& extras,
                                 InstructionAttributes* a) {
  a->custom_call_target = proto.custom_call_target();
  a->custom_call_has_side_effect = proto.custom_call_has_side_effect();
  if (proto.operand_shapes_with_layout_size() > 0 || extras.Find(kEmptyOperandLayoutsMarker)) {
    std::vector<Shape> shapes;
    for (const xla::ShapeProto& p : proto.operand_shapes_with_layout()) {
      absl::StatusOr<Shape> shape = ShapeFromProto(p);
      if (!shape.ok()) {
        return absl::InvalidArgumentError(
            hlo::StrCat("operand_shapes_with_layout: ", shape.status().message()));
      }
      shapes.push_back(*std::move(shape));
    }
    a->operand_shapes_with_layout = std::move(shapes);
  }
  for (const xla::OutputOperandAliasing& alias : proto.output_operand_aliasing()) {
    a->output_operand_aliasing.push_back({ToInt64Vector(alias.output_shape_index()),
                                          alias.operand_index(),
                                          ToInt64Vector(alias.operand_shape_index())});
  }
  a->backend_config = proto.backend_config();
  return absl::OkStatus();
}

absl::Status ReadMiscAttrs(const xla::HloInstructionProto& proto, const Extras& extras,
                           HloOpcode opcode, InstructionAttributes* a) {
  a->is_stable = proto.is_stable();
  a->exponent_bits = proto.exponent_bits();
  a->mantissa_bits = proto.mantissa_bits();
  a->epsilon = proto.epsilon();
  a->feature_index = proto.feature_index();
  const int fft = proto.fft_type();
  if (fft < 0 || fft > static_cast<int>(FftType::kIrfft)) {
    return absl::InvalidArgumentError(hlo::StrCat("unknown fft_type ", fft));
  }
  a->fft_type = static_cast<FftType>(fft);
  a->fft_length = ToInt64Vector(proto.fft_length());
  const int distribution = proto.distribution();
  if (distribution < 0 || distribution > static_cast<int>(RandomDistribution::kNormal)) {
    return absl::InvalidArgumentError(hlo::StrCat("unknown distribution ", distribution));
  }
  a->distribution = static_cast<RandomDistribution>(distribution);
  a->fusion_kind = proto.fusion_kind();
  a->is_host_transfer = proto.is_host_transfer();
  a->k = proto.k();
  if (opcode == HloOpcode::kTopK) a->largest = proto.largest();
  a->infeed_config = proto.infeed_config();
  a->outfeed_config = proto.outfeed_config();
  if (proto.has_outfeed_shape()) {
    absl::StatusOr<Shape> shape = ShapeFromProto(proto.outfeed_shape());
    if (!shape.ok()) {
      return absl::InvalidArgumentError(hlo::StrCat("outfeed_shape: ", shape.status().message()));
    }
    a->outfeed_shape = *std::move(shape);
  }
  if (const std::string* marker = extras.Find(kAsyncWrappedOpcodeMarker)) {
    std::optional<HloOpcode> wrapped = StringToHloOpcode(*marker);
    if (!wrapped) {
      return absl::InvalidArgumentError(
          hlo::StrCat("unknown wrapped opcode \"", *marker, "\" of an async op"));
    }
    a->async_wrapped_opcode = *wrapped;
  }
  return absl::OkStatus();
}

absl::Status ReadMetadataAndAttributes(const xla::HloInstructionProto& proto, const Extras& extras,
                                       bool foreign, HloInstruction* instr) {
  InstructionAttributes* a = instr->mutable_attrs();
  if (proto.has_metadata()) a->metadata = MetadataFromProto(proto.metadata());
  if (const std::string* marker = extras.Find(kMetadataMarker)) {
    std::optional<OpMetadata> metadata = DecodeMetadata(*marker);
    if (!metadata) return absl::InvalidArgumentError("malformed spmdp::metadata marker");
    a->metadata = *std::move(metadata);
  }
  ASSIGN_OR_RETURN(FrontendAttributes attrs,
                   FrontendAttributesFromProto(proto.frontend_attributes(),
                                               extras.Find(kFrontendAttributesMarker)));
  a->frontend_attributes = std::move(attrs);
  if (const std::string* marker = extras.Find(kShardingMarker)) {
    ASSIGN_OR_RETURN(HloSharding sharding, DecodeShardingMarker(*marker));
    instr->set_sharding(std::move(sharding));
  } else if (proto.has_sharding()) {
    ASSIGN_OR_RETURN(HloSharding sharding, ShardingFromProto(proto.sharding()));
    instr->set_sharding(std::move(sharding));
  }
  a->raw_attributes = extras.raw;
  if (foreign) ImportXlaFields(proto, instr->opcode(), &a->raw_attributes);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<HloInstruction>> InstructionFromProto(
    const xla::HloInstructionProto& proto, bool foreign) {
  auto fail = [&](const absl::Status& s) {
    return absl::InvalidArgumentError(
        hlo::StrCat("instruction %", proto.name(), ": ", s.message()));
  };
  std::optional<HloOpcode> opcode = StringToHloOpcode(proto.opcode());
  if (!opcode) {
    return fail(absl::InvalidArgumentError(hlo::StrCat("unknown opcode \"", proto.opcode(), "\"")));
  }
  if (!proto.has_shape()) return fail(absl::InvalidArgumentError("no shape"));
  absl::StatusOr<Shape> shape = ShapeFromProto(proto.shape());
  if (!shape.ok()) return fail(shape.status());
  std::unique_ptr<HloInstruction> instr = HloInstruction::Create(*opcode, *shape, {});
  instr->set_name(proto.name());
  const Extras extras = ReadExtras(proto);
  InstructionAttributes* a = instr->mutable_attrs();
  absl::Status s = ReadShapeAttrs(proto, *opcode, *shape, a);
  if (s.ok()) s = ReadCollectiveAttrs(proto, extras, foreign, a);
  if (s.ok()) s = ReadCustomCallAttrs(proto, extras, a);
  if (s.ok()) s = ReadMiscAttrs(proto, extras, *opcode, a);
  if (s.ok()) s = ReadMetadataAndAttributes(proto, extras, foreign, instr.get());
  if (!s.ok()) return fail(s);
  return instr;
}

}  // namespace proto_internal
}  // namespace hlo

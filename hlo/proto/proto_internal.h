// Helpers shared by the hlo/proto conversion files. Not part of the public API: include
// hlo/proto/hlo_proto_util.h instead.
//
// Markers. Some IR states have no exact XLA proto field (a channel id of 0, a frontend
// attribute list that is not sorted by key, a sharding whose OpSharding form would print
// differently, ...). They travel as ExtraAttribute entries (`spmdp_extra_attributes`, field
// 10001) whose name starts with kMarkerPrefix. HLO attribute names never contain `:`, so a
// marker cannot collide with a verbatim RawAttribute, which travels in the same list.
#ifndef HLO_PROTO_PROTO_INTERNAL_H_
#define HLO_PROTO_PROTO_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/repeated_field.h"
#include "hlo/ir/hlo_attributes.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/stack_frame_index.h"
#include "hlo/sharding/hlo_sharding.h"
#include "proto/hlo.pb.h"

namespace hlo {
namespace proto_internal {

inline constexpr std::string_view kMarkerPrefix = "spmdp::";

// Marker names (instruction level).
inline constexpr std::string_view kChannelIdMarker = "spmdp::channel_id";
inline constexpr std::string_view kEmptyOperandLayoutsMarker = "spmdp::operand_layout_constraints";
inline constexpr std::string_view kFrontendAttributesMarker = "spmdp::frontend_attributes";
inline constexpr std::string_view kShardingMarker = "spmdp::sharding";
// The opcode an async op wraps in XLA's sugared text form (`custom-call-start`), by name.
inline constexpr std::string_view kAsyncWrappedOpcodeMarker = "spmdp::async_wrapped_opcode";
// The whole OpMetadata (EncodeMetadata) when the proto fields cannot hold it exactly.
inline constexpr std::string_view kMetadataMarker = "spmdp::metadata";
// Marker names (module level). kProducerMarker says the proto was written by this project, so
// XLA-only fields need not be translated into verbatim attributes on the way in.
inline constexpr std::string_view kProducerMarker = "spmdp::producer";
inline constexpr std::string_view kNumPartitionsMarker = "spmdp::num_partitions";
inline constexpr std::string_view kReplicaCountMarker = "spmdp::replica_count";
inline constexpr std::string_view kUseSpmdMarker = "spmdp::use_spmd_partitioning";
inline constexpr std::string_view kPropagateToOutputMarker =
    "spmdp::allow_spmd_sharding_propagation_to_output";
inline constexpr std::string_view kPropagateToParametersMarker =
    "spmdp::allow_spmd_sharding_propagation_to_parameters";
// Value "host_program_shape": the entry layout is the module's host_program_shape; "none": the
// module has no entry_computation_layout.
inline constexpr std::string_view kEntryLayoutMarker = "spmdp::entry_computation_layout";

bool IsMarker(std::string_view name);

// InvalidArgument unless `text` is valid UTF-8 (proto3 `string` fields must be). `what` names
// the field in the message.
absl::Status CheckUtf8(std::string_view text, std::string_view what);

// A list of strings as one UTF-8-safe string: each entry as `<length>:<bytes>`.
std::string EncodeStrings(const std::vector<std::string>& values);
// Inverse of EncodeStrings; nullopt when `text` is not such an encoding.
std::optional<std::vector<std::string>> DecodeStrings(std::string_view text);

// `text` cut at every `sep` (an empty `text` gives one empty piece).
std::vector<std::string_view> SplitString(std::string_view text, char sep);

// Parses a decimal int64 (optional leading `-`); nullopt unless all of `text` is one.
std::optional<int64_t> ParseInt64(std::string_view text);

// Product of `dims`, or nullopt when one is negative or the product overflows int64.
std::optional<int64_t> CheckedProduct(const std::vector<int64_t>& dims);

template <typename T>
std::vector<int64_t> ToInt64Vector(const google::protobuf::RepeatedField<T>& values) {
  return std::vector<int64_t>(values.begin(), values.end());
}
template <typename T, typename Container>
void AssignRepeated(const Container& values, google::protobuf::RepeatedField<T>* out) {
  out->Clear();
  out->Reserve(static_cast<int>(values.size()));
  for (auto v : values) out->Add(static_cast<T>(v));
}

// OpMetadata <-> xla::OpMetadata. The proto holds line numbers and the stack frame id as int32
// and profile types as enum numbers; `*lossy` is set when a value does not fit (an int64 beyond
// int32, a profile type that is not the decimal form of an int32). The proto then holds what
// fits and the caller keeps EncodeMetadata's form beside it.
xla::OpMetadata MetadataToProto(const OpMetadata& metadata, bool* lossy);
OpMetadata MetadataFromProto(const xla::OpMetadata& proto);
// Every field of `metadata` as one EncodeStrings string, and its inverse (nullopt when `text`
// is not such an encoding).
std::string EncodeMetadata(const OpMetadata& metadata);
std::optional<OpMetadata> DecodeMetadata(std::string_view text);

// The text of one metadata entry as the printer writes it inside `metadata={...}`, e.g.
// `op_type="Dot" op_name="x" source_line=3` (the form HloSharding keeps).
std::string MetadataText(const OpMetadata& metadata);
// Parses MetadataText's form; nullopt for anything it cannot read.
std::optional<OpMetadata> ParseMetadataText(std::string_view text);

// Ordered frontend attributes <-> the proto map. The map holds one value per key, so an IR list
// that is not strictly sorted by key also needs `*order_marker` (an EncodeStrings of alternating
// keys and values) to come back exactly; it is left empty otherwise.
absl::Status FrontendAttributesToProto(const FrontendAttributes& attrs,
                                       xla::FrontendAttributes* out,
                                       std::optional<std::string>* order_marker);
// Sorted by key; `order_marker` (when given) overrides the map.
absl::StatusOr<FrontendAttributes> FrontendAttributesFromProto(const xla::FrontendAttributes& proto,
                                                               const std::string* order_marker);

// The kShardingMarker value for `sharding`: its text without metadata, then each leaf's metadata
// strings verbatim (HloSharding::Parse would normalize their spacing), as one EncodeStrings.
std::string EncodeShardingMarker(const HloSharding& sharding);
// Inverse of EncodeShardingMarker; fails for anything else.
absl::StatusOr<HloSharding> DecodeShardingMarker(std::string_view text);

// ---- Attribute structs (attributes_proto.cc) -----------------------------------------------
// Plain field-for-field copies; the readers check only what could make later code index out
// of range (the verifier owns the rest).

xla::DotDimensionNumbers DotDimsToProto(const DotDimensionNumbers& dnums);
DotDimensionNumbers DotDimsFromProto(const xla::DotDimensionNumbers& proto);
xla::ConvolutionDimensionNumbers ConvDimsToProto(const ConvolutionDimensionNumbers& dnums);
ConvolutionDimensionNumbers ConvDimsFromProto(const xla::ConvolutionDimensionNumbers& proto);
xla::Window WindowToProto(const Window& window);
Window WindowFromProto(const xla::Window& proto);
xla::GatherDimensionNumbers GatherDimsToProto(const GatherDimensionNumbers& dnums);
GatherDimensionNumbers GatherDimsFromProto(const xla::GatherDimensionNumbers& proto);
xla::ScatterDimensionNumbers ScatterDimsToProto(const ScatterDimensionNumbers& dnums);
ScatterDimensionNumbers ScatterDimsFromProto(const xla::ScatterDimensionNumbers& proto);
xla::PaddingConfig PaddingToProto(const PaddingConfig& config);
PaddingConfig PaddingFromProto(const xla::PaddingConfig& proto);

// Writes `groups` as XLA does: an explicit list to `replica_groups` (field 49) and to
// `collective_device_list.replica_groups`, an iota list to
// `collective_device_list.iota_replica_group_list`. collective_device_list is always set, so
// an empty explicit list (`replica_groups={}`) stays distinct from none.
void ReplicaGroupsToProto(const ReplicaGroups& groups, xla::HloInstructionProto* proto);
// Reads what ReplicaGroupsToProto writes, and also XLA's newer `iota_collective_device_list`
// (field 92). nullopt when the proto has no replica groups. Fails for mesh-axes lists and for
// iota lists that are inconsistent or expand to more than 2^24 devices. `foreign`: drop an
// identity transpose permutation, as XLA's printer does.
absl::StatusOr<std::optional<ReplicaGroups>> ReplicaGroupsFromProto(
    const xla::HloInstructionProto& proto, bool foreign);

// ---- Instructions (instruction_proto.cc) ----------------------------------------------------

// The ids the writer gives to instructions and computations.
struct ProtoIds {
  absl::flat_hash_map<const HloInstruction*, int64_t> instructions;
  absl::flat_hash_map<const HloComputation*, int64_t> computations;
};

// Writes `instr` with its links (operand, control-predecessor and called-computation ids from
// `ids`). Fails when a string is not valid UTF-8, a linked instruction or computation has no id,
// or an int32 field (exponent_bits, mantissa_bits) overflows.
absl::Status InstructionToProto(const HloInstruction& instr, const ProtoIds& ids,
                                xla::HloInstructionProto* proto);
// The instruction of `proto` with its opcode, name, shape, attributes and sharding, but without
// operands, control predecessors or called computations (the caller links those). `foreign`:
// the proto was written by XLA, so XLA-only fields become verbatim attributes.
absl::StatusOr<std::unique_ptr<HloInstruction>> InstructionFromProto(
    const xla::HloInstructionProto& proto, bool foreign);

// ---- XLA-only fields (xla_fields.cc) -------------------------------------------------------
// Attributes the IR keeps verbatim but XLA keeps in fields of their own (triangular-solve and
// cholesky options, rng algorithm, custom-call schedule and api version, dot algorithm, ragged
// dot dims, composite calls, parameter replication, async thread, ...).

// Sets the XLA field of each such verbatim attribute of `instr` that it can read.
void ExportXlaFields(const HloInstruction& instr, xla::HloInstructionProto* proto);
// Appends, in XLA's text spelling, a verbatim attribute for each such field set in `proto`.
void ImportXlaFields(const xla::HloInstructionProto& proto, HloOpcode opcode,
                     std::vector<RawAttribute>* raw);
// Drops what XLA writes but its printer leaves out, so that a module read from XLA prints as
// XLA would: a scalar's empty layout (DropEmptyScalarLayouts), a comparison type that is the
// default for the operands' element type, and an operand_precision list that is all DEFAULT.
// REQUIRES: `instr`'s operands are linked.
void DropXlaDefaults(HloInstruction* instr);
// Clears the layout `{}` of every scalar in `shape` (XLA writes one; its printer omits it).
void DropEmptyScalarLayouts(Shape* shape);

// ---- Called computations (called_computations.cc) -------------------------------------------

// For each position of HloInstructionProto.called_computation_ids, the index into the IR's
// HloInstruction::called_computations that XLA keeps there: a while's are [body, condition]
// in the proto, [condition, body] in the IR; other opcodes keep the IR's order.
std::vector<int64_t> ProtoCalledOrder(HloOpcode opcode, int64_t count);
// OK when `instr` (operands linked) may call `count` computations by XLA's CreateFromProto:
// exact counts per opcode (while 2, call 1, ...), a conditional's one operand per branch.
absl::Status CheckCalledCount(const HloInstruction& instr, int64_t count);

// ---- The stack-frame index (stack_frame_proto.cc) -------------------------------------------

// HloModuleProto.stack_frame_index (field 17), field for field. Fails when a name is not UTF-8.
absl::Status StackFrameIndexToProto(const StackFrameIndex& index, xla::StackFrameIndexProto* proto);
// Fails, like XLA's StackFrames::FromProto, when an id is out of range.
absl::StatusOr<StackFrameIndex> StackFrameIndexFromProto(const xla::StackFrameIndexProto& proto);

}  // namespace proto_internal
}  // namespace hlo

#endif  // HLO_PROTO_PROTO_INTERNAL_H_

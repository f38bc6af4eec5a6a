// Conversion between the HLO IR (hlo/ir) and XLA's serialized form (proto/hlo.proto, package
// xla, XLA's field numbers).
//
// Round trip. For any module M, print(ModuleFromProto(ModuleToProto(M))) == print(M) byte for
// byte (print = PrintModule), and likewise through the WithConfig pair and through
// SerializeModule + ParseModuleProtoBytes. Every printed field therefore travels: names,
// instruction order, computation order, parameter numbers, attributes, shardings, config.
// Values XLA's fields cannot hold exactly travel as `spmdp::`-prefixed ExtraAttribute
// markers in `spmdp_extra_attributes` (field 10001), next to the verbatim RawAttributes.
//
// Reading. The From* functions validate everything they read (opcodes, enum values, ids,
// shapes, literal sizes, call and operand cycles, shardings) and return InvalidArgument naming
// the offending computation and instruction; no input makes them crash. Instructions are added
// operands first (the proto order is kept when it already is; otherwise a stable topological
// sort by operand_ids), computations callees first, entry last. Instruction and computation
// unique ids are assigned afresh by the module (proto ids only link the proto together).
//
// Writing. ids are the IR unique ids (fresh sequential ones when the IR's are not unique), and
// computations are written callees first. Collective replica groups go to both `replica_groups`
// (explicit list) and `collective_device_list` (explicit or iota), as XLA writes them.
#ifndef HLO_PROTO_HLO_PROTO_UTIL_H_
#define HLO_PROTO_HLO_PROTO_UTIL_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"
#include "proto/hlo.pb.h"

namespace hlo {

// ---- Modules --------------------------------------------------------------------------------

// The module as an HloModuleProto. The module config (which XLA keeps outside this message)
// also travels, as markers, so ModuleFromProto restores it; use the WithConfig form to hand a
// config to XLA. Verbatim attributes that XLA keeps in fields of its own (e.g. `lower=true` of
// triangular-solve, `schedule=` of custom-call) also set those fields. Fails when a string is
// not valid UTF-8 (proto3 `string` fields must be), an int32 field (exponent_bits,
// mantissa_bits) overflows, or an instruction links to one outside its computation or module.
absl::StatusOr<xla::HloModuleProto> ModuleToProto(const HloModule& module);
// A module from `proto`. A proto written by XLA (no `spmdp::producer` marker) gets XLA's
// defaults (one replica, one partition, the host_program_shape as entry_computation_layout),
// its XLA-only fields as verbatim attributes, and loses what XLA's printer would leave out
// (default comparison types, all-DEFAULT operand precisions, identity iota transposes, the
// empty layouts of scalars). Called computations are read in XLA's order (a while's are
// [body, condition]) and counted as XLA counts them; ModuleToProto writes that order.
absl::StatusOr<std::unique_ptr<HloModule>> ModuleFromProto(const xla::HloModuleProto& proto);

// The module plus its config: num_partitions, replica_count, entry_computation_layout,
// allow_spmd_sharding_propagation_to_output / _to_parameters and use_spmd_partitioning.
absl::StatusOr<xla::HloModuleProtoWithConfig> ModuleToProtoWithConfig(const HloModule& module);
// As ModuleFromProto; the config message, when present, is authoritative for the fields above
// (a replica_count or num_partitions of 0 means 1).
absl::StatusOr<std::unique_ptr<HloModule>> ModuleFromProtoWithConfig(
    const xla::HloModuleProtoWithConfig& proto);

// Reads a serialized HloModuleProtoWithConfig or a plain HloModuleProto (the WithConfig reading
// wins when its hlo_module has computations). Any failure, from a corrupt byte string to an
// invalid module, is InvalidArgument "not a valid HloModuleProto: ...".
absl::StatusOr<std::unique_ptr<HloModule>> ParseModuleProtoBytes(std::string_view bytes);
// The module as a serialized HloModuleProtoWithConfig (so the config survives).
absl::StatusOr<std::string> SerializeModuleOrError(const HloModule& module);
// As SerializeModuleOrError; returns an empty string (which ParseModuleProtoBytes rejects) when
// the module cannot be serialized.
std::string SerializeModule(const HloModule& module);

// ---- Values ---------------------------------------------------------------------------------

// Shapes with their layouts (minor_to_major, tiles, element_size_in_bits, memory_space) and
// dynamic dimensions. A tuple's layout is not written; other layout fields are not modelled.
xla::ShapeProto ShapeToProto(const Shape& shape);
// Fails for unknown or unsupported element types, negative dimensions, an
// is_dynamic_dimension list of the wrong length, dimensions on a non-array, or a layout whose
// minor_to_major is not a permutation of the dimensions.
absl::StatusOr<Shape> ShapeFromProto(const xla::ShapeProto& proto);

xla::ProgramShapeProto ProgramShapeToProto(const ProgramShape& shape);
absl::StatusOr<ProgramShape> ProgramShapeFromProto(const xla::ProgramShapeProto& proto);

// XLA's per-type fields: preds, s8s/u8s and the sub-byte and 8-bit float types as one byte per
// element, s16s/u16s/f16s/bf16s as little-endian bytes, s32s..f64s as numbers, c64s/c128s as
// interleaved (real, imag), tuple_literals for tuples.
xla::LiteralProto LiteralToProto(const Literal& literal);
// Fails when the shape is missing or invalid, or the data field of the element type does not
// hold exactly one value per element (tuples: one tuple_literal per element).
absl::StatusOr<Literal> LiteralFromProto(const xla::LiteralProto& proto);

// OpSharding as XLA writes it: the type, tile_assignment_dimensions with either the iota
// fields (iota_reshape_dims / iota_transpose_perm) or tile_assignment_devices,
// replicate_on_last_tile_dim, last_tile_dims, flattened tuple_shardings, metadata and the
// shard group. `*exact` (optional) is set to whether ShardingFromProto gives back a sharding
// that prints identically (false, e.g., for metadata text this module cannot read).
xla::OpSharding ShardingToProto(const HloSharding& sharding, bool* exact = nullptr);
// Validates through the HloSharding factories (which canonicalize as XLA does). Fails for
// unknown types, malformed tile assignments, nested tuples and assignments of more than
// 2^24 devices.
absl::StatusOr<HloSharding> ShardingFromProto(const xla::OpSharding& proto);

}  // namespace hlo

#endif  // HLO_PROTO_HLO_PROTO_UTIL_H_

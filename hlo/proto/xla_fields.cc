// Verbatim attributes that XLA keeps in proto fields of their own.
//
// The IR keeps these attributes as RawAttributes (their exact text), which travel losslessly in
// `spmdp_extra_attributes`. So that XLA can read our protos, ExportXlaFields also sets the
// matching XLA field whenever it can read the text; so that protos written by XLA print as
// XLA would, ImportXlaFields rebuilds the text from the field. Example:
//   `triangular-solve(a, b), lower=true, transpose_a=NO_TRANSPOSE`
//     <-> triangular_solve_options { lower: true transpose_a: NO_TRANSPOSE }
#include <cctype>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "hlo/proto/proto_internal.h"
#include "hlo/strings.h"

namespace hlo {
namespace proto_internal {
namespace {

std::string_view Strip(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

std::optional<bool> ParseBool(std::string_view text) {
  if (text == "true") return true;
  if (text == "false") return false;
  return std::nullopt;
}

// `{a,b,c}` split into its items (empty braces give no items).
std::optional<std::vector<std::string_view>> ParseBracedList(std::string_view text) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return std::nullopt;
  text = text.substr(1, text.size() - 2);
  std::vector<std::string_view> items;
  if (Strip(text).empty()) return items;
  for (std::string_view item : SplitString(text, ',')) items.push_back(Strip(item));
  return items;
}

std::optional<std::vector<int64_t>> ParseIntList(std::string_view text) {
  std::optional<std::vector<std::string_view>> items = ParseBracedList(text);
  if (!items) return std::nullopt;
  std::vector<int64_t> out;
  for (std::string_view item : *items) {
    std::optional<int64_t> v = ParseInt64(item);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::string IntList(const google::protobuf::RepeatedField<int64_t>& values) {
  return hlo::StrCat("{", absl::StrJoin(values, ","), "}");
}

// A quoted string without escapes, e.g. `"main"`.
std::optional<std::string> Unquote(std::string_view text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return std::nullopt;
  text = text.substr(1, text.size() - 2);
  if (text.find_first_of("\"\\") != std::string_view::npos) return std::nullopt;
  return std::string(text);
}

// `dot_tf32_tf32_f32` <-> ALG_DOT_TF32_TF32_F32.
// Empty for a value the enum does not name.
std::string AlgorithmText(xla::PrecisionConfig::Algorithm algorithm) {
  const std::string name = xla::PrecisionConfig::Algorithm_Name(algorithm);
  if (name.size() <= 4) return "";
  return absl::AsciiStrToLower(name.substr(4));
}

void ExportOne(HloOpcode op, std::string_view name, std::string_view value,
               xla::HloInstructionProto* proto) {
  if (op == HloOpcode::kTriangularSolve) {
    xla::TriangularSolveOptions* o = proto->mutable_triangular_solve_options();
    std::optional<bool> flag = ParseBool(value);
    if (name == "left_side" && flag) o->set_left_side(*flag);
    if (name == "lower" && flag) o->set_lower(*flag);
    if (name == "unit_diagonal" && flag) o->set_unit_diagonal(*flag);
    xla::TriangularSolveOptions::Transpose t;
    if (name == "transpose_a" &&
        xla::TriangularSolveOptions::Transpose_Parse(std::string(value), &t)) {
      o->set_transpose_a(t);
    }
  } else if (op == HloOpcode::kCholesky && name == "lower") {
    if (std::optional<bool> flag = ParseBool(value))
      proto->mutable_cholesky_options()->set_lower(*flag);
  } else if (op == HloOpcode::kRngBitGenerator && name == "algorithm") {
    xla::RandomAlgorithm a;
    if (xla::RandomAlgorithm_Parse(absl::AsciiStrToUpper(std::string(value)), &a))
      proto->set_rng_algorithm(a);
  } else if (op == HloOpcode::kCustomCall && name == "schedule") {
    xla::CustomCallSchedule s;
    if (xla::CustomCallSchedule_Parse(std::string(value), &s)) proto->set_custom_call_schedule(s);
  } else if (op == HloOpcode::kCustomCall && name == "api_version") {
    xla::CustomCallApiVersion v;
    if (xla::CustomCallApiVersion_Parse(std::string(value), &v))
      proto->set_custom_call_api_version(v);
  } else if (name == "algorithm" && (op == HloOpcode::kDot || op == HloOpcode::kConvolution ||
                                     op == HloOpcode::kRaggedDot)) {
    xla::PrecisionConfig::Algorithm a;
    if (xla::PrecisionConfig::Algorithm_Parse(
            hlo::StrCat("ALG_", absl::AsciiStrToUpper(std::string(value))), &a)) {
      proto->mutable_precision_config()->set_algorithm(a);
    }
  } else if (op == HloOpcode::kRaggedDot &&
             (name == "lhs_ragged_dims" || name == "rhs_group_dims")) {
    std::optional<std::vector<int64_t>> dims = ParseIntList(value);
    if (!dims) return;
    xla::RaggedDotDimensionNumbers* r = proto->mutable_ragged_dot_dimension_numbers();
    AssignRepeated(*dims, name == "lhs_ragged_dims" ? r->mutable_lhs_ragged_dimensions()
                                                    : r->mutable_rhs_group_dimensions());
  } else if (name == "is_composite") {
    if (std::optional<bool> flag = ParseBool(value)) proto->set_is_composite(*flag);
  } else if (op == HloOpcode::kParameter && name == "parameter_replication") {
    std::optional<std::vector<std::string_view>> items = ParseBracedList(value);
    if (!items) return;
    xla::ParameterReplication replication;
    for (std::string_view item : *items) {
      std::optional<bool> flag = ParseBool(item);
      if (!flag) return;
      replication.add_replicated_at_leaf_buffers(*flag);
    }
    *proto->mutable_parameter_replication() = std::move(replication);
  } else if (name == "async_execution_thread") {
    if (std::optional<std::string> thread = Unquote(value))
      proto->set_async_execution_thread(*thread);
  } else if (op == HloOpcode::kRngGetAndUpdateState && name == "delta") {
    if (std::optional<int64_t> delta = ParseInt64(value)) proto->set_delta(*delta);
  } else if (op == HloOpcode::kParameter && name == "cross_program_prefetch_index") {
    std::optional<int64_t> index = ParseInt64(value);
    if (index && *index >= 0 && *index <= std::numeric_limits<int32_t>::max()) {
      proto->set_cross_program_prefetch_index(static_cast<int32_t>(*index));
    }
  }
}

}  // namespace

void ExportXlaFields(const HloInstruction& instr, xla::HloInstructionProto* proto) {
  for (const RawAttribute& raw : instr.attrs().raw_attributes) {
    ExportOne(instr.opcode(), raw.name, raw.value, proto);
  }
}

void ImportXlaFields(const xla::HloInstructionProto& proto, HloOpcode op,
                     std::vector<RawAttribute>* raw) {
  // Enum names are empty for values the enum does not know; such fields are skipped.
  auto add = [&](std::string name, std::string value) {
    if (!value.empty()) raw->push_back({std::move(name), std::move(value)});
  };
  if (op == HloOpcode::kTriangularSolve && proto.has_triangular_solve_options()) {
    const xla::TriangularSolveOptions& o = proto.triangular_solve_options();
    if (o.left_side()) add("left_side", "true");
    if (o.lower()) add("lower", "true");
    if (o.unit_diagonal()) add("unit_diagonal", "true");
    add("transpose_a", xla::TriangularSolveOptions::Transpose_Name(o.transpose_a()));
  }
  if (op == HloOpcode::kCholesky && proto.cholesky_options().lower()) add("lower", "true");
  if (op == HloOpcode::kRngBitGenerator) {
    add("algorithm", absl::AsciiStrToLower(xla::RandomAlgorithm_Name(proto.rng_algorithm())));
  }
  if (op == HloOpcode::kCustomCall && proto.custom_call_schedule() != xla::SCHEDULE_NONE) {
    add("schedule", xla::CustomCallSchedule_Name(proto.custom_call_schedule()));
  }
  if (op == HloOpcode::kCustomCall && proto.custom_call_api_version() > xla::API_VERSION_ORIGINAL) {
    add("api_version", xla::CustomCallApiVersion_Name(proto.custom_call_api_version()));
  }
  if (proto.precision_config().algorithm() != xla::PrecisionConfig::ALG_UNSET) {
    add("algorithm", AlgorithmText(proto.precision_config().algorithm()));
  }
  if (op == HloOpcode::kRaggedDot) {
    const xla::RaggedDotDimensionNumbers& r = proto.ragged_dot_dimension_numbers();
    add("lhs_ragged_dims", IntList(r.lhs_ragged_dimensions()));
    if (r.rhs_group_dimensions_size() > 0) add("rhs_group_dims", IntList(r.rhs_group_dimensions()));
  }
  if (proto.is_composite()) add("is_composite", "true");
  if (op == HloOpcode::kParameter &&
      proto.parameter_replication().replicated_at_leaf_buffers_size()) {
    std::vector<std::string> flags;
    for (bool b : proto.parameter_replication().replicated_at_leaf_buffers()) {
      flags.push_back(b ? "true" : "false");
    }
    add("parameter_replication", hlo::StrCat("{", absl::StrJoin(flags, ","), "}"));
  }
  const std::string& thread = proto.async_execution_thread();
  if (!thread.empty() && thread != "main" && thread.find_first_of("\"\\") == std::string::npos) {
    add("async_execution_thread", hlo::StrCat("\"", thread, "\""));
  }
  if (op == HloOpcode::kRngGetAndUpdateState) add("delta", hlo::StrCat(proto.delta()));
  if (op == HloOpcode::kParameter && proto.has_cross_program_prefetch_index()) {
    add("cross_program_prefetch_index", hlo::StrCat(proto.cross_program_prefetch_index()));
  }
}

void DropEmptyScalarLayouts(Shape* shape) {
  if (shape->IsTuple()) {
    for (Shape& element : *shape->mutable_tuple_shapes()) DropEmptyScalarLayouts(&element);
  } else if (shape->IsArray() && shape->rank() == 0 && shape->has_layout() &&
             shape->layout() == Layout{}) {
    shape->clear_layout();
  }
}

void DropXlaDefaults(HloInstruction* instr) {
  DropEmptyScalarLayouts(instr->mutable_shape());
  InstructionAttributes* a = instr->mutable_attrs();
  bool all_default = true;
  for (Precision p : a->operand_precision) all_default &= p == Precision::kDefault;
  if (all_default) a->operand_precision.clear();
  if (instr->opcode() != HloOpcode::kCompare || instr->operand_count() == 0) return;
  const PrimitiveType type = instr->operand(0)->shape().element_type();
  ComparisonType xla_default = ComparisonType::kUnsigned;
  if (IsFloatingPointType(type) || IsComplexType(type)) {
    xla_default = ComparisonType::kFloat;
  } else if (IsSignedIntegralType(type)) {
    xla_default = ComparisonType::kSigned;
  }
  if (a->comparison_type == xla_default) a->comparison_type = ComparisonType::kDefault;
}

}  // namespace proto_internal
}  // namespace hlo

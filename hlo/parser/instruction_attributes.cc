// The instruction attribute table. Each known attribute name maps to a handler that parses its
// value into a typed field of InstructionAttributes, into the pending name references of the
// instruction (called computations, control predecessors), or, for attributes that no pass
// interprets (kRawAttributes), keeps the value text verbatim. Any other name is an error.
#include "hlo/parser/instruction_attributes.h"

#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "hlo/strings.h"
#include "hlo/parser/value_parsers.h"
#include "hlo/sharding/named_mesh.h"
#include "hlo/status_macros.h"

namespace hlo {
namespace {

using Handler = std::function<absl::Status(TextCursor&, PendingInstruction*)>;

// XLA attributes kept verbatim: provenance, scheduling and backend-specific annotations.
const absl::flat_hash_set<std::string_view>& RawAttributeNames() {
  static const auto* names = new absl::flat_hash_set<std::string_view>{
      "origin", "statistics", "result_accuracy", "is_composite", "is_reverse", "num_carries",
      "is_associative", "has_dynamic_root", "async_execution_thread", "lhs_ragged_dims",
      "rhs_group_dims", "lhs_ragged_dimensions", "rhs_group_dimensions", "algorithm",
      "parameter_replication", "domain", "literal", "api_version", "custom_call_schedule",
      "left_side", "lower", "unit_diagonal", "transpose_a", "delta",
      "cross_program_prefetch_index", "padding_type", "sparsity", "conv_kind",
      "original_value", "unreduced", "schedule"};
  return *names;
}

InstructionAttributes& A(PendingInstruction* p) { return *p->instr->mutable_attrs(); }

DotDimensionNumbers& Dot(PendingInstruction* p) {
  auto& d = A(p).dot_dimension_numbers;
  if (!d) d.emplace();
  return *d;
}
GatherDimensionNumbers& Gather(PendingInstruction* p) {
  auto& d = A(p).gather_dimension_numbers;
  if (!d) d.emplace();
  return *d;
}
ScatterDimensionNumbers& Scatter(PendingInstruction* p) {
  auto& d = A(p).scatter_dimension_numbers;
  if (!d) d.emplace();
  return *d;
}

Handler Ints(std::function<std::vector<int64_t>&(PendingInstruction*)> field,
             std::string_view what) {
  return [field, what](TextCursor& c, PendingInstruction* p) -> absl::Status {
    ASSIGN_OR_RETURN(field(p), c.ParseBracedInts(what));
    return absl::OkStatus();
  };
}

Handler Int(std::function<int64_t&(PendingInstruction*)> field, std::string_view what) {
  return [field, what](TextCursor& c, PendingInstruction* p) -> absl::Status {
    ASSIGN_OR_RETURN(field(p), c.ParseInt(what));
    return absl::OkStatus();
  };
}

Handler Bool(std::function<bool&(PendingInstruction*)> field, std::string_view what) {
  return [field, what](TextCursor& c, PendingInstruction* p) -> absl::Status {
    ASSIGN_OR_RETURN(field(p), c.ParseBool(what));
    return absl::OkStatus();
  };
}

Handler Quoted(std::function<std::string&(PendingInstruction*)> field, std::string_view what) {
  return [field, what](TextCursor& c, PendingInstruction* p) -> absl::Status {
    ASSIGN_OR_RETURN(field(p), c.ParseQuoted(what));
    return absl::OkStatus();
  };
}

absl::StatusOr<NameRef> ParseComputationRef(TextCursor& c) {
  c.SkipSpace();
  NameRef ref;
  ref.offset = c.pos();
  ASSIGN_OR_RETURN(std::string_view name, c.ParseName("a computation name"));
  ref.name = std::string(name);
  return ref;
}

absl::StatusOr<std::vector<NameRef>> ParseComputationList(TextCursor& c) {
  std::vector<NameRef> refs;
  RETURN_IF_ERROR(c.Expect('{', "to start a computation list"));
  if (c.TryConsume('}')) return refs;
  do {
    ASSIGN_OR_RETURN(NameRef ref, ParseComputationRef(c));
    refs.push_back(std::move(ref));
  } while (c.TryConsume(','));
  RETURN_IF_ERROR(c.Expect('}', "to close a computation list"));
  return refs;
}

// A single computation in call slot `slot`.
Handler Called(size_t slot) {
  return [slot](TextCursor& c, PendingInstruction* p) -> absl::Status {
    ASSIGN_OR_RETURN(NameRef ref, ParseComputationRef(c));
    if (p->called.size() <= slot) p->called.resize(slot + 1);
    p->called[slot] = std::move(ref);
    return absl::OkStatus();
  };
}

// A `{%a, %b}` list (or, for `calls`, a single name) filling the slots from 0.
absl::Status ParseCalledList(TextCursor& c, PendingInstruction* p) {
  if (c.Peek() != '{') return Called(0)(c, p);
  ASSIGN_OR_RETURN(p->called, ParseComputationList(c));
  return absl::OkStatus();
}

// Splits a sharding parser message `offset N: text` into N and text (0 and the whole message
// when it has no offset).
std::pair<size_t, std::string_view> SplitOffset(std::string_view msg) {
  if (msg.substr(0, 7) != "offset ") return {0, msg};
  const size_t colon = msg.find(": ");
  if (colon == std::string_view::npos) return {0, msg};
  const size_t offset = std::strtoull(std::string(msg.substr(7, colon - 7)).c_str(), nullptr, 10);
  return {offset, msg.substr(colon + 2)};
}

absl::Status ParseSharding(TextCursor& c, PendingInstruction* p) {
  c.SkipSpace();
  const size_t start = c.pos();
  ASSIGN_OR_RETURN(std::string_view text, c.CaptureValue("sharding"));
  absl::StatusOr<HloSharding> sharding = HloSharding::Parse(text);
  if (!sharding.ok()) {
    auto [offset, msg] = SplitOffset(ToStd(sharding.status().message()));
    return c.ErrorAt(start + std::min(offset, text.size()), StrCat("bad sharding: ", msg));
  }
  p->instr->set_sharding(*std::move(sharding));
  return absl::OkStatus();
}

absl::Status ParseOperandPrecision(TextCursor& c, PendingInstruction* p) {
  RETURN_IF_ERROR(c.Expect('{', "to start operand_precision"));
  if (c.TryConsume('}')) return absl::OkStatus();
  do {
    size_t at = c.pos();
    std::string word(c.ParseWord());
    for (char& ch : word) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    std::optional<Precision> precision = StringToPrecision(word);
    if (!precision) return c.ErrorAt(at, StrCat("unknown precision '", word, "'"));
    A(p).operand_precision.push_back(*precision);
  } while (c.TryConsume(','));
  return c.Expect('}', "to close operand_precision");
}

template <typename Enum>
Handler EnumWord(std::function<Enum&(PendingInstruction*)> field,
                 std::optional<Enum> (*lookup)(std::string_view), std::string_view what) {
  return [=](TextCursor& c, PendingInstruction* p) -> absl::Status {
    c.SkipSpace();
    size_t at = c.pos();
    std::string_view word = c.ParseWord();
    std::optional<Enum> value = lookup(word);
    if (!value) return c.ErrorAt(at, StrCat("unknown ", what, " '", word, "'"));
    field(p) = *value;
    return absl::OkStatus();
  };
}

absl::Status ParseSourceTargetPairs(TextCursor& c, PendingInstruction* p) {
  RETURN_IF_ERROR(c.Expect('{', "to start source_target_pairs"));
  if (c.TryConsume('}')) return absl::OkStatus();
  do {
    ASSIGN_OR_RETURN(std::vector<int64_t> pair, c.ParseBracedInts("a source-target pair"));
    if (pair.size() != 2) return c.Error("a source-target pair must have two elements");
    A(p).source_target_pairs.push_back({pair[0], pair[1]});
  } while (c.TryConsume(','));
  return c.Expect('}', "to close source_target_pairs");
}

absl::Status ParseOperandLayouts(TextCursor& c, PendingInstruction* p) {
  RETURN_IF_ERROR(c.Expect('{', "to start operand_layout_constraints"));
  std::vector<Shape> shapes;
  if (!c.TryConsume('}')) {
    do {
      ASSIGN_OR_RETURN(Shape s, ParseShape(c));
      shapes.push_back(std::move(s));
    } while (c.TryConsume(','));
    RETURN_IF_ERROR(c.Expect('}', "to close operand_layout_constraints"));
  }
  A(p).operand_shapes_with_layout = std::move(shapes);
  return absl::OkStatus();
}

absl::Status ParseAliasing(TextCursor& c, PendingInstruction* p) {
  RETURN_IF_ERROR(c.Expect('{', "to start output_to_operand_aliasing"));
  if (c.TryConsume('}')) return absl::OkStatus();
  do {
    OutputOperandAlias alias;
    ASSIGN_OR_RETURN(alias.output_index, ParseShapeIndex(c));
    RETURN_IF_ERROR(c.Expect(':', "after an output shape index"));
    RETURN_IF_ERROR(c.Expect('(', "to start an aliased operand"));
    ASSIGN_OR_RETURN(alias.operand, c.ParseInt("operand number"));
    RETURN_IF_ERROR(c.Expect(',', "after the operand number"));
    ASSIGN_OR_RETURN(alias.operand_index, ParseShapeIndex(c));
    RETURN_IF_ERROR(c.Expect(')', "to close an aliased operand"));
    A(p).output_operand_aliasing.push_back(std::move(alias));
  } while (c.TryConsume(','));
  return c.Expect('}', "to close output_to_operand_aliasing");
}

absl::Status ParseBackendConfig(TextCursor& c, PendingInstruction* p) {
  if (c.Peek() == '"') {
    ASSIGN_OR_RETURN(A(p).backend_config, c.ParseQuoted("backend_config"));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(std::string_view raw, c.CaptureValue("backend_config"));
  A(p).backend_config = std::string(raw);
  return absl::OkStatus();
}

absl::Status ParseControlPredecessors(TextCursor& c, PendingInstruction* p) {
  RETURN_IF_ERROR(c.Expect('{', "to start control-predecessors"));
  if (c.TryConsume('}')) return absl::OkStatus();
  do {
    c.SkipSpace();
    NameRef ref;
    ref.offset = c.pos();
    ASSIGN_OR_RETURN(std::string_view name, c.ParseName("an instruction name"));
    ref.name = std::string(name);
    p->control_predecessors.push_back(std::move(ref));
  } while (c.TryConsume(','));
  return c.Expect('}', "to close control-predecessors");
}

// index_vector_dim belongs to gather or scatter depending on the opcode.
absl::Status ParseIndexVectorDim(TextCursor& c, PendingInstruction* p) {
  ASSIGN_OR_RETURN(int64_t v, c.ParseInt("index_vector_dim"));
  if (p->instr->opcode() == HloOpcode::kScatter) {
    Scatter(p).index_vector_dim = v;
  } else {
    Gather(p).index_vector_dim = v;
  }
  return absl::OkStatus();
}

absl::Status ParseReplicaGroupsAttr(TextCursor& c, PendingInstruction* p) {
  c.SkipSpace();
  const size_t start = c.pos();
  if (c.TryConsumeWord("mesh")) {
    // replica_groups=mesh[...] {axes}: expanded to the explicit groups (the mesh form is not kept).
    size_t consumed = 0;
    absl::StatusOr<std::vector<std::vector<int64_t>>> groups =
        ParseMeshAxesReplicaGroups(c.text().substr(start), &consumed);
    if (!groups.ok()) {
      auto [offset, msg] = SplitOffset(ToStd(groups.status().message()));
      return c.ErrorAt(start + offset, StrCat("bad mesh replica groups: ", msg));
    }
    c.set_pos(start + consumed);
    A(p).replica_groups = ReplicaGroups();
    A(p).replica_groups->groups = *std::move(groups);
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(A(p).replica_groups, ParseReplicaGroups(c));
  return absl::OkStatus();
}

#define FIELD(expr) [](PendingInstruction* p) -> auto& { return expr; }

const absl::flat_hash_map<std::string_view, Handler>& Handlers() {
  static const auto* table = new absl::flat_hash_map<std::string_view, Handler>{
      {"dimensions", Ints(FIELD(A(p).dimensions), "dimensions")},
      {"index", Int(FIELD(A(p).tuple_index), "index")},
      {"iota_dimension", Int(FIELD(A(p).iota_dimension), "iota_dimension")},
      {"slice",
       [](TextCursor& c, PendingInstruction* p) -> absl::Status {
         ASSIGN_OR_RETURN(A(p).slice_dimensions, ParseSliceRanges(c));
         return absl::OkStatus();
       }},
      {"dynamic_slice_sizes", Ints(FIELD(A(p).dynamic_slice_sizes), "dynamic_slice_sizes")},
      {"padding",
       [](TextCursor& c, PendingInstruction* p) -> absl::Status {
         ASSIGN_OR_RETURN(A(p).padding_config, ParsePadding(c));
         return absl::OkStatus();
       }},
      {"window",
       [](TextCursor& c, PendingInstruction* p) -> absl::Status {
         ASSIGN_OR_RETURN(A(p).window, ParseWindow(c));
         return absl::OkStatus();
       }},
      {"dim_labels",
       [](TextCursor& c, PendingInstruction* p) -> absl::Status {
         ASSIGN_OR_RETURN(A(p).convolution_dimension_numbers, ParseDimLabels(c));
         return absl::OkStatus();
       }},
      {"feature_group_count", Int(FIELD(A(p).feature_group_count), "feature_group_count")},
      {"batch_group_count", Int(FIELD(A(p).batch_group_count), "batch_group_count")},
      {"lhs_contracting_dims",
       Ints(FIELD(Dot(p).lhs_contracting_dimensions), "lhs_contracting_dims")},
      {"rhs_contracting_dims",
       Ints(FIELD(Dot(p).rhs_contracting_dimensions), "rhs_contracting_dims")},
      {"lhs_batch_dims", Ints(FIELD(Dot(p).lhs_batch_dimensions), "lhs_batch_dims")},
      {"rhs_batch_dims", Ints(FIELD(Dot(p).rhs_batch_dimensions), "rhs_batch_dims")},
      {"operand_precision", ParseOperandPrecision},
      {"direction", EnumWord<ComparisonDirection>(FIELD(A(p).comparison_direction),
                                                  StringToComparisonDirection,
                                                  "comparison direction")},
      {"type", EnumWord<ComparisonType>(FIELD(A(p).comparison_type), StringToComparisonType,
                                        "comparison type")},
      {"offset_dims", Ints(FIELD(Gather(p).offset_dims), "offset_dims")},
      {"collapsed_slice_dims", Ints(FIELD(Gather(p).collapsed_slice_dims), "collapsed_slice_dims")},
      {"start_index_map", Ints(FIELD(Gather(p).start_index_map), "start_index_map")},
      {"operand_batching_dims",
       Ints(FIELD(Gather(p).operand_batching_dims), "operand_batching_dims")},
      {"start_indices_batching_dims",
       Ints(FIELD(Gather(p).start_indices_batching_dims), "start_indices_batching_dims")},
      {"slice_sizes", Ints(FIELD(A(p).gather_slice_sizes), "slice_sizes")},
      {"index_vector_dim", ParseIndexVectorDim},
      {"update_window_dims", Ints(FIELD(Scatter(p).update_window_dims), "update_window_dims")},
      {"inserted_window_dims",
       Ints(FIELD(Scatter(p).inserted_window_dims), "inserted_window_dims")},
      {"scatter_dims_to_operand_dims",
       Ints(FIELD(Scatter(p).scatter_dims_to_operand_dims), "scatter_dims_to_operand_dims")},
      {"input_batching_dims", Ints(FIELD(Scatter(p).input_batching_dims), "input_batching_dims")},
      {"scatter_indices_batching_dims",
       Ints(FIELD(Scatter(p).scatter_indices_batching_dims), "scatter_indices_batching_dims")},
      {"indices_are_sorted", Bool(FIELD(A(p).indices_are_sorted), "indices_are_sorted")},
      {"unique_indices", Bool(FIELD(A(p).unique_indices), "unique_indices")},
      {"channel_id",
       [](TextCursor& c, PendingInstruction* p) -> absl::Status {
         ASSIGN_OR_RETURN(A(p).channel_id, c.ParseInt("channel_id"));
         return absl::OkStatus();
       }},
      {"replica_groups", ParseReplicaGroupsAttr},
      {"use_global_device_ids", Bool(FIELD(A(p).use_global_device_ids), "use_global_device_ids")},
      {"constrain_layout", Bool(FIELD(A(p).constrain_layout), "constrain_layout")},
      {"source_target_pairs", ParseSourceTargetPairs},
      {"custom_call_target", Quoted(FIELD(A(p).custom_call_target), "custom_call_target")},
      {"custom_call_has_side_effect",
       Bool(FIELD(A(p).custom_call_has_side_effect), "custom_call_has_side_effect")},
      {"operand_layout_constraints", ParseOperandLayouts},
      {"output_to_operand_aliasing", ParseAliasing},
      {"backend_config", ParseBackendConfig},
      {"is_stable", Bool(FIELD(A(p).is_stable), "is_stable")},
      {"exponent_bits", Int(FIELD(A(p).exponent_bits), "exponent_bits")},
      {"mantissa_bits", Int(FIELD(A(p).mantissa_bits), "mantissa_bits")},
      {"epsilon",
       [](TextCursor& c, PendingInstruction* p) -> absl::Status {
         ASSIGN_OR_RETURN(double v, c.ParseDouble("epsilon"));
         A(p).epsilon = static_cast<float>(v);
         return absl::OkStatus();
       }},
      {"feature_index", Int(FIELD(A(p).feature_index), "feature_index")},
      {"fft_type", EnumWord<FftType>(FIELD(A(p).fft_type), StringToFftType, "fft_type")},
      {"fft_length", Ints(FIELD(A(p).fft_length), "fft_length")},
      {"distribution", EnumWord<RandomDistribution>(FIELD(A(p).distribution),
                                                    StringToRandomDistribution, "distribution")},
      {"kind",
       [](TextCursor& c, PendingInstruction* p) -> absl::Status {
         ASSIGN_OR_RETURN(std::string_view kind, c.ParseName("a fusion kind"));
         A(p).fusion_kind = std::string(kind);
         return absl::OkStatus();
       }},
      {"is_host_transfer", Bool(FIELD(A(p).is_host_transfer), "is_host_transfer")},
      {"k", Int(FIELD(A(p).k), "k")},
      {"largest", Bool(FIELD(A(p).largest), "largest")},
      {"infeed_config", Quoted(FIELD(A(p).infeed_config), "infeed_config")},
      {"outfeed_config", Quoted(FIELD(A(p).outfeed_config), "outfeed_config")},
      {"outfeed_shape",
       [](TextCursor& c, PendingInstruction* p) -> absl::Status {
         ASSIGN_OR_RETURN(A(p).outfeed_shape, ParseShape(c));
         return absl::OkStatus();
       }},
      {"metadata",
       [](TextCursor& c, PendingInstruction* p) { return ParseMetadata(c, &A(p).metadata); }},
      {"frontend_attributes",
       [](TextCursor& c, PendingInstruction* p) {
         return ParseFrontendAttributes(c, &A(p).frontend_attributes);
       }},
      {"sharding", ParseSharding},
      {"control-predecessors", ParseControlPredecessors},
      {"to_apply", Called(0)},
      {"condition", Called(0)},
      {"body", Called(1)},
      {"true_computation", Called(0)},
      {"false_computation", Called(1)},
      {"select", Called(0)},
      {"scatter", Called(1)},
      {"calls", ParseCalledList},
      {"branch_computations", ParseCalledList},
      {"called_computations", ParseCalledList},
  };
  return *table;
}

#undef FIELD

}  // namespace

// Gather and scatter dimension numbers are accepted only on their own opcodes, as in XLA. On
// another opcode they could not round-trip: the printer writes each group whole (gather's with
// `slice_sizes`, both with `index_vector_dim`), and those two names mean something else there.
absl::Status CheckGatherScatterUse(TextCursor& c, std::string_view name, size_t name_offset,
                                   HloOpcode op) {
  static const auto* gather_only = new absl::flat_hash_set<std::string_view>{
      "offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
      "start_indices_batching_dims"};
  static const auto* scatter_only = new absl::flat_hash_set<std::string_view>{
      "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
      "input_batching_dims", "scatter_indices_batching_dims"};
  const bool is_gather = op == HloOpcode::kGather;
  const bool is_scatter = op == HloOpcode::kScatter;
  if ((gather_only->contains(name) && !is_gather) ||
      (scatter_only->contains(name) && !is_scatter) ||
      (name == "index_vector_dim" && !is_gather && !is_scatter)) {
    return c.ErrorAt(name_offset, StrCat("attribute '", name, "' is not valid on ",
                                         HloOpcodeString(op)));
  }
  return absl::OkStatus();
}

absl::Status ParseInstructionAttribute(TextCursor& c, std::string_view name, size_t name_offset,
                                       PendingInstruction* pending) {
  const auto& handlers = Handlers();
  const HloOpcode op = pending->instr->opcode();
  RETURN_IF_ERROR(CheckGatherScatterUse(c, name, name_offset, op));
  // Some names mean different things on other opcodes: those uses are kept verbatim.
  const bool foreign_use =
      (name == "slice_sizes" && op != HloOpcode::kGather) ||
      (name == "dim_labels" && op == HloOpcode::kCustomCall);
  auto it = handlers.find(name);
  if (it != handlers.end() && !foreign_use) return it->second(c, pending);
  if (foreign_use || RawAttributeNames().contains(name)) {
    ASSIGN_OR_RETURN(std::string_view value, c.CaptureValue(name));
    A(pending).raw_attributes.push_back({std::string(name), std::string(value)});
    return absl::OkStatus();
  }
  return c.ErrorAt(name_offset, StrCat("unknown attribute '", name, "'"));
}

absl::Status ParseMetadata(TextCursor& c, OpMetadata* m) {
  RETURN_IF_ERROR(c.Expect('{', "to start metadata"));
  while (c.Peek() != '}') {
    if (c.AtEnd()) return c.Error("unterminated metadata");
    size_t at = c.pos();
    std::string_view key = c.ParseWord();
    RETURN_IF_ERROR(c.Expect('=', "after a metadata field name"));
    if (key == "op_type") {
      ASSIGN_OR_RETURN(m->op_type, c.ParseQuoted("op_type"));
    } else if (key == "op_name") {
      ASSIGN_OR_RETURN(m->op_name, c.ParseQuoted("op_name"));
    } else if (key == "source_file") {
      ASSIGN_OR_RETURN(m->source_file, c.ParseQuoted("source_file"));
    } else if (key == "source_line") {
      ASSIGN_OR_RETURN(m->source_line, c.ParseInt("source_line"));
    } else if (key == "source_end_line") {
      ASSIGN_OR_RETURN(m->source_end_line, c.ParseInt("source_end_line"));
    } else if (key == "source_column") {
      ASSIGN_OR_RETURN(m->source_column, c.ParseInt("source_column"));
    } else if (key == "source_end_column") {
      ASSIGN_OR_RETURN(m->source_end_column, c.ParseInt("source_end_column"));
    } else if (key == "deduplicated_name") {
      ASSIGN_OR_RETURN(m->deduplicated_name, c.ParseQuoted("deduplicated_name"));
    } else if (key == "stack_frame_id") {
      ASSIGN_OR_RETURN(m->stack_frame_id, c.ParseInt("stack_frame_id"));
    } else if (key == "scheduling_name") {
      ASSIGN_OR_RETURN(m->scheduling_name, c.ParseQuoted("scheduling_name"));
    } else if (key == "profile_type") {
      RETURN_IF_ERROR(c.Expect('{', "to start profile_type"));
      while (!c.TryConsume('}')) {
        if (c.AtEnd()) return c.Error("unterminated profile_type");
        c.SkipSpace();
        const size_t type_at = c.pos();
        std::string_view type = c.ParseWord();
        if (type.empty()) {  // Not a name: stop here rather than loop without progress.
          return c.ErrorAt(type_at, StrCat("expected a profile type, found ", c.Describe()));
        }
        m->profile_type.push_back(std::string(type));
        c.TryConsume(',');
      }
    } else {
      return c.ErrorAt(at, StrCat("unknown metadata field '", key, "'"));
    }
    c.TryConsume(',');
  }
  return c.Expect('}', "to close metadata");
}

absl::Status ParseFrontendAttributes(TextCursor& c, FrontendAttributes* attrs) {
  RETURN_IF_ERROR(c.Expect('{', "to start frontend_attributes"));
  if (c.TryConsume('}')) return absl::OkStatus();
  do {
    c.SkipSpace();
    size_t at = c.pos();
    std::string_view key = c.ParseWord();
    if (key.empty()) return c.ErrorAt(at, "expected a frontend attribute name");
    RETURN_IF_ERROR(c.Expect('=', "after a frontend attribute name"));
    std::string value;
    if (c.Peek() == '"') {
      ASSIGN_OR_RETURN(value, c.ParseQuoted("a frontend attribute value"));
    } else {
      ASSIGN_OR_RETURN(std::string_view raw, c.CaptureValue("a frontend attribute value"));
      value = std::string(raw);
    }
    attrs->push_back({std::string(key), std::move(value)});
  } while (c.TryConsume(','));
  return c.Expect('}', "to close frontend_attributes");
}

}  // namespace hlo

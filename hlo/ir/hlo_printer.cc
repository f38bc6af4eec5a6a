// Prints modules, computations and instructions as HLO text.
//
// An instruction prints as `%name = shape opcode(%op0, %op1), attr=value, ...`. Attributes
// come in a fixed order (opcode-specific ones first, then collectives, called computations,
// sharding, control predecessors, backend config, verbatim attributes, metadata and frontend
// attributes), each only when the opcode uses it or it differs from its default, so the
// printed text is a fixpoint of parse + print.
#include "hlo/ir/hlo_printer.h"

#include "hlo/strings.h"
#include "hlo/ir/hlo_computation.h"

namespace hlo {
namespace {

void AppendJoinedInts(const std::vector<int64_t>& values, char sep, std::string* out) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out->push_back(sep);
    StrAppend(out, values[i]);
  }
}

void AppendShapeIndex(const ShapeIndex& index, std::string* out) { AppendBracedInts(index, out); }

void AppendAttr(std::string_view name, std::string* out) {
  out->append(", ");
  out->append(name);
  out->push_back('=');
}

void AppendIntAttr(std::string_view name, int64_t value, std::string* out) {
  AppendAttr(name, out);
  StrAppend(out, value);
}

void AppendIntsAttr(std::string_view name, const std::vector<int64_t>& v, std::string* out) {
  AppendAttr(name, out);
  AppendBracedInts(v, out);
}

void AppendWindow(const Window& window, std::string* out) {
  const auto& dims = window.dimensions;
  auto field = [&](std::string_view key, auto get, auto is_default, bool with_x = true) {
    bool all_default = true;
    for (const WindowDimension& d : dims) all_default &= is_default(d);
    if (all_default) return;
    if (out->back() != '{') out->push_back(' ');
    out->append(key);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i && with_x) out->push_back('x');
      get(dims[i]);
    }
  };
  out->push_back('{');
  field("size=", [&](const WindowDimension& d) { StrAppend(out, d.size); },
        [](const WindowDimension& d) { return false; });
  field("stride=", [&](const WindowDimension& d) { StrAppend(out, d.stride); },
        [](const WindowDimension& d) { return d.stride == 1; });
  field("pad=",
        [&](const WindowDimension& d) { StrAppend(out, d.padding_low, "_", d.padding_high); },
        [](const WindowDimension& d) { return d.padding_low == 0 && d.padding_high == 0; });
  field("lhs_dilate=", [&](const WindowDimension& d) { StrAppend(out, d.base_dilation); },
        [](const WindowDimension& d) { return d.base_dilation == 1; });
  field("rhs_dilate=", [&](const WindowDimension& d) { StrAppend(out, d.window_dilation); },
        [](const WindowDimension& d) { return d.window_dilation == 1; });
  field("rhs_reversal=",
        [&](const WindowDimension& d) { out->push_back(d.window_reversal ? '1' : '0'); },
        [](const WindowDimension& d) { return !d.window_reversal; });
  out->push_back('}');
}

void AppendPadding(const PaddingConfig& config, std::string* out) {
  for (size_t i = 0; i < config.dimensions.size(); ++i) {
    const PaddingDimension& d = config.dimensions[i];
    if (i) out->push_back('x');
    StrAppend(out, d.edge_padding_low, "_", d.edge_padding_high);
    if (d.interior_padding != 0) StrAppend(out, "_", d.interior_padding);
  }
}

void AppendSlice(const std::vector<SliceDimension>& dims, std::string* out) {
  out->push_back('{');
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out->append(", ");
    StrAppend(out, "[", dims[i].start, ":", dims[i].limit);
    if (dims[i].stride != 1) StrAppend(out, ":", dims[i].stride);
    out->push_back(']');
  }
  out->push_back('}');
}

void AppendOpMetadataImpl(const OpMetadata& m, std::string* out) {
  out->push_back('{');
  bool first = true;
  auto sep = [&] {
    if (!first) out->push_back(' ');
    first = false;
  };
  auto str = [&](std::string_view key, const std::string& v) {
    if (v.empty()) return;
    sep();
    StrAppend(out, key, "=");
    AppendQuoted(v, out);
  };
  auto num = [&](std::string_view key, int64_t v) {
    if (v == 0) return;
    sep();
    StrAppend(out, key, "=", v);
  };
  str("op_type", m.op_type);
  str("op_name", m.op_name);
  str("source_file", m.source_file);
  num("source_line", m.source_line);
  num("source_end_line", m.source_end_line);
  num("source_column", m.source_column);
  num("source_end_column", m.source_end_column);
  if (!m.profile_type.empty()) {
    sep();
    out->append("profile_type={");
    for (size_t i = 0; i < m.profile_type.size(); ++i) {
      if (i) out->push_back(',');
      out->append(m.profile_type[i]);
    }
    out->push_back('}');
  }
  str("deduplicated_name", m.deduplicated_name);
  num("stack_frame_id", m.stack_frame_id);
  str("scheduling_name", m.scheduling_name);
  out->push_back('}');
}

void AppendFrontendAttributes(const FrontendAttributes& attrs, std::string* out) {
  out->push_back('{');
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (i) out->push_back(',');
    out->append(attrs[i].first);
    out->push_back('=');
    AppendQuoted(attrs[i].second, out);
  }
  out->push_back('}');
}

void AppendComputationRef(const HloComputation* c, std::string* out) {
  out->push_back('%');
  out->append(c->name());
}

void AppendComputationList(const std::vector<HloComputation*>& cs, std::string* out) {
  out->push_back('{');
  for (size_t i = 0; i < cs.size(); ++i) {
    if (i) out->append(", ");
    AppendComputationRef(cs[i], out);
  }
  out->push_back('}');
}

void AppendNamedPair(std::string_view first, std::string_view second,
                     const std::vector<HloComputation*>& called, std::string* out) {
  AppendAttr(first, out);
  AppendComputationRef(called[0], out);
  AppendAttr(second, out);
  AppendComputationRef(called.at(1), out);
}

void AppendConditionBody(const HloInstruction& instr, std::string* out) {
  AppendNamedPair("condition", "body", instr.called_computations(), out);
}

void AppendSelectScatter(const HloInstruction& instr, std::string* out) {
  AppendNamedPair("select", "scatter", instr.called_computations(), out);
}

void AppendBranches(const HloInstruction& instr, std::string* out) {
  const auto& called = instr.called_computations();
  if (instr.operand_count() > 0 &&
      instr.operand(0)->shape().element_type() == PrimitiveType::kPred && called.size() == 2) {
    AppendNamedPair("true_computation", "false_computation", called, out);
  } else {
    AppendAttr("branch_computations", out);
    AppendComputationList(called, out);
  }
}

void AppendCalls(const HloInstruction& instr, std::string* out) {
  AppendAttr("calls", out);
  AppendComputationRef(instr.called_computations()[0], out);
}

void AppendCalledList(const HloInstruction& instr, std::string* out) {
  AppendAttr("called_computations", out);
  AppendComputationList(instr.called_computations(), out);
}

using InstructionPrinter = void (*)(const HloInstruction&, std::string*);

// How the called computations are named, by the opcode table's `printed` column.
constexpr std::pair<uint32_t, InstructionPrinter> kCalledPrinters[] = {
    {op_traits::kPrintConditionBody, &AppendConditionBody},
    {op_traits::kPrintBranches, &AppendBranches},
    {op_traits::kPrintSelectScatter, &AppendSelectScatter},
    {op_traits::kPrintCalls, &AppendCalls},
    {op_traits::kPrintCalledList, &AppendCalledList},
};

// The opcode whose attributes an instruction prints: the wrapped op of a sugared async-start.
HloOpcode AttributeOpcode(const HloInstruction& instr) {
  const auto& wrapped = instr.attrs().async_wrapped_opcode;
  return wrapped && instr.opcode() == HloOpcode::kAsyncStart ? *wrapped : instr.opcode();
}

void AppendCalledComputations(const HloInstruction& instr, std::string* out) {
  const auto& called = instr.called_computations();
  if (called.empty()) return;
  const HloOpcode op = AttributeOpcode(instr);
  uint32_t printed = GetHloOpcodeTraits(op).printed;
  // A sugared async-start names a wrapped custom-call's list, any other op's `to_apply`.
  if (op != instr.opcode()) printed &= op_traits::kPrintCalledList;
  for (const auto& [bit, print] : kCalledPrinters) {
    if (printed & bit) return print(instr, out);
  }
  AppendAttr("to_apply", out);
  AppendComputationRef(called[0], out);
}

void AppendDotAttrs(const InstructionAttributes& a, std::string* out) {
  if (!a.dot_dimension_numbers) return;
  const DotDimensionNumbers& d = *a.dot_dimension_numbers;
  if (!d.lhs_batch_dimensions.empty()) AppendIntsAttr("lhs_batch_dims", d.lhs_batch_dimensions, out);
  AppendIntsAttr("lhs_contracting_dims", d.lhs_contracting_dimensions, out);
  if (!d.rhs_batch_dimensions.empty()) AppendIntsAttr("rhs_batch_dims", d.rhs_batch_dimensions, out);
  AppendIntsAttr("rhs_contracting_dims", d.rhs_contracting_dimensions, out);
}

void AppendConvolutionAttrs(const InstructionAttributes& a, std::string* out) {
  if (a.window && !a.window->dimensions.empty()) {
    AppendAttr("window", out);
    AppendWindow(*a.window, out);
  }
  if (a.convolution_dimension_numbers) {
    AppendAttr("dim_labels", out);
    out->append(ConvolutionDimensionNumbersToString(*a.convolution_dimension_numbers));
  }
  if (a.feature_group_count != 1) AppendIntAttr("feature_group_count", a.feature_group_count, out);
  if (a.batch_group_count != 1) AppendIntAttr("batch_group_count", a.batch_group_count, out);
}

void AppendGatherScatterAttrs(const InstructionAttributes& a, std::string* out) {
  if (a.gather_dimension_numbers) {
    const GatherDimensionNumbers& g = *a.gather_dimension_numbers;
    AppendIntsAttr("offset_dims", g.offset_dims, out);
    AppendIntsAttr("collapsed_slice_dims", g.collapsed_slice_dims, out);
    AppendIntsAttr("start_index_map", g.start_index_map, out);
    if (!g.operand_batching_dims.empty()) {
      AppendIntsAttr("operand_batching_dims", g.operand_batching_dims, out);
    }
    if (!g.start_indices_batching_dims.empty()) {
      AppendIntsAttr("start_indices_batching_dims", g.start_indices_batching_dims, out);
    }
    AppendIntAttr("index_vector_dim", g.index_vector_dim, out);
    AppendIntsAttr("slice_sizes", a.gather_slice_sizes, out);
  }
  if (a.scatter_dimension_numbers) {
    const ScatterDimensionNumbers& s = *a.scatter_dimension_numbers;
    AppendIntsAttr("update_window_dims", s.update_window_dims, out);
    AppendIntsAttr("inserted_window_dims", s.inserted_window_dims, out);
    AppendIntsAttr("scatter_dims_to_operand_dims", s.scatter_dims_to_operand_dims, out);
    if (!s.input_batching_dims.empty()) {
      AppendIntsAttr("input_batching_dims", s.input_batching_dims, out);
    }
    if (!s.scatter_indices_batching_dims.empty()) {
      AppendIntsAttr("scatter_indices_batching_dims", s.scatter_indices_batching_dims, out);
    }
    AppendIntAttr("index_vector_dim", s.index_vector_dim, out);
  }
  if (a.indices_are_sorted) out->append(", indices_are_sorted=true");
  if (a.unique_indices) out->append(", unique_indices=true");
}

void AppendCollectiveAttrs(const InstructionAttributes& a, std::string* out) {
  if (a.channel_id) AppendIntAttr("channel_id", *a.channel_id, out);
  if (a.replica_groups) {
    AppendAttr("replica_groups", out);
    AppendReplicaGroups(*a.replica_groups, out);
  }
  if (a.constrain_layout) out->append(", constrain_layout=true");
  if (a.use_global_device_ids) out->append(", use_global_device_ids=true");
  if (!a.source_target_pairs.empty()) {
    AppendAttr("source_target_pairs", out);
    out->push_back('{');
    for (size_t i = 0; i < a.source_target_pairs.size(); ++i) {
      if (i) out->push_back(',');
      StrAppend(out, "{", a.source_target_pairs[i].first, ",",
                      a.source_target_pairs[i].second, "}");
    }
    out->push_back('}');
  }
}

void AppendCustomCallAttrs(const InstructionAttributes& a, std::string* out) {
  AppendAttr("custom_call_target", out);
  AppendQuoted(a.custom_call_target, out);
  if (a.custom_call_has_side_effect) out->append(", custom_call_has_side_effect=true");
  if (a.operand_shapes_with_layout) {
    AppendAttr("operand_layout_constraints", out);
    out->push_back('{');
    for (size_t i = 0; i < a.operand_shapes_with_layout->size(); ++i) {
      if (i) out->append(", ");
      (*a.operand_shapes_with_layout)[i].AppendTo(out);
    }
    out->push_back('}');
  }
}

void AppendAliasing(const std::vector<OutputOperandAlias>& aliases, std::string* out) {
  if (aliases.empty()) return;
  AppendAttr("output_to_operand_aliasing", out);
  out->push_back('{');
  for (size_t i = 0; i < aliases.size(); ++i) {
    if (i) out->append(", ");
    AppendShapeIndex(aliases[i].output_index, out);
    StrAppend(out, ": (", aliases[i].operand, ", ");
    AppendShapeIndex(aliases[i].operand_index, out);
    out->push_back(')');
  }
  out->push_back('}');
}

// ---- Opcode-specific attributes, one printer per bit of the opcode table's `printed` column.

void AppendDimensions(const InstructionAttributes& a, std::string* out) {
  AppendIntsAttr("dimensions", a.dimensions, out);
}

void AppendDimensionsIfAny(const InstructionAttributes& a, std::string* out) {
  if (!a.dimensions.empty()) AppendDimensions(a, out);
}

void AppendIndex(const InstructionAttributes& a, std::string* out) {
  AppendIntAttr("index", a.tuple_index, out);
}

void AppendIotaDimension(const InstructionAttributes& a, std::string* out) {
  AppendIntAttr("iota_dimension", a.iota_dimension, out);
}

void AppendSliceAttr(const InstructionAttributes& a, std::string* out) {
  AppendAttr("slice", out);
  AppendSlice(a.slice_dimensions, out);
}

void AppendSliceSizes(const InstructionAttributes& a, std::string* out) {
  AppendIntsAttr("dynamic_slice_sizes", a.dynamic_slice_sizes, out);
}

void AppendPaddingAttr(const InstructionAttributes& a, std::string* out) {
  if (!a.padding_config) return;
  AppendAttr("padding", out);
  AppendPadding(*a.padding_config, out);
}

void AppendComparison(const InstructionAttributes& a, std::string* out) {
  AppendAttr("direction", out);
  out->append(ComparisonDirectionString(a.comparison_direction));
  if (a.comparison_type != ComparisonType::kDefault) {
    AppendAttr("type", out);
    out->append(ComparisonTypeString(a.comparison_type));
  }
}

void AppendStable(const InstructionAttributes& a, std::string* out) {
  if (a.is_stable) out->append(", is_stable=true");
}

void AppendPrecisionBits(const InstructionAttributes& a, std::string* out) {
  AppendIntAttr("exponent_bits", a.exponent_bits, out);
  AppendIntAttr("mantissa_bits", a.mantissa_bits, out);
}

void AppendBatchNorm(const InstructionAttributes& a, std::string* out) {
  AppendAttr("epsilon", out);
  AppendFloatingPoint(a.epsilon, PrimitiveType::kF32, out);
  AppendIntAttr("feature_index", a.feature_index, out);
}

void AppendFft(const InstructionAttributes& a, std::string* out) {
  AppendAttr("fft_type", out);
  out->append(FftTypeString(a.fft_type));
  AppendIntsAttr("fft_length", a.fft_length, out);
}

void AppendDistribution(const InstructionAttributes& a, std::string* out) {
  AppendAttr("distribution", out);
  out->append(RandomDistributionString(a.distribution));
}

void AppendFusionKind(const InstructionAttributes& a, std::string* out) {
  AppendAttr("kind", out);
  out->append(a.fusion_kind);
}

void AppendTopK(const InstructionAttributes& a, std::string* out) {
  AppendIntAttr("k", a.k, out);
  if (!a.largest) out->append(", largest=false");
}

void AppendInfeedConfig(const InstructionAttributes& a, std::string* out) {
  if (a.infeed_config.empty()) return;
  AppendAttr("infeed_config", out);
  AppendQuoted(a.infeed_config, out);
}

void AppendOutfeedConfig(const InstructionAttributes& a, std::string* out) {
  if (!a.outfeed_config.empty()) {
    AppendAttr("outfeed_config", out);
    AppendQuoted(a.outfeed_config, out);
  }
  if (a.outfeed_shape) {
    AppendAttr("outfeed_shape", out);
    a.outfeed_shape->AppendTo(out);
  }
}

using AttributePrinter = void (*)(const InstructionAttributes&, std::string*);

// Printed before the attributes any op may carry (for the opcode whose attributes an
// instruction prints, `AttributeOpcode`).
constexpr std::pair<uint32_t, AttributePrinter> kLeadingAttributes[] = {
    {op_traits::kPrintDimensions, &AppendDimensions},
    {op_traits::kPrintDimensionsIfAny, &AppendDimensionsIfAny},
    {op_traits::kPrintIndex, &AppendIndex},
    {op_traits::kPrintIotaDimension, &AppendIotaDimension},
    {op_traits::kPrintSlice, &AppendSliceAttr},
    {op_traits::kPrintSliceSizes, &AppendSliceSizes},
    {op_traits::kPrintPadding, &AppendPaddingAttr},
    {op_traits::kPrintComparison, &AppendComparison},
    {op_traits::kPrintCustomCall, &AppendCustomCallAttrs},
};

// Printed after them (for the instruction's own opcode).
constexpr std::pair<uint32_t, AttributePrinter> kTrailingAttributes[] = {
    {op_traits::kPrintStable, &AppendStable},
    {op_traits::kPrintPrecisionBits, &AppendPrecisionBits},
    {op_traits::kPrintBatchNorm, &AppendBatchNorm},
    {op_traits::kPrintFft, &AppendFft},
    {op_traits::kPrintDistribution, &AppendDistribution},
    {op_traits::kPrintFusionKind, &AppendFusionKind},
    {op_traits::kPrintTopK, &AppendTopK},
    {op_traits::kPrintInfeedConfig, &AppendInfeedConfig},
    {op_traits::kPrintOutfeedConfig, &AppendOutfeedConfig},
};

template <size_t N>
void AppendPrinted(HloOpcode op, const std::pair<uint32_t, AttributePrinter> (&printers)[N],
                   const InstructionAttributes& a, std::string* out) {
  const uint32_t printed = GetHloOpcodeTraits(op).printed;
  for (const auto& [bit, print] : printers) {
    if (printed & bit) print(a, out);
  }
}

void AppendOpcodeSpecificAttrs(const HloInstruction& instr, std::string* out) {
  const InstructionAttributes& a = instr.attrs();
  AppendPrinted(AttributeOpcode(instr), kLeadingAttributes, a, out);
  AppendConvolutionAttrs(a, out);
  AppendDotAttrs(a, out);
  AppendGatherScatterAttrs(a, out);
  if (!a.operand_precision.empty()) {
    AppendAttr("operand_precision", out);
    out->push_back('{');
    for (size_t i = 0; i < a.operand_precision.size(); ++i) {
      if (i) out->push_back(',');
      std::string_view p = PrecisionString(a.operand_precision[i]);
      for (char c : p) out->push_back(static_cast<char>(c - 'A' + 'a'));
    }
    out->push_back('}');
  }
  AppendPrinted(instr.opcode(), kTrailingAttributes, a, out);
  if (a.is_host_transfer) out->append(", is_host_transfer=true");
}

void AppendOperands(const HloInstruction& instr, std::string* out) {
  out->push_back('(');
  const InstructionAttributes& a = instr.attrs();
  if (instr.opcode() == HloOpcode::kParameter) {
    StrAppend(out, a.parameter_number);
  } else if (instr.opcode() == HloOpcode::kConstant && a.literal_elided) {
    out->append("{...}");
  } else if (instr.opcode() == HloOpcode::kConstant && a.literal) {
    a.literal->AppendTo(out);
  }
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    if (i) out->append(", ");
    out->push_back('%');
    out->append(instr.operand(i)->name());
  }
  out->push_back(')');
}

}  // namespace

void AppendOpMetadata(const OpMetadata& metadata, std::string* out) {
  AppendOpMetadataImpl(metadata, out);
}

void AppendQuoted(std::string_view text, std::string* out) {
  auto needs_escape = [](char c) {
    return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  };
  out->push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    // Copy the run of characters that need no escape in one piece.
    size_t run_end = i;
    while (run_end < text.size() && !needs_escape(text[run_end])) ++run_end;
    out->append(text.data() + i, run_end - i);
    if (run_end == text.size()) break;
    const char c = text[run_end];
    i = run_end + 1;
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\t': out->append("\\t"); break;
      case '\r': out->append("\\r"); break;
      default: {
        static const char kHex[] = "0123456789abcdef";
        out->append("\\x");
        out->push_back(kHex[(c >> 4) & 0xF]);
        out->push_back(kHex[c & 0xF]);
      }
    }
  }
  out->push_back('"');
}

void AppendBracedInts(const std::vector<int64_t>& values, std::string* out) {
  out->push_back('{');
  AppendJoinedInts(values, ',', out);
  out->push_back('}');
}

void AppendProgramShape(const ProgramShape& shape, std::string* out) {
  out->push_back('(');
  for (size_t i = 0; i < shape.parameters.size(); ++i) {
    if (i) out->append(", ");
    shape.parameters[i].AppendTo(out);
  }
  out->append(")->");
  shape.result.AppendTo(out);
}

void AppendReplicaGroups(const ReplicaGroups& groups, std::string* out) {
  if (groups.iota) {
    const IotaReplicaGroupList& iota = *groups.iota;
    StrAppend(out, "[", iota.num_replica_groups, ",", iota.num_devices_per_group, "]<=[");
    AppendJoinedInts(iota.iota_reshape_dims, ',', out);
    out->push_back(']');
    if (!iota.iota_transpose_perm.empty()) {
      out->append("T(");
      AppendJoinedInts(iota.iota_transpose_perm, ',', out);
      out->push_back(')');
    }
    return;
  }
  out->push_back('{');
  for (size_t i = 0; i < groups.groups.size(); ++i) {
    if (i) out->push_back(',');
    AppendBracedInts(groups.groups[i], out);
  }
  out->push_back('}');
}

std::string ConvolutionDimensionNumbersToString(const ConvolutionDimensionNumbers& d) {
  auto labels = [](size_t rank, int64_t a, char a_label, int64_t b, char b_label,
                   const std::vector<int64_t>& spatial) {
    std::string s(rank, '?');
    if (a >= 0 && static_cast<size_t>(a) < rank) s[a] = a_label;
    if (b >= 0 && static_cast<size_t>(b) < rank) s[b] = b_label;
    for (size_t i = 0; i < spatial.size(); ++i) {
      if (spatial[i] >= 0 && static_cast<size_t>(spatial[i]) < rank) {
        s[spatial[i]] = i < 10 ? static_cast<char>('0' + i) : '?';
      }
    }
    return s;
  };
  const size_t rank = d.input_spatial_dimensions.size() + 2;
  return StrCat(
      labels(rank, d.input_batch_dimension, 'b', d.input_feature_dimension, 'f',
             d.input_spatial_dimensions),
      "_",
      labels(rank, d.kernel_input_feature_dimension, 'i', d.kernel_output_feature_dimension, 'o',
             d.kernel_spatial_dimensions),
      "->",
      labels(rank, d.output_batch_dimension, 'b', d.output_feature_dimension, 'f',
             d.output_spatial_dimensions));
}

void PrintInstruction(const HloInstruction& instr, std::string* out) {
  const InstructionAttributes& a = instr.attrs();
  out->push_back('%');
  out->append(instr.name());
  out->append(" = ");
  instr.shape().AppendTo(out);
  out->push_back(' ');
  if (a.async_wrapped_opcode) {
    out->append(HloOpcodeString(*a.async_wrapped_opcode));
    std::string_view async_name = HloOpcodeString(instr.opcode());  // "async-start", ...
    out->append(async_name.substr(async_name.find('-')));
  } else {
    out->append(HloOpcodeString(instr.opcode()));
  }
  AppendOperands(instr, out);
  AppendOpcodeSpecificAttrs(instr, out);
  AppendCollectiveAttrs(a, out);
  AppendCalledComputations(instr, out);
  AppendAliasing(a.output_operand_aliasing, out);
  if (instr.has_sharding()) {
    AppendAttr("sharding", out);
    instr.sharding().AppendTo(out);
  }
  if (!instr.control_predecessors().empty()) {
    out->append(", control-predecessors={");
    for (size_t i = 0; i < instr.control_predecessors().size(); ++i) {
      if (i) out->append(", ");
      out->push_back('%');
      out->append(instr.control_predecessors()[i]->name());
    }
    out->push_back('}');
  }
  if (!a.backend_config.empty()) {
    AppendAttr("backend_config", out);
    if (a.backend_config.front() == '{') {
      out->append(a.backend_config);
    } else {
      AppendQuoted(a.backend_config, out);
    }
  }
  for (const RawAttribute& raw : a.raw_attributes) {
    AppendAttr(raw.name, out);
    out->append(raw.value);
  }
  if (!a.metadata.empty()) {
    AppendAttr("metadata", out);
    AppendOpMetadata(a.metadata, out);
  }
  if (!a.frontend_attributes.empty()) {
    AppendAttr("frontend_attributes", out);
    AppendFrontendAttributes(a.frontend_attributes, out);
  }
}

void PrintComputation(const HloComputation& computation, bool is_entry, std::string* out) {
  if (is_entry) out->append("ENTRY ");
  out->push_back('%');
  out->append(computation.name());
  out->append(" (");
  bool first_param = true;
  for (const HloInstruction* param : computation.parameter_instructions()) {
    // A gap in the parameter numbers (which the verifier reports) has no entry: an empty one
    // would not parse back.
    if (param == nullptr) continue;
    if (!first_param) out->append(", ");
    first_param = false;
    out->append(param->name());
    out->append(": ");
    param->shape().AppendTo(out, /*print_layout=*/false);
  }
  out->append(") -> ");
  if (computation.root_instruction()) {
    computation.root_instruction()->shape().AppendTo(out, /*print_layout=*/false);
  }
  out->append(" {\n");
  for (const auto& instr : computation.instructions()) {
    out->append(instr.get() == computation.root_instruction() ? "  ROOT " : "  ");
    PrintInstruction(*instr, out);
    out->push_back('\n');
  }
  out->push_back('}');
  if (!computation.execution_thread().empty()) {
    out->append(", execution_thread=");
    AppendQuoted(computation.execution_thread(), out);
  }
}

namespace {

void AppendBoolList(std::string_view name, const std::vector<bool>& flags, std::string* out) {
  if (flags.empty()) return;
  AppendAttr(name, out);
  out->push_back('{');
  for (size_t i = 0; i < flags.size(); ++i) {
    if (i) out->push_back(',');
    out->append(flags[i] ? "true" : "false");
  }
  out->push_back('}');
}

void AppendInputOutputAlias(const std::vector<InputOutputAlias>& aliases, std::string* out) {
  if (aliases.empty()) return;
  AppendAttr("input_output_alias", out);
  out->append("{ ");
  for (size_t i = 0; i < aliases.size(); ++i) {
    if (i) out->append(", ");
    AppendShapeIndex(aliases[i].output_index, out);
    StrAppend(out, ": (", aliases[i].parameter_number, ", ");
    AppendShapeIndex(aliases[i].parameter_index, out);
    out->append(aliases[i].must_alias ? ", must-alias)" : ", may-alias)");
  }
  out->append(" }");
}

}  // namespace

void PrintModule(const HloModule& module, std::string* out) {
  const HloModuleConfig& config = module.config();
  out->append("HloModule ");
  out->append(module.name());
  AppendInputOutputAlias(module.input_output_alias(), out);
  if (config.entry_computation_layout) {
    AppendAttr("entry_computation_layout", out);
    out->push_back('{');
    AppendProgramShape(*config.entry_computation_layout, out);
    out->push_back('}');
  }
  AppendBoolList("allow_spmd_sharding_propagation_to_parameters",
                 config.allow_spmd_sharding_propagation_to_parameters, out);
  AppendBoolList("allow_spmd_sharding_propagation_to_output",
                 config.allow_spmd_sharding_propagation_to_output, out);
  if (config.replica_count != 1) AppendIntAttr("replica_count", config.replica_count, out);
  if (config.num_partitions != 1) AppendIntAttr("num_partitions", config.num_partitions, out);
  if (!module.frontend_attributes().empty()) {
    AppendAttr("frontend_attributes", out);
    AppendFrontendAttributes(module.frontend_attributes(), out);
  }
  for (const RawAttribute& raw : module.raw_attributes()) {
    AppendAttr(raw.name, out);
    out->append(raw.value);
  }
  out->append("\n");
  AppendStackFrameIndex(module.stack_frame_index(), out);
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    out->push_back('\n');
    PrintComputation(*c, c == module.entry_computation(), out);
    out->push_back('\n');
  }
}

std::string HloInstruction::ToString() const {
  std::string out;
  PrintInstruction(*this, &out);
  return out;
}

std::string HloComputation::ToString() const {
  std::string out;
  PrintComputation(*this, parent() && parent()->entry_computation() == this, &out);
  return out;
}

std::string HloModule::ToString() const {
  std::string out;
  PrintModule(*this, &out);
  return out;
}

}  // namespace hlo

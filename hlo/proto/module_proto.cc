// HloModule <-> HloModuleProto / HloModuleProtoWithConfig, and the byte-level entry points.
//
// Writing emits computations in MakeComputationPostOrder order (callees first, entry last, the
// printing order) and instructions in their list order. Reading rebuilds in three steps:
//   1. each computation on its own: create every instruction, resolve operand and
//      control-predecessor ids, check parameter numbers, order the instructions operands first
//      (proto order when it already is) and reject cycles;
//   2. resolve called-computation ids across the module (in XLA's order: a while's are
//      [body, condition]) and check their counts as XLA does;
//   3. order the computations callees first the way MakeComputationPostOrder does (so printing
//      the result reproduces the proto's order), reject call cycles, and add them to the module.
// The module config travels in the WithConfig message; a plain HloModuleProto written here also
// carries it as `spmdp::` markers so that both forms round-trip.
#include <limits>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/stubs/logging.h"
#include "hlo/proto/hlo_proto_util.h"
#include "hlo/proto/proto_internal.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {

using proto_internal::AssignRepeated;
using proto_internal::CheckUtf8;
using proto_internal::ProtoIds;
using proto_internal::ToInt64Vector;

namespace {

// ---- Writing -------------------------------------------------------------------------------

// The IR unique ids when they are non-negative and unique, else fresh sequential ones.
ProtoIds AssignIds(const HloModule& module) {
  ProtoIds ids;
  absl::flat_hash_set<int64_t> computation_ids, instruction_ids;
  bool unique = true;
  for (const auto& c : module.computations()) {
    unique &= c->unique_id() >= 0 && computation_ids.insert(c->unique_id()).second;
    for (const auto& instr : c->instructions()) {
      unique &= instr->unique_id() >= 0 && instruction_ids.insert(instr->unique_id()).second;
    }
  }
  int64_t next = 0;
  for (const auto& c : module.computations()) {
    ids.computations[c.get()] = unique ? c->unique_id() : next++;
    for (const auto& instr : c->instructions()) {
      ids.instructions[instr.get()] = unique ? instr->unique_id() : next++;
    }
  }
  return ids;
}

absl::Status WriteComputation(const HloComputation& c, const ProtoIds& ids,
                              xla::HloComputationProto* out) {
  RETURN_IF_ERROR(CheckUtf8(c.name(), "computation name"));
  RETURN_IF_ERROR(CheckUtf8(c.execution_thread(), "execution_thread"));
  out->set_name(c.name());
  out->set_id(ids.computations.at(&c));
  out->set_is_fusion_computation(c.is_fusion_computation());
  out->set_execution_thread(c.execution_thread());
  *out->mutable_program_shape() = ProgramShapeToProto(c.ComputeProgramShape());
  const HloInstruction* root = c.root_instruction();
  if (root != nullptr && root->parent() != &c) {
    return absl::InvalidArgumentError(hlo::StrCat("root of %", c.name(), " is not in it"));
  }
  out->set_root_id(root == nullptr ? -1 : ids.instructions.at(root));
  for (const auto& instr : c.instructions()) {
    absl::Status s = proto_internal::InstructionToProto(*instr, ids, out->add_instructions());
    if (!s.ok()) {
      return absl::Status(s.code(), hlo::StrCat("computation %", c.name(), ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

void AddModuleExtra(std::string_view name, std::string value, xla::HloModuleProto* proto) {
  xla::ExtraAttribute* extra = proto->add_spmdp_extra_attributes();
  extra->set_name(std::string(name));
  extra->set_value(std::move(value));
}

std::string BoolList(const std::vector<bool>& flags) {
  std::vector<std::string> items;
  for (bool f : flags) items.push_back(f ? "true" : "false");
  return absl::StrJoin(items, ",");
}

void WriteConfigMarkers(const HloModuleConfig& config, xla::HloModuleProto* proto) {
  AddModuleExtra(proto_internal::kNumPartitionsMarker, hlo::StrCat(config.num_partitions), proto);
  AddModuleExtra(proto_internal::kReplicaCountMarker, hlo::StrCat(config.replica_count), proto);
  AddModuleExtra(proto_internal::kUseSpmdMarker, config.use_spmd_partitioning ? "true" : "false",
                 proto);
  if (!config.allow_spmd_sharding_propagation_to_output.empty()) {
    AddModuleExtra(proto_internal::kPropagateToOutputMarker,
                   BoolList(config.allow_spmd_sharding_propagation_to_output), proto);
  }
  if (!config.allow_spmd_sharding_propagation_to_parameters.empty()) {
    AddModuleExtra(proto_internal::kPropagateToParametersMarker,
                   BoolList(config.allow_spmd_sharding_propagation_to_parameters), proto);
  }
  AddModuleExtra(proto_internal::kEntryLayoutMarker,
                 config.entry_computation_layout ? "host_program_shape" : "none", proto);
}

absl::Status WriteModuleAttributes(const HloModule& module, xla::HloModuleProto* proto) {
  for (const InputOutputAlias& alias : module.input_output_alias()) {
    auto* entry = proto->mutable_input_output_alias()->add_entries();
    AssignRepeated(alias.output_index, entry->mutable_output_shape_index());
    entry->set_parameter_number(alias.parameter_number);
    AssignRepeated(alias.parameter_index, entry->mutable_parameter_shape_index());
    entry->set_kind(alias.must_alias ? xla::MUST_ALIAS : xla::MAY_ALIAS);
  }
  if (!module.frontend_attributes().empty()) {
    std::optional<std::string> order;
    RETURN_IF_ERROR(proto_internal::FrontendAttributesToProto(
        module.frontend_attributes(), proto->mutable_frontend_attributes(), &order));
    if (order) AddModuleExtra(proto_internal::kFrontendAttributesMarker, *std::move(order), proto);
  }
  if (!module.stack_frame_index().empty()) {
    RETURN_IF_ERROR(proto_internal::StackFrameIndexToProto(module.stack_frame_index(),
                                                           proto->mutable_stack_frame_index()));
  }
  AddModuleExtra(proto_internal::kProducerMarker, "spmdp", proto);
  WriteConfigMarkers(module.config(), proto);
  for (const RawAttribute& raw : module.raw_attributes()) {
    RETURN_IF_ERROR(CheckUtf8(raw.name, "module attribute name"));
    RETURN_IF_ERROR(CheckUtf8(raw.value, "module attribute value"));
    AddModuleExtra(raw.name, raw.value, proto);
  }
  return absl::OkStatus();
}

// ---- Reading: one computation --------------------------------------------------------------

absl::Status Invalid(std::string_view where, absl::string_view message) {
  return absl::InvalidArgumentError(hlo::StrCat(where, ": ", message));
}

// Operands-first order of `n` nodes with `edges[i]` the nodes i depends on: the identity when
// every edge points backwards, else a stable depth-first post-order. Fails naming the first
// node found on a cycle. Iterative, so long chains cannot overflow the stack.
absl::StatusOr<std::vector<int>> DependencyOrder(const std::vector<std::vector<int>>& edges,
                                                 const std::vector<int>& roots, bool force_dfs,
                                                 int* cycle_node) {
  const int n = static_cast<int>(edges.size());
  std::vector<int> order;
  order.reserve(n);
  bool backwards = !force_dfs;
  for (int i = 0; i < n && backwards; ++i) {
    for (int e : edges[i]) backwards &= e < i;
  }
  if (backwards) {
    for (int i = 0; i < n; ++i) order.push_back(i);
    return order;
  }
  enum State : uint8_t { kNew, kOpen, kDone };
  std::vector<State> state(n, kNew);
  std::vector<std::pair<int, size_t>> stack;
  for (int start : roots) {
    if (state[start] != kNew) continue;
    stack.push_back({start, 0});
    state[start] = kOpen;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < edges[node].size()) {
        const int dep = edges[node][next++];
        if (state[dep] == kOpen) {
          *cycle_node = dep;
          return absl::InvalidArgumentError("cycle");
        }
        if (state[dep] == kNew) {
          state[dep] = kOpen;
          stack.push_back({dep, 0});
        }
        continue;
      }
      state[node] = kDone;
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

std::vector<int> Iota(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

// A computation being rebuilt: its instructions (owned until added) and their links.
struct PendingComputation {
  const xla::HloComputationProto* proto = nullptr;
  std::unique_ptr<HloComputation> computation;
  std::vector<HloInstruction*> instructions;  // In proto order.
};

// Resolves `ids` against `index`, naming `role` in the error.
absl::Status ResolveIds(const google::protobuf::RepeatedField<int64_t>& ids,
                        const absl::flat_hash_map<int64_t, int>& index, std::string_view role,
                        std::vector<int>* out) {
  for (int64_t id : ids) {
    auto it = index.find(id);
    if (it == index.end()) {
      return absl::InvalidArgumentError(
          hlo::StrCat(role, " id ", id, " is not an instruction of this computation"));
    }
    out->push_back(it->second);
  }
  return absl::OkStatus();
}

absl::Status CheckParameterNumbers(const std::vector<std::unique_ptr<HloInstruction>>& instrs,
                                   const std::string& where) {
  std::vector<bool> taken(instrs.size(), false);
  for (const auto& instr : instrs) {
    if (instr->opcode() != HloOpcode::kParameter) continue;
    const int64_t n = instr->parameter_number();
    if (n < 0 || n >= static_cast<int64_t>(instrs.size()) || taken[n]) {
      return Invalid(hlo::StrCat(where, ": instruction %", instr->name()),
                     hlo::StrCat("parameter number ", n, " is ",
                                 n < 0 || n >= static_cast<int64_t>(instrs.size()) ? "out of range"
                                                                                   : "used twice"));
    }
    taken[n] = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<PendingComputation> ReadComputation(const xla::HloComputationProto& cp,
                                                   bool foreign) {
  const std::string where = hlo::StrCat("computation %", cp.name());
  const int n = cp.instructions_size();
  absl::flat_hash_map<int64_t, int> index;
  absl::flat_hash_set<std::string_view> names;
  std::vector<std::unique_ptr<HloInstruction>> instrs;
  instrs.reserve(n);
  for (int i = 0; i < n; ++i) {
    const xla::HloInstructionProto& ip = cp.instructions(i);
    if (ip.name().empty()) return Invalid(where, hlo::StrCat("instruction ", i, " has no name"));
    if (!names.insert(ip.name()).second) {
      return Invalid(where, hlo::StrCat("two instructions are named %", ip.name()));
    }
    if (!index.emplace(ip.id(), i).second) {
      return Invalid(where, hlo::StrCat("instruction %", ip.name(), " reuses id ", ip.id()));
    }
    absl::StatusOr<std::unique_ptr<HloInstruction>> instr =
        proto_internal::InstructionFromProto(ip, foreign);
    if (!instr.ok()) return Invalid(where, instr.status().message());
    instrs.push_back(*std::move(instr));
  }
  RETURN_IF_ERROR(CheckParameterNumbers(instrs, where));
  std::vector<std::vector<int>> operands(n), all_deps(n);
  bool has_control = false;
  for (int i = 0; i < n; ++i) {
    const xla::HloInstructionProto& ip = cp.instructions(i);
    const std::string instr_where = hlo::StrCat(where, ": instruction %", ip.name());
    absl::Status s = ResolveIds(ip.operand_ids(), index, "operand", &operands[i]);
    all_deps[i] = operands[i];
    if (s.ok())
      s = ResolveIds(ip.control_predecessor_ids(), index, "control predecessor", &all_deps[i]);
    if (!s.ok()) return Invalid(instr_where, s.message());
    has_control |= ip.control_predecessor_ids_size() > 0;
  }
  int cycle_node = -1;
  absl::StatusOr<std::vector<int>> order = absl::InternalError("unset");
  if (has_control) order = DependencyOrder(all_deps, Iota(n), true, &cycle_node);
  if (!has_control || order.ok()) order = DependencyOrder(operands, Iota(n), false, &cycle_node);
  if (!order.ok()) {
    return Invalid(hlo::StrCat(where, ": instruction %", cp.instructions(cycle_node).name()),
                   "is part of a cycle of operands or control predecessors");
  }
  PendingComputation pending;
  pending.proto = &cp;
  pending.computation = std::make_unique<HloComputation>(cp.name());
  pending.computation->set_is_fusion_computation(cp.is_fusion_computation());
  pending.computation->set_execution_thread(cp.execution_thread());
  for (const auto& instr : instrs) pending.instructions.push_back(instr.get());
  for (int i : *order) {
    for (int op : operands[i]) instrs[i]->AppendOperand(pending.instructions[op]);
    if (foreign) proto_internal::DropXlaDefaults(instrs[i].get());
    pending.computation->AddInstruction(std::move(instrs[i]));
  }
  for (int i = 0; i < n; ++i) {
    for (size_t k = operands[i].size(); k < all_deps[i].size(); ++k) {
      pending.instructions[i]->AddControlPredecessor(pending.instructions[all_deps[i][k]]);
    }
  }
  // root_id -1 (when no instruction has that id) means "no root", which the writer uses for a
  // computation without one.
  if (auto it = index.find(cp.root_id()); it != index.end()) {
    pending.computation->set_root_instruction(pending.instructions[it->second]);
  } else if (cp.root_id() != -1) {
    return Invalid(where, hlo::StrCat("root_id ", cp.root_id(), " is not an instruction of it"));
  }
  return pending;
}

// ---- Reading: the module -------------------------------------------------------------------

// Links called computations; fills `callees[i]` with the computations computation i calls.
absl::Status LinkCalls(std::vector<PendingComputation>& comps,
                       const absl::flat_hash_map<int64_t, int>& by_id,
                       std::vector<std::vector<int>>* callees) {
  for (size_t c = 0; c < comps.size(); ++c) {
    const xla::HloComputationProto& cp = *comps[c].proto;
    for (int i = 0; i < cp.instructions_size(); ++i) {
      const xla::HloInstructionProto& ip = cp.instructions(i);
      HloInstruction* instr = comps[c].instructions[i];
      const std::string where =
          hlo::StrCat("computation %", cp.name(), ": instruction %", ip.name());
      const int64_t n = ip.called_computation_ids_size();
      absl::Status count = proto_internal::CheckCalledCount(*instr, n);
      if (!count.ok()) return Invalid(where, count.message());
      std::vector<int> called(n);
      const std::vector<int64_t> order = proto_internal::ProtoCalledOrder(instr->opcode(), n);
      for (int64_t k = 0; k < n; ++k) {
        const int64_t id = ip.called_computation_ids(k);
        auto it = by_id.find(id);
        if (it == by_id.end()) {
          return Invalid(where, hlo::StrCat("called computation id ", id, " does not exist"));
        }
        called[order[k]] = it->second;
      }
      for (int callee : called) {
        instr->AppendCalledComputation(comps[callee].computation.get());
        (*callees)[c].push_back(callee);
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> FindEntry(const xla::HloModuleProto& proto,
                              const absl::flat_hash_map<int64_t, int>& by_id) {
  const std::string& name = proto.entry_computation_name();
  auto it = by_id.find(proto.entry_computation_id());
  if (it != by_id.end() && (name.empty() || proto.computations(it->second).name() == name)) {
    return it->second;
  }
  for (int i = 0; !name.empty() && i < proto.computations_size(); ++i) {
    if (proto.computations(i).name() == name) return i;
  }
  if (name.empty() && proto.entry_computation_id() == -1) return -1;
  if (proto.computations_size() == 0 && name.empty()) return -1;
  return absl::InvalidArgumentError(hlo::StrCat("entry computation \"", name, "\" (id ",
                                                proto.entry_computation_id(),
                                                ") is not in the module"));
}

using ModuleExtras = absl::flat_hash_map<std::string, std::string>;

absl::StatusOr<std::vector<bool>> ParseBoolList(const std::string& text) {
  std::vector<bool> flags;
  if (text.empty()) return flags;
  for (std::string_view item : proto_internal::SplitString(text, ',')) {
    if (item != "true" && item != "false") {
      return absl::InvalidArgumentError(hlo::StrCat("malformed bool list \"", text, "\""));
    }
    flags.push_back(item == "true");
  }
  return flags;
}

absl::Status ReadConfigMarkers(const xla::HloModuleProto& proto, const ModuleExtras& markers,
                               HloModuleConfig* config) {
  auto find = [&](std::string_view name) -> const std::string* {
    auto it = markers.find(std::string(name));
    return it == markers.end() ? nullptr : &it->second;
  };
  for (auto [name, field] :
       {std::pair{proto_internal::kNumPartitionsMarker, &config->num_partitions},
        std::pair{proto_internal::kReplicaCountMarker, &config->replica_count}}) {
    if (const std::string* v = find(name)) {
      std::optional<int64_t> value = proto_internal::ParseInt64(*v);
      if (!value || *value < 0) return Invalid(name, "malformed marker");
      if (*value > kMaxDevices) return Invalid(name, "device count over the limit of 65536");
      *field = *value;
    }
  }
  if (const std::string* v = find(proto_internal::kUseSpmdMarker)) {
    config->use_spmd_partitioning = *v == "true";
  }
  for (auto [name, field] : {std::pair{proto_internal::kPropagateToOutputMarker,
                                       &config->allow_spmd_sharding_propagation_to_output},
                             std::pair{proto_internal::kPropagateToParametersMarker,
                                       &config->allow_spmd_sharding_propagation_to_parameters}}) {
    if (const std::string* v = find(name)) {
      absl::StatusOr<std::vector<bool>> flags = ParseBoolList(*v);
      if (!flags.ok()) return Invalid(name, flags.status().message());
      *field = *std::move(flags);
    }
  }
  const std::string* layout = find(proto_internal::kEntryLayoutMarker);
  const bool from_host =
      layout ? *layout == "host_program_shape"
             : !find(proto_internal::kProducerMarker) && proto.has_host_program_shape();
  if (from_host) {
    absl::StatusOr<ProgramShape> shape = ProgramShapeFromProto(proto.host_program_shape());
    if (!shape.ok()) return Invalid("host_program_shape", shape.status().message());
    if (!find(proto_internal::kProducerMarker)) {
      for (Shape& parameter : shape->parameters) proto_internal::DropEmptyScalarLayouts(&parameter);
      proto_internal::DropEmptyScalarLayouts(&shape->result);
    }
    config->entry_computation_layout = *std::move(shape);
  }
  return absl::OkStatus();
}

absl::Status ReadModuleAttributes(const xla::HloModuleProto& proto, HloModule* module) {
  ModuleExtras markers;
  for (const xla::ExtraAttribute& extra : proto.spmdp_extra_attributes()) {
    if (proto_internal::IsMarker(extra.name())) {
      markers[extra.name()] = extra.value();
    } else {
      module->mutable_raw_attributes()->push_back({extra.name(), extra.value()});
    }
  }
  RETURN_IF_ERROR(ReadConfigMarkers(proto, markers, module->mutable_config()));
  auto order = markers.find(std::string(proto_internal::kFrontendAttributesMarker));
  ASSIGN_OR_RETURN(
      FrontendAttributes attrs,
      proto_internal::FrontendAttributesFromProto(
          proto.frontend_attributes(), order == markers.end() ? nullptr : &order->second));
  *module->mutable_frontend_attributes() = std::move(attrs);
  ASSIGN_OR_RETURN(*module->mutable_stack_frame_index(),
                   proto_internal::StackFrameIndexFromProto(proto.stack_frame_index()));
  for (const auto& entry : proto.input_output_alias().entries()) {
    if (entry.kind() != xla::UNDEFINED_ALIAS && entry.kind() != xla::MAY_ALIAS &&
        entry.kind() != xla::MUST_ALIAS) {
      return Invalid("input_output_alias",
                     hlo::StrCat("unknown kind ", static_cast<int>(entry.kind())));
    }
    if (entry.parameter_number() < 0) {
      return Invalid("input_output_alias", "negative parameter number");
    }
    module->mutable_input_output_alias()->push_back(
        {ToInt64Vector(entry.output_shape_index()), entry.parameter_number(),
         ToInt64Vector(entry.parameter_shape_index()), entry.kind() == xla::MUST_ALIAS});
  }
  return absl::OkStatus();
}

bool IsForeign(const xla::HloModuleProto& proto) {
  for (const xla::ExtraAttribute& extra : proto.spmdp_extra_attributes()) {
    if (extra.name() == proto_internal::kProducerMarker) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<xla::HloModuleProto> ModuleToProto(const HloModule& module) {
  xla::HloModuleProto proto;
  RETURN_IF_ERROR(CheckUtf8(module.name(), "module name"));
  proto.set_name(module.name());
  const ProtoIds ids = AssignIds(module);
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    RETURN_IF_ERROR(WriteComputation(*c, ids, proto.add_computations()));
  }
  const HloComputation* entry = module.entry_computation();
  if (entry != nullptr && ids.computations.contains(entry)) {
    proto.set_entry_computation_name(entry->name());
    proto.set_entry_computation_id(ids.computations.at(entry));
  } else {
    proto.set_entry_computation_id(-1);
  }
  if (module.config().entry_computation_layout) {
    *proto.mutable_host_program_shape() =
        ProgramShapeToProto(*module.config().entry_computation_layout);
  } else if (entry != nullptr) {
    *proto.mutable_host_program_shape() = ProgramShapeToProto(entry->ComputeProgramShape());
  }
  RETURN_IF_ERROR(WriteModuleAttributes(module, &proto));
  return proto;
}

absl::StatusOr<std::unique_ptr<HloModule>> ModuleFromProto(const xla::HloModuleProto& proto) {
  const bool foreign = IsForeign(proto);
  std::vector<PendingComputation> comps;
  absl::flat_hash_map<int64_t, int> by_id;
  absl::flat_hash_set<std::string_view> names;
  for (int i = 0; i < proto.computations_size(); ++i) {
    const xla::HloComputationProto& cp = proto.computations(i);
    if (cp.name().empty()) {
      return absl::InvalidArgumentError(hlo::StrCat("computation ", i, " has no name"));
    }
    if (!names.insert(cp.name()).second) {
      return absl::InvalidArgumentError(hlo::StrCat("two computations are named %", cp.name()));
    }
    if (!by_id.emplace(cp.id(), i).second) {
      return absl::InvalidArgumentError(
          hlo::StrCat("computation %", cp.name(), " reuses id ", cp.id()));
    }
    ASSIGN_OR_RETURN(PendingComputation pending, ReadComputation(cp, foreign));
    comps.push_back(std::move(pending));
  }
  std::vector<std::vector<int>> callees(comps.size());
  RETURN_IF_ERROR(LinkCalls(comps, by_id, &callees));
  ASSIGN_OR_RETURN(int entry, FindEntry(proto, by_id));
  // Roots in MakeComputationPostOrder's order: every non-entry computation, then the entry.
  std::vector<int> roots;
  for (int i = 0; i < static_cast<int>(comps.size()); ++i) {
    if (i != entry) roots.push_back(i);
  }
  if (entry >= 0) roots.push_back(entry);
  int cycle_node = -1;
  absl::StatusOr<std::vector<int>> order = DependencyOrder(callees, roots, true, &cycle_node);
  if (!order.ok()) {
    return absl::InvalidArgumentError(hlo::StrCat(
        "computation %", proto.computations(cycle_node).name(), " is part of a call cycle"));
  }
  auto module = std::make_unique<HloModule>(proto.name());
  for (int i : *order) {
    HloComputation* c = module->AddComputation(std::move(comps[i].computation));
    if (i == entry) module->set_entry_computation(c);
  }
  RETURN_IF_ERROR(ReadModuleAttributes(proto, module.get()));
  return module;
}

// ---- With config ---------------------------------------------------------------------------

absl::StatusOr<xla::HloModuleProtoWithConfig> ModuleToProtoWithConfig(const HloModule& module) {
  xla::HloModuleProtoWithConfig proto;
  ASSIGN_OR_RETURN(xla::HloModuleProto hlo, ModuleToProto(module));
  *proto.mutable_hlo_module() = std::move(hlo);
  const HloModuleConfig& config = module.config();
  xla::HloModuleConfigProto* out = proto.mutable_config();
  out->set_num_partitions(config.num_partitions);
  out->set_replica_count(config.replica_count);
  out->set_use_spmd_partitioning(config.use_spmd_partitioning);
  if (config.entry_computation_layout) {
    *out->mutable_entry_computation_layout() =
        ProgramShapeToProto(*config.entry_computation_layout);
  }
  for (bool f : config.allow_spmd_sharding_propagation_to_output) {
    out->add_allow_spmd_sharding_propagation_to_output(f);
  }
  for (bool f : config.allow_spmd_sharding_propagation_to_parameters) {
    out->add_allow_spmd_sharding_propagation_to_parameters(f);
  }
  return proto;
}

absl::StatusOr<std::unique_ptr<HloModule>> ModuleFromProtoWithConfig(
    const xla::HloModuleProtoWithConfig& proto) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ModuleFromProto(proto.hlo_module());
  if (!module.ok() || !proto.has_config()) return module;
  const xla::HloModuleConfigProto& in = proto.config();
  if (in.num_partitions() < 0 || in.replica_count() < 0) {
    return absl::InvalidArgumentError("config: negative num_partitions or replica_count");
  }
  if (in.num_partitions() > kMaxDevices || in.replica_count() > kMaxDevices) {
    return absl::InvalidArgumentError(
        hlo::StrCat("config: num_partitions ", in.num_partitions(), " or replica_count ",
                    in.replica_count(), " is over the limit of ", kMaxDevices, " devices"));
  }
  HloModuleConfig* config = (*module)->mutable_config();
  config->num_partitions = in.num_partitions() == 0 ? 1 : in.num_partitions();
  config->replica_count = in.replica_count() == 0 ? 1 : in.replica_count();
  config->use_spmd_partitioning = in.use_spmd_partitioning();
  config->entry_computation_layout.reset();
  if (in.has_entry_computation_layout()) {
    absl::StatusOr<ProgramShape> layout = ProgramShapeFromProto(in.entry_computation_layout());
    if (!layout.ok()) {
      return absl::InvalidArgumentError(
          hlo::StrCat("config entry_computation_layout: ", layout.status().message()));
    }
    config->entry_computation_layout = *std::move(layout);
  }
  config->allow_spmd_sharding_propagation_to_output.assign(
      in.allow_spmd_sharding_propagation_to_output().begin(),
      in.allow_spmd_sharding_propagation_to_output().end());
  config->allow_spmd_sharding_propagation_to_parameters.assign(
      in.allow_spmd_sharding_propagation_to_parameters().begin(),
      in.allow_spmd_sharding_propagation_to_parameters().end());
  return module;
}

// ---- Bytes ---------------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<HloModule>> ParseModuleProtoBytes(std::string_view bytes) {
  auto invalid = [](absl::string_view why) {
    return absl::InvalidArgumentError(hlo::StrCat("not a valid HloModuleProto: ", why));
  };
  if (bytes.empty()) return invalid("the input is empty");
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return invalid("the input is larger than 2 GiB");
  }
  const int size = static_cast<int>(bytes.size());
  // Each message type is tried; reading one as the other trips protobuf's UTF-8 check on
  // string fields, which it logs on stderr. Our own check (CheckUtf8) reports real problems.
  google::protobuf::LogSilencer silence;
  xla::HloModuleProtoWithConfig with_config;
  xla::HloModuleProto plain;
  const bool with_config_ok = with_config.ParseFromArray(bytes.data(), size);
  const bool plain_ok = plain.ParseFromArray(bytes.data(), size);
  absl::StatusOr<std::unique_ptr<HloModule>> module = invalid("unset");
  if (with_config_ok && with_config.hlo_module().computations_size() > 0) {
    module = ModuleFromProtoWithConfig(with_config);
  } else if (plain_ok && plain.computations_size() > 0) {
    module = ModuleFromProto(plain);
  } else if (with_config_ok && (with_config.has_config() || !plain_ok)) {
    module = ModuleFromProtoWithConfig(with_config);
  } else if (plain_ok) {
    module = ModuleFromProto(plain);
  } else {
    return invalid("the bytes do not parse as HloModuleProtoWithConfig or HloModuleProto");
  }
  if (!module.ok()) return invalid(module.status().message());
  return module;
}

absl::StatusOr<std::string> SerializeModuleOrError(const HloModule& module) {
  RETURN_IF_ERROR(CheckNoElidedConstants(module));
  ASSIGN_OR_RETURN(xla::HloModuleProtoWithConfig proto, ModuleToProtoWithConfig(module));
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (proto.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
        !proto.SerializeToCodedStream(&coded)) {
      return absl::InvalidArgumentError("the module is too large to serialize (over 2 GiB)");
    }
  }
  return bytes;
}

std::string SerializeModule(const HloModule& module) {
  absl::StatusOr<std::string> bytes = SerializeModuleOrError(module);
  return bytes.ok() ? *std::move(bytes) : std::string();
}

}  // namespace hlo

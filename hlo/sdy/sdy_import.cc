#include "hlo/sdy/sdy_import.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "hlo/ir/custom_call_config.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/sdy/sdy_attributes.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo::sdy {
namespace {

constexpr std::string_view kPrefix = "xla.sdy.";
constexpr std::string_view kMeshesAttr = "xla.sdy.meshes";
constexpr std::string_view kShardingAttr = "xla.sdy.sharding";
constexpr std::string_view kRuleAttr = "xla.sdy.sharding_rule";
constexpr std::string_view kInShardingsAttr = "xla.sdy.in_shardings";
constexpr std::string_view kOutShardingsAttr = "xla.sdy.out_shardings";
constexpr std::string_view kManualAxesAttr = "xla.sdy.manual_axes";
constexpr std::string_view kGroupIdAttr = "xla.sdy.sharding_group_id";

bool IsSdy(std::string_view name) { return name.substr(0, kPrefix.size()) == kPrefix; }

const std::string* FindAttr(const FrontendAttributes& attrs, std::string_view key) {
  for (const auto& [k, v] : attrs) {
    if (k == key) return &v;
  }
  return nullptr;
}

void EraseAttr(FrontendAttributes* attrs, std::string_view key) {
  attrs->erase(
      std::remove_if(attrs->begin(), attrs->end(), [&](const auto& kv) { return kv.first == key; }),
      attrs->end());
}

absl::Status At(const HloInstruction* instr, const absl::Status& status) {
  return absl::InvalidArgumentError(StrCat("%", instr->name(), ": ", ToStd(status.message())));
}

class Importer {
 public:
  Importer(HloModule* module, MeshTable meshes) : module_(module), meshes_(std::move(meshes)) {}

  absl::Status Run();

 private:
  absl::Status ImportInstruction(HloInstruction* instr);
  absl::Status CheckAttributes(const HloInstruction* instr);
  absl::Status ApplySharding(HloInstruction* instr, const std::vector<TensorSharding>& values,
                             const std::string& text);
  absl::StatusOr<std::vector<TensorSharding>> ParseValueShardings(const HloInstruction* instr,
                                                                  const std::string& text);
  absl::StatusOr<std::vector<TensorSharding>> ValueShardings(const HloInstruction* instr,
                                                             std::string_view key);
  absl::Status RewriteCustomCall(HloInstruction* instr);
  absl::Status GlobalToLocal(HloInstruction* instr);
  absl::Status LocalToGlobal(HloInstruction* instr);
  absl::Status ManualBoundary(HloInstruction* instr, bool entering);
  absl::Status FuncResultSharding(HloInstruction* instr);
  absl::Status ShardingGroup(HloInstruction* instr);

  // A new custom-call `target` of `operand` with `shape` and `sharding`, named after `origin`.
  HloInstruction* AddCustomCall(HloInstruction* origin, std::string_view target,
                                HloInstruction* operand, Shape shape, HloSharding sharding,
                                std::string_view suffix);
  // Replaces `instr` by the single value or the tuple of `values`, then removes it.
  absl::Status ReplaceWith(HloInstruction* instr, const std::vector<HloInstruction*>& values);

  // The manual axes in effect in each computation that runs inside a shard_map body (the
  // `xla.sdy.manual_computation_body` a call reaches from its GlobalToLocalShape, and what that
  // body calls, nested bodies adding theirs).
  void FindManualBodies();

  HloModule* module_;
  MeshTable meshes_;
  absl::flat_hash_map<const HloComputation*, std::vector<std::string>> manual_axes_;
};

// The manual axes of the shard_map whose body `call` runs: those of the GlobalToLocalShape its
// operands come from (through get-tuple-elements), else of the LocalToGlobalShape its results
// go to.
std::optional<std::vector<std::string>> ManualAxesOfBodyCall(const HloInstruction& call) {
  auto axes_of = [](const HloInstruction* instr) -> std::optional<std::vector<std::string>> {
    while (instr->opcode() == HloOpcode::kGetTupleElement) instr = instr->operand(0);
    if (instr->opcode() != HloOpcode::kCustomCall) return std::nullopt;
    const std::string& target = instr->attrs().custom_call_target;
    if (target != "xla.sdy.GlobalToLocalShape" && target != "xla.sdy.LocalToGlobalShape") {
      return std::nullopt;
    }
    const std::string* text = FindAttr(instr->attrs().frontend_attributes, kManualAxesAttr);
    if (text == nullptr) return std::nullopt;
    absl::StatusOr<std::vector<std::string>> axes = ParseManualAxes(*text);
    if (!axes.ok()) return std::nullopt;
    return *std::move(axes);
  };
  for (const HloInstruction* operand : call.operands()) {
    if (auto axes = axes_of(operand)) return axes;
  }
  for (const HloInstruction* user : call.users()) {
    for (const HloInstruction* reader : user->users()) {
      if (auto axes = axes_of(reader)) return axes;
    }
    if (auto axes = axes_of(user)) return axes;
  }
  return std::nullopt;
}

// The computation's order with each instruction moved just after what it reads, if it came
// earlier (the rewrites append replacements, e.g. a boundary's tuple, after their users); the
// rest keeps its order.
absl::Status OperandsFirst(HloComputation& computation) {
  std::vector<HloInstruction*> order;
  absl::flat_hash_set<const HloInstruction*> placed;
  std::vector<std::pair<HloInstruction*, size_t>> stack;  // Instruction, next input to visit.
  auto inputs = [](const HloInstruction* instr) {
    std::vector<HloInstruction*> in(instr->operands().begin(), instr->operands().end());
    in.insert(in.end(), instr->control_predecessors().begin(), instr->control_predecessors().end());
    return in;
  };
  for (const auto& owned : computation.instructions()) {
    if (placed.contains(owned.get())) continue;
    stack.push_back({owned.get(), 0});
    placed.insert(owned.get());
    while (!stack.empty()) {
      auto& [instr, next] = stack.back();
      const std::vector<HloInstruction*> in = inputs(instr);
      if (next < in.size()) {
        HloInstruction* op = in[next++];
        if (placed.insert(op).second) stack.push_back({op, 0});
        continue;
      }
      order.push_back(instr);
      stack.pop_back();
    }
  }
  return computation.ReorderInstructions(order);
}

void Importer::FindManualBodies() {
  std::vector<HloComputation*> order = module_->MakeComputationPostOrder();
  std::reverse(order.begin(), order.end());  // Callers first.
  for (HloComputation* computation : order) {
    auto outer = manual_axes_.find(computation);
    const std::vector<std::string> inherited =
        outer == manual_axes_.end() ? std::vector<std::string>() : outer->second;
    for (const auto& instr : computation->instructions()) {
      const HloOpcode op = instr->opcode();
      if (op != HloOpcode::kCall && op != HloOpcode::kWhile && op != HloOpcode::kConditional) {
        continue;
      }
      for (HloComputation* callee : instr->called_computations()) {
        std::vector<std::string> axes = inherited;
        if (op == HloOpcode::kCall &&
            callee->name().rfind("xla.sdy.manual_computation_body", 0) == 0) {
          if (std::optional<std::vector<std::string>> own = ManualAxesOfBodyCall(*instr)) {
            axes.insert(axes.end(), own->begin(), own->end());
          }
        }
        if (!axes.empty()) manual_axes_[callee] = std::move(axes);
      }
    }
  }
}

absl::Status Importer::Run() {
  FindManualBodies();
  for (HloComputation* computation : module_->MakeComputationPostOrder()) {
    std::vector<HloInstruction*> instrs;
    for (const auto& instr : computation->instructions()) instrs.push_back(instr.get());
    for (HloInstruction* instr : instrs) RETURN_IF_ERROR(ImportInstruction(instr));
    RETURN_IF_ERROR(OperandsFirst(*computation));
  }
  return absl::OkStatus();
}

absl::Status Importer::ImportInstruction(HloInstruction* instr) {
  RETURN_IF_ERROR(CheckAttributes(instr));
  FrontendAttributes* attrs = &instr->mutable_attrs()->frontend_attributes;
  if (const std::string* text = FindAttr(*attrs, kRuleAttr)) {
    absl::Status status = ParseShardingRule(*text).status();
    if (status.ok()) status = ShardingRuleOf(*instr).status();
    if (!status.ok()) return At(instr, status);
  }
  if (instr->opcode() == HloOpcode::kCustomCall && IsSdy(instr->attrs().custom_call_target)) {
    return RewriteCustomCall(instr);
  }
  if (const std::string* sharding = FindAttr(*attrs, kShardingAttr)) {
    const std::string text = *sharding;
    EraseAttr(attrs, kShardingAttr);
    ASSIGN_OR_RETURN(std::vector<TensorSharding> values, ParseValueShardings(instr, text));
    RETURN_IF_ERROR(ApplySharding(instr, values, text));
  }
  return absl::OkStatus();
}

// Every `xla.sdy.*` attribute must be one this import reads, on an instruction that may carry it.
absl::Status Importer::CheckAttributes(const HloInstruction* instr) {
  const std::string& target = instr->attrs().custom_call_target;
  for (const auto& [key, value] : instr->attrs().frontend_attributes) {
    if (!IsSdy(key)) continue;
    const bool manual =
        target == "xla.sdy.GlobalToLocalShape" || target == "xla.sdy.LocalToGlobalShape";
    // XLA copies a custom-call's frontend attributes, its rule included, onto the
    // get-tuple-elements of its results: a rule is read on custom-calls and checked anywhere.
    const bool known = key == kShardingAttr || key == kRuleAttr ||
                       (key == kManualAxesAttr && manual) ||
                       (key == kInShardingsAttr && target == "xla.sdy.GlobalToLocalShape") ||
                       (key == kOutShardingsAttr && target == "xla.sdy.LocalToGlobalShape") ||
                       (key == kGroupIdAttr && target == "xla.sdy.ShardingGroup");
    if (!known) {
      return absl::InvalidArgumentError(
          StrCat("%", instr->name(), ": unsupported Shardy attribute '", key,
                 "' on this instruction (no such xla.sdy.* attribute is read here, and none is "
                 "ignored)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorSharding>> Importer::ValueShardings(const HloInstruction* instr,
                                                                     std::string_view key) {
  const std::string* text = FindAttr(instr->attrs().frontend_attributes, key);
  if (text == nullptr) {
    return absl::InvalidArgumentError(StrCat("%", instr->name(), ": missing ", key));
  }
  return ParseValueShardings(instr, *text);
}

// One sharding, or one per value (`#sdy.sharding_per_value`).
absl::StatusOr<std::vector<TensorSharding>> Importer::ParseValueShardings(
    const HloInstruction* instr, const std::string& text) {
  if (text.rfind("#sdy.sharding_per_value", 0) == 0) {
    absl::StatusOr<std::vector<TensorSharding>> values = ParseShardingPerValue(text, meshes_);
    if (!values.ok()) return At(instr, values.status());
    return values;
  }
  absl::StatusOr<TensorSharding> value = ParseTensorSharding(text, meshes_);
  if (!value.ok()) return At(instr, value.status());
  return std::vector<TensorSharding>{*std::move(value)};
}

// Converts `values` (read from `text`: one sharding, or one per tuple element when the shape is
// a tuple) and sets or checks the instruction's sharding.
// Whether `instr`'s only live user is its computation's root, a tuple of arrays that is the
// entry's and holds every element `instr` gives it in `instr`'s own sharding.
bool RootHoldsAlike(const HloInstruction& instr) {
  const HloComputation* entry = instr.parent();
  const HloInstruction* root = entry->root_instruction();
  if (entry != entry->parent()->entry_computation() || root->opcode() != HloOpcode::kTuple ||
      !root->has_sharding() || !root->sharding().IsTuple() || instr.users().empty() ||
      !instr.has_sharding()) {
    return false;
  }
  const std::vector<HloSharding>& leaves = root->sharding().tuple_elements();
  if (leaves.size() != static_cast<size_t>(root->operand_count())) return false;
  for (const HloInstruction* user : instr.users()) {
    if (user != root && !user->users().empty()) return false;  // Unused copies JAX leaves pass.
  }
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    if (!root->operand(i)->shape().IsArray()) return false;
    if (root->operand(i) == &instr &&
        leaves[i].WithoutMetadata() != instr.sharding().WithoutMetadata()) {
      return false;
    }
  }
  return true;
}

absl::Status Importer::ApplySharding(HloInstruction* instr,
                                     const std::vector<TensorSharding>& values,
                                     const std::string& text) {
  const Shape& shape = instr->shape();
  const bool tuple = shape.IsTuple();
  const int64_t count = tuple ? static_cast<int64_t>(shape.tuple_shapes().size()) : 1;
  if (static_cast<int64_t>(values.size()) != count) {
    return absl::InvalidArgumentError(StrCat("%", instr->name(), ": xla.sdy.sharding gives ",
                                             values.size(), " shardings for ", count, " values"));
  }
  // Inside a shard_map body the sharding names only the free axes; the manual ones are a
  // manual subgroup. JAX writes the HLO sharding there without them (e.g. {replicated} for
  // open dims), which the manual form replaces.
  const auto manual = manual_axes_.find(instr->parent());
  const bool in_body = manual != manual_axes_.end();
  std::vector<HloSharding> leaves, plain_leaves;
  for (int64_t i = 0; i < count; ++i) {
    const Shape& value = tuple ? shape.tuple_shapes()[i] : shape;
    if (value.IsTuple()) {
      return absl::InvalidArgumentError(
          StrCat("%", instr->name(), ": xla.sdy.sharding of a nested tuple value"));
    }
    absl::StatusOr<HloSharding> plain = ToHloSharding(values[i], value.rank());
    if (!plain.ok()) return At(instr, plain.status());
    absl::StatusOr<HloSharding> leaf =
        in_body ? ToManualHloSharding(values[i], value.rank(), manual->second) : *plain;
    if (!leaf.ok()) return At(instr, leaf.status());
    leaves.push_back(*std::move(leaf));
    plain_leaves.push_back(*std::move(plain));
  }
  absl::StatusOr<HloSharding> sharding =
      tuple ? HloSharding::Tuple(shape, std::move(leaves)) : std::move(leaves[0]);
  if (!sharding.ok()) return At(instr, sharding.status());
  absl::StatusOr<HloSharding> plain =
      tuple ? HloSharding::Tuple(shape, std::move(plain_leaves)) : std::move(plain_leaves[0]);
  if (!plain.ok()) return At(instr, plain.status());
  if (instr->has_sharding() && !(instr->sharding() == *sharding) &&
      !(in_body && instr->sharding() == *plain)) {
    return absl::InvalidArgumentError(
        StrCat("%", instr->name(), ": sharding=", instr->sharding().ToStringWithoutMetadata(),
               " and xla.sdy.sharding=", text, " (that is ", sharding->ToStringWithoutMetadata(),
               ") disagree"));
  }
  instr->set_sharding(*std::move(sharding));
  const bool sharding_call =
      instr->opcode() == HloOpcode::kCustomCall && instr->attrs().custom_call_target == "Sharding";
  std::string& config = instr->mutable_attrs()->backend_config;
  if (sharding_call && !tuple && config.empty())
    config = UnspecifiedDimsConfig(values[0].open_dims);
  return absl::OkStatus();
}

absl::Status Importer::RewriteCustomCall(HloInstruction* instr) {
  using Rewrite = absl::Status (Importer::*)(HloInstruction*);
  static const std::pair<std::string_view, Rewrite> kRewrites[] = {
      {"xla.sdy.GlobalToLocalShape", &Importer::GlobalToLocal},
      {"xla.sdy.LocalToGlobalShape", &Importer::LocalToGlobal},
      {"xla.sdy.FuncResultSharding", &Importer::FuncResultSharding},
      {"xla.sdy.ShardingGroup", &Importer::ShardingGroup},
  };
  const std::string& target = instr->attrs().custom_call_target;
  for (const auto& [name, rewrite] : kRewrites) {
    if (target == name) return (this->*rewrite)(instr);
  }
  return absl::InvalidArgumentError(
      StrCat("%", instr->name(), ": unsupported Shardy custom-call '", target,
             "' (known: GlobalToLocalShape, "
             "LocalToGlobalShape, FuncResultSharding, ShardingGroup)"));
}

HloInstruction* Importer::AddCustomCall(HloInstruction* origin, std::string_view target,
                                        HloInstruction* operand, Shape shape, HloSharding sharding,
                                        std::string_view suffix) {
  std::unique_ptr<HloInstruction> call =
      HloInstruction::Create(HloOpcode::kCustomCall, std::move(shape), {operand});
  call->mutable_attrs()->custom_call_target = std::string(target);
  call->mutable_attrs()->metadata = origin->attrs().metadata;
  call->set_sharding(std::move(sharding));
  call->set_name(StrCat(origin->name(), ".", suffix));
  return origin->parent()->AddInstruction(std::move(call));
}

absl::Status Importer::ReplaceWith(HloInstruction* instr,
                                   const std::vector<HloInstruction*>& values) {
  HloInstruction* replacement =
      values.size() == 1 && !instr->shape().IsTuple() ? values[0] : nullptr;
  if (replacement == nullptr) {
    std::unique_ptr<HloInstruction> tuple =
        HloInstruction::Create(HloOpcode::kTuple, instr->shape(), values);
    tuple->set_name(StrCat(instr->name(), ".tuple"));
    replacement = instr->parent()->AddInstruction(std::move(tuple));
  }
  instr->ReplaceAllUsesWith(replacement);
  HloComputation* computation = instr->parent();
  if (computation->root_instruction() == instr) computation->set_root_instruction(replacement);
  instr->DetachFromOperands();
  return computation->RemoveInstruction(instr);
}

// Shapes of the values of a manual-computation boundary: the tuple's elements, or the array.
std::vector<Shape> ValueShapes(const Shape& shape) {
  return shape.IsTuple() ? shape.tuple_shapes() : std::vector<Shape>{shape};
}

absl::Status Importer::GlobalToLocal(HloInstruction* instr) { return ManualBoundary(instr, true); }
absl::Status Importer::LocalToGlobal(HloInstruction* instr) { return ManualBoundary(instr, false); }

// A shard_map boundary: per value a `Sharding` custom-call holding the value where it is (global
// or manual), then the move into (`entering`) or out of the manual region.
absl::Status Importer::ManualBoundary(HloInstruction* instr, bool entering) {
  ASSIGN_OR_RETURN(std::vector<TensorSharding> shardings,
                   ValueShardings(instr, entering ? kInShardingsAttr : kOutShardingsAttr));
  const std::string* axes_text = FindAttr(instr->attrs().frontend_attributes, kManualAxesAttr);
  absl::StatusOr<std::vector<std::string>> manual =
      ParseManualAxes(axes_text != nullptr ? *axes_text : std::string("#sdy<manual_axes{}>"));
  if (!manual.ok()) return At(instr, manual.status());
  // In a nested shard_map the global side is already manual along the enclosing bodies' axes,
  // and the local side along those and its own (as JAX's GSPMD export writes them).
  const auto enclosing = manual_axes_.find(instr->parent());
  const std::vector<std::string> outer =
      enclosing == manual_axes_.end() ? std::vector<std::string>() : enclosing->second;
  std::vector<std::string> all = outer;
  for (const std::string& axis : *manual) {
    if (std::find(all.begin(), all.end(), axis) == all.end()) all.push_back(axis);
  }
  const std::vector<Shape> results = ValueShapes(instr->shape());
  if (shardings.size() != static_cast<size_t>(instr->operand_count()) ||
      results.size() != shardings.size()) {
    return absl::InvalidArgumentError(StrCat("%", instr->name(), ": ", shardings.size(),
                                             " shardings for ", instr->operand_count(),
                                             " operands and ", results.size(), " results"));
  }
  std::vector<HloInstruction*> values;
  for (size_t i = 0; i < shardings.size(); ++i) {
    HloInstruction* operand = instr->operand(i);
    const Shape& global_shape = entering ? operand->shape() : results[i];
    const Shape& local_shape = entering ? results[i] : operand->shape();
    absl::StatusOr<HloSharding> global =
        outer.empty() ? ToHloSharding(shardings[i], global_shape.rank())
                      : ToManualHloSharding(shardings[i], global_shape.rank(), outer);
    absl::StatusOr<HloSharding> local = ToManualHloSharding(shardings[i], local_shape.rank(), all);
    if (!global.ok()) return At(instr, global.status());
    if (!local.ok()) return At(instr, local.status());
    const std::string from = entering ? "global" : "local", to = entering ? "local" : "global";
    HloInstruction* held = AddCustomCall(instr, "Sharding", operand, operand->shape(),
                                         entering ? *global : *local, StrCat(from, i));
    HloInstruction* moved =
        AddCustomCall(instr, entering ? "SPMDFullToShardShape" : "SPMDShardToFullShape", held,
                      results[i], entering ? *local : *global, StrCat(to, i));
    // Open dims stay open on both sides, as JAX's GSPMD export writes them: the free axes may
    // split them inside the region too (hlo/sharding/manual_conversion.h).
    for (HloInstruction* call : {held, moved}) {
      call->mutable_attrs()->backend_config = UnspecifiedDimsConfig(shardings[i].open_dims);
    }
    values.push_back(moved);
  }
  return ReplaceWith(instr, values);
}

// The function's result sharding, as a held `Sharding` annotation on the value returned.
absl::Status Importer::FuncResultSharding(HloInstruction* instr) {
  if (instr->operand_count() != 1 || instr->shape().IsTuple()) {
    return absl::InvalidArgumentError(
        StrCat("%", instr->name(), ": xla.sdy.FuncResultSharding takes one array operand"));
  }
  ASSIGN_OR_RETURN(std::vector<TensorSharding> values, ValueShardings(instr, kShardingAttr));
  if (values.size() != 1) {
    return absl::InvalidArgumentError(
        StrCat("%", instr->name(), ": xla.sdy.FuncResultSharding needs one sharding"));
  }
  const TensorSharding& value = values[0];
  const bool constrains = value.mesh->maximal_device.has_value() ||
                          static_cast<int64_t>(value.open_dims.size()) < instr->shape().rank() ||
                          std::any_of(value.axes.dims.begin(), value.axes.dims.end(),
                                      [](const auto& dim) { return !dim.empty(); }) ||
                          !value.axes.unreduced.empty();
  if (!constrains) return ReplaceWith(instr, {instr->operand(0)});
  instr->mutable_attrs()->custom_call_target = "Sharding";
  instr->mutable_attrs()->custom_call_has_side_effect = false;
  const std::string text = *FindAttr(instr->attrs().frontend_attributes, kShardingAttr);
  EraseAttr(&instr->mutable_attrs()->frontend_attributes, kShardingAttr);
  RETURN_IF_ERROR(ApplySharding(instr, values, text));
  // Returned by the entry's root tuple, whose `sharding=` holds it alike (JAX writes both): the
  // root holds the value, as in a GSPMD-mode export, so it is computed in that sharding rather
  // than computed as propagation likes and constrained after.
  if (value.open_dims.empty() && RootHoldsAlike(*instr)) {
    return ReplaceWith(instr, {instr->operand(0)});
  }
  return absl::OkStatus();
}

// `shard_as N` on the operand (its sharding, if any, kept); the marker itself is removed.
absl::Status Importer::ShardingGroup(HloInstruction* instr) {
  const std::string* id_text = FindAttr(instr->attrs().frontend_attributes, kGroupIdAttr);
  int64_t id = -1;
  if (id_text == nullptr || std::sscanf(id_text->c_str(), "%ld", &id) != 1 || id < 0 ||
      instr->operand_count() != 1 || !instr->users().empty()) {
    return absl::InvalidArgumentError(
        StrCat("%", instr->name(),
               ": xla.sdy.ShardingGroup needs one operand, no users and a "
               "non-negative xla.sdy.sharding_group_id"));
  }
  HloInstruction* operand = instr->operand(0);
  HloSharding sharding = operand->has_sharding() ? operand->sharding() : HloSharding::Unknown();
  if (sharding.IsTuple()) {
    return absl::InvalidArgumentError(
        StrCat("%", instr->name(), ": a sharding group of a tuple value"));
  }
  operand->set_sharding(sharding.WithShardGroup(ShardGroup::As(id)));
  HloComputation* computation = instr->parent();
  if (computation->root_instruction() == instr) {
    return absl::InvalidArgumentError(
        StrCat("%", instr->name(), ": xla.sdy.ShardingGroup cannot be the root"));
  }
  instr->DetachFromOperands();
  return computation->RemoveInstruction(instr);
}

bool HasSdy(const HloModule& module) {
  for (const auto& [key, value] : module.frontend_attributes()) {
    if (IsSdy(key)) return true;
  }
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (IsSdy(instr->attrs().custom_call_target)) return true;
      for (const auto& [key, value] : instr->attrs().frontend_attributes) {
        if (IsSdy(key)) return true;
      }
    }
  }
  return false;
}

// The module's meshes; other module-level `xla.sdy.*` attributes are errors.
absl::StatusOr<MeshTable> ModuleMeshes(HloModule* module) {
  MeshTable meshes;
  for (const auto& [key, value] : module->frontend_attributes()) {
    if (!IsSdy(key)) continue;
    if (key != kMeshesAttr) {
      return absl::InvalidArgumentError(
          StrCat("unsupported Shardy module attribute '", key, "' (only xla.sdy.meshes is read)"));
    }
    ASSIGN_OR_RETURN(meshes, ParseMeshes(value));
  }
  EraseAttr(module->mutable_frontend_attributes(), kMeshesAttr);
  return meshes;
}

}  // namespace

absl::Status ImportShardy(HloModule* module) {
  if (!HasSdy(*module)) return absl::OkStatus();
  ASSIGN_OR_RETURN(MeshTable meshes, ModuleMeshes(module));
  int64_t devices = 1;
  for (const auto& [name, mesh] : meshes) devices = std::max(devices, mesh.num_devices());
  if (module->config().num_partitions == 1 && devices > 1) {
    module->mutable_config()->num_partitions = devices;
  }
  return Importer(module, std::move(meshes)).Run();
}

}  // namespace hlo::sdy

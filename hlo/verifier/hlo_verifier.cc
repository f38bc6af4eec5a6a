// The HLO verifier.
//
// Scope: what a transformation can break. Invariants that hold by construction (valid tile
// assignments, distinct devices inside one sharding, use lists in step with operand lists) are
// the factories' business and are not re-checked here.
//
//  Module
//   * the entry computation is set and belongs to the module;
//   * computation names are unique, and each computation's parent is the module;
//   * entry_computation_layout, when given, has the entry's parameter count and parameter and
//     result shapes (layouts ignored).
//  Computation
//   * it has a root instruction, which belongs to it;
//   * parameters are numbered 0..n-1 without gaps or duplicates, and each is registered under
//     its number;
//   * operands and control predecessors belong to the same computation, and the graph of
//     operand + control edges has no cycle.
//  Instruction
//   * its name is non-empty and unique within the module;
//   * its declared shape is well formed (valid element types, no negative dimension);
//   * every called computation is non-null and belongs to the module;
//   * operand counts, operand shapes and called-computation signatures agree with
//     InferShape, and the inferred shape matches the declared one (Shape::Compatible, layouts
//     ignored). Opcodes without inference are trusted, except fusion, whose fused computation
//     must take one parameter per operand (compatible shapes) and return the fusion's shape;
//   * a sharding fits the shape and uses devices below num_partitions (HloSharding::Validate).
//
// The checks are independent: all findings are collected rather than stopping at the first.
// An instruction with a structural problem (foreign operand or callee) skips shape inference to
// avoid follow-on noise.
#include "hlo/verifier/hlo_verifier.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/ir/shape_inference.h"

namespace hlo {
namespace {

std::string ShapeStr(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }

// Arrays above 2^56 elements are refused: their byte sizes would overflow int64 arithmetic.
constexpr int kMaxElementsLog2 = 56;
constexpr int64_t kMaxElements = int64_t{1} << kMaxElementsLog2;
// Device ids at or above this are refused (a sharding naming device 2^31 would otherwise make
// every per-device table that large).
constexpr int64_t kMaxDevices = int64_t{1} << 16;

std::string OpStr(const HloInstruction& instr) {
  return std::string(HloOpcodeString(instr.opcode()));
}

// A well-formed array or token leaf: arrays have a valid element type and non-negative
// dimensions. Returns the problem, or an empty string.
std::string LeafProblem(const Shape& shape) {
  if (shape.IsToken() || shape.IsOpaque()) return "";
  if (!shape.IsArray()) return "has no valid element type";
  int64_t elements = 1;
  for (int64_t d : shape.dimensions()) {
    if (d < 0) return absl::StrCat("has negative dimension size ", d);
    if (d != 0 && elements > kMaxElements / d) {
      return absl::StrCat("has more than 2^", kMaxElementsLog2,
                          " elements (its element count does not fit in memory sizes)");
    }
    elements *= d;
  }
  return "";
}

// A well-formed shape: every leaf is. Returns the first leaf's problem, or an empty string.
std::string ShapeProblem(const Shape& shape) {
  for (const Shape* leaf : shape.leaves()) {
    std::string problem = LeafProblem(*leaf);
    if (!problem.empty()) return problem;
  }
  return "";
}

// The largest device id a sharding names (-1 when none).
int64_t MaxDevice(const HloSharding& sharding) {
  if (sharding.IsTuple()) {
    int64_t max = -1;
    for (const HloSharding& leaf : sharding.tuple_elements()) max = std::max(max, MaxDevice(leaf));
    return max;
  }
  if (sharding.kind() == HloSharding::Kind::kMaximal) return sharding.maximal_device();
  if (sharding.IsTiled()) return sharding.tile_assignment().MaxDevice();
  return -1;
}

class Verifier {
 public:
  explicit Verifier(const HloModule& module) : module_(module) {}

  std::vector<VerifierError> Run() {
    for (const auto& c : module_.computations()) computations_.insert(c.get());
    CheckModule();
    for (const auto& c : module_.computations()) {
      if (c != nullptr) CheckComputation(*c);
    }
    return std::move(errors_);
  }

 private:
  void ModuleError(std::string text) {
    errors_.push_back({"", "", absl::StrCat("module ", module_.name(), ": ", text)});
  }
  void ComputationError(const HloComputation& c, std::string text) {
    errors_.push_back({"", c.name(), absl::StrCat("computation %", c.name(), ": ", text)});
  }
  void InstructionError(const HloComputation& c, const HloInstruction& instr,
                        absl::string_view text) {
    errors_.push_back(
        {instr.name(), c.name(), absl::StrCat("instruction %", instr.name(), ": ", text)});
  }

  void CheckModule();
  void CheckCallGraph();
  void CheckEntryLayout(const HloComputation& entry);
  void CheckComputation(const HloComputation& c);
  void CheckParameters(const HloComputation& c);
  void CheckCycles(const HloComputation& c);
  void CheckInstruction(const HloComputation& c, const HloInstruction& instr,
                        const absl::flat_hash_set<const HloInstruction*>& members);
  bool CheckEdges(const HloComputation& c, const HloInstruction& instr,
                  const absl::flat_hash_set<const HloInstruction*>& members);
  bool CheckCallees(const HloComputation& c, const HloInstruction& instr);
  void CheckShape(const HloComputation& c, const HloInstruction& instr);
  void CheckFusion(const HloComputation& c, const HloInstruction& instr);
  void CheckRaggedDot(const HloComputation& c, const HloInstruction& instr);
  void CheckAsyncResult(const HloComputation& c, const HloInstruction& instr);
  void CheckSharding(const HloComputation& c, const HloInstruction& instr);

  const HloModule& module_;
  absl::flat_hash_set<const HloComputation*> computations_;
  // Instruction name -> computation that first used it.
  absl::flat_hash_map<std::string, std::string> instruction_names_;
  std::vector<VerifierError> errors_;
};

void Verifier::CheckModule() {
  const HloComputation* entry = module_.entry_computation();
  if (entry == nullptr) {
    ModuleError("entry computation is not set");
  } else if (!computations_.contains(entry)) {
    ModuleError(absl::StrCat("entry computation %", entry->name(), " is not in the module"));
  } else {
    CheckEntryLayout(*entry);
  }
  absl::flat_hash_set<std::string> names;
  for (const auto& c : module_.computations()) {
    if (c == nullptr) {
      ModuleError("holds a null computation");
      continue;
    }
    if (!names.insert(c->name()).second) ComputationError(*c, "name is not unique");
    if (c->parent() != &module_) ComputationError(*c, "parent is not this module");
  }
  CheckCallGraph();
}

// HLO computations may not call themselves, directly or through others (every pass and the
// executor walk the call graph recursively).
void Verifier::CheckCallGraph() {
  enum class Mark { kNone, kActive, kDone };
  absl::flat_hash_map<const HloComputation*, Mark> mark;
  std::vector<const HloComputation*> path;
  std::function<bool(const HloComputation*)> visit = [&](const HloComputation* c) {
    Mark& m = mark[c];
    if (m == Mark::kDone) return true;
    if (m == Mark::kActive) {
      std::string cycle;
      bool in_cycle = false;
      for (const HloComputation* p : path) {
        in_cycle = in_cycle || p == c;
        if (in_cycle) absl::StrAppend(&cycle, "%", p->name(), " -> ");
      }
      ComputationError(*c, absl::StrCat("calls itself (", cycle, "%", c->name(),
                                        "); HLO call graphs must not be recursive"));
      return false;
    }
    m = Mark::kActive;
    path.push_back(c);
    for (const auto& instr : c->instructions()) {
      for (const HloComputation* callee : instr->called_computations()) {
        if (callee == nullptr || !computations_.contains(callee)) continue;
        if (!visit(callee)) return false;
      }
    }
    path.pop_back();
    mark[c] = Mark::kDone;
    return true;
  };
  for (const auto& c : module_.computations()) {
    if (c != nullptr && !visit(c.get())) return;
  }
}

void Verifier::CheckEntryLayout(const HloComputation& entry) {
  const std::optional<ProgramShape>& layout = module_.config().entry_computation_layout;
  if (!layout.has_value()) return;
  const ProgramShape actual = entry.ComputeProgramShape();
  if (layout->parameters.size() != actual.parameters.size()) {
    ModuleError(absl::StrCat("entry_computation_layout has ", layout->parameters.size(),
                             " parameters but entry computation %", entry.name(), " has ",
                             actual.parameters.size()));
    return;
  }
  for (size_t i = 0; i < actual.parameters.size(); ++i) {
    if (!layout->parameters[i].Compatible(actual.parameters[i])) {
      ModuleError(absl::StrCat("entry_computation_layout parameter ", i, " is ",
                               ShapeStr(layout->parameters[i]), " but entry parameter ", i, " is ",
                               ShapeStr(actual.parameters[i])));
    }
  }
  if (entry.root_instruction() != nullptr && !layout->result.Compatible(actual.result)) {
    ModuleError(absl::StrCat("entry_computation_layout result is ", ShapeStr(layout->result),
                             " but the entry root is ", ShapeStr(actual.result)));
  }
}

void Verifier::CheckComputation(const HloComputation& c) {
  absl::flat_hash_set<const HloInstruction*> members;
  for (const auto& instr : c.instructions()) members.insert(instr.get());
  const HloInstruction* root = c.root_instruction();
  if (root == nullptr) {
    ComputationError(c, "has no root instruction");
  } else if (!members.contains(root)) {
    ComputationError(c, absl::StrCat("root %", root->name(), " is not in the computation"));
  }
  CheckParameters(c);
  for (const auto& instr : c.instructions()) CheckInstruction(c, *instr, members);
  CheckCycles(c);
}

void Verifier::CheckParameters(const HloComputation& c) {
  std::vector<const HloInstruction*> params;
  for (const auto& instr : c.instructions()) {
    if (instr->opcode() == HloOpcode::kParameter) params.push_back(instr.get());
  }
  const int64_t n = static_cast<int64_t>(params.size());
  absl::flat_hash_map<int64_t, const HloInstruction*> by_number;
  for (const HloInstruction* p : params) {
    const int64_t number = p->parameter_number();
    if (number < 0 || number >= n) {
      InstructionError(c, *p,
                       absl::StrCat("parameter number ", number, " is out of range: the ", n,
                                    " parameters must be numbered 0..", n - 1));
      continue;
    }
    auto [it, inserted] = by_number.emplace(number, p);
    if (!inserted) {
      InstructionError(
          c, *p,
          absl::StrCat("parameter number ", number, " is also used by %", it->second->name()));
      continue;
    }
    if (number >= c.num_parameters() || c.parameter_instruction(number) != p) {
      InstructionError(c, *p,
                       absl::StrCat("is not registered as parameter ", number, " of %", c.name()));
    }
  }
}

void Verifier::CheckCycles(const HloComputation& c) {
  // Iterative DFS over operand and control edges inside `c`; reaching a node that is still on
  // the stack (grey) closes a cycle. Edges leaving the computation are reported by CheckEdges
  // and not followed.
  enum class Color { kWhite, kGrey, kBlack };
  absl::flat_hash_map<const HloInstruction*, Color> color;
  for (const auto& instr : c.instructions()) color[instr.get()] = Color::kWhite;
  auto edge_count = [](const HloInstruction* n) {
    return n->operands().size() + n->control_predecessors().size();
  };
  auto edge = [](const HloInstruction* n, size_t k) -> const HloInstruction* {
    const size_t num_operands = n->operands().size();
    return k < num_operands ? n->operands()[k] : n->control_predecessors()[k - num_operands];
  };
  for (const auto& start : c.instructions()) {
    if (color[start.get()] != Color::kWhite) continue;
    std::vector<std::pair<const HloInstruction*, size_t>> stack = {{start.get(), 0}};
    color[start.get()] = Color::kGrey;
    while (!stack.empty()) {
      const HloInstruction* node = stack.back().first;
      const size_t next = stack.back().second++;
      if (next == edge_count(node)) {
        color[node] = Color::kBlack;
        stack.pop_back();
        continue;
      }
      const HloInstruction* dep = edge(node, next);
      auto it = color.find(dep);
      if (it == color.end()) continue;  // Not in this computation.
      if (it->second == Color::kGrey) {
        InstructionError(c, *node, absl::StrCat("is part of a cycle through %", dep->name()));
      } else if (it->second == Color::kWhite) {
        it->second = Color::kGrey;
        stack.push_back({dep, 0});
      }
    }
  }
}

void Verifier::CheckInstruction(const HloComputation& c, const HloInstruction& instr,
                                const absl::flat_hash_set<const HloInstruction*>& members) {
  if (instr.name().empty()) {
    ComputationError(c, absl::StrCat("holds an unnamed ", OpStr(instr), " instruction"));
  } else {
    auto [it, inserted] = instruction_names_.emplace(instr.name(), c.name());
    if (!inserted) {
      InstructionError(
          c, instr,
          absl::StrCat("name is not unique (also used in computation %", it->second, ")"));
    }
  }
  if (instr.parent() != &c) {
    InstructionError(c, instr, absl::StrCat("parent is not computation %", c.name()));
  }
  const std::string problem = ShapeProblem(instr.shape());
  if (!problem.empty()) {
    InstructionError(c, instr, absl::StrCat("shape ", ShapeStr(instr.shape()), " ", problem));
  }
  const bool edges_ok = CheckEdges(c, instr, members);
  const bool callees_ok = CheckCallees(c, instr);
  if (edges_ok && callees_ok && problem.empty()) {
    CheckShape(c, instr);
    if (instr.opcode() == HloOpcode::kFusion) CheckFusion(c, instr);
    if (instr.opcode() == HloOpcode::kRaggedDot) CheckRaggedDot(c, instr);
    if (instr.opcode() == HloOpcode::kAsyncStart || instr.opcode() == HloOpcode::kAsyncDone) {
      CheckAsyncResult(c, instr);
    }
    if (instr.opcode() == HloOpcode::kCustomCall &&
        instr.attrs().custom_call_target == "Sharding" && instr.operand_count() == 1 &&
        !instr.operand(0)->shape().Compatible(instr.shape())) {
      InstructionError(c, instr,
                       absl::StrCat("custom-call \"Sharding\" returns ", ShapeStr(instr.shape()),
                                    " but its operand is ", ShapeStr(instr.operand(0)->shape()),
                                    "; a sharding annotation keeps its operand's shape"));
    }
  }
  if (instr.has_sharding() && problem.empty()) CheckSharding(c, instr);
}

// An async pair carries the wrapped computation's result as element 1 of the start's tuple;
// the start must hold what its computation returns, and the done return that element.
void Verifier::CheckAsyncResult(const HloComputation& c, const HloInstruction& instr) {
  const HloInstruction& start =
      instr.opcode() == HloOpcode::kAsyncStart ? instr : *instr.operand(0);
  if (start.opcode() != HloOpcode::kAsyncStart && start.opcode() != HloOpcode::kAsyncUpdate) {
    return;
  }
  if (!start.shape().IsTuple() || start.shape().tuple_shapes().size() < 2) return;
  const hlo::Shape& result = start.shape().tuple_shapes(1);
  if (instr.opcode() == HloOpcode::kAsyncDone) {
    if (!instr.shape().Compatible(result)) {
      InstructionError(c, instr,
                       absl::StrCat("async-done returns ", ShapeStr(instr.shape()),
                                    " but its async-start holds the result ", ShapeStr(result)));
    }
    return;
  }
  // Only a wrapped call (`async-start ..., calls=`, `call-start`) returns its computation's
  // root; a sugared collective's computation is its reducer.
  const std::optional<HloOpcode>& wrapped = start.attrs().async_wrapped_opcode;
  const hlo::HloComputation* callee =
      start.called_computations().empty() || (wrapped && *wrapped != HloOpcode::kCall)
          ? nullptr
          : start.called_computations()[0];
  if (callee != nullptr && callee->root_instruction() != nullptr &&
      !callee->root_instruction()->shape().Compatible(result)) {
    InstructionError(
        c, instr,
        absl::StrCat("async-start holds the result ", ShapeStr(result), " but %", callee->name(),
                     " returns ", ShapeStr(callee->root_instruction()->shape())));
  }
}

bool Verifier::CheckEdges(const HloComputation& c, const HloInstruction& instr,
                          const absl::flat_hash_set<const HloInstruction*>& members) {
  bool ok = true;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    const HloInstruction* operand = instr.operand(i);
    if (operand == nullptr || !members.contains(operand)) {
      InstructionError(c, instr,
                       absl::StrCat("operand ", i, operand ? " %" + operand->name() : " (null)",
                                    " is not in computation %", c.name()));
      ok = false;
    }
  }
  for (const HloInstruction* pred : instr.control_predecessors()) {
    if (pred == nullptr || !members.contains(pred)) {
      InstructionError(c, instr,
                       absl::StrCat("control predecessor ", pred ? "%" + pred->name() : "(null)",
                                    " is not in computation %", c.name()));
      ok = false;
    }
  }
  return ok;
}

bool Verifier::CheckCallees(const HloComputation& c, const HloInstruction& instr) {
  bool ok = true;
  const auto& called = instr.called_computations();
  for (size_t i = 0; i < called.size(); ++i) {
    if (called[i] == nullptr) {
      InstructionError(c, instr, absl::StrCat("called computation ", i, " is null"));
      ok = false;
    } else if (!computations_.contains(called[i])) {
      InstructionError(
          c, instr,
          absl::StrCat("called computation %", called[i]->name(), " is not in the module"));
      ok = false;
    }
  }
  return ok;
}

void Verifier::CheckShape(const HloComputation& c, const HloInstruction& instr) {
  absl::StatusOr<Shape> inferred = InferShape(instr);
  if (absl::IsUnimplemented(inferred.status())) return;
  if (!inferred.ok()) {
    InstructionError(c, instr, inferred.status().message());
    return;
  }
  if (!inferred->Compatible(instr.shape())) {
    InstructionError(c, instr,
                     absl::StrCat("inferred shape ", ShapeStr(*inferred),
                                  " does not match declared ", ShapeStr(instr.shape())));
  }
}

void Verifier::CheckFusion(const HloComputation& c, const HloInstruction& instr) {
  if (instr.called_computations().size() != 1) {
    InstructionError(c, instr,
                     absl::StrCat("fusion must call exactly one computation, calls ",
                                  instr.called_computations().size()));
    return;
  }
  const HloComputation& fused = *instr.called_computations()[0];
  const ProgramShape signature = fused.ComputeProgramShape();
  if (static_cast<int64_t>(signature.parameters.size()) != instr.operand_count()) {
    InstructionError(
        c, instr,
        absl::StrCat("fused computation %", fused.name(), " takes ", signature.parameters.size(),
                     " parameters but the fusion has ", instr.operand_count(), " operands"));
    return;
  }
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    if (!signature.parameters[i].Compatible(instr.operand(i)->shape())) {
      InstructionError(
          c, instr,
          absl::StrCat("fused parameter ", i, " is ", ShapeStr(signature.parameters[i]),
                       " but operand ", i, " is ", ShapeStr(instr.operand(i)->shape())));
    }
  }
  if (fused.root_instruction() != nullptr && !signature.result.Compatible(instr.shape())) {
    InstructionError(
        c, instr,
        absl::StrCat("fused computation %", fused.name(), " returns ", ShapeStr(signature.result),
                     " but the fusion is declared ", ShapeStr(instr.shape())));
  }
}

// ragged-dot: dimension numbers in range, then the result's dimensions (InferRaggedDotShape).
void Verifier::CheckRaggedDot(const HloComputation& c, const HloInstruction& instr) {
  if (instr.operand_count() != 3 || !instr.operand(0)->shape().IsArray() ||
      !instr.operand(1)->shape().IsArray()) {
    InstructionError(c, instr, "ragged-dot takes lhs, rhs and group_sizes arrays");
    return;
  }
  const int64_t lhs = instr.operand(0)->shape().rank();
  const int64_t rhs = instr.operand(1)->shape().rank();
  const DotDimensionNumbers dn = instr.attrs().dot_dimension_numbers.value_or(DotDimensionNumbers{});
  absl::StatusOr<std::vector<int64_t>> ragged =
      RawDimsAttribute(instr, {"lhs_ragged_dims", "lhs_ragged_dimensions"});
  absl::StatusOr<std::vector<int64_t>> group =
      RawDimsAttribute(instr, {"rhs_group_dims", "rhs_group_dimensions"});
  if (!ragged.ok() || !group.ok()) {
    InstructionError(c, instr, !ragged.ok() ? ragged.status().message() : group.status().message());
    return;
  }
  const std::vector<std::pair<const std::vector<int64_t>*, int64_t>> lists = {
      {&dn.lhs_batch_dimensions, lhs},      {&dn.lhs_contracting_dimensions, lhs},
      {&*ragged, lhs},                      {&dn.rhs_batch_dimensions, rhs},
      {&dn.rhs_contracting_dimensions, rhs}, {&*group, rhs}};
  for (const auto& [dims, rank] : lists) {
    for (int64_t d : *dims) {
      if (d < 0 || d >= rank) {
        InstructionError(c, instr, absl::StrCat("ragged-dot dimension number ", d,
                                                " is out of range for a rank-", rank, " operand"));
        return;
      }
    }
  }
  if (ragged->size() != 1 ||
      dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size() ||
      dn.lhs_contracting_dimensions.size() != dn.rhs_contracting_dimensions.size()) {
    InstructionError(c, instr, "ragged-dot needs one lhs_ragged_dims entry and as many lhs as rhs "
                               "batch and contracting dims");
    return;
  }
  absl::StatusOr<Shape> inferred = InferRaggedDotShape(
      instr.operand(0)->shape(), instr.operand(1)->shape(), instr.operand(2)->shape(), dn,
      (*ragged)[0], *group, std::nullopt);  // Dimensions only: the element type is the op's.
  if (!inferred.ok()) {
    InstructionError(c, instr, inferred.status().message());
  } else if (!instr.shape().IsArray() || inferred->dimensions() != instr.shape().dimensions()) {
    InstructionError(c, instr,
                     absl::StrCat("inferred shape ", ShapeStr(*inferred),
                                  " does not match declared ", ShapeStr(instr.shape())));
  }
}

void Verifier::CheckSharding(const HloComputation& c, const HloInstruction& instr) {
  const int64_t max_device = MaxDevice(instr.sharding());
  if (max_device >= kMaxDevices) {
    InstructionError(c, instr,
                     absl::StrCat("sharding ", instr.sharding().ToStringWithoutMetadata(),
                                  " names device ", max_device, "; at most ", kMaxDevices,
                                  " devices are supported"));
    return;
  }
  absl::Status status = instr.sharding().Validate(instr.shape(), module_.config().num_partitions);
  if (!status.ok()) {
    InstructionError(
        c, instr,
        absl::StrCat("sharding ", instr.sharding().ToStringWithoutMetadata(), " is invalid for ",
                     ShapeStr(instr.shape()), ": ", status.message()));
  }
}

}  // namespace

absl::Status VerifyModule(const HloModule& module, std::vector<VerifierError>* errors) {
  std::vector<VerifierError> found = Verifier(module).Run();
  if (found.empty()) return absl::OkStatus();
  std::vector<std::string> lines;
  lines.reserve(found.size());
  for (const VerifierError& e : found) lines.push_back(e.message);
  if (errors != nullptr) errors->insert(errors->end(), found.begin(), found.end());
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

}  // namespace hlo

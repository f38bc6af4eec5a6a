// Recursive-descent HLO text parser.
//
// Grammar (whitespace and comments anywhere between tokens):
//   module      := 'HloModule' name (',' header_attr)* [stack_frames] computation*
//   stack_frames := the FileNames ... StackFrames sections (stack_frame_sections.h)
//   computation := ['ENTRY'] name [signature] '{' instruction* '}' [', execution_thread=' str]
//   instruction := ['ROOT'] name '=' shape opcode '(' operands ')' (',' attr '=' value)*
// Each computation is read in two phases: instructions are first collected with their operand
// names unresolved (PendingInstruction), then resolved and added in dependency order, which
// accepts any definition order and reports cycles and undefined names at their use. Called
// computations are resolved after the whole module is read.
#include "hlo/parser/hlo_parser.h"

#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "hlo/parser/foreign_input.h"
#include "hlo/parser/instruction_attributes.h"
#include "hlo/parser/stack_frame_sections.h"
#include "hlo/parser/value_parsers.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

struct PendingComputation {
  std::unique_ptr<HloComputation> computation;
  std::vector<PendingInstruction> instructions;
  size_t offset = 0;
};

class Parser {
 public:
  Parser(std::string_view text, std::string_view filename)
      : cursor_(text, filename), filename_(filename) {}

  absl::StatusOr<ParsedModule> Parse();

 private:
  absl::Status ParseHeader();
  absl::Status ParseHeaderAttribute(std::string_view name, size_t at);
  absl::Status ParseComputation();
  absl::Status ParseSignature();
  absl::StatusOr<PendingInstruction> ParseInstruction();
  absl::Status ParseOperands(PendingInstruction* pending);
  absl::StatusOr<NameRef> ParseOperand();
  absl::Status Resolve(PendingComputation* pc);
  absl::StatusOr<Shape> ShapeFromOperands(const HloInstruction& instr, size_t offset);
  void UniquifyInstructionNames(HloComputation* computation);
  absl::Status ResolveCalledComputations();
  void Record(const HloInstruction* instr, size_t offset);

  TextCursor cursor_;
  std::string filename_;
  std::unique_ptr<HloModule> module_;
  ParsedModule result_;
  // Computations by name with the pending instructions whose `called` names refer to them.
  absl::flat_hash_map<std::string, HloComputation*> computations_;
  std::vector<std::pair<HloInstruction*, std::vector<NameRef>>> pending_calls_;
  HloComputation* entry_ = nullptr;
  absl::flat_hash_set<std::string> instruction_names_;
  PendingComputation* current_ = nullptr;  // The computation being read.
  // Inline instructions (`add(f32[] multiply(...), ...)`) being read; deeper nesting is an error
  // rather than a recursion that overflows the stack.
  static constexpr int kMaxInlineDepth = 256;
  int inline_depth_ = 0;
  absl::flat_hash_set<std::string> module_names_;  // Instruction names of earlier computations.
  absl::flat_hash_map<std::string, int64_t> next_suffix_;  // Next `.N` to try per base name.
};

void Parser::Record(const HloInstruction* instr, size_t offset) {
  int64_t line, col;
  cursor_.LineCol(offset, &line, &col);
  result_.locations[instr] = {line, col};
  result_.instruction_positions[instr->name()] = {line, col};
}

// `custom-call-start` and friends: XLA's sugar for async-start/-update/-done wrapping an op.
void ParseAsyncSugar(std::string_view name, std::optional<HloOpcode>* opcode,
                     std::optional<HloOpcode>* wrapped) {
  static constexpr std::pair<std::string_view, HloOpcode> kSuffixes[] = {
      {"-start", HloOpcode::kAsyncStart},
      {"-update", HloOpcode::kAsyncUpdate},
      {"-done", HloOpcode::kAsyncDone}};
  for (const auto& [suffix, async_opcode] : kSuffixes) {
    if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) {
      continue;
    }
    std::optional<HloOpcode> inner = StringToHloOpcode(name.substr(0, name.size() - suffix.size()));
    if (inner) {
      *opcode = async_opcode;
      *wrapped = inner;
    }
    return;
  }
}

absl::StatusOr<ParsedModule> Parser::Parse() {
  RETURN_IF_ERROR(ParseHeader());
  RETURN_IF_ERROR(ParseStackFrameSections(cursor_, module_->mutable_stack_frame_index()).status());
  while (!cursor_.AtEnd()) RETURN_IF_ERROR(ParseComputation());
  if (module_->computations().empty()) {
    return cursor_.Error("expected at least one computation, found end of input");
  }
  RETURN_IF_ERROR(ResolveCalledComputations());
  module_->set_entry_computation(entry_ ? entry_ : module_->computations().back().get());
  result_.module = std::move(module_);
  result_.filename = filename_;
  return std::move(result_);
}

absl::Status Parser::ParseHeader() {
  if (!cursor_.TryConsumeWord("HloModule")) {
    if (std::optional<NonHloInput> other = DescribeNonHloInput(cursor_.text())) {
      return cursor_.ErrorAt(other->offset, other->message);
    }
    return cursor_.Error(StrCat("expected 'HloModule', found ", cursor_.Describe()));
  }
  ASSIGN_OR_RETURN(std::string_view name, cursor_.ParseName("a module name"));
  module_ = std::make_unique<HloModule>(std::string(name));
  while (cursor_.TryConsume(',')) {
    cursor_.SkipSpace();
    size_t at = cursor_.pos();
    std::string_view attr = cursor_.ParseWord();
    int64_t line, col;
    cursor_.LineCol(at, &line, &col);
    result_.header_attributes.emplace(std::string(attr), std::make_pair(line, col));
    RETURN_IF_ERROR(cursor_.Expect('=', "after a module attribute name"));
    RETURN_IF_ERROR(ParseHeaderAttribute(attr, at));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<bool>> ParseBoolList(TextCursor& c, std::string_view what) {
  std::vector<bool> flags;
  if (c.Peek() != '{') {
    ASSIGN_OR_RETURN(bool b, c.ParseBool(what));
    return std::vector<bool>{b};
  }
  c.TryConsume('{');
  if (c.TryConsume('}')) return flags;
  do {
    ASSIGN_OR_RETURN(bool b, c.ParseBool(what));
    flags.push_back(b);
  } while (c.TryConsume(','));
  RETURN_IF_ERROR(c.Expect('}', StrCat("to close ", what)));
  return flags;
}

absl::Status ParseInputOutputAlias(TextCursor& c, std::vector<InputOutputAlias>* aliases) {
  RETURN_IF_ERROR(c.Expect('{', "to start input_output_alias"));
  if (c.TryConsume('}')) return absl::OkStatus();
  do {
    InputOutputAlias alias;
    ASSIGN_OR_RETURN(alias.output_index, ParseShapeIndex(c));
    RETURN_IF_ERROR(c.Expect(':', "after an output index"));
    RETURN_IF_ERROR(c.Expect('(', "to start an alias"));
    ASSIGN_OR_RETURN(alias.parameter_number, c.ParseInt("parameter number"));
    RETURN_IF_ERROR(c.Expect(',', "after the parameter number"));
    ASSIGN_OR_RETURN(alias.parameter_index, ParseShapeIndex(c));
    if (c.TryConsume(',')) {
      size_t at = c.pos();
      std::string_view kind = c.ParseWord();
      if (kind != "may-alias" && kind != "must-alias") {
        return c.ErrorAt(at, StrCat("expected may-alias or must-alias, found '", kind, "'"));
      }
      alias.must_alias = kind == "must-alias";
    }
    RETURN_IF_ERROR(c.Expect(')', "to close an alias"));
    aliases->push_back(std::move(alias));
  } while (c.TryConsume(','));
  return c.Expect('}', "to close input_output_alias");
}

absl::Status Parser::ParseHeaderAttribute(std::string_view name, size_t at) {
  HloModuleConfig* config = module_->mutable_config();
  TextCursor& c = cursor_;
  if (name == "entry_computation_layout") {
    RETURN_IF_ERROR(c.Expect('{', "to start entry_computation_layout"));
    ASSIGN_OR_RETURN(config->entry_computation_layout, ParseProgramShape(c));
    return c.Expect('}', "to close entry_computation_layout");
  }
  if (name == "replica_count") {
    ASSIGN_OR_RETURN(config->replica_count, c.ParseInt("replica_count"));
    if (config->replica_count < 1) return c.ErrorAt(at, "replica_count must be at least 1");
    if (config->replica_count > kMaxDevices) {
      return c.ErrorAt(at, StrCat("replica_count ", config->replica_count, " is over the limit of ",
                                  kMaxDevices, " devices"));
    }
    return absl::OkStatus();
  }
  if (name == "num_partitions") {
    ASSIGN_OR_RETURN(config->num_partitions, c.ParseInt("num_partitions"));
    if (config->num_partitions < 1) return c.ErrorAt(at, "num_partitions must be at least 1");
    if (config->num_partitions > kMaxDevices) {
      return c.ErrorAt(at, StrCat("num_partitions ", config->num_partitions,
                                  " is over the limit of ", kMaxDevices, " devices"));
    }
    return absl::OkStatus();
  }
  if (name == "allow_spmd_sharding_propagation_to_output") {
    ASSIGN_OR_RETURN(config->allow_spmd_sharding_propagation_to_output, ParseBoolList(c, name));
    return absl::OkStatus();
  }
  if (name == "allow_spmd_sharding_propagation_to_parameters") {
    ASSIGN_OR_RETURN(config->allow_spmd_sharding_propagation_to_parameters,
                     ParseBoolList(c, name));
    return absl::OkStatus();
  }
  if (name == "input_output_alias") {
    return ParseInputOutputAlias(c, module_->mutable_input_output_alias());
  }
  if (name == "frontend_attributes") {
    return ParseFrontendAttributes(c, module_->mutable_frontend_attributes());
  }
  static const auto* raw = new absl::flat_hash_set<std::string_view>{
      "is_scheduled",         "debug_attributes",  "origin_recovery_table", "buffer_donor",
      "stack_frame_index",    "spmd_output_sharding", "spmd_parameters_shardings",
      "replica_count_check"};
  if (raw->contains(name)) {
    ASSIGN_OR_RETURN(std::string_view value, c.CaptureValue(name));
    module_->mutable_raw_attributes()->push_back({std::string(name), std::string(value)});
    return absl::OkStatus();
  }
  return c.ErrorAt(at, StrCat("unknown module attribute '", name, "'"));
}

absl::Status Parser::ParseSignature() {
  // `(p0: f32[2], p1: s32[]) -> f32[2]`: informative only; the parameters define the shapes.
  RETURN_IF_ERROR(cursor_.Expect('(', "to start a computation signature"));
  if (!cursor_.TryConsume(')')) {
    do {
      RETURN_IF_ERROR(cursor_.ParseName("a parameter name").status());
      RETURN_IF_ERROR(cursor_.Expect(':', "after a parameter name"));
      RETURN_IF_ERROR(ParseShape(cursor_).status());
    } while (cursor_.TryConsume(','));
    RETURN_IF_ERROR(cursor_.Expect(')', "to close a computation signature"));
  }
  if (!(cursor_.TryConsume('-') && cursor_.RawPeek() == '>')) {
    return cursor_.Error("expected '->' in a computation signature");
  }
  cursor_.set_pos(cursor_.pos() + 1);
  return ParseShape(cursor_).status();
}

absl::Status Parser::ParseComputation() {
  PendingComputation pc;
  instruction_names_.clear();  // Instruction names are scoped to their computation.
  bool is_entry = cursor_.TryConsumeWord("ENTRY");
  cursor_.SkipSpace();
  pc.offset = cursor_.pos();
  ASSIGN_OR_RETURN(std::string_view name, cursor_.ParseName("a computation name"));
  if (computations_.contains(std::string(name))) {
    return cursor_.ErrorAt(pc.offset, StrCat("duplicate computation name '", name, "'"));
  }
  pc.computation = std::make_unique<HloComputation>(std::string(name));
  current_ = &pc;
  if (cursor_.Peek() == '(') RETURN_IF_ERROR(ParseSignature());
  RETURN_IF_ERROR(cursor_.Expect('{', "to start the body of a computation"));
  while (!cursor_.TryConsume('}')) {
    if (cursor_.AtEnd()) {
      return cursor_.Error(StrCat("expected '}' to close computation '", name,
                                        "', found end of input"));
    }
    ASSIGN_OR_RETURN(PendingInstruction pi, ParseInstruction());
    pc.instructions.push_back(std::move(pi));
  }
  if (cursor_.Peek() == ',') {
    size_t save = cursor_.pos();
    cursor_.TryConsume(',');
    if (cursor_.TryConsumeWord("execution_thread")) {
      RETURN_IF_ERROR(cursor_.Expect('=', "after execution_thread"));
      ASSIGN_OR_RETURN(std::string thread, cursor_.ParseQuoted("execution_thread"));
      pc.computation->set_execution_thread(std::move(thread));
    } else {
      cursor_.set_pos(save);
      return cursor_.Error("unexpected ',' after a computation");
    }
  }
  if (pc.instructions.empty()) {
    return cursor_.ErrorAt(pc.offset, StrCat("computation '", name, "' has no instructions"));
  }
  RETURN_IF_ERROR(Resolve(&pc));
  UniquifyInstructionNames(pc.computation.get());
  HloComputation* added = module_->AddComputation(std::move(pc.computation));
  computations_[added->name()] = added;
  if (is_entry) {
    if (entry_ != nullptr) {
      return cursor_.ErrorAt(pc.offset, "a module can have only one ENTRY computation");
    }
    entry_ = added;
  }
  return absl::OkStatus();
}

absl::StatusOr<NameRef> Parser::ParseOperand() {
  Shape shape;
  if (LooksLikeShape(cursor_)) {
    ASSIGN_OR_RETURN(shape, ParseShape(cursor_));  // Typed operand, or a nested instruction.
  }
  cursor_.SkipSpace();
  NameRef ref;
  ref.offset = cursor_.pos();
  ASSIGN_OR_RETURN(std::string_view name, cursor_.ParseName("an operand name"));
  std::optional<HloOpcode> nested = StringToHloOpcode(name);
  if (nested && cursor_.RawPeek() == '(' && ref.offset < cursor_.pos() &&
      cursor_.text()[ref.offset] != '%') {
    // An anonymous instruction written inline, e.g. `add(f32[] parameter(0), ...)`.
    PendingInstruction inner;
    inner.offset = ref.offset;
    inner.instr = HloInstruction::Create(*nested, std::move(shape), {});
    std::string inner_name = StrCat(name, ".anon");
    for (int64_t n = 1; instruction_names_.contains(inner_name); ++n) {
      inner_name = StrCat(name, ".anon", n);
    }
    instruction_names_.insert(inner_name);
    inner.instr->set_name(inner_name);
    if (inline_depth_ >= kMaxInlineDepth) {
      return cursor_.ErrorAt(ref.offset, StrCat("inline instructions nest more than ",
                                                kMaxInlineDepth, " levels deep"));
    }
    ++inline_depth_;
    absl::Status operands = ParseOperands(&inner);
    --inline_depth_;
    RETURN_IF_ERROR(operands);
    ref.name = inner_name;
    current_->instructions.push_back(std::move(inner));
    return ref;
  }
  ref.name = std::string(name);
  while (cursor_.RawPeek() == '#') {
    cursor_.set_pos(cursor_.pos() + 1);
    ASSIGN_OR_RETURN(int64_t index, cursor_.ParseInt("a tuple index after '#'"));
    ref.gte_path.push_back(index);
  }
  return ref;
}

absl::Status Parser::ParseOperands(PendingInstruction* p) {
  RETURN_IF_ERROR(cursor_.Expect('(', "to start the operand list"));
  HloInstruction* instr = p->instr.get();
  if (instr->opcode() == HloOpcode::kParameter) {
    ASSIGN_OR_RETURN(int64_t n, cursor_.ParseInt("the parameter number"));
    if (n < 0) return cursor_.Error("parameter numbers must be non-negative");
    instr->mutable_attrs()->parameter_number = n;
  } else if (instr->opcode() == HloOpcode::kConstant) {
    instr->mutable_attrs()->literal_elided =
        cursor_.Peek() == '{' && cursor_.text().substr(cursor_.pos(), 5) == "{...}";
    ASSIGN_OR_RETURN(Literal literal, ParseLiteral(cursor_, instr->shape()));
    instr->mutable_attrs()->literal = std::move(literal);
  } else if (cursor_.Peek() != ')') {
    do {
      ASSIGN_OR_RETURN(NameRef ref, ParseOperand());
      p->operands.push_back(std::move(ref));
    } while (cursor_.TryConsume(','));
  }
  return cursor_.Expect(')', "to close the operand list");
}

absl::StatusOr<PendingInstruction> Parser::ParseInstruction() {
  PendingInstruction p;
  p.is_root = cursor_.TryConsumeWord("ROOT");
  cursor_.SkipSpace();
  p.offset = cursor_.pos();
  ASSIGN_OR_RETURN(std::string_view name, cursor_.ParseName("an instruction name"));
  if (!instruction_names_.insert(std::string(name)).second) {
    return cursor_.ErrorAt(p.offset, StrCat("duplicate instruction name '", name, "'"));
  }
  RETURN_IF_ERROR(cursor_.Expect('=', StrCat("after instruction name '", name, "'")));
  // XLA accepts instructions without a shape for ops whose shape follows from the operands.
  Shape shape;
  if (LooksLikeShape(cursor_)) {
    ASSIGN_OR_RETURN(shape, ParseShape(cursor_));
  } else {
    size_t at = cursor_.pos();
    std::string_view word = cursor_.ParseWord();
    if (cursor_.RawPeek() == '[') {  // Meant as a shape, e.g. `f33[2]`.
      return cursor_.ErrorAt(at, StrCat("unknown element type '", word, "'"));
    }
    cursor_.set_pos(at);
  }
  cursor_.SkipSpace();
  size_t opcode_at = cursor_.pos();
  std::string_view opcode_name = cursor_.ParseWord();
  std::optional<HloOpcode> opcode = StringToHloOpcode(opcode_name);
  std::optional<HloOpcode> wrapped;
  if (!opcode) ParseAsyncSugar(opcode_name, &opcode, &wrapped);
  if (!opcode) {
    return cursor_.ErrorAt(opcode_at, opcode_name.empty()
                                          ? StrCat("expected an opcode, found ",
                                                         cursor_.Describe())
                                          : StrCat("unknown opcode '", opcode_name, "'"));
  }
  p.instr = HloInstruction::Create(*opcode, std::move(shape), {});
  p.instr->set_name(std::string(name));
  p.instr->mutable_attrs()->async_wrapped_opcode = wrapped;
  RETURN_IF_ERROR(ParseOperands(&p));
  while (cursor_.Peek() == ',') {
    cursor_.TryConsume(',');
    cursor_.SkipSpace();
    size_t at = cursor_.pos();
    std::string_view attr = cursor_.ParseWord();
    if (attr.empty()) {
      return cursor_.Error(StrCat("expected an attribute name, found ", cursor_.Describe()));
    }
    RETURN_IF_ERROR(cursor_.Expect('=', StrCat("after attribute '", attr, "'")));
    RETURN_IF_ERROR(ParseInstructionAttribute(cursor_, attr, at, &p));
  }
  // As in XLA, a fusion must say its kind (the printer always writes `kind=`).
  if (*opcode == HloOpcode::kFusion && p.instr->attrs().fusion_kind.empty()) {
    return cursor_.ErrorAt(opcode_at, "a fusion needs a kind attribute (e.g. kind=kLoop)");
  }
  return p;
}

absl::StatusOr<Shape> Parser::ShapeFromOperands(const HloInstruction& instr, size_t offset) {
  const HloOpcode op = instr.opcode();
  auto operand_shape = [&](int64_t i) -> absl::StatusOr<Shape> {
    if (i >= instr.operand_count()) {
      return cursor_.ErrorAt(offset, StrCat("instruction '", instr.name(), "' has no shape and ",
                                            "too few operands to infer one"));
    }
    return instr.operand(i)->shape();
  };
  if (op == HloOpcode::kTuple) {
    std::vector<Shape> elements;
    for (const HloInstruction* operand : instr.operands()) elements.push_back(operand->shape());
    return Shape::Tuple(std::move(elements));
  }
  if (op == HloOpcode::kGetTupleElement) {
    ASSIGN_OR_RETURN(Shape tuple, operand_shape(0));
    int64_t index = instr.attrs().tuple_index;
    if (!tuple.IsTuple() || index < 0 || index >= tuple.tuple_shapes_size()) {
      return cursor_.ErrorAt(offset, StrCat("get-tuple-element index ", index,
                                            " is out of range for ", tuple.ToString()));
    }
    return tuple.tuple_shapes(index);
  }
  if (op == HloOpcode::kCompare) {
    ASSIGN_OR_RETURN(Shape s, operand_shape(0));
    return Shape::Array(PrimitiveType::kPred, s.dimensions());
  }
  if (op == HloOpcode::kSelect || op == HloOpcode::kClamp) return operand_shape(1);
  if (IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == HloOpcode::kWhile ||
      op == HloOpcode::kOptimizationBarrier) {
    return operand_shape(0);
  }
  return cursor_.ErrorAt(offset, StrCat("instruction '", instr.name(), "' needs a shape: ",
                                        HloOpcodeString(op), " shapes are not inferred"));
}

// Names are scoped to their computation in the text, but unique in the module (as XLA makes
// them): a name already used by an earlier computation gets the first free `.N` suffix.
void Parser::UniquifyInstructionNames(HloComputation* computation) {
  for (const auto& instr : computation->instructions()) {
    std::string name = instr->name();
    if (module_names_.contains(name)) {
      // Resume from the last suffix tried for this base name (linear, like XLA's NameUniquer).
      int64_t& next = next_suffix_[instr->name()];
      for (int64_t n = std::max<int64_t>(next, 1);; ++n) {
        next = n + 1;
        std::string candidate = StrCat(instr->name(), ".", n);
        if (!module_names_.contains(candidate) && !instruction_names_.contains(candidate)) {
          name = std::move(candidate);
          break;
        }
      }
      instr->set_name(name);
    }
    module_names_.insert(std::move(name));
  }
}

absl::Status Parser::Resolve(PendingComputation* pc) {
  // Index by name, then add in dependency order (operands and control predecessors first).
  absl::flat_hash_map<std::string_view, size_t> by_name;
  for (size_t i = 0; i < pc->instructions.size(); ++i) {
    by_name[pc->instructions[i].instr->name()] = i;
  }
  enum State : uint8_t { kNew, kActive, kDone };
  std::vector<State> state(pc->instructions.size(), kNew);
  std::vector<HloInstruction*> added(pc->instructions.size(), nullptr);
  HloComputation* comp = pc->computation.get();
  HloInstruction* root = nullptr;

  auto lookup = [&](const NameRef& ref) -> absl::StatusOr<size_t> {
    auto it = by_name.find(ref.name);
    if (it == by_name.end()) {
      return cursor_.ErrorAt(ref.offset, StrCat("use of undefined instruction '", ref.name,
                                                      "' in computation '", comp->name(), "'"));
    }
    return it->second;
  };
  // Adds get-tuple-elements for a compact `%t#i#j` reference.
  auto materialize = [&](HloInstruction* base, const NameRef& ref) -> absl::StatusOr<HloInstruction*> {
    HloInstruction* value = base;
    std::string name = base->name();
    for (int64_t index : ref.gte_path) {
      if (!value->shape().IsTuple() || index < 0 || index >= value->shape().tuple_shapes_size()) {
        return cursor_.ErrorAt(ref.offset, StrCat("'", ref.name, "#", index,
                                                        "' indexes past the tuple"));
      }
      StrAppend(&name, ".", index);
      while (instruction_names_.contains(name)) name += "_";
      instruction_names_.insert(name);
      auto gte = HloInstruction::Create(HloOpcode::kGetTupleElement,
                                        value->shape().tuple_shapes(index), {value});
      gte->set_name(name);
      gte->mutable_attrs()->tuple_index = index;
      value = comp->AddInstruction(std::move(gte));
    }
    return value;
  };
  // Iterative DFS over operand edges.
  for (size_t start = 0; start < pc->instructions.size(); ++start) {
    if (state[start] == kDone) continue;
    std::vector<std::pair<size_t, size_t>> stack = {{start, 0}};
    state[start] = kActive;
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      PendingInstruction& p = pc->instructions[i];
      const size_t n_ops = p.operands.size();
      if (next < n_ops + p.control_predecessors.size()) {
        const NameRef& ref = next < n_ops ? p.operands[next] : p.control_predecessors[next - n_ops];
        ++next;
        ASSIGN_OR_RETURN(size_t dep, lookup(ref));
        if (state[dep] == kActive) {
          return cursor_.ErrorAt(ref.offset, StrCat("instruction '", p.instr->name(),
                                                          "' depends on itself through '",
                                                          ref.name, "' (a cycle)"));
        }
        if (state[dep] == kNew) {
          state[dep] = kActive;
          stack.push_back({dep, 0});
        }
        continue;
      }
      for (const NameRef& ref : p.operands) {
        ASSIGN_OR_RETURN(size_t dep, lookup(ref));
        ASSIGN_OR_RETURN(HloInstruction* operand, materialize(added[dep], ref));
        p.instr->AppendOperand(operand);
      }
      for (const NameRef& ref : p.control_predecessors) {
        ASSIGN_OR_RETURN(size_t dep, lookup(ref));
        p.instr->AddControlPredecessor(added[dep]);
      }
      if (p.instr->shape().element_type() == PrimitiveType::kInvalid) {
        ASSIGN_OR_RETURN(*p.instr->mutable_shape(), ShapeFromOperands(*p.instr, p.offset));
      }
      HloInstruction* instr = comp->AddInstruction(std::move(p.instr));
      Record(instr, p.offset);
      added[i] = instr;
      if (p.is_root) {
        if (root != nullptr) return cursor_.ErrorAt(p.offset, "a computation can have one ROOT");
        root = instr;
      }
      if (!p.called.empty()) pending_calls_.push_back({instr, std::move(p.called)});
      state[i] = kDone;
      stack.pop_back();
    }
  }
  comp->set_root_instruction(root ? root : added.back());
  return absl::OkStatus();
}

absl::Status Parser::ResolveCalledComputations() {
  for (auto& [instr, refs] : pending_calls_) {
    for (const NameRef& ref : refs) {
      if (ref.name.empty()) {
        return cursor_.ErrorAt(result_.locations.contains(instr) ? 0 : 0,
                               StrCat("instruction '", instr->name(),
                                            "' is missing a called computation"));
      }
      auto it = computations_.find(ref.name);
      if (it == computations_.end()) {
        return cursor_.ErrorAt(ref.offset,
                               StrCat("use of undefined computation '", ref.name, "'"));
      }
      instr->AppendCalledComputation(it->second);
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string ParsedModule::FormatError(const HloInstruction* instr,
                                      std::string_view message) const {
  auto it = instr ? locations.find(instr) : locations.end();
  if (it == locations.end()) {
    std::optional<std::pair<int64_t, int64_t>> at;
    if (instr == nullptr) {
      for (const auto& [name, position] : header_attributes) {
        if (message.find(name) != std::string_view::npos && (!at || position < *at)) at = position;
      }
    }
    if (!at) return StrCat(filename, ": error: ", message);
    return StrCat(filename, ":", at->first, ":", at->second, ": error: ", message);
  }
  return StrCat(filename, ":", it->second.first, ":", it->second.second, ": error: ",
                      message);
}

std::optional<std::pair<int64_t, int64_t>> ParsedModule::PositionOf(std::string_view name) const {
  auto it = instruction_positions.find(absl::string_view(name.data(), name.size()));
  if (it == instruction_positions.end()) return std::nullopt;
  return it->second;
}

std::string ParsedModule::Locate(std::string_view message) const {
  if (message.find(": error: ") != std::string_view::npos) return std::string(message);
  for (size_t at = message.find('%'); at != std::string_view::npos;
       at = message.find('%', at + 1)) {
    size_t end = at + 1;
    while (end < message.size() && (absl::ascii_isalnum(message[end]) || message[end] == '_' ||
                                    message[end] == '.' || message[end] == '-')) {
      ++end;
    }
    std::string_view name = message.substr(at + 1, end - at - 1);
    while (!name.empty() && name.back() == '.') name.remove_suffix(1);  // A sentence's period.
    if (std::optional<std::pair<int64_t, int64_t>> position = PositionOf(name)) {
      return StrCat(filename, ":", position->first, ":", position->second, ": error: ", message);
    }
  }
  return FormatError(nullptr, message);
}

absl::StatusOr<ParsedModule> ParseHloModuleWithLocations(std::string_view text,
                                                         std::string_view filename) {
  Parser parser(text, filename);
  return parser.Parse();
}

absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                          std::string_view filename) {
  ASSIGN_OR_RETURN(ParsedModule parsed, ParseHloModuleWithLocations(text, filename));
  return std::move(parsed.module);
}

}  // namespace hlo

#include "hlo/sdy/sdy_attributes.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/status/status.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo::sdy {
namespace {

// A cursor over attribute text: tokens are literal strings, identifiers, integers and
// double-quoted strings; whitespace between them is skipped.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }
  bool Peek(std::string_view token) {
    SkipSpace();
    return text_.substr(pos_, token.size()) == token;
  }
  bool Consume(std::string_view token) {
    if (!Peek(token)) return false;
    pos_ += token.size();
    return true;
  }
  absl::Status Expect(std::string_view token) {
    if (Consume(token)) return absl::OkStatus();
    return Error(StrCat("'", token, "'"));
  }
  absl::Status Error(std::string_view expected) {
    SkipSpace();
    std::string_view found = text_.substr(pos_, 16);
    return absl::InvalidArgumentError(
        StrCat("expected ", expected, " at offset ", pos_, " of '", text_, "', found ",
               found.empty() ? std::string("the end") : StrCat("'", found, "'")));
  }
  absl::StatusOr<std::string> Identifier() {
    SkipSpace();
    size_t end = pos_;
    while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) ||
                                  text_[end] == '_' || text_[end] == '.')) {
      ++end;
    }
    if (end == pos_) return Error("a name");
    std::string out(text_.substr(pos_, end - pos_));
    pos_ = end;
    return out;
  }
  absl::StatusOr<int64_t> Int() {
    SkipSpace();
    size_t end = pos_;
    while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
    if (end == pos_ || end - pos_ > 15) return Error("an integer");
    int64_t value = std::stoll(std::string(text_.substr(pos_, end - pos_)));
    pos_ = end;
    return value;
  }
  absl::StatusOr<std::string> QuotedString() {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '"') return Error("a \"string\"");
    std::string out;
    for (size_t i = pos_ + 1; i < text_.size(); ++i) {
      if (text_[i] == '\\' && i + 1 < text_.size()) {
        out.push_back(text_[++i]);
      } else if (text_[i] == '"') {
        pos_ = i + 1;
        return out;
      } else {
        out.push_back(text_[i]);
      }
    }
    return Error("a closing '\"'");
  }
  std::string_view rest() const { return text_.substr(pos_); }
  void Advance(size_t n) { pos_ += n; }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  std::string_view text_;
  size_t pos_ = 0;
};

// `[INT, ...]`.
absl::StatusOr<std::vector<int64_t>> ParseIntList(Cursor& c) {
  RETURN_IF_ERROR(c.Expect("["));
  std::vector<int64_t> values;
  while (!c.Consume("]")) {
    if (!values.empty()) RETURN_IF_ERROR(c.Expect(","));
    ASSIGN_OR_RETURN(values.emplace_back(), c.Int());
  }
  return values;
}

// `mesh<[...], device_ids=[...]>` after an optional `#sdy.`.
absl::StatusOr<Mesh> ParseMesh(Cursor& c) {
  c.Consume("#sdy.");
  RETURN_IF_ERROR(c.Expect("mesh<"));
  RETURN_IF_ERROR(c.Expect("["));
  std::vector<MeshAxis> axes;
  while (!c.Consume("]")) {
    if (!axes.empty()) RETURN_IF_ERROR(c.Expect(","));
    MeshAxis& axis = axes.emplace_back();
    ASSIGN_OR_RETURN(axis.name, c.QuotedString());
    RETURN_IF_ERROR(c.Expect("="));
    ASSIGN_OR_RETURN(axis.size, c.Int());
  }
  std::optional<std::vector<int64_t>> ids;
  if (c.Consume(",")) {
    RETURN_IF_ERROR(c.Expect("device_ids"));
    RETURN_IF_ERROR(c.Expect("="));
    ASSIGN_OR_RETURN(ids, ParseIntList(c));
  }
  RETURN_IF_ERROR(c.Expect(">"));
  Mesh mesh;
  if (axes.empty()) {
    if (ids.has_value() && ids->size() != 1) {
      return absl::InvalidArgumentError("a mesh without axes lists at most one device id");
    }
    if (ids.has_value()) mesh.maximal_device = (*ids)[0];
    return mesh;
  }
  std::optional<TileAssignment> devices;
  if (ids.has_value()) {
    std::vector<int64_t> sizes;
    for (const MeshAxis& axis : axes) sizes.push_back(axis.size);
    ASSIGN_OR_RETURN(devices, TileAssignment::Explicit(sizes, *ids));
  }
  ASSIGN_OR_RETURN(mesh.named, NamedMesh::Create(std::move(axes), std::move(devices)));
  return mesh;
}

// The mesh of a sharding: `@name` or an inline mesh.
absl::StatusOr<std::shared_ptr<const Mesh>> ParseMeshRef(Cursor& c, const MeshTable& meshes) {
  if (c.Consume("@")) {
    ASSIGN_OR_RETURN(std::string name, c.Identifier());
    auto it = meshes.find(name);
    if (it == meshes.end()) {
      return absl::InvalidArgumentError(
          StrCat("unknown mesh @", name, " (the module's xla.sdy.meshes does not define it)"));
    }
    return std::make_shared<const Mesh>(it->second);
  }
  ASSIGN_OR_RETURN(Mesh mesh, ParseMesh(c));
  return std::make_shared<const Mesh>(std::move(mesh));
}

// The dim list and attributes of a sharding, up to (not including) its closing '>': returns the
// text with priorities (`p0` after a dim's '}') removed, and records the open dims.
std::string StripPriorities(std::string_view body, std::vector<int64_t>* open_dims, size_t* end) {
  std::string out;
  int depth = 0;  // 1 inside the dims' '[', 2 inside a dim's '{'.
  int64_t dim = -1;
  size_t i = 0;
  for (; i < body.size(); ++i) {
    const char ch = body[i];
    if (ch == '"') {
      size_t close = i + 1;
      while (close < body.size() && body[close] != '"') close += body[close] == '\\' ? 2 : 1;
      out.append(body.substr(i, close + 1 - i));
      i = close;
      continue;
    }
    if (ch == '>' && depth == 0) break;
    if (ch == '[' || ch == '{') ++depth;
    if (ch == '{' && depth == 2) ++dim;
    if (ch == '?' && depth == 2) open_dims->push_back(dim);
    if (ch == ']' || ch == '}') --depth;
    out.push_back(ch);
    if (ch == '}' && depth == 1 && i + 1 < body.size() && body[i + 1] == 'p') {
      size_t j = i + 2;
      while (j < body.size() && std::isdigit(static_cast<unsigned char>(body[j]))) ++j;
      if (j > i + 2) i = j - 1;
    }
  }
  *end = i;
  return out;
}

// `[{}, {?}]` on a mesh without axes: every dim must be unsplit.
absl::Status ParseEmptyDims(std::string_view text) {
  Cursor c(text);
  RETURN_IF_ERROR(c.Expect("["));
  bool first = true;
  while (!c.Consume("]")) {
    if (!first) RETURN_IF_ERROR(c.Expect(","));
    first = false;
    RETURN_IF_ERROR(c.Expect("{"));
    c.Consume("?");
    RETURN_IF_ERROR(c.Expect("}"));
  }
  if (!c.AtEnd()) return c.Error("the end of a sharding on a mesh without axes");
  return absl::OkStatus();
}

// `@mesh, [dims], attrs` up to and including the closing '>'.
absl::StatusOr<TensorSharding> ParseShardingBody(Cursor& c, const MeshTable& meshes) {
  TensorSharding out;
  ASSIGN_OR_RETURN(out.mesh, ParseMeshRef(c, meshes));
  RETURN_IF_ERROR(c.Expect(","));
  size_t end = 0;
  const std::string body = StripPriorities(c.rest(), &out.open_dims, &end);
  c.Advance(end);
  RETURN_IF_ERROR(c.Expect(">"));
  if (!out.mesh->named.has_value()) {
    RETURN_IF_ERROR(ParseEmptyDims(body));
    return out;
  }
  size_t consumed = 0;
  ASSIGN_OR_RETURN(out.axes, ParseNamedShardingAxes(*out.mesh->named, body, &consumed));
  if (!Cursor(std::string_view(body).substr(consumed)).AtEnd()) {
    return absl::InvalidArgumentError(
        StrCat("unexpected '", std::string_view(body).substr(consumed), "' in a sharding"));
  }
  return out;
}

absl::Status Annotate(absl::Status status, std::string_view what, std::string_view text) {
  if (status.ok()) return status;
  return absl::InvalidArgumentError(
      StrCat("cannot read ", what, " '", text, "': ", ToStd(status.message())));
}

// Rule parsing: `[ij, k, 1]` -> per dim factor ids; names are a letter and an optional `_N`.
absl::StatusOr<ShardingRule::TensorFactors> ParseRuleTensor(Cursor& c, ShardingRule& rule) {
  RETURN_IF_ERROR(c.Expect("["));
  ShardingRule::TensorFactors dims;
  while (!c.Consume("]")) {
    if (!dims.empty()) RETURN_IF_ERROR(c.Expect(","));
    std::vector<int64_t>& dim = dims.emplace_back();
    if (c.Consume("1")) continue;
    ASSIGN_OR_RETURN(std::string word, c.Identifier());
    for (size_t i = 0; i < word.size();) {
      size_t j = i + 1;
      if (!std::islower(static_cast<unsigned char>(word[i]))) {
        return absl::InvalidArgumentError(StrCat("bad factor name in '", word, "'"));
      }
      if (j < word.size() && word[j] == '_') {
        ++j;
        while (j < word.size() && std::isdigit(static_cast<unsigned char>(word[j]))) ++j;
      }
      const std::string name = word.substr(i, j - i);
      auto it = std::find(rule.factor_names.begin(), rule.factor_names.end(), name);
      if (it == rule.factor_names.end()) {
        rule.factor_names.push_back(name);
        rule.factor_sizes.push_back(-1);
        rule.factor_kinds.push_back(ShardingRule::FactorKind::kPassThrough);
        it = rule.factor_names.end() - 1;
      }
      dim.push_back(it - rule.factor_names.begin());
      i = j;
    }
  }
  return dims;
}

absl::StatusOr<std::vector<ShardingRule::TensorFactors>> ParseRuleTensors(Cursor& c,
                                                                          ShardingRule& rule) {
  RETURN_IF_ERROR(c.Expect("("));
  std::vector<ShardingRule::TensorFactors> tensors;
  while (!c.Consume(")")) {
    if (!tensors.empty()) RETURN_IF_ERROR(c.Expect(","));
    ASSIGN_OR_RETURN(tensors.emplace_back(), ParseRuleTensor(c, rule));
  }
  return tensors;
}

absl::StatusOr<int64_t> FactorId(const ShardingRule& rule, const std::string& name) {
  auto it = std::find(rule.factor_names.begin(), rule.factor_names.end(), name);
  if (it == rule.factor_names.end()) {
    return absl::InvalidArgumentError(StrCat("factor '", name, "' is used by no dim"));
  }
  return it - rule.factor_names.begin();
}

// `{i=8, j=4}` and `kind={i, j}` lists after the tensors.
absl::Status ParseRuleFactors(Cursor& c, ShardingRule& rule) {
  static const std::pair<std::string_view, ShardingRule::FactorKind> kKinds[] = {
      {"reduction", ShardingRule::FactorKind::kReduction},
      {"need_replication", ShardingRule::FactorKind::kNeedReplication},
      {"permutation", ShardingRule::FactorKind::kPermutation},
      {"blocked_propagation", ShardingRule::FactorKind::kBlocked},
  };
  if (c.Consume("{")) {
    while (!c.Consume("}")) {
      if (c.Consume(",")) continue;
      ASSIGN_OR_RETURN(std::string name, c.Identifier());
      RETURN_IF_ERROR(c.Expect("="));
      ASSIGN_OR_RETURN(int64_t id, FactorId(rule, name));
      ASSIGN_OR_RETURN(rule.factor_sizes[id], c.Int());
    }
  }
  while (!c.Peek(">")) {
    if (c.Consume(",")) continue;
    if (c.Consume("custom")) {
      rule.is_custom = true;
      continue;
    }
    const auto* kind = std::find_if(std::begin(kKinds), std::end(kKinds),
                                    [&](const auto& k) { return c.Peek(k.first); });
    if (kind == std::end(kKinds)) return c.Error("a factor kind, 'custom' or '>'");
    c.Consume(kind->first);
    RETURN_IF_ERROR(c.Expect("="));
    RETURN_IF_ERROR(c.Expect("{"));
    while (!c.Consume("}")) {
      if (c.Consume(",")) continue;
      ASSIGN_OR_RETURN(std::string name, c.Identifier());
      ASSIGN_OR_RETURN(int64_t id, FactorId(rule, name));
      rule.factor_kinds[id] = kind->second;
    }
  }
  return c.Expect(">");
}

absl::StatusOr<ShardingRule> ParseRule(Cursor& c) {
  ShardingRule rule;
  RETURN_IF_ERROR(c.Expect("#sdy.op_sharding_rule<"));
  ASSIGN_OR_RETURN(rule.operands, ParseRuleTensors(c, rule));
  RETURN_IF_ERROR(c.Expect("->"));
  ASSIGN_OR_RETURN(rule.results, ParseRuleTensors(c, rule));
  RETURN_IF_ERROR(ParseRuleFactors(c, rule));
  if (!c.AtEnd()) return c.Error("the end of the rule");
  return rule;
}

}  // namespace

int64_t Mesh::num_devices() const { return named.has_value() ? named->devices().num_devices() : 1; }

absl::StatusOr<MeshTable> ParseMeshes(std::string_view text) {
  auto parse = [&]() -> absl::StatusOr<MeshTable> {
    Cursor c(text);
    MeshTable meshes;
    RETURN_IF_ERROR(c.Expect("{"));
    while (!c.Consume("}")) {
      if (!meshes.empty()) RETURN_IF_ERROR(c.Expect(","));
      ASSIGN_OR_RETURN(std::string name, c.Identifier());
      RETURN_IF_ERROR(c.Expect("="));
      ASSIGN_OR_RETURN(Mesh mesh, ParseMesh(c));
      if (!meshes.emplace(name, std::move(mesh)).second) {
        return absl::InvalidArgumentError(StrCat("mesh '", name, "' is defined twice"));
      }
    }
    if (!c.AtEnd()) return c.Error("the end of the meshes");
    return meshes;
  };
  absl::StatusOr<MeshTable> meshes = parse();
  RETURN_IF_ERROR(Annotate(meshes.status(), "xla.sdy.meshes", text));
  return meshes;
}

absl::StatusOr<TensorSharding> ParseTensorSharding(std::string_view text, const MeshTable& meshes) {
  auto parse = [&]() -> absl::StatusOr<TensorSharding> {
    Cursor c(text);
    RETURN_IF_ERROR(c.Expect("#sdy.sharding<"));
    ASSIGN_OR_RETURN(TensorSharding sharding, ParseShardingBody(c, meshes));
    if (!c.AtEnd()) return c.Error("the end of the sharding");
    return sharding;
  };
  absl::StatusOr<TensorSharding> sharding = parse();
  RETURN_IF_ERROR(Annotate(sharding.status(), "the sharding", text));
  return sharding;
}

absl::StatusOr<std::vector<TensorSharding>> ParseShardingPerValue(std::string_view text,
                                                                  const MeshTable& meshes) {
  auto parse = [&]() -> absl::StatusOr<std::vector<TensorSharding>> {
    Cursor c(text);
    RETURN_IF_ERROR(c.Expect("#sdy.sharding_per_value<"));
    RETURN_IF_ERROR(c.Expect("["));
    std::vector<TensorSharding> values;
    while (!c.Consume("]")) {
      if (!values.empty()) RETURN_IF_ERROR(c.Expect(","));
      RETURN_IF_ERROR(c.Expect("<"));
      ASSIGN_OR_RETURN(values.emplace_back(), ParseShardingBody(c, meshes));
    }
    RETURN_IF_ERROR(c.Expect(">"));
    if (!c.AtEnd()) return c.Error("the end of the shardings");
    return values;
  };
  absl::StatusOr<std::vector<TensorSharding>> values = parse();
  RETURN_IF_ERROR(Annotate(values.status(), "the shardings", text));
  return values;
}

absl::StatusOr<std::vector<std::string>> ParseManualAxes(std::string_view text) {
  auto parse = [&]() -> absl::StatusOr<std::vector<std::string>> {
    Cursor c(text);
    RETURN_IF_ERROR(c.Expect("#sdy<"));
    RETURN_IF_ERROR(c.Expect("manual_axes"));
    RETURN_IF_ERROR(c.Expect("{"));
    std::vector<std::string> axes;
    while (!c.Consume("}")) {
      if (!axes.empty()) RETURN_IF_ERROR(c.Expect(","));
      ASSIGN_OR_RETURN(axes.emplace_back(), c.QuotedString());
    }
    RETURN_IF_ERROR(c.Expect(">"));
    if (!c.AtEnd()) return c.Error("the end of the manual axes");
    return axes;
  };
  absl::StatusOr<std::vector<std::string>> axes = parse();
  RETURN_IF_ERROR(Annotate(axes.status(), "the manual axes", text));
  return axes;
}

absl::StatusOr<ShardingRule> ParseShardingRule(std::string_view text) {
  Cursor c(text);
  absl::StatusOr<ShardingRule> rule = ParseRule(c);
  RETURN_IF_ERROR(Annotate(rule.status(), "the sharding rule", text));
  return rule;
}

absl::StatusOr<HloSharding> ToHloSharding(const TensorSharding& sharding, int64_t rank) {
  if (sharding.mesh->maximal_device.has_value()) {
    return HloSharding::Maximal(*sharding.mesh->maximal_device);
  }
  if (!sharding.mesh->named.has_value()) return HloSharding::Replicate();
  if (static_cast<int64_t>(sharding.axes.dims.size()) != rank) {
    return absl::InvalidArgumentError(StrCat("the sharding names ", sharding.axes.dims.size(),
                                             " dims for a value of rank ", rank));
  }
  return NamedShardingToHloSharding(*sharding.mesh->named, sharding.axes);
}

absl::StatusOr<HloSharding> ToManualHloSharding(const TensorSharding& sharding, int64_t rank,
                                                absl::Span<const std::string> manual_axes) {
  if (!sharding.mesh->named.has_value()) {
    return absl::InvalidArgumentError("a manual computation needs a mesh with axes");
  }
  const NamedMesh& mesh = *sharding.mesh->named;
  TensorSharding local = sharding;
  std::vector<int64_t> manual_ids;
  for (const std::string& name : manual_axes) {
    std::optional<int64_t> id = mesh.FindAxis(name);
    if (!id.has_value())
      return absl::InvalidArgumentError(StrCat("unknown manual axis '", name, "'"));
    manual_ids.push_back(*id);
    local.axes.manual.push_back(MeshAxisRef{*id, std::nullopt});
  }
  auto is_manual = [&](const MeshAxisRef& ref) {
    return std::find(manual_ids.begin(), manual_ids.end(), ref.axis) != manual_ids.end();
  };
  for (std::vector<MeshAxisRef>& dim : local.axes.dims) {
    const auto free = std::find_if_not(dim.begin(), dim.end(), is_manual);
    if (std::any_of(dim.begin(), dim.end(),
                    [&](const MeshAxisRef& r) { return is_manual(r) && r.sub_axis.has_value(); }) ||
        std::any_of(free, dim.end(), is_manual)) {
      return absl::InvalidArgumentError(
          "a manual axis must split a dim whole and before every free axis");
    }
    dim.erase(dim.begin(), free);
  }
  for (std::vector<MeshAxisRef>* list : {&local.axes.replicated, &local.axes.unreduced}) {
    list->erase(std::remove_if(list->begin(), list->end(), is_manual), list->end());
  }
  return ToHloSharding(local, rank);
}

namespace {

// Custom-calls whose rule Shardy builds in (its op_sharding_rule registry) when the call carries
// none: XLA's 64-bit emulation, which splits a value into two 32-bit halves and combines them
// again, position by position.
constexpr std::string_view kPointwiseTargets[] = {"X64Combine", "X64SplitLow", "X64SplitHigh"};

// Each dim of the result is one pass-through factor that every operand has at that dim; nullopt
// when an operand or the result is not an array of the result's dims.
std::optional<ShardingRule> PointwiseRule(const HloInstruction& instr) {
  const Shape& result = instr.shape();
  if (!result.IsArray() || instr.operand_count() == 0) return std::nullopt;
  for (const HloInstruction* operand : instr.operands()) {
    if (!operand->shape().IsArray() || operand->shape().dimensions() != result.dimensions()) {
      return std::nullopt;
    }
  }
  ShardingRule rule;
  ShardingRule::TensorFactors dims;
  for (int64_t d = 0; d < result.rank(); ++d) {
    rule.factor_names.push_back(StrCat("d", d));
    rule.factor_sizes.push_back(result.dimensions(d));
    rule.factor_kinds.push_back(ShardingRule::FactorKind::kPassThrough);
    dims.push_back({d});
  }
  rule.operands.assign(instr.operand_count(), dims);
  rule.results = {dims};
  return rule;
}

}  // namespace

absl::StatusOr<std::optional<ShardingRule>> ShardingRuleOf(const HloInstruction& instr) {
  const std::string* text = nullptr;
  if (instr.opcode() != HloOpcode::kCustomCall) return std::optional<ShardingRule>();
  for (const auto& [key, value] : instr.attrs().frontend_attributes) {
    if (key == "xla.sdy.sharding_rule") text = &value;
  }
  const std::string& target = instr.attrs().custom_call_target;
  if (text == nullptr && std::find(std::begin(kPointwiseTargets), std::end(kPointwiseTargets),
                                   target) != std::end(kPointwiseTargets)) {
    return PointwiseRule(instr);
  }
  if (text == nullptr) return std::optional<ShardingRule>();
  ASSIGN_OR_RETURN(ShardingRule rule, ParseShardingRule(*text));
  const std::vector<Shape> results =
      instr.shape().IsTuple() ? instr.shape().tuple_shapes() : std::vector<Shape>{instr.shape()};
  bool fits = rule.operands.size() == static_cast<size_t>(instr.operand_count()) &&
              rule.results.size() == results.size();
  for (size_t i = 0; fits && i < rule.operands.size(); ++i) {
    fits = static_cast<int64_t>(rule.operands[i].size()) == instr.operand(i)->shape().rank();
  }
  for (size_t i = 0; fits && i < rule.results.size(); ++i) {
    fits = static_cast<int64_t>(rule.results[i].size()) == results[i].rank();
  }
  if (!fits) {
    return absl::InvalidArgumentError(
        StrCat("the sharding rule '", *text, "' does not fit the operand and result ranks"));
  }
  return std::optional<ShardingRule>(std::move(rule));
}

std::vector<std::vector<int64_t>> SingleFactorDims(const ShardingRule& rule) {
  const size_t tensors = rule.operands.size() + rule.results.size();
  std::vector<std::vector<int64_t>> dims(rule.factor_names.size(),
                                         std::vector<int64_t>(tensors, -1));
  for (size_t t = 0; t < tensors; ++t) {
    const ShardingRule::TensorFactors& tensor =
        t < rule.operands.size() ? rule.operands[t] : rule.results[t - rule.operands.size()];
    for (size_t d = 0; d < tensor.size(); ++d) {
      if (tensor[d].size() == 1) dims[tensor[d][0]][t] = static_cast<int64_t>(d);
    }
  }
  return dims;
}

bool FactorMaySplit(const ShardingRule& rule, int64_t f) {
  if (rule.factor_kinds[f] != ShardingRule::FactorKind::kPassThrough) return false;
  for (const std::vector<ShardingRule::TensorFactors>* side : {&rule.operands, &rule.results}) {
    for (const ShardingRule::TensorFactors& tensor : *side) {
      for (const std::vector<int64_t>& dim : tensor) {
        if (dim.size() > 1 && std::find(dim.begin(), dim.end(), f) != dim.end()) return false;
      }
    }
  }
  return true;
}

}  // namespace hlo::sdy

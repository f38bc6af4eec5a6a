// ShardingParser's named-mesh form (grammar in hlo_sharding_parser.cc; semantics in
// named_mesh.h).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/sharding/hlo_sharding.h"
#include "hlo/sharding/named_mesh.h"
#include "hlo/sharding/sharding_lexer.h"
#include "hlo/sharding/sharding_parser.h"
#include "hlo/strings.h"

namespace hlo {
namespace sharding_internal {

// ---- Named-mesh form ------------------------------------------------------------------------

absl::StatusOr<HloSharding> ShardingParser::ParseNamed(const Token& keyword) {
  if (keyword.text == "maximal_mesh") return ParseMaximalMesh();
  absl::StatusOr<NamedMesh> mesh = ParseMesh(keyword);
  if (!mesh.ok()) return mesh.status();
  NamedShardingAxes axes;
  HloSharding::Metadata metadata;
  std::optional<Token> kind_word;
  named_refs_.clear();
  absl::Status status = ParseMeshBody(*mesh, &axes, &metadata, &kind_word);
  if (!status.ok()) return status;
  if (kind_word.has_value()) {
    if (kind_word->text == "unreduced") {
      return HloSharding::Unreduced(std::move(metadata)).WithReductionOp(axes.unreduced_op);
    }
    if (kind_word->text == "manual") return HloSharding::Manual(std::move(metadata));
    return HloSharding::Replicate(std::move(metadata));
  }
  absl::StatusOr<HloSharding> sharding =
      NamedShardingToHloSharding(*mesh, axes, std::move(metadata));
  if (!sharding.ok()) return Error(keyword.offset, sharding.status().message());
  return sharding;
}

// `[device_id=N]` (, metadata=...)?
absl::StatusOr<HloSharding> ShardingParser::ParseMaximalMesh() {
  absl::Status status = Expect(TokenKind::kLBracket, "'[' after 'maximal_mesh'");
  if (!status.ok()) return status;
  Token word;
  if (!(status = Expect(TokenKind::kIdent, "'device_id'", &word)).ok()) return status;
  if (word.text != "device_id") return Unexpected(word, "'device_id'");
  Token device;
  if (!(status = Expect(TokenKind::kEqual, "'=' after 'device_id'")).ok()) return status;
  if (!(status = ExpectInt("a device id", &device)).ok()) return status;
  if (!(status = Expect(TokenKind::kRBracket, "']' to end the maximal mesh")).ok()) return status;
  HloSharding::Metadata metadata;
  if (lexer_.Peek().kind == TokenKind::kComma) {
    lexer_.Next();
    if (!(status = ParseNamedMetadata(&metadata)).ok()) return status;
  }
  absl::StatusOr<HloSharding> sharding =
      HloSharding::Maximal(device.int_value, std::move(metadata));
  if (!sharding.ok()) return Error(device.offset, sharding.status().message());
  return sharding;
}

// `[name=size, ...]` (, device_ids=(...))?
absl::StatusOr<NamedMesh> ShardingParser::ParseMesh(const Token& keyword) {
  absl::Status status = Expect(TokenKind::kLBracket, "'[' after 'mesh'");
  if (!status.ok()) return status;
  std::vector<MeshAxis> axes;
  std::vector<int64_t> sizes;
  while (true) {
    Token name_token;
    absl::StatusOr<std::string> name = ParseAxisName("a mesh axis name", &name_token);
    if (!name.ok()) return name.status();
    if (name_token.kind == TokenKind::kInt) return Unexpected(name_token, "a mesh axis name");
    for (const MeshAxis& axis : axes) {
      if (axis.name == *name) {
        return Error(name_token.offset,
                     StrCat("mesh axis ", ShardingLexer::Describe(name_token), " appears twice"));
      }
    }
    Token size;
    if (!(status = Expect(TokenKind::kEqual, "'=' after a mesh axis name")).ok()) return status;
    if (!(status = ExpectInt("a mesh axis size", &size)).ok()) return status;
    if (size.int_value < 1) {
      return Error(size.offset, StrCat("mesh axis size ", size.int_value, " must be at least 1"));
    }
    axes.push_back({*std::move(name), size.int_value});
    sizes.push_back(size.int_value);
    Token next = lexer_.Next();
    if (next.kind == TokenKind::kRBracket) break;
    if (next.kind != TokenKind::kComma) return Unexpected(next, "',' or ']' in the mesh axes");
  }
  std::optional<TileAssignment> devices;
  if (lexer_.Peek().kind == TokenKind::kComma) {
    lexer_.Next();
    const Token& word = lexer_.Peek();
    if (word.kind == TokenKind::kIdent && word.text == "device_ids") {
      lexer_.Next();
      absl::StatusOr<TileAssignment> ids = ParseMeshDeviceIds(sizes);
      if (!ids.ok()) return ids.status();
      devices = *std::move(ids);
      if (lexer_.Peek().kind == TokenKind::kComma) lexer_.Next();
    }
  }
  absl::StatusOr<NamedMesh> mesh = NamedMesh::Create(std::move(axes), std::move(devices));
  if (!mesh.ok()) return Error(keyword.offset, mesh.status().message());
  return mesh;
}

// `=(d0,d1,...)` or `=([r0,r1,...]T(p0,p1,...))`.
absl::StatusOr<TileAssignment> ShardingParser::ParseMeshDeviceIds(
    const std::vector<int64_t>& sizes) {
  absl::Status status = Expect(TokenKind::kEqual, "'=' after 'device_ids'");
  if (!status.ok()) return status;
  Token open;
  if (!(status = Expect(TokenKind::kLParen, "'(' after 'device_ids='", &open)).ok()) return status;
  std::vector<int64_t> values;
  std::vector<size_t> offsets;
  if (lexer_.Peek().kind == TokenKind::kLBracket) {
    lexer_.Next();
    status = ParseIntList(TokenKind::kRBracket, "an iota reshape dimension", &values, &offsets);
    if (!status.ok()) return status;
    std::vector<int64_t> perm;
    const Token& t = lexer_.Peek();
    if (t.kind == TokenKind::kIdent && t.text == "T") {
      lexer_.Next();
      if (!(status = Expect(TokenKind::kLParen, "'(' after 'T'")).ok()) return status;
      std::vector<size_t> perm_offsets;
      status =
          ParseIntList(TokenKind::kRParen, "an iota transpose dimension", &perm, &perm_offsets);
      if (!status.ok()) return status;
    }
    if (!(status = Expect(TokenKind::kRParen, "')' to end 'device_ids'")).ok()) return status;
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] < 1) {
        return Error(offsets[i],
                     StrCat("iota reshape dimension ", values[i], " must be at least 1"));
      }
    }
    absl::StatusOr<TileAssignment> ta = TileAssignment::Iota(sizes, values, perm);
    if (!ta.ok()) return Error(open.offset, ta.status().message());
    return ta;
  }
  status = ParseIntList(TokenKind::kRParen, "a device id", &values, &offsets);
  if (!status.ok()) return status;
  absl::flat_hash_map<int64_t, size_t> seen;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0 || values[i] >= static_cast<int64_t>(values.size())) {
      return Error(offsets[i], StrCat("mesh device id ", values[i], " is not in [0, ",
                                      values.size(), "); device_ids must permute 0..N-1"));
    }
    if (!seen.emplace(values[i], i).second) {
      return Error(offsets[i], StrCat("mesh device id ", values[i], " appears twice"));
    }
  }
  absl::StatusOr<TileAssignment> ta = TileAssignment::Explicit(sizes, values);
  if (!ta.ok()) {
    return Error(open.offset, StrCat("device_ids has ", values.size(),
                                     " entries but the mesh axes hold a different number of "
                                     "devices: ",
                                     ta.status().message()));
  }
  return ta;
}

// After the mesh: a whole-mesh kind, or the dim shardings and the named attributes.
absl::Status ShardingParser::ParseMeshBody(const NamedMesh& mesh, NamedShardingAxes* axes,
                                           HloSharding::Metadata* metadata,
                                           std::optional<Token>* kind_word) {
  const Token& first = lexer_.Peek();
  if (first.kind == TokenKind::kIdent &&
      (first.text == "replicated" || first.text == "unreduced" || first.text == "manual")) {
    *kind_word = lexer_.Next();
    if ((*kind_word)->text == "unreduced" && lexer_.Peek().kind == TokenKind::kEqual) {
      lexer_.Next();  // `unreduced=max`: every axis unreduced, combined by max.
      absl::Status status = ParseReductionOp(&axes->unreduced_op);
      if (!status.ok()) return status;
    }
    if (lexer_.Peek().kind != TokenKind::kComma) return absl::OkStatus();
    lexer_.Next();
    return ParseNamedMetadata(metadata);
  }
  if (first.kind != TokenKind::kLBracket) {
    return Unexpected(first,
                      "'[' to start the dimension shardings, or replicated, unreduced or "
                      "manual");
  }
  absl::Status status = ParseDimShardings(mesh, axes);
  if (!status.ok()) return status;
  std::optional<Token> replicated, unreduced, manual, metadata_word;
  while (lexer_.Peek().kind == TokenKind::kComma) {
    lexer_.Next();
    Token word;
    if (!(status = Expect(TokenKind::kIdent, "a named sharding attribute", &word)).ok()) {
      return status;
    }
    std::optional<Token>* slot = word.text == "replicated"  ? &replicated
                                 : word.text == "unreduced" ? &unreduced
                                 : word.text == "manual"    ? &manual
                                 : word.text == "metadata"  ? &metadata_word
                                                            : nullptr;
    if (slot == nullptr) {
      return Error(word.offset,
                   StrCat("unknown named sharding attribute ", ShardingLexer::Describe(word),
                          "; expected replicated=, unreduced=, manual= or metadata="));
    }
    if (slot->has_value()) {
      return Error(word.offset,
                   StrCat("duplicate ", ShardingLexer::Describe(word), " in named sharding"));
    }
    *slot = word;
    if (slot == &metadata_word) {
      if (!(status = ParseMetadata(metadata)).ok()) return status;
      continue;
    }
    if (!(status = Expect(TokenKind::kEqual, StrCat("'=' after '", word.text, "'"))).ok()) {
      return status;
    }
    if (slot == &unreduced && lexer_.Peek().kind == TokenKind::kIdent) {
      if (!(status = ParseReductionOp(&axes->unreduced_op)).ok()) return status;
    }
    std::vector<MeshAxisRef>* list = slot == &replicated  ? &axes->replicated
                                     : slot == &unreduced ? &axes->unreduced
                                                          : &axes->manual;
    if (!(status = ParseAxisRefList(mesh, list)).ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status ShardingParser::ParseReductionOp(ReductionOp* op) {
  const Token word = lexer_.Next();
  for (ReductionOp o : {ReductionOp::kSum, ReductionOp::kMax, ReductionOp::kMin}) {
    if (word.kind == TokenKind::kIdent && std::string(word.text) == ReductionOpName(o)) {
      *op = o;
      return absl::OkStatus();
    }
  }
  return Unexpected(word, "sum, max or min (how unreduced axes combine)");
}

// `[` dim,* `]`, each dim `{` ref,* (`,` `?`)? `}` or `{?}`.
absl::Status ShardingParser::ParseDimShardings(const NamedMesh& mesh, NamedShardingAxes* axes) {
  lexer_.Next();  // '['
  if (lexer_.Peek().kind == TokenKind::kRBracket) {
    lexer_.Next();
    return absl::OkStatus();
  }
  while (true) {
    absl::Status status = Expect(TokenKind::kLBrace, "'{' to start a dimension sharding");
    if (!status.ok()) return status;
    std::vector<MeshAxisRef>& dim = axes->dims.emplace_back();
    bool open = false;
    while (lexer_.Peek().kind != TokenKind::kRBrace) {
      if (open) return Unexpected(lexer_.Peek(), "'}' after '?' (it must come last)");
      if (!dim.empty() || open) {
        if (!(status = Expect(TokenKind::kComma, "',' or '}' in a dimension sharding")).ok()) {
          return status;
        }
      }
      if (lexer_.Peek().kind == TokenKind::kQuestion) {
        lexer_.Next();
        open = true;
        continue;
      }
      if (!(status = ParseAxisRef(mesh, &dim)).ok()) return status;
    }
    lexer_.Next();  // '}'
    Token next = lexer_.Next();
    if (next.kind == TokenKind::kRBracket) return absl::OkStatus();
    if (next.kind != TokenKind::kComma) return Unexpected(next, "',' or ']' after a dimension");
  }
}

absl::Status ShardingParser::ParseAxisRefList(const NamedMesh& mesh,
                                              std::vector<MeshAxisRef>* refs) {
  absl::Status status = Expect(TokenKind::kLBrace, "'{' to start a list of mesh axes");
  if (!status.ok()) return status;
  if (lexer_.Peek().kind == TokenKind::kRBrace) {
    lexer_.Next();
    return absl::OkStatus();
  }
  while (true) {
    if (!(status = ParseAxisRef(mesh, refs)).ok()) return status;
    Token next = lexer_.Next();
    if (next.kind == TokenKind::kRBrace) return absl::OkStatus();
    if (next.kind != TokenKind::kComma) return Unexpected(next, "',' or '}' in a list of axes");
  }
}

// `name` or `name:(pre_size)size`; checked against the mesh and against every ref before it.
absl::Status ShardingParser::ParseAxisRef(const NamedMesh& mesh, std::vector<MeshAxisRef>* refs) {
  Token name_token;
  absl::StatusOr<std::string> name = ParseAxisName("a mesh axis", &name_token);
  if (!name.ok()) return name.status();
  MeshAxisRef ref;
  if (name_token.kind == TokenKind::kInt) {
    ref.axis = name_token.int_value;
  } else {
    std::optional<int64_t> axis = mesh.FindAxis(*name);
    if (!axis.has_value()) {
      return Error(name_token.offset,
                   StrCat("unknown mesh axis ", ShardingLexer::Describe(name_token)));
    }
    ref.axis = *axis;
  }
  if (lexer_.Peek().kind == TokenKind::kColon) {
    lexer_.Next();
    Token pre, size;
    absl::Status status = Expect(TokenKind::kLParen, "'(' after ':' in a sub-axis");
    if (!status.ok()) return status;
    if (!(status = ExpectInt("a sub-axis pre-size", &pre)).ok()) return status;
    if (!(status = Expect(TokenKind::kRParen, "')' after the sub-axis pre-size")).ok()) {
      return status;
    }
    if (!(status = ExpectInt("a sub-axis size", &size)).ok()) return status;
    ref.sub_axis = MeshAxisRef::SubAxis{pre.int_value, size.int_value};
  }
  absl::Status status = ValidateMeshAxisRef(mesh, ref);
  for (size_t i = 0; status.ok() && i < named_refs_.size(); ++i) {
    status = CheckMeshAxisRefsDisjoint(mesh, named_refs_[i], ref);
  }
  if (!status.ok()) return Error(name_token.offset, status.message());
  named_refs_.push_back(ref);
  refs->push_back(ref);
  return absl::OkStatus();
}

// `metadata=...` after a ',' in the named form.
absl::Status ShardingParser::ParseNamedMetadata(HloSharding::Metadata* metadata) {
  Token word;
  absl::Status status = Expect(TokenKind::kIdent, "'metadata'", &word);
  if (!status.ok()) return status;
  if (word.text != "metadata") return Unexpected(word, "'metadata'");
  return ParseMetadata(metadata);
}

// A quoted, bare or double-quoted axis name (without quotes), or an axis index.
absl::StatusOr<std::string> ShardingParser::ParseAxisName(absl::string_view what, Token* token) {
  *token = lexer_.Next();
  switch (token->kind) {
    case TokenKind::kQuotedName:
    case TokenKind::kString:
      if (token->text.size() <= 2) return Error(token->offset, "empty mesh axis name");
      return std::string(token->text.substr(1, token->text.size() - 2));
    case TokenKind::kIdent:
      return std::string(token->text);
    case TokenKind::kInt:
      if (token->int_overflow || token->int_value < 0) {
        return Error(token->offset, StrCat("mesh axis index ", ShardingLexer::Describe(*token),
                                           " is out of range"));
      }
      return std::string(token->text);
    default:
      return Unexpected(*token, what);
  }
}

absl::Status ShardingParser::ExpectEnd() {
  const Token& token = lexer_.Peek();
  if (token.kind == TokenKind::kEnd) return absl::OkStatus();
  return Error(token.offset,
               absl::StrCat("unexpected ", ShardingLexer::Describe(token), " after sharding"));
}

}  // namespace sharding_internal
}  // namespace hlo

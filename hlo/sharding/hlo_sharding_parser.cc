// HloSharding::Parse: the HLO sharding text form, recursive descent over ShardingLexer tokens.
//
//   sharding := '{' '}'                                       (empty tuple)
//             | '{' sharding (',' sharding)* '}'              (tuple; elements are leaves)
//             | '{' attribute* '}'                            (leaf)
//             | '{' named '}'                                 (named-mesh leaf)
//   attribute := replicated | manual | unknown | unreduced | maximal | device '=' INT
//             | devices '=' '[' INT,* ']' ( '<=' '[' INT,* ']' ('T' '(' INT,* ')')? | INT,+ )
//             | last_tile_dim_replicate | last_tile_dims '=' '{' type,* '}'
//             | metadata '=' '{' body '}' | metadata '=' '{' '{' body '}' (',' '{' body '}')* '}'
//             | shard_as INT | shard_like INT
// Attributes may come in any order, each at most once. The leaf is then built with the
// validating factories; their errors, and the parser's own, carry the offset of the token at
// fault as `offset N: message`. The named-mesh form (XLA's NamedSharding; semantics in
// named_mesh.h):
//   named := maximal_mesh '[' device_id '=' INT ']' (',' metadata '=' ...)?
//          | mesh '[' (name '=' INT),+ ']' (',' device_ids '=' '(' ids ')')? ','?
//            ( (replicated | unreduced ('=' op)? | manual) (',' metadata '=' ...)?
//            | '[' dim,* ']' (',' named_attr)* )
//   ids   := INT,* | '[' INT,+ ']' ('T' '(' INT,+ ')')?       (explicit, or iota over the mesh)
//   dim   := '{' (ref,* (',' '?')? | '?') '}'                 ('?': open; splits nothing)
//   ref   := name (':' '(' INT ')' INT)?                      (sub-axis :(pre_size)size)
//   name  := 'quoted' | IDENT | "string" | INT                (INT: the axis index)
//   named_attr := replicated '=' refs | manual '=' refs | unreduced '=' op? refs
//               | metadata '=' ...                            (each at most once)
//   refs  := '{' ref,* '}'
//   op    := sum | max | min                                  (how unreduced devices combine)
// Named shardings are converted to the tile-assignment form (printed; the named form is not
// kept). A leaf's metadata entry `op_type="sdy::reduction_op" op_name="MAX"` (or MIN, SUM) is
// its reduction op (HloSharding::TakeReductionOpFromMetadata), as in XLA's tile-assignment form.
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

absl::Status ShardingParser::Expect(TokenKind kind, absl::string_view what, Token* out) {
  Token token = lexer_.Next();
  if (token.kind != kind) return Unexpected(token, what);
  if (out != nullptr) *out = token;
  return absl::OkStatus();
}

absl::Status ShardingParser::ExpectInt(absl::string_view what, Token* out) {
  absl::Status status = Expect(TokenKind::kInt, what, out);
  if (!status.ok()) return status;
  if (out->int_overflow) {
    return Error(out->offset,
                 absl::StrCat("integer ", ShardingLexer::Describe(*out), " is out of range"));
  }
  return absl::OkStatus();
}

absl::Status ShardingParser::ParseIntList(TokenKind close, absl::string_view what,
                                          std::vector<int64_t>* values,
                                          std::vector<size_t>* offsets) {
  if (lexer_.Peek().kind == close) {
    lexer_.Next();
    return absl::OkStatus();
  }
  while (true) {
    Token value;
    absl::Status status = ExpectInt(what, &value);
    if (!status.ok()) return status;
    values->push_back(value.int_value);
    offsets->push_back(value.offset);
    Token next = lexer_.Next();
    if (next.kind == close) return absl::OkStatus();
    if (next.kind != TokenKind::kComma) {
      return Unexpected(next, close == TokenKind::kRBracket ? "',' or ']'" : "',' or ')'");
    }
  }
}

absl::StatusOr<HloSharding> ShardingParser::ParseSharding(bool allow_tuple) {
  Token open;
  absl::Status status = Expect(TokenKind::kLBrace, "'{' to start a sharding", &open);
  if (!status.ok()) return status;
  const Token& first = lexer_.Peek();
  if (first.kind == TokenKind::kLBrace || first.kind == TokenKind::kRBrace) {
    if (!allow_tuple) {
      return Error(open.offset, "a tuple sharding cannot be an element of a tuple sharding");
    }
    return ParseTuple();
  }
  if (first.kind == TokenKind::kIdent && (first.text == "mesh" || first.text == "maximal_mesh")) {
    const Token keyword = lexer_.Next();
    absl::StatusOr<HloSharding> named = ParseNamed(keyword);
    if (!named.ok()) return named.status();
    Token close;
    if (!(status = Expect(TokenKind::kRBrace, "'}' to end the named sharding", &close)).ok()) {
      return status;
    }
    return named;
  }
  LeafText leaf;
  while (true) {
    Token token = lexer_.Next();
    if (token.kind == TokenKind::kRBrace) {
      const size_t at = leaf.metadata_attr ? leaf.metadata_attr->offset : token.offset;
      absl::StatusOr<HloSharding> built = BuildLeaf(std::move(leaf), token);
      if (!built.ok()) return built;
      built = built->TakeReductionOpFromMetadata();
      return built.ok() ? built : Error(at, built.status().message());
    }
    if (token.kind != TokenKind::kIdent) {
      return Unexpected(token, "a sharding attribute or '}'");
    }
    status = ParseAttribute(token, &leaf);
    if (!status.ok()) return status;
  }
}

absl::StatusOr<HloSharding> ShardingParser::ParseTuple() {
  std::vector<HloSharding> elements;
  if (lexer_.Peek().kind == TokenKind::kRBrace) {
    lexer_.Next();
    return HloSharding::Tuple(std::move(elements));
  }
  while (true) {
    absl::StatusOr<HloSharding> element = ParseSharding(/*allow_tuple=*/false);
    if (!element.ok()) return element.status();
    elements.push_back(*std::move(element));
    Token next = lexer_.Next();
    if (next.kind == TokenKind::kRBrace) break;
    if (next.kind != TokenKind::kComma) return Unexpected(next, "',' or '}' in tuple sharding");
  }
  return HloSharding::Tuple(std::move(elements));
}

absl::Status ShardingParser::ParseAttribute(const Token& word, LeafText* leaf) {
  auto once = [&](std::optional<Token>* slot) -> absl::Status {
    if (slot->has_value()) {
      return Error(word.offset,
                   absl::StrCat("duplicate ", ShardingLexer::Describe(word), " in sharding"));
    }
    *slot = word;
    return absl::OkStatus();
  };
  const absl::string_view w = word.text;
  if (w == "replicated" || w == "manual" || w == "unknown" || w == "unreduced" || w == "maximal") {
    if (leaf->kind_word.has_value()) {
      return Error(word.offset, absl::StrCat(ShardingLexer::Describe(word), " conflicts with ",
                                             ShardingLexer::Describe(*leaf->kind_word)));
    }
    leaf->kind_word = word;
    return absl::OkStatus();
  }
  if (w == "last_tile_dim_replicate") return once(&leaf->last_tile_dim_replicate);
  absl::Status status = absl::OkStatus();
  if (w == "device") {
    Token value;
    if (!(status = once(&leaf->device_attr)).ok()) return status;
    if (!(status = Expect(TokenKind::kEqual, "'=' after 'device'")).ok()) return status;
    if (!(status = ExpectInt("a device id", &value)).ok()) return status;
    leaf->device = value.int_value;
    if (value.int_value < 0) {
      return Error(value.offset, absl::StrCat("device ", value.text, " is negative"));
    }
    return absl::OkStatus();
  }
  if (w == "devices") {
    if (!(status = once(&leaf->devices_attr)).ok()) return status;
    return ParseDevices(leaf);
  }
  if (w == "last_tile_dims") {
    if (!(status = once(&leaf->last_tile_dims)).ok()) return status;
    return ParseSubgroupTypes(leaf);
  }
  if (w == "metadata") {
    if (!(status = once(&leaf->metadata_attr)).ok()) return status;
    return ParseMetadata(&leaf->metadata);
  }
  if (w == "shard_as" || w == "shard_like") {
    Token id;
    if (!(status = once(&leaf->group_attr)).ok()) return status;
    if (!(status = ExpectInt(absl::StrCat("a shard group id after '", w, "'"), &id)).ok()) {
      return status;
    }
    if (id.int_value < 0) {
      return Error(id.offset, absl::StrCat("shard group id ", id.text, " is negative"));
    }
    leaf->group = w == "shard_as" ? ShardGroup::As(id.int_value) : ShardGroup::Like(id.int_value);
    return absl::OkStatus();
  }
  return Error(word.offset,
               absl::StrCat("unknown sharding attribute ", ShardingLexer::Describe(word),
                            "; expected replicated, maximal, manual, unknown, unreduced, "
                            "device=, devices=, last_tile_dim_replicate, last_tile_dims=, "
                            "metadata=, shard_as or shard_like"));
}

absl::Status ShardingParser::ParseDevices(LeafText* leaf) {
  absl::Status status = Expect(TokenKind::kEqual, "'=' after 'devices'");
  if (!status.ok()) return status;
  if (!(status = Expect(TokenKind::kLBracket, "'[' to start the tile assignment dimensions"))
           .ok()) {
    return status;
  }
  status = ParseIntList(TokenKind::kRBracket, "a tile assignment dimension", &leaf->dims,
                        &leaf->dim_offsets);
  if (!status.ok()) return status;
  if (lexer_.Peek().kind == TokenKind::kLessEqual) {
    leaf->iota = true;
    leaf->iota_offset = lexer_.Next().offset;
    if (!(status = Expect(TokenKind::kLBracket, "'[' after '<='")).ok()) return status;
    status = ParseIntList(TokenKind::kRBracket, "an iota reshape dimension", &leaf->reshape_dims,
                          &leaf->reshape_offsets);
    if (!status.ok()) return status;
    const Token& t = lexer_.Peek();
    if (t.kind != TokenKind::kIdent || t.text != "T") return absl::OkStatus();
    leaf->perm_offset = lexer_.Next().offset;
    if (!(status = Expect(TokenKind::kLParen, "'(' after 'T'")).ok()) return status;
    std::vector<size_t> offsets;
    return ParseIntList(TokenKind::kRParen, "an iota transpose dimension", &leaf->perm, &offsets);
  }
  while (true) {
    Token device;
    if (!(status = ExpectInt("a device id or '<='", &device)).ok()) return status;
    leaf->devices.push_back(device.int_value);
    leaf->device_offsets.push_back(device.offset);
    if (lexer_.Peek().kind != TokenKind::kComma) return absl::OkStatus();
    lexer_.Next();
  }
}

absl::Status ShardingParser::ParseSubgroupTypes(LeafText* leaf) {
  absl::Status status = Expect(TokenKind::kEqual, "'=' after 'last_tile_dims'");
  if (!status.ok()) return status;
  if (!(status = Expect(TokenKind::kLBrace, "'{' after 'last_tile_dims='")).ok()) return status;
  while (true) {
    Token type = lexer_.Next();
    if (type.kind == TokenKind::kRBrace && leaf->subgroup_types.empty()) return absl::OkStatus();
    if (type.kind != TokenKind::kIdent) return Unexpected(type, "a subgroup type");
    if (type.text == "replicated") {
      leaf->subgroup_types.push_back(OpShardingType::kReplicated);
    } else if (type.text == "manual") {
      leaf->subgroup_types.push_back(OpShardingType::kManual);
    } else if (type.text == "unreduced") {
      leaf->subgroup_types.push_back(OpShardingType::kUnreduced);
    } else {
      return Error(type.offset,
                   absl::StrCat("unknown subgroup type ", ShardingLexer::Describe(type),
                                "; expected replicated, manual or unreduced"));
    }
    Token next = lexer_.Next();
    if (next.kind == TokenKind::kRBrace) return absl::OkStatus();
    if (next.kind != TokenKind::kComma) return Unexpected(next, "',' or '}' in last_tile_dims");
  }
}

absl::Status ShardingParser::ParseMetadata(HloSharding::Metadata* metadata) {
  absl::Status status = Expect(TokenKind::kEqual, "'=' after 'metadata'");
  if (!status.ok()) return status;
  if (!(status = Expect(TokenKind::kLBrace, "'{' after 'metadata='")).ok()) return status;
  if (lexer_.Peek().kind != TokenKind::kLBrace) {
    std::string body;
    if (!(status = ParseMetadataBody(&body)).ok()) return status;
    metadata->push_back(std::move(body));
    return absl::OkStatus();
  }
  while (true) {
    std::string body;
    if (!(status = Expect(TokenKind::kLBrace, "'{' to start a metadata entry")).ok()) {
      return status;
    }
    if (!(status = ParseMetadataBody(&body)).ok()) return status;
    metadata->push_back(std::move(body));
    Token next = lexer_.Next();
    if (next.kind == TokenKind::kRBrace) return absl::OkStatus();
    if (next.kind != TokenKind::kComma) return Unexpected(next, "',' or '}' in metadata list");
  }
}

// `key=value key=value ... }`, re-joined with single spaces into `*body`.
absl::Status ShardingParser::ParseMetadataBody(std::string* body) {
  while (true) {
    Token key = lexer_.Next();
    if (key.kind == TokenKind::kRBrace) return absl::OkStatus();
    if (key.kind != TokenKind::kIdent) return Unexpected(key, "a metadata field name or '}'");
    absl::Status status =
        Expect(TokenKind::kEqual, absl::StrCat("'=' after metadata field '", key.text, "'"));
    if (!status.ok()) return status;
    if (!body->empty()) body->push_back(' ');
    absl::StrAppend(body, key.text, "=");
    if (!(status = ParseMetadataValue(body)).ok()) return status;
  }
}

absl::Status ShardingParser::ParseMetadataValue(std::string* body) {
  Token value = lexer_.Next();
  if (value.kind == TokenKind::kString || value.kind == TokenKind::kInt ||
      value.kind == TokenKind::kIdent) {
    absl::StrAppend(body, value.text);
    return absl::OkStatus();
  }
  if (value.kind != TokenKind::kLBrace) return Unexpected(value, "a metadata field value");
  body->push_back('{');
  bool first = true;
  while (true) {
    Token item = lexer_.Next();
    if (item.kind == TokenKind::kRBrace) break;
    if (item.kind == TokenKind::kComma && !first) {
      body->push_back(',');
      continue;
    }
    if (item.kind != TokenKind::kInt && item.kind != TokenKind::kIdent &&
        item.kind != TokenKind::kString) {
      return Unexpected(item, "a list item or '}' in metadata");
    }
    absl::StrAppend(body, item.text);
    first = false;
  }
  body->push_back('}');
  return absl::OkStatus();
}

absl::StatusOr<TileAssignment> ShardingParser::BuildTileAssignment(const LeafText& leaf) {
  for (size_t i = 0; i < leaf.dims.size(); ++i) {
    if (leaf.dims[i] < 1) {
      return Error(leaf.dim_offsets[i],
                   absl::StrCat("tile assignment dimension ", leaf.dims[i], " must be at least 1"));
    }
  }
  const size_t devices_offset = leaf.devices_attr->offset;
  if (leaf.dims.empty()) return Error(devices_offset, "tile assignment has no dimensions");
  absl::StatusOr<TileAssignment> ta;
  if (leaf.iota) {
    for (size_t i = 0; i < leaf.reshape_dims.size(); ++i) {
      if (leaf.reshape_dims[i] < 1) {
        return Error(
            leaf.reshape_offsets[i],
            absl::StrCat("iota reshape dimension ", leaf.reshape_dims[i], " must be at least 1"));
      }
    }
    if (leaf.perm_offset.has_value() && leaf.perm.size() != leaf.reshape_dims.size()) {
      return Error(*leaf.perm_offset,
                   absl::StrCat("iota transpose T(", absl::StrJoin(leaf.perm, ","), ") has ",
                                leaf.perm.size(), " entries but there are ",
                                leaf.reshape_dims.size(), " reshape dimensions"));
    }
    ta = TileAssignment::Iota(leaf.dims, leaf.reshape_dims, leaf.perm);
    if (!ta.ok()) {
      const bool perm_error =
          leaf.perm_offset.has_value() && absl::StrContains(ta.status().message(), "permutation");
      return Error(perm_error ? *leaf.perm_offset : leaf.iota_offset, ta.status().message());
    }
    return ta;
  }
  absl::flat_hash_map<int64_t, size_t> seen;
  for (size_t i = 0; i < leaf.devices.size(); ++i) {
    if (leaf.devices[i] < 0) {
      return Error(leaf.device_offsets[i],
                   absl::StrCat("device ", leaf.devices[i], " in tile assignment is negative"));
    }
    if (!seen.emplace(leaf.devices[i], i).second) {
      return Error(
          leaf.device_offsets[i],
          absl::StrCat("device ", leaf.devices[i], " appears more than once in tile assignment"));
    }
  }
  ta = TileAssignment::Explicit(leaf.dims, leaf.devices);
  if (!ta.ok()) return Error(leaf.device_offsets[0], ta.status().message());
  return ta;
}

absl::StatusOr<HloSharding> ShardingParser::BuildLeaf(LeafText leaf, const Token& close) {
  auto conflict = [&](const Token& a, const Token& b) {
    return Error(a.offset, absl::StrCat(ShardingLexer::Describe(a), " cannot be combined with ",
                                        ShardingLexer::Describe(b)));
  };
  const std::optional<Token>& kind = leaf.kind_word;
  const bool maximal = kind.has_value() && kind->text == "maximal";
  if (leaf.devices_attr.has_value() && kind.has_value()) return conflict(*kind, *leaf.devices_attr);
  if (leaf.device_attr.has_value() && !maximal) {
    if (kind.has_value()) return conflict(*leaf.device_attr, *kind);
    return Error(leaf.device_attr->offset, "'device' is only valid with 'maximal'");
  }
  for (const std::optional<Token>* sub : {&leaf.last_tile_dim_replicate, &leaf.last_tile_dims}) {
    if (sub->has_value() && !leaf.devices_attr.has_value()) {
      return Error((*sub)->offset,
                   absl::StrCat(ShardingLexer::Describe(**sub), " is only valid with 'devices='"));
    }
  }
  if (leaf.last_tile_dim_replicate.has_value() && leaf.last_tile_dims.has_value()) {
    return conflict(*leaf.last_tile_dims, *leaf.last_tile_dim_replicate);
  }
  absl::StatusOr<HloSharding> sharding = absl::InternalError("unset");
  if (maximal) {
    if (!leaf.device_attr.has_value()) return Error(kind->offset, "'maximal' needs 'device=N'");
    sharding = HloSharding::Maximal(leaf.device, std::move(leaf.metadata));
  } else if (kind.has_value()) {
    const absl::string_view w = kind->text;
    sharding = w == "replicated" ? HloSharding::Replicate(std::move(leaf.metadata))
               : w == "manual"   ? HloSharding::Manual(std::move(leaf.metadata))
               : w == "unknown"  ? HloSharding::Unknown(std::move(leaf.metadata))
                                 : HloSharding::Unreduced(std::move(leaf.metadata));
  } else if (leaf.devices_attr.has_value()) {
    absl::StatusOr<TileAssignment> ta = BuildTileAssignment(leaf);
    if (!ta.ok()) return ta.status();
    size_t offset = leaf.devices_attr->offset;
    if (leaf.last_tile_dims.has_value()) {
      offset = leaf.last_tile_dims->offset;
      sharding =
          HloSharding::Subgroup(*std::move(ta), leaf.subgroup_types, std::move(leaf.metadata));
    } else if (leaf.last_tile_dim_replicate.has_value()) {
      sharding = HloSharding::PartialTile(*std::move(ta), std::move(leaf.metadata));
    } else {
      sharding = HloSharding::Tile(*std::move(ta), std::move(leaf.metadata));
    }
    if (!sharding.ok()) return Error(offset, sharding.status().message());
  } else {
    return Error(close.offset,
                 "sharding has neither a kind (replicated, maximal, manual, unknown, "
                 "unreduced) nor 'devices='");
  }
  if (!sharding.ok()) return sharding.status();
  if (leaf.group.is_set()) return sharding->WithShardGroup(leaf.group);
  return sharding;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ShardingParser::ParseMeshReplicaGroups() {
  Token keyword;
  absl::Status status = Expect(TokenKind::kIdent, "'mesh'", &keyword);
  if (!status.ok()) return status;
  if (keyword.text != "mesh") return Unexpected(keyword, "'mesh'");
  absl::StatusOr<NamedMesh> mesh = ParseMesh(keyword);
  if (!mesh.ok()) return mesh.status();
  named_refs_.clear();
  std::vector<MeshAxisRef> refs;
  if (!(status = ParseAxisRefList(*mesh, &refs)).ok()) return status;
  absl::StatusOr<std::vector<std::vector<int64_t>>> groups = MeshAxesReplicaGroups(*mesh, refs);
  if (!groups.ok()) return Error(keyword.offset, groups.status().message());
  return groups;
}

}  // namespace sharding_internal

using sharding_internal::ShardingParser;

absl::StatusOr<HloSharding> HloSharding::ParsePrefix(std::string_view text, size_t* consumed) {
  ShardingParser parser(text);
  absl::StatusOr<HloSharding> sharding = parser.ParseSharding(/*allow_tuple=*/true);
  if (sharding.ok() && consumed != nullptr) *consumed = parser.consumed();
  return sharding;
}

absl::StatusOr<HloSharding> HloSharding::Parse(std::string_view text) {
  ShardingParser parser(text);
  absl::StatusOr<HloSharding> sharding = parser.ParseSharding(/*allow_tuple=*/true);
  if (!sharding.ok()) return sharding;
  absl::Status status = parser.ExpectEnd();
  if (!status.ok()) return status;
  return sharding;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ParseMeshAxesReplicaGroups(std::string_view text,
                                                                             size_t* consumed) {
  ShardingParser parser(text);
  absl::StatusOr<std::vector<std::vector<int64_t>>> groups = parser.ParseMeshReplicaGroups();
  if (groups.ok() && consumed != nullptr) *consumed = parser.consumed();
  return groups;
}

absl::StatusOr<NamedShardingAxes> ParseNamedShardingAxes(const NamedMesh& mesh,
                                                         std::string_view text, size_t* consumed) {
  ShardingParser parser(text);
  NamedShardingAxes axes;
  absl::Status status = parser.ParseAxesOnMesh(mesh, &axes);
  *consumed = parser.consumed();
  return status.ok() ? absl::StatusOr<NamedShardingAxes>(std::move(axes)) : status;
}

}  // namespace hlo

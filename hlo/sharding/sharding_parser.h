// The sharding text parser's internals, shared by hlo_sharding_parser.cc (the tile-assignment
// form) and named_sharding_parser.cc (XLA's named-mesh form); the grammar is in the first.
#ifndef HLO_SHARDING_SHARDING_PARSER_H_
#define HLO_SHARDING_SHARDING_PARSER_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hlo/sharding/hlo_sharding.h"
#include "hlo/sharding/named_mesh.h"
#include "hlo/sharding/sharding_lexer.h"
#include "hlo/strings.h"

namespace hlo {
namespace sharding_internal {

// Everything written inside one leaf's braces, with where each part was written.
struct LeafText {
  std::optional<Token> kind_word;  // replicated / manual / unknown / unreduced / maximal.
  std::optional<Token> device_attr;
  int64_t device = 0;
  std::optional<Token> devices_attr;
  std::vector<int64_t> dims;
  std::vector<size_t> dim_offsets;
  bool iota = false;
  size_t iota_offset = 0;  // Of `<=`.
  std::vector<int64_t> reshape_dims;
  std::vector<size_t> reshape_offsets;
  std::optional<size_t> perm_offset;  // Of `T`.
  std::vector<int64_t> perm;
  std::vector<int64_t> devices;
  std::vector<size_t> device_offsets;
  std::optional<Token> last_tile_dim_replicate;
  std::optional<Token> last_tile_dims;
  std::vector<OpShardingType> subgroup_types;
  std::optional<Token> metadata_attr;
  HloSharding::Metadata metadata;
  std::optional<Token> group_attr;
  ShardGroup group;
};

class ShardingParser {
 public:
  explicit ShardingParser(std::string_view text) : lexer_(text) {}

  absl::StatusOr<HloSharding> ParseSharding(bool allow_tuple);
  // `mesh[...] {axes}` of a replica_groups attribute.
  absl::StatusOr<std::vector<std::vector<int64_t>>> ParseMeshReplicaGroups();
  // `[dims] (, replicated=|unreduced=|manual= {axes})*` on a known mesh (Shardy's form).
  absl::Status ParseAxesOnMesh(const NamedMesh& mesh, NamedShardingAxes* axes) {
    if (lexer_.Peek().kind != TokenKind::kLBracket) return Unexpected(lexer_.Peek(), "'['");
    HloSharding::Metadata metadata;
    std::optional<Token> kind_word;
    return ParseMeshBody(mesh, axes, &metadata, &kind_word);
  }
  absl::Status ExpectEnd();
  size_t consumed() const { return lexer_.consumed(); }

 private:
  absl::Status Error(size_t offset, absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat("offset ", offset, ": ", message));
  }
  absl::Status Unexpected(const Token& token, absl::string_view expected) {
    return Error(token.offset,
                 absl::StrCat("expected ", expected, ", got ", ShardingLexer::Describe(token)));
  }
  absl::Status Expect(TokenKind kind, absl::string_view what, Token* out = nullptr);
  absl::Status ExpectInt(absl::string_view what, Token* out);
  absl::Status ParseIntList(TokenKind close, absl::string_view what, std::vector<int64_t>* values,
                            std::vector<size_t>* offsets);

  absl::StatusOr<HloSharding> ParseTuple();
  absl::Status ParseAttribute(const Token& word, LeafText* leaf);
  absl::Status ParseDevices(LeafText* leaf);
  absl::Status ParseSubgroupTypes(LeafText* leaf);
  absl::Status ParseMetadata(HloSharding::Metadata* metadata);
  absl::Status ParseMetadataBody(std::string* body);
  absl::Status ParseMetadataValue(std::string* body);
  absl::StatusOr<HloSharding> BuildLeaf(LeafText leaf, const Token& close);
  absl::StatusOr<TileAssignment> BuildTileAssignment(const LeafText& leaf);

  // Named-mesh form; `keyword` (mesh or maximal_mesh) is consumed, the closing '}' is not.
  absl::StatusOr<HloSharding> ParseNamed(const Token& keyword);
  absl::StatusOr<HloSharding> ParseMaximalMesh();
  absl::StatusOr<NamedMesh> ParseMesh(const Token& keyword);
  absl::StatusOr<TileAssignment> ParseMeshDeviceIds(const std::vector<int64_t>& sizes);
  absl::Status ParseMeshBody(const NamedMesh& mesh, NamedShardingAxes* axes,
                             HloSharding::Metadata* metadata, std::optional<Token>* kind_word);
  absl::Status ParseDimShardings(const NamedMesh& mesh, NamedShardingAxes* axes);
  absl::Status ParseAxisRefList(const NamedMesh& mesh, std::vector<MeshAxisRef>* refs);
  absl::Status ParseAxisRef(const NamedMesh& mesh, std::vector<MeshAxisRef>* refs);
  absl::Status ParseNamedMetadata(HloSharding::Metadata* metadata);
  absl::Status ParseReductionOp(ReductionOp* op);  // `sum`, `max` or `min`.
  absl::StatusOr<std::string> ParseAxisName(absl::string_view what, Token* token);

  // Every ref of the named sharding being parsed, for the overlap check.
  std::vector<MeshAxisRef> named_refs_;

  ShardingLexer lexer_;
};

}  // namespace sharding_internal
}  // namespace hlo

#endif  // HLO_SHARDING_SHARDING_PARSER_H_

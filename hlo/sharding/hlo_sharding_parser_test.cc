// Text form of HloSharding: round trips, canonical printing, and errors with byte offsets.
// The last test parses every `sharding={...}` in the XLA test corpus (../shared/corpus).
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/sharding/hlo_sharding.h"

namespace hlo {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string RoundTrip(const std::string& text) {
  absl::StatusOr<HloSharding> s = HloSharding::Parse(text);
  if (!s.ok()) return std::string(s.status().message());
  return s->ToString();
}

std::string ParseError(const std::string& text) {
  absl::StatusOr<HloSharding> s = HloSharding::Parse(text);
  if (s.ok()) return "parsed as " + s->ToString();
  return std::string(s.status().message());
}

TEST(HloShardingParserTest, KindsRoundTrip) {
  for (const char* text : {
           "{replicated}",
           "{manual}",
           "{unknown}",
           "{unreduced}",
           "{maximal device=3}",
           "{devices=[2,2]<=[4]}",
           "{devices=[4,2]<=[8]}",
           "{devices=[3,4]<=[2,2,3]T(2,1,0)}",
           "{devices=[2,1,2]2,3,5,7}",
           "{devices=[4,1,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}",
           "{devices=[2,1,2]<=[4] last_tile_dims={manual}}",
           "{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}",
           "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={unreduced}}",
           "{{replicated}, {devices=[2]0,1}}",
           "{}",
           "{replicated metadata={op_name=\"a\"}}",
           "{devices=[2]0,1 metadata={op_type=\"Dot\" op_name=\"x\" source_file=\"f.py\" "
           "source_line=3}}",
           "{replicated metadata={{op_name=\"a\"}, {op_name=\"b\"}}}",
           "{unknown shard_as 0}",
           "{devices=[2]<=[2] shard_like 1 metadata={op_name=\"a\"}}",
           "{maximal device=0 shard_as 2}",
       }) {
    EXPECT_EQ(RoundTrip(text), text);
  }
}

TEST(HloShardingParserTest, CanonicalPrinting) {
  // Whitespace, separators and comments are normalized.
  EXPECT_EQ(RoundTrip("  {\n  devices=[2,2]0,1,2,3  }  "), "{devices=[2,2]0,1,2,3}");
  EXPECT_EQ(RoundTrip("{{replicated},{manual}}"), "{{replicated}, {manual}}");
  EXPECT_EQ(RoundTrip("{devices=[1,2,2]<=[4] last_tile_dims={manual,replicated}}"),
            "{devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}");
  EXPECT_EQ(RoundTrip("{replicated  metadata={op_name=\"a\"   source_line=2}}"),
            "{replicated metadata={op_name=\"a\" source_line=2}}");
  // Attribute order is free on input; printing uses XLA's order.
  EXPECT_EQ(RoundTrip("{metadata={op_name=\"a\"} device=1 maximal}"),
            "{maximal device=1 metadata={op_name=\"a\"}}");
  // XLA's canonical forms.
  EXPECT_EQ(RoundTrip("{devices=[1,2,2]1,0,3,2 last_tile_dim_replicate}"),
            "{devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}");
  EXPECT_EQ(RoundTrip("{devices=[1,1,2,2]<=[4] last_tile_dims={replicated, manual}}"),
            "{devices=[1,1,2,2]<=[2,2]T(1,0) last_tile_dims={manual, replicated}}");
  EXPECT_EQ(RoundTrip("{devices=[1,1,4]<=[4] last_tile_dim_replicate}"), "{replicated}");
  EXPECT_EQ(RoundTrip("{devices=[2,1]<=[2] last_tile_dim_replicate}"), "{devices=[2]<=[2]}");
  EXPECT_EQ(RoundTrip("{devices=[1,1,2]0,1 last_tile_dims={manual}}"), "{manual}");
  EXPECT_EQ(RoundTrip("{devices=[2,2]<=[4] last_tile_dims={replicated}}"),
            "{devices=[2,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(RoundTrip("{devices=[1,2,2]<=[2,2]}"), "{devices=[1,2,2]<=[4]}");
}

TEST(HloShardingParserTest, TupleIndexComments) {
  const std::string text =
      "{{replicated}, {replicated}, {replicated}, {replicated}, {replicated}, "
      "/*index=5*/{manual}}";
  EXPECT_EQ(RoundTrip(text), text);
}

TEST(HloShardingParserTest, ParsePrefixReportsConsumed) {
  size_t consumed = 0;
  const std::string text = "{devices=[2]0,1 metadata={op_name=\"}\"}}, next_attr=1";
  absl::StatusOr<HloSharding> s = HloSharding::ParsePrefix(text, &consumed);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(text.substr(consumed), ", next_attr=1");
}

TEST(HloShardingParserTest, ErrorsCarryOffsets) {
  EXPECT_EQ(ParseError("{devices=[2,2]0,1,2,2}"),
            "offset 20: device 2 appears more than once in tile assignment");
  EXPECT_EQ(ParseError("{devices=[2,2]0,1,2}"),
            "offset 14: tile assignment dimensions [2,2] hold 4 devices but 3 are listed");
  EXPECT_EQ(ParseError("{devices=[2,2]<=[8]}"),
            "offset 14: tile assignment dimensions [2,2] hold 4 devices but iota reshape "
            "dimensions [8] hold 8");
  EXPECT_EQ(ParseError("{devices=[4]<=[2,2]T(0,0)}"),
            "offset 19: iota transpose permutation (0,0) is not a permutation of 0..1");
  EXPECT_EQ(ParseError("{devices=[4]<=[2,2]T(0)}"),
            "offset 19: iota transpose T(0) has 1 entries but there are 2 reshape dimensions");
  EXPECT_EQ(ParseError("{devices=[2,0]0,1}"),
            "offset 12: tile assignment dimension 0 must be at least 1");
  EXPECT_EQ(ParseError("{replicatd}"),
            "offset 1: unknown sharding attribute 'replicatd'; expected replicated, maximal, "
            "manual, unknown, unreduced, device=, devices=, last_tile_dim_replicate, "
            "last_tile_dims=, metadata=, shard_as or shard_like");
  EXPECT_EQ(ParseError("{replicated devices=[2]0,1}"),
            "offset 1: 'replicated' cannot be combined with 'devices'");
  EXPECT_EQ(ParseError("{maximal}"), "offset 1: 'maximal' needs 'device=N'");
  EXPECT_EQ(ParseError("{maximal device=-1}"), "offset 16: device -1 is negative");
  EXPECT_EQ(ParseError("{replicated replicated}"),
            "offset 12: 'replicated' conflicts with 'replicated'");
  EXPECT_EQ(ParseError("{devices=[2]0,1 last_tile_dims={bogus}}"),
            "offset 32: unknown subgroup type 'bogus'; expected replicated, manual or unreduced");
  EXPECT_EQ(ParseError("{devices=[2]0,1 last_tile_dims={manual, manual}}"),
            "offset 16: 2 subgroup types for tile assignment [2]0,1 of rank 1");
  EXPECT_EQ(ParseError("{last_tile_dim_replicate}"),
            "offset 1: 'last_tile_dim_replicate' is only valid with 'devices='");
  EXPECT_EQ(ParseError("{devices=[1]0}"),
            "offset 1: tile assignment [1]0 has a single device; use a maximal or replicated "
            "sharding instead");
  EXPECT_EQ(ParseError("{}x"), "offset 2: unexpected 'x' after sharding");
  EXPECT_EQ(ParseError("{replicated"),
            "offset 11: expected a sharding attribute or '}', got end of input");
  EXPECT_EQ(ParseError("{{{replicated}}}"),
            "offset 1: a tuple sharding cannot be an element of a tuple sharding");
  EXPECT_EQ(ParseError("{devices=[2]0,1 shard_as -1}"), "offset 25: shard group id -1 is negative");
  EXPECT_EQ(ParseError("{devices=[2]0,1 metadata={op_name=\"a}}"),
            "offset 34: expected a metadata field value, got '\"'");
  EXPECT_EQ(ParseError("{devices=[99999999999999999999]0}"),
            "offset 10: integer '99999999999999999999' is out of range");
}

TEST(HloShardingParserTest, NamedMeshIsRejected) {
  EXPECT_EQ(ParseError("{mesh['x'=2] [{'x'}]}"),
            "offset 1: named-mesh shardings are not supported (found 'mesh')");
  EXPECT_THAT(ParseError("{{replicated}, {mesh['x'=2] []}}"),
              StartsWith("offset 16: named-mesh shardings are not supported"));
}

// ---- The corpus -----------------------------------------------------------------------------

// ../shared/corpus/xla-tests beside the workspace, found through a runfile symlink; or
// $SHARDING_CORPUS_DIR. Empty when neither exists.
std::filesystem::path CorpusDir() {
  if (const char* dir = std::getenv("SHARDING_CORPUS_DIR")) return dir;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return {};
  std::error_code ec;
  std::filesystem::path build = std::filesystem::canonical(
      std::filesystem::path(srcdir) / workspace / "hlo/sharding/BUILD.bazel", ec);
  if (ec) return {};
  std::filesystem::path corpus =
      build.parent_path().parent_path().parent_path().parent_path() / "shared/corpus/xla-tests";
  return std::filesystem::exists(corpus) ? corpus : std::filesystem::path();
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Offsets of every `sharding={` attribute outside string literals.
std::vector<size_t> ShardingAttributes(const std::string& text) {
  std::vector<size_t> offsets;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (in_string) {
      if (text[i] == '\\')
        ++i;
      else if (text[i] == '"')
        in_string = false;
      continue;
    }
    if (text[i] == '"') {
      in_string = true;
    } else if (text.compare(i, 10, "sharding={") == 0 && (i == 0 || !IsIdentChar(text[i - 1]))) {
      offsets.push_back(i + 9);
    }
  }
  return offsets;
}

TEST(HloShardingParserTest, EveryCorpusShardingRoundTrips) {
  const std::filesystem::path dir = CorpusDir();
  if (dir.empty()) GTEST_SKIP() << "corpus not found";
  int parsed = 0, named = 0, files = 0;
  for (const auto& suite : std::filesystem::directory_iterator(dir)) {
    if (!suite.is_directory()) continue;
    for (const auto& file : std::filesystem::directory_iterator(suite.path())) {
      if (file.path().extension() != ".hlo") continue;
      ++files;
      std::ifstream in(file.path());
      std::stringstream buffer;
      buffer << in.rdbuf();
      const std::string text = buffer.str();
      for (size_t offset : ShardingAttributes(text)) {
        size_t consumed = 0;
        absl::StatusOr<HloSharding> s =
            HloSharding::ParsePrefix(std::string_view(text).substr(offset), &consumed);
        if (!s.ok() && absl::StrContains(s.status().message(), "named-mesh")) {
          ++named;
          continue;
        }
        ASSERT_TRUE(s.ok()) << file.path() << ": " << s.status() << "\n"
                            << text.substr(offset, 200);
        const std::string printed = s->ToString();
        absl::StatusOr<HloSharding> again = HloSharding::Parse(printed);
        ASSERT_TRUE(again.ok()) << printed << ": " << again.status();
        EXPECT_EQ(again->ToString(), printed);
        EXPECT_EQ(*again, *s);
        ++parsed;
      }
    }
  }
  std::cout << "corpus: " << files << " files, " << parsed << " shardings round-tripped, " << named
            << " named-mesh shardings rejected\n";
  EXPECT_GT(parsed, 1000);
}

}  // namespace
}  // namespace hlo

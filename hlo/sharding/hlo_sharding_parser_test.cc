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

// ---- Named-mesh form -------------------------------------------------------------------------
// Each named sharding is converted on parsing; the expected tile-assignment forms are worked
// out by hand from the mesh's row-major device order.

// The sharding `named` parses to, printed, after checking that it equals `expected` parsed.
std::string Named(const std::string& named, const std::string& expected) {
  absl::StatusOr<HloSharding> s = HloSharding::Parse(named);
  if (!s.ok()) return std::string(s.status().message());
  absl::StatusOr<HloSharding> want = HloSharding::Parse(expected);
  EXPECT_TRUE(want.ok()) << expected;
  if (want.ok()) EXPECT_EQ(*s, *want) << named << " vs " << expected;
  return s->ToString();
}

TEST(HloShardingParserTest, NamedMeshDimShardings) {
  // Devices of mesh x=2,y=2: [[0,1],[2,3]] (x major).
  EXPECT_EQ(Named("{mesh['x'=2,'y'=2] [{'x', 'y'}, {}]}", "{devices=[4,1]<=[4]}"),
            "{devices=[4,1]<=[4]}");
  // Optional comma after the mesh.
  EXPECT_EQ(Named("{mesh['x'=2,'y'=2], [{'x'}, {'y'}]}", "{devices=[2,2]0,1,2,3}"),
            "{devices=[2,2]<=[4]}");
  EXPECT_EQ(Named("{mesh['x'=2,'y'=2] [{'y'}, {'x'}]}", "{devices=[2,2]0,2,1,3}"),
            "{devices=[2,2]<=[2,2]T(1,0)}");
  // Axis y unused: replicated. Tile 0 of dim 0 is y=0: devices {0, 2}.
  EXPECT_EQ(
      Named("{mesh['x'=2,'y'=2] [{'y'}, {}]}", "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"),
      "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(
      Named("{mesh['x'=2,'y'=2] [{'x'}, {}]}", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"),
      "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  // Listing replicated axes changes nothing.
  EXPECT_EQ(Named("{mesh['x'=2,'y'=2] [{'x'}, {}], replicated={'y'}}",
                  "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"),
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  // x=2,y=2,z=2: dim 0 by x then z (minor), dim 1 by y: tile (i,j) = 4*(i/2) + 2*j + i%2.
  EXPECT_EQ(Named("{mesh['x'=2,'y'=2,'z'=2] [{'x','z'},{'y'}]}", "{devices=[4,2]0,2,1,3,4,6,5,7}"),
            "{devices=[4,2]<=[2,2,2]T(0,2,1)}");
  // Bare and double-quoted names, and axis indices, name the same axes.
  EXPECT_EQ(Named("{mesh[x=2,\"y\"=2] [{y}, {0}]}", "{devices=[2,2]0,2,1,3}"),
            "{devices=[2,2]<=[2,2]T(1,0)}");
}

TEST(HloShardingParserTest, NamedMeshDeviceIds) {
  // Mesh devices [[3,2],[1,0]]; x splits dim 0, y replicates ({3,2} and {1,0}, sorted).
  EXPECT_EQ(Named("{mesh['x'=2,'y'=2], device_ids=(3,2,1,0), [{'x'}, {}]}",
                  "{devices=[2,1,2]2,3,0,1 last_tile_dim_replicate}"),
            "{devices=[2,1,2]2,3,0,1 last_tile_dim_replicate}");
  EXPECT_EQ(Named("{mesh['x'=2,'y'=2], device_ids=(3,2,1,0), [{'y'}, {'x'}], replicated={}}",
                  "{devices=[2,2]3,1,2,0}"),
            "{devices=[2,2]3,1,2,0}");
  // Iota device order: a=2,b=4 over [4,2]T(1,0): the device at (a, b) is 4*... = b*2 + a.
  EXPECT_EQ(Named("{mesh['a'=2,'b'=4], device_ids=([4,2]T(1,0)), [{'b'}, {'a'}]}",
                  "{devices=[4,2]<=[8]}"),
            "{devices=[4,2]<=[8]}");
  EXPECT_EQ(Named("{mesh['a'=2,'b'=4], device_ids=([4,2]T(1,0)), [{'a'}, {'b'}]}",
                  "{devices=[2,4]0,2,4,6,1,3,5,7}"),
            "{devices=[2,4]<=[4,2]T(1,0)}");
}

TEST(HloShardingParserTest, NamedMeshSubAxes) {
  // x=8 splits into bits b0 (major, 'x':(1)2), b1 ('x':(2)2), b2 ('x':(4)2): device 4b0+2b1+b2.
  EXPECT_EQ(
      Named("{mesh['x'=8] [{'x':(1)2, 'x':(4)2}, {'x':(2)2}]}", "{devices=[4,2]0,2,1,3,4,6,5,7}"),
      "{devices=[4,2]<=[2,2,2]T(0,2,1)}");
  EXPECT_EQ(Named("{mesh['x'=4] [{'x':(2)2}, {'x':(1)2}]}", "{devices=[2,2]0,2,1,3}"),
            "{devices=[2,2]<=[2,2]T(1,0)}");
  EXPECT_EQ(Named("{mesh['x'=8] [{'x':(1)2}, {'x':(2)4}]}", "{devices=[2,4]<=[8]}"),
            "{devices=[2,4]<=[8]}");
  // The unused bit b1 replicates: tile i = 4*(i/2) + i%2, group {+0, +2}.
  EXPECT_EQ(Named("{mesh['x'=8] [{'x':(1)2, 'x':(4)2}, {}]}",
                  "{devices=[4,1,2]0,2,1,3,4,6,5,7 last_tile_dim_replicate}"),
            "{devices=[4,1,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}");
  // XLA's split-axes cases: a=16, b=4 (the expected forms are XLA's; ours can be simpler, as
  // here where b, then a's pieces in order, is [16,4]T(1,0)).
  EXPECT_EQ(Named("{mesh['a'=16,'b'=4] [{'b', 'a':(1)2}]}",
                  "{devices=[8,8]<=[2,8,4]T(2,0,1) last_tile_dim_replicate}"),
            "{devices=[8,8]<=[16,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(Named("{mesh['a'=16,'b'=4] [{'a':(1)2, 'a':(8)2}, {'a':(2)4, 'b'}]}",
                  "{devices=[4,16]<=[2,4,2,4]T(0,2,1,3)}"),
            "{devices=[4,16]<=[2,4,2,4]T(0,2,1,3)}");
}

TEST(HloShardingParserTest, NamedMeshOpenDims) {
  // `?` (open: propagation may shard the dim further) adds no sharding.
  EXPECT_EQ(Named("{mesh['x'=2,'y'=2] [{'x', ?}, {?}]}",
                  "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"),
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(Named("{mesh['x'=2,'y'=2] [{?},{'x'}], unreduced={'y'}}",
                  "{devices=[1,2,2]<=[4] last_tile_dims={unreduced}}"),
            "{devices=[1,2,2]<=[4] last_tile_dims={unreduced}}");
}

TEST(HloShardingParserTest, NamedMeshKindsAndSubgroups) {
  EXPECT_EQ(Named("{mesh['x'=2,'y'=2] replicated}", "{replicated}"), "{replicated}");
  EXPECT_EQ(Named("{mesh['x'=2] []}", "{replicated}"), "{replicated}");
  EXPECT_EQ(Named("{mesh['x'=2], [{}, {}]}", "{replicated}"), "{replicated}");
  EXPECT_EQ(Named("{mesh['x'=2] unreduced}", "{unreduced}"), "{unreduced}");
  EXPECT_EQ(Named("{mesh['x'=2], manual}", "{manual}"), "{manual}");
  EXPECT_EQ(Named("{maximal_mesh[device_id=3]}", "{maximal device=3}"), "{maximal device=3}");
  EXPECT_EQ(Named("{mesh['a'=2, 'b'=2], [], unreduced={'a', 'b'}}", "{unreduced}"), "{unreduced}");
  EXPECT_EQ(Named("{mesh['x'=2] [{},{}], unreduced=sum{'x'}}", "{unreduced}"), "{unreduced}");
  EXPECT_EQ(Named("{mesh['a'=2,'b'=2] [{'a'}, {}], unreduced={'b'}}",
                  "{devices=[2,1,2]<=[4] last_tile_dims={unreduced}}"),
            "{devices=[2,1,2]<=[4] last_tile_dims={unreduced}}");
  EXPECT_EQ(Named("{mesh['a'=2,'b'=2] [{}, {'b'}], manual={'a'}}",
                  "{devices=[1,2,2]0,2,1,3 last_tile_dims={manual}}"),
            "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual}}");
  // Order of the subgroup dims: manual, unreduced, replicated (XLA's MultipleSubgroups case).
  EXPECT_EQ(Named("{mesh['a'=2,'b'=3,'c'=4,'d'=5] [{'a'}], replicated={'d'}, unreduced={'c'}, "
                  "manual={'b'}}",
                  "{devices=[2,3,4,5]<=[120] last_tile_dims={manual, unreduced, replicated}}"),
            "{devices=[2,3,4,5]<=[120] last_tile_dims={manual, unreduced, replicated}}");
  // Split axes in every subgroup kind (XLA's AllSubgroupTypesWithSplitAxes, with two data dims).
  EXPECT_EQ(Named("{mesh['a'=16,'b'=4] [{}, {}], replicated={'a':(2)4}, unreduced={'a':(1)2}, "
                  "manual={'a':(8)2, 'b'}}",
                  "{devices=[1,1,8,2,4]<=[2,4,2,4]T(2,3,0,1) "
                  "last_tile_dims={manual, unreduced, replicated}}"),
            "{devices=[1,1,8,2,4]<=[8,8]T(1,0) last_tile_dims={manual, unreduced, replicated}}");
}

TEST(HloShardingParserTest, NamedMeshMetadataAndTuples) {
  EXPECT_EQ(RoundTrip("{mesh['x'=2] [{'x'}], metadata={op_name=\"a\"}}"),
            "{devices=[2]<=[2] metadata={op_name=\"a\"}}");
  EXPECT_EQ(RoundTrip("{mesh['x'=2] replicated, metadata={{op_name=\"a\"}, {op_name=\"b\"}}}"),
            "{replicated metadata={{op_name=\"a\"}, {op_name=\"b\"}}}");
  EXPECT_EQ(RoundTrip("{maximal_mesh[device_id=1], metadata={op_name=\"a\"}}"),
            "{maximal device=1 metadata={op_name=\"a\"}}");
  EXPECT_EQ(RoundTrip("{{mesh['x'=2] [], unreduced={'x'}}, {mesh['x'=2] []}}"),
            "{{unreduced}, {replicated}}");
  EXPECT_EQ(RoundTrip("{{mesh['x'=2] [{'x'}]}, {replicated}}"),
            "{{devices=[2]<=[2]}, {replicated}}");
}

// Max and min unreduced axes (Shardy's `unreduced=max{...}`): the tile-assignment form carries
// the op as XLA does, in a metadata entry that parses back into the op, not into metadata.
TEST(HloShardingParserTest, UnreducedReductionOps) {
  const std::string max = "metadata={op_type=\"sdy::reduction_op\" op_name=\"MAX\"}";
  EXPECT_EQ(RoundTrip("{mesh['a'=2, 'b'=2], [], unreduced=max{'a', 'b'}}"),
            "{unreduced " + max + "}");
  EXPECT_EQ(RoundTrip("{mesh['x'=2], unreduced=max}"), "{unreduced " + max + "}");
  EXPECT_EQ(RoundTrip("{mesh['a'=2,'b'=2] [{'a'}, {}], unreduced=min{'b'}}"),
            "{devices=[2,1,2]<=[4] last_tile_dims={unreduced} metadata={op_type=\"sdy::"
            "reduction_op\" op_name=\"MIN\"}}");
  EXPECT_EQ(RoundTrip("{mesh['x'=2] [{},{}], unreduced=sum{'x'}}"), "{unreduced}");
  // The op is part of the value; the rest of the metadata is not.
  absl::StatusOr<HloSharding> with_max = HloSharding::Parse(
      "{unreduced metadata={{op_name=\"a\"}, {op_type=\"sdy::reduction_op\" "
      "op_name=\"MAX\"}}}");
  ASSERT_TRUE(with_max.ok()) << with_max.status();
  EXPECT_EQ(with_max->reduction_op(), ReductionOp::kMax);
  EXPECT_EQ(with_max->metadata(), HloSharding::Metadata{"op_name=\"a\""});
  EXPECT_EQ(with_max->ToStringWithoutMetadata(), "{unreduced " + max + "}");
  EXPECT_NE(*with_max, HloSharding::Unreduced());
  EXPECT_EQ(*with_max, *HloSharding::Unreduced().WithReductionOp(ReductionOp::kMax));
  EXPECT_NE(*with_max, *HloSharding::Unreduced().WithReductionOp(ReductionOp::kMin));
}

TEST(HloShardingParserTest, NamedMeshErrors) {
  EXPECT_EQ(ParseError("{mesh['x'=2] [{'z'}]}"), "offset 15: unknown mesh axis 'z'");
  EXPECT_EQ(ParseError("{mesh['x'=2,'y'=2] [{'x'}, {'x'}]}"),
            "offset 28: mesh axis 'x' is used twice ('x' and 'x')");
  EXPECT_EQ(ParseError("{mesh['x'=2,'y'=2] [{'x'}, {}], unreduced={'x'}}"),
            "offset 43: mesh axis 'x' is used twice ('x' and 'x')");
  EXPECT_EQ(ParseError("{mesh['x'=4] [{'x'}, {'x':(1)2}]}"),
            "offset 22: mesh axis 'x' is used twice ('x' and 'x':(1)2)");
  EXPECT_EQ(ParseError("{mesh['x'=6] [{'x':(1)4}]}"),
            "offset 15: sub-axis 'x':(1)4: pre-size times size (1*4) does not divide the axis "
            "size 6");
  EXPECT_EQ(ParseError("{mesh['x'=8] [{'x':(4)4}]}"),
            "offset 15: sub-axis 'x':(4)4: pre-size times size (4*4) does not divide the axis "
            "size 8");
  EXPECT_EQ(ParseError("{mesh['x'=8] [{'x':(1)8}]}"),
            "offset 15: sub-axis 'x':(1)8: size must be less than the axis size 8 (write the "
            "whole axis without ':(...)')");
  EXPECT_EQ(ParseError("{mesh['x'=8] [{'x':(2)1}]}"),
            "offset 15: sub-axis 'x':(2)1: size must be at least 2");
  EXPECT_EQ(ParseError("{mesh['x'=8] [{'x':(0)2}]}"),
            "offset 15: sub-axis 'x':(0)2: pre-size must be at least 1");
  EXPECT_EQ(ParseError("{mesh['x'=8] [{'x':(1)4}, {'x':(2)2}]}"),
            "offset 27: sub-axes 'x':(1)4 and 'x':(2)2 overlap");
  EXPECT_EQ(ParseError("{mesh['x'=12] [{'x':(1)2}, {'x':(3)2}]}"),
            "offset 28: sub-axes 'x':(1)2 and 'x':(3)2 do not nest: 3 is not a multiple of 2");
  EXPECT_EQ(ParseError("{mesh['x'=2] [{'x':1}]}"),
            "offset 19: expected '(' after ':' in a sub-axis, got '1'");
  EXPECT_EQ(ParseError("{mesh['x'=2] [{?, 'x'}]}"),
            "offset 16: expected '}' after '?' (it must come last), got ','");
  EXPECT_EQ(ParseError("{mesh['x'=2,'x'=2] []}"), "offset 12: mesh axis 'x' appears twice");
  EXPECT_EQ(ParseError("{mesh['x'=0] []}"), "offset 10: mesh axis size 0 must be at least 1");
  EXPECT_EQ(ParseError("{mesh[] []}"), "offset 6: expected a mesh axis name, got ']'");
  EXPECT_EQ(ParseError("{mesh['x'=2] [{5}]}"),
            "offset 15: mesh axis index 5 is out of range [0, 1)");
  EXPECT_EQ(ParseError("{mesh['x'=2,'y'=2], device_ids=(0,1,2), []}"),
            "offset 31: device_ids has 3 entries but the mesh axes hold a different number of "
            "devices: tile assignment dimensions [2,2] hold 4 devices but 3 are listed");
  EXPECT_EQ(ParseError("{mesh['x'=2], device_ids=(1,1), []}"),
            "offset 28: mesh device id 1 appears twice");
  EXPECT_EQ(ParseError("{mesh['x'=2], device_ids=(0,2), []}"),
            "offset 28: mesh device id 2 is not in [0, 2); device_ids must permute 0..N-1");
  EXPECT_EQ(ParseError("{mesh['a'=2, 'b'=2], [], unreduced=prod{'a', 'b'}}"),
            "offset 35: expected sum, max or min (how unreduced axes combine), got 'prod'");
  EXPECT_EQ(ParseError("{devices=[2,1]<=[2] metadata={op_type=\"sdy::reduction_op\" "
                       "op_name=\"MAX\"}}"),
            "offset 20: reduction op max on a sharding without unreduced devices");
  EXPECT_EQ(ParseError("{unreduced metadata={op_type=\"sdy::reduction_op\" op_name=\"AND\"}}"),
            "offset 11: metadata {op_type=\"sdy::reduction_op\" op_name=\"AND\"} names no "
            "reduction op (SUM, MAX or MIN, op_type first)");
  EXPECT_EQ(ParseError("{mesh['x'=2] [], foo={'x'}}"),
            "offset 17: unknown named sharding attribute 'foo'; expected replicated=, "
            "unreduced=, manual= or metadata=");
  EXPECT_EQ(ParseError("{mesh['x'=2] [], manual={}, manual={}}"),
            "offset 28: duplicate 'manual' in named sharding");
  EXPECT_EQ(ParseError("{mesh['x'=2] {'x'}}"),
            "offset 13: expected '[' to start the dimension shardings, or replicated, unreduced "
            "or manual, got '{'");
  EXPECT_EQ(ParseError("{mesh['x'=2] [] shard_as 1}"),
            "offset 16: expected '}' to end the named sharding, got 'shard_as'");
  EXPECT_EQ(ParseError("{mesh['x'=2] replicated, shard_as 1}"),
            "offset 25: expected 'metadata', got 'shard_as'");
  EXPECT_THAT(ParseError("{{replicated}, {mesh['x'=2] [{'y'}]}}"),
              StartsWith("offset 30: unknown mesh axis 'y'"));
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
        if (text.compare(offset + 1, 5, "mesh[") == 0) ++named;
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
  std::cout << "corpus: " << files << " files, " << parsed << " shardings round-tripped (" << named
            << " named-mesh)\n";
  EXPECT_GT(parsed, 1000);
}

}  // namespace
}  // namespace hlo

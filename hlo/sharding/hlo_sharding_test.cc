// HloSharding factories, canonical forms, accessors, equality and validation.
#include "hlo/sharding/hlo_sharding.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = HloSharding::Kind;

HloSharding P(const std::string& text) {
  absl::StatusOr<HloSharding> s = HloSharding::Parse(text);
  EXPECT_TRUE(s.ok()) << text << ": " << s.status();
  return s.ok() ? *s : HloSharding::Unknown();
}

TileAssignment Iota(std::vector<int64_t> dims) { return TileAssignment::Iota(dims).value(); }

std::string Message(const absl::Status& status) { return std::string(status.message()); }

Shape F32(std::vector<int64_t> dims) { return Shape::Array(PrimitiveType::kF32, dims); }

TEST(HloShardingTest, SimpleKinds) {
  EXPECT_EQ(HloSharding::Replicate().kind(), Kind::kReplicated);
  EXPECT_EQ(HloSharding::Manual().ToString(), "{manual}");
  EXPECT_EQ(HloSharding::Unknown().ToString(), "{unknown}");
  EXPECT_EQ(HloSharding::Unreduced().ToString(), "{unreduced}");
  HloSharding maximal = HloSharding::Maximal(3).value();
  EXPECT_EQ(maximal.kind(), Kind::kMaximal);
  EXPECT_EQ(maximal.maximal_device(), 3);
  EXPECT_EQ(maximal.ToString(), "{maximal device=3}");
  EXPECT_EQ(maximal.UniqueDevice(), 3);
  EXPECT_THAT(Message(HloSharding::Maximal(-2).status()), HasSubstr("device -2 is negative"));
}

TEST(HloShardingTest, ProtoTypes) {
  EXPECT_EQ(static_cast<int>(P("{replicated}").proto_type()), 0);
  EXPECT_EQ(static_cast<int>(P("{maximal device=1}").proto_type()), 1);
  EXPECT_EQ(static_cast<int>(P("{{replicated}}").proto_type()), 2);
  EXPECT_EQ(static_cast<int>(P("{devices=[2]0,1}").proto_type()), 3);
  EXPECT_EQ(static_cast<int>(P("{manual}").proto_type()), 4);
  EXPECT_EQ(static_cast<int>(P("{unknown}").proto_type()), 5);
  EXPECT_EQ(static_cast<int>(P("{unreduced}").proto_type()), 6);
}

TEST(HloShardingTest, TileAccessors) {
  HloSharding s = HloSharding::Tile(Iota({2, 2})).value();
  EXPECT_TRUE(s.IsTiled());
  EXPECT_EQ(s.TiledDataRank(), 2);
  EXPECT_EQ(s.NumSubgroupDims(), 0);
  EXPECT_EQ(s.SubgroupReplicationDim(), -1);
  EXPECT_EQ(s.ToString(), "{devices=[2,2]<=[4]}");
  EXPECT_THAT(Message(HloSharding::Tile(Iota({1, 1})).status()),
              HasSubstr("has a single device; use a maximal or replicated sharding"));
}

TEST(HloShardingTest, PartialTileCanonicalizes) {
  HloSharding s =
      HloSharding::PartialTile(TileAssignment::Explicit({2, 2}, {1, 0, 3, 2}).value()).value();
  EXPECT_EQ(s.ToString(), "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}");
  EXPECT_TRUE(s.replicate_on_last_tile_dim());
  EXPECT_EQ(s.TiledDataRank(), 1);
  EXPECT_EQ(s.SubgroupReplicationDim(), 1);
  EXPECT_EQ(HloSharding::PartialTile(Iota({1, 4})).value(), HloSharding::Replicate());
  EXPECT_EQ(HloSharding::PartialTile(Iota({4})).value(), HloSharding::Replicate());
  EXPECT_EQ(HloSharding::PartialTile(Iota({4, 1})).value().ToString(), "{devices=[4]<=[4]}");
  // An unsorted iota group becomes the sorted array's iota form.
  HloSharding t =
      HloSharding::PartialTile(TileAssignment::Iota({1, 4}, {2, 2}, {1, 0}).value()).value();
  EXPECT_EQ(t, HloSharding::Replicate());
  HloSharding u =
      HloSharding::PartialTile(TileAssignment::Iota({1, 2, 4}, {2, 4}, {1, 0}).value()).value();
  EXPECT_EQ(u.ToString(), "{devices=[1,2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}");
}

TEST(HloShardingTest, SubgroupCanonicalizes) {
  using T = OpShardingType;
  HloSharding s = HloSharding::Subgroup(Iota({2, 2, 2}), {T::kReplicated, T::kManual}).value();
  EXPECT_EQ(s.ToString(), "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual, replicated}}");
  EXPECT_THAT(s.subgroup_types(), ElementsAre(T::kManual, T::kReplicated));
  EXPECT_EQ(s.TiledDataRank(), 1);
  EXPECT_EQ(s.SubgroupManualDim(), 1);
  EXPECT_EQ(s.SubgroupReplicationDim(), 2);
  // Same-type dims merge; size-1 dims drop.
  EXPECT_EQ(HloSharding::Subgroup(Iota({2, 2, 1, 2}), {T::kManual, T::kReplicated, T::kManual})
                .value()
                .ToString(),
            "{devices=[2,4]<=[8] last_tile_dims={manual}}");
  EXPECT_EQ(HloSharding::Subgroup(Iota({1, 4}), {T::kManual}).value(), HloSharding::Manual());
  EXPECT_EQ(HloSharding::Subgroup(Iota({1, 4}), {T::kUnreduced}).value(), HloSharding::Unreduced());
  EXPECT_EQ(HloSharding::Subgroup(Iota({2, 2}), {T::kReplicated}).value().ToString(),
            "{devices=[2,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(HloSharding::Subgroup(Iota({4}), {}).value().ToString(), "{devices=[4]<=[4]}");
  EXPECT_THAT(Message(HloSharding::Subgroup(Iota({4}), {T::kMaximal}).status()),
              HasSubstr("subgroup type 1 is not one of replicated, manual or unreduced"));
  EXPECT_THAT(Message(HloSharding::Subgroup(Iota({4}), {T::kManual, T::kManual}).status()),
              HasSubstr("2 subgroup types for tile assignment [4]<=[4] of rank 1"));
  // A scalar can be manual in one subgroup and replicated in another.
  EXPECT_EQ(HloSharding::Subgroup(Iota({2, 2}), {T::kManual, T::kReplicated})->TiledDataRank(), 0);
}

TEST(HloShardingTest, Tuples) {
  HloSharding t =
      HloSharding::Tuple({HloSharding::Replicate(), HloSharding::Maximal(1).value()}).value();
  EXPECT_TRUE(t.IsTuple());
  EXPECT_EQ(t.tuple_elements().size(), 2);
  EXPECT_EQ(t.ToString(), "{{replicated}, {maximal device=1}}");
  EXPECT_FALSE(t.IsReplicated());
  EXPECT_THAT(Message(HloSharding::Tuple({t}).status()), HasSubstr("element 0 is itself a tuple"));
  Shape shape = Shape::Tuple({F32({2}), Shape::Tuple({F32({3}), F32({4})})});
  EXPECT_THAT(Message(HloSharding::Tuple(shape, {HloSharding::Replicate()}).status()),
              HasSubstr("has 3 leaves but the sharding has 1 elements"));
  HloSharding single = HloSharding::SingleTuple(shape, HloSharding::Manual());
  EXPECT_EQ(single.ToString(), "{{manual}, {manual}, {manual}}");
  EXPECT_TRUE(single.IsManual());
  EXPECT_EQ(HloSharding::Replicate().NormalizeTupleSharding(shape).tuple_elements().size(), 3);
  EXPECT_EQ(HloSharding::SingleTuple(Shape::Tuple({}), HloSharding::Replicate()).ToString(),
            "{{replicated}}");
}

TEST(HloShardingTest, MetadataAndShardGroups) {
  HloSharding s = HloSharding::Replicate({"op_name=\"a\""});
  EXPECT_THAT(s.metadata(), ElementsAre("op_name=\"a\""));
  EXPECT_EQ(s, HloSharding::Replicate());  // Metadata does not change the meaning.
  EXPECT_EQ(s.ToStringWithoutMetadata(), "{replicated}");
  HloSharding g = s.WithShardGroup(ShardGroup::Like(4));
  EXPECT_EQ(g.ToString(), "{replicated shard_like 4 metadata={op_name=\"a\"}}");
  EXPECT_NE(g, s);
  EXPECT_EQ(g.shard_group().kind, ShardGroup::Kind::kLike);
  EXPECT_EQ(g.shard_group().id, 4);
  EXPECT_EQ(g.WithoutMetadata().ToString(), "{replicated shard_like 4}");
  HloSharding t = P("{{replicated}, {manual}}").WithMetadata({"op_name=\"x\""});
  EXPECT_EQ(t.ToString(),
            "{{replicated metadata={op_name=\"x\"}}, {manual metadata={op_name=\"x\"}}}");
  EXPECT_TRUE(t.metadata().empty());
}

TEST(HloShardingTest, EqualityByMeaning) {
  HloSharding a = P("{devices=[1,2,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}");
  HloSharding b = P("{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(a, b);
  EXPECT_EQ(absl::HashOf(a), absl::HashOf(b));
  EXPECT_EQ(P("{devices=[1,2,2]1,0,3,2 last_tile_dim_replicate}"),
            P("{devices=[1,2,2]<=[4] last_tile_dim_replicate}"));
  EXPECT_EQ(P("{devices=[2,2]<=[4] last_tile_dims={replicated, manual}}"),
            P("{devices=[2,2]0,2,1,3 last_tile_dims={manual, replicated}}"));
  EXPECT_NE(P("{devices=[2,2]<=[4]}"), P("{devices=[2,2]<=[4] last_tile_dim_replicate}"));
  EXPECT_NE(P("{devices=[4]<=[4]}"), P("{devices=[4]0,1,3,2}"));
  EXPECT_NE(P("{maximal device=0}"), P("{maximal device=1}"));
  EXPECT_NE(P("{replicated}"), P("{manual}"));
  EXPECT_NE(P("{unknown shard_as 0}"), P("{unknown shard_like 0}"));
  absl::flat_hash_set<HloSharding> set = {a, b, P("{replicated}"),
                                          P("{replicated metadata={op_name=\"z\"}}")};
  EXPECT_EQ(set.size(), 2);
}

TEST(HloShardingTest, UsesDevice) {
  HloSharding s = P("{devices=[2]3,5}");
  EXPECT_TRUE(s.UsesDevice(5));
  EXPECT_FALSE(s.UsesDevice(4));
  EXPECT_TRUE(P("{replicated}").UsesDevice(100));
  EXPECT_TRUE(P("{{maximal device=1}, {maximal device=2}}").UsesDevice(2));
  EXPECT_EQ(P("{{maximal device=1}, {maximal device=1}}").UniqueDevice(), 1);
  EXPECT_FALSE(P("{{maximal device=1}, {maximal device=2}}").UniqueDevice().has_value());
}

TEST(HloShardingTest, ValidateAcceptsMatchingShapes) {
  EXPECT_TRUE(P("{devices=[2,2]<=[4]}").Validate(F32({8, 8}), 4).ok());
  EXPECT_TRUE(P("{devices=[2,2]<=[4] last_tile_dim_replicate}").Validate(F32({8}), 4).ok());
  EXPECT_TRUE(
      P("{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}").Validate(F32({3}), 8).ok());
  EXPECT_TRUE(P("{replicated}").Validate(F32({}), 1).ok());
  EXPECT_TRUE(P("{maximal device=0}").Validate(Shape::Token(), 1).ok());
  Shape tuple = Shape::Tuple({F32({4}), F32({})});
  EXPECT_TRUE(P("{{devices=[2]0,1}, {replicated}}").Validate(tuple, 2).ok());
  EXPECT_TRUE(P("{replicated}").Validate(tuple, 2).ok());
  EXPECT_TRUE(P("{}").Validate(Shape::Tuple({}), 2).ok());
  EXPECT_TRUE(P("{{replicated}}").Validate(Shape::Tuple({}), 2).ok());
}

TEST(HloShardingTest, ValidateNamesTheProblem) {
  EXPECT_EQ(Message(P("{devices=[2,2]<=[4]}").Validate(F32({8}), 4)),
            "sharding {devices=[2,2]<=[4]} tiles 2 dimensions but shape f32[8] has rank 1");
  EXPECT_EQ(Message(P("{devices=[2,1,2]<=[4] last_tile_dims={manual}}").Validate(F32({8}), 4)),
            "sharding {devices=[2,1,2]<=[4] last_tile_dims={manual}} tiles 2 dimensions but "
            "shape f32[8] has rank 1");
  EXPECT_EQ(Message(P("{devices=[2]0,5}").Validate(F32({8}), 4)),
            "sharding {devices=[2]0,5} uses device 5, out of range for 4 devices");
  EXPECT_EQ(Message(P("{devices=[8]<=[8]}").Validate(F32({8}), 4)),
            "sharding {devices=[8]<=[8]} uses 8 devices but only 4 are available");
  EXPECT_EQ(Message(P("{maximal device=4}").Validate(F32({8}), 4)),
            "device 4 is out of range for 4 devices");
  Shape tuple = Shape::Tuple({F32({4}), F32({})});
  EXPECT_EQ(Message(P("{{replicated}}").Validate(tuple, 2)),
            "tuple sharding has 1 elements but shape (f32[4], f32[]) has 2 leaves");
  EXPECT_EQ(Message(P("{{replicated}, {devices=[2]0,1}}").Validate(tuple, 2)),
            "tuple element 1: sharding {devices=[2]0,1} tiles 1 dimensions but shape f32[] has "
            "rank 0");
  EXPECT_EQ(Message(P("{{replicated}}").Validate(F32({2}), 2)),
            "tuple sharding {{replicated}} on non-tuple shape f32[2]");
}

// An empty tuple (`()`, e.g. a conditional branch's operand in JAX's exports) holds nothing:
// it is not "manual" (vacuously, every one of its zero leaves is), which made its users manual
// and the TORAX step in corpus/real fail to partition.
TEST(HloShardingTest, EmptyTupleIsNotManual) {
  absl::StatusOr<HloSharding> empty = HloSharding::Tuple(std::vector<HloSharding>{});
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->IsManual());
  EXPECT_TRUE(HloSharding::Tuple({HloSharding::Manual()})->IsManual());
}

}  // namespace
}  // namespace hlo

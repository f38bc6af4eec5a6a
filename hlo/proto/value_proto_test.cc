// Value-level conversions: shapes, literals and shardings, field by field against XLA's layout
// of the messages, and back.
#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/proto/hlo_proto_util.h"

namespace hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---- Shapes ----------------------------------------------------------------------------------

TEST(ShapeProtoTest, ArrayWithTiledLayout) {
  Shape shape = Shape::ArrayWithLayout(PrimitiveType::kBF16, {16, 256});
  shape.set_dynamic_dimension(0, true);
  shape.mutable_layout()->tiles = {Tile{{8, 128}}};
  shape.mutable_layout()->element_size_in_bits = 16;
  shape.mutable_layout()->memory_space = 2;
  xla::ShapeProto proto = ShapeToProto(shape);
  EXPECT_EQ(proto.element_type(), xla::BF16);
  EXPECT_THAT(proto.dimensions(), ElementsAre(16, 256));
  EXPECT_THAT(proto.is_dynamic_dimension(), ElementsAre(true, false));
  EXPECT_THAT(proto.layout().minor_to_major(), ElementsAre(1, 0));
  EXPECT_THAT(proto.layout().tiles(0).dimensions(), ElementsAre(8, 128));
  EXPECT_EQ(proto.layout().memory_space(), 2);
  absl::StatusOr<Shape> back = ShapeFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, shape);
  EXPECT_EQ(back->ToString(), "bf16[<=16,256]{1,0:T(8,128)E(16)S(2)}");
}

TEST(ShapeProtoTest, TupleTokenAndLayoutPresence) {
  Shape shape = Shape::Tuple({Shape::Array(PrimitiveType::kS32, {3}), Shape::Token(),
                              Shape::ArrayWithLayout(PrimitiveType::kF32, {}), Shape::Tuple({})});
  absl::StatusOr<Shape> back = ShapeFromProto(ShapeToProto(shape));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, shape);
  EXPECT_EQ(back->ToString(), "(s32[3], token[], f32[]{}, ())");
}

TEST(ShapeProtoTest, Rejections) {
  xla::ShapeProto proto;
  EXPECT_THAT(std::string(ShapeFromProto(proto).status().message()),
              HasSubstr("unsupported element type 0"));
  proto.set_element_type(xla::TOKEN);
  proto.add_dimensions(2);
  EXPECT_THAT(std::string(ShapeFromProto(proto).status().message()),
              HasSubstr("token shape has dimensions"));
  proto.set_element_type(xla::F32);
  proto.mutable_layout()->add_minor_to_major(0);
  proto.mutable_layout()->add_minor_to_major(0);
  EXPECT_THAT(std::string(ShapeFromProto(proto).status().message()),
              HasSubstr("minor_to_major has 2 entries for a shape of rank 1"));
  proto.mutable_layout()->mutable_minor_to_major()->RemoveLast();
  EXPECT_TRUE(ShapeFromProto(proto).ok());
}

TEST(ProgramShapeProtoTest, RoundTrip) {
  ProgramShape shape;
  shape.parameters = {Shape::Array(PrimitiveType::kF32, {2}), Shape::Token()};
  shape.parameter_names = {"a", "b"};
  shape.result = Shape::Tuple({});
  absl::StatusOr<ProgramShape> back = ProgramShapeFromProto(ProgramShapeToProto(shape));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->parameters, shape.parameters);
  EXPECT_EQ(back->parameter_names, shape.parameter_names);
  EXPECT_EQ(back->result, shape.result);
}

// ---- Literals --------------------------------------------------------------------------------

Literal MakeLiteral(PrimitiveType type, std::vector<int64_t> dims, std::vector<double> values) {
  Literal literal(Shape::ArrayWithLayout(type, dims));
  for (size_t i = 0; i < values.size(); ++i) literal.SetDouble(i, values[i]);
  return literal;
}

void ExpectLiteralRoundTrip(const Literal& literal) {
  absl::StatusOr<Literal> back = LiteralFromProto(LiteralToProto(literal));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == literal) << literal.ToString() << " vs " << back->ToString();
  EXPECT_EQ(back->ToString(), literal.ToString());
}

TEST(LiteralProtoTest, XlaFieldPerType) {
  xla::LiteralProto s16 = LiteralToProto(MakeLiteral(PrimitiveType::kS16, {2}, {-2, 258}));
  EXPECT_EQ(s16.s16s(), std::string("\xfe\xff\x02\x01", 4));  // Little-endian.
  xla::LiteralProto bf16 = LiteralToProto(MakeLiteral(PrimitiveType::kBF16, {1}, {1.0}));
  EXPECT_EQ(bf16.bf16s(), std::string("\x80\x3f", 2));
  xla::LiteralProto u8 = LiteralToProto(MakeLiteral(PrimitiveType::kU8, {2}, {1, 255}));
  EXPECT_EQ(u8.u8s(), "\x01\xff");
  xla::LiteralProto pred = LiteralToProto(MakeLiteral(PrimitiveType::kPred, {2}, {0, 1}));
  EXPECT_THAT(pred.preds(), ElementsAre(false, true));
  xla::LiteralProto s32 = LiteralToProto(MakeLiteral(PrimitiveType::kS32, {2}, {-5, 6}));
  EXPECT_THAT(s32.s32s(), ElementsAre(-5, 6));
  xla::LiteralProto f8 = LiteralToProto(MakeLiteral(PrimitiveType::kF8E4M3FN, {1}, {1.0}));
  EXPECT_EQ(f8.f8e4m3fns(), "\x38");
  Literal c128(Shape::ArrayWithLayout(PrimitiveType::kC128, {1}));
  c128.SetComplex(0, {1.5, -2.5});
  EXPECT_THAT(LiteralToProto(c128).c128s(), ElementsAre(1.5, -2.5));
  EXPECT_EQ(LiteralToProto(c128).shape().element_type(), xla::C128);
}

TEST(LiteralProtoTest, EveryArrayTypeRoundTrips) {
  for (int t = 1; t <= 33; ++t) {
    const PrimitiveType type = static_cast<PrimitiveType>(t);
    if (!IsArrayType(type)) continue;
    SCOPED_TRACE(PrimitiveTypeName(type));
    const bool is_unsigned = IsUnsignedIntegralType(type) || type == PrimitiveType::kF8E8M0FNU;
    const bool tiny = BitWidth(type) <= 2 || type == PrimitiveType::kPred;
    ExpectLiteralRoundTrip(
        MakeLiteral(type, {2, 2}, {0, 1, tiny ? 0.0 : 2.0, is_unsigned ? 1.0 : -1.0}));
  }
  Literal tuple(Shape::Tuple({Shape::Array(PrimitiveType::kS64, {2}), Shape::Tuple({})}));
  (*tuple.mutable_tuple_elements())[0].SetInt(0, -7);
  ExpectLiteralRoundTrip(tuple);
  ExpectLiteralRoundTrip(Literal(Shape::Token()));
}

TEST(LiteralProtoTest, SizeMismatchesAreErrors) {
  xla::LiteralProto proto = LiteralToProto(MakeLiteral(PrimitiveType::kF16, {3}, {1, 2, 3}));
  proto.mutable_f16s()->pop_back();  // 5 bytes: two and a half values.
  EXPECT_THAT(std::string(LiteralFromProto(proto).status().message()),
              HasSubstr("needs 3 values but its data field holds a partial value"));
  xla::LiteralProto huge;
  huge.mutable_shape()->set_element_type(xla::F32);
  for (int i = 0; i < 4; ++i) huge.mutable_shape()->add_dimensions(int64_t{1} << 20);
  EXPECT_THAT(std::string(LiteralFromProto(huge).status().message()), HasSubstr("overflows"));
  huge.mutable_shape()->mutable_dimensions()->RemoveLast();
  EXPECT_THAT(std::string(LiteralFromProto(huge).status().message()),
              HasSubstr("needs 1152921504606846976 values"));
  xla::LiteralProto tuple;
  tuple.mutable_shape()->set_element_type(xla::TUPLE);
  *tuple.mutable_shape()->add_tuple_shapes() = ShapeToProto(Shape::Array(PrimitiveType::kS32, {1}));
  EXPECT_THAT(std::string(LiteralFromProto(tuple).status().message()),
              HasSubstr("tuple literal has 0 elements, its shape 1"));
  tuple.add_tuple_literals()->add_s32s(4);
  ASSERT_TRUE(LiteralFromProto(tuple).ok());
  EXPECT_EQ(LiteralFromProto(tuple)->ToString(), "( {4} )");
}

// ---- Shardings -------------------------------------------------------------------------------

HloSharding RoundTrip(const HloSharding& sharding) {
  bool exact = false;
  xla::OpSharding proto = ShardingToProto(sharding, &exact);
  EXPECT_TRUE(exact) << sharding.ToString();
  absl::StatusOr<HloSharding> back = ShardingFromProto(proto);
  EXPECT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToString(), sharding.ToString());
  return *back;
}

TEST(ShardingProtoTest, IotaForm) {
  HloSharding sharding = *HloSharding::Tile(*TileAssignment::Iota({4, 2}, {2, 4}, {1, 0}));
  xla::OpSharding proto = ShardingToProto(sharding);
  EXPECT_EQ(proto.type(), xla::OpSharding::OTHER);
  EXPECT_THAT(proto.tile_assignment_dimensions(), ElementsAre(4, 2));
  EXPECT_THAT(proto.iota_reshape_dims(), ElementsAre(2, 4));
  EXPECT_THAT(proto.iota_transpose_perm(), ElementsAre(1, 0));
  EXPECT_TRUE(proto.tile_assignment_devices().empty());
  EXPECT_TRUE(RoundTrip(sharding).tile_assignment().is_iota());
}

TEST(ShardingProtoTest, ExplicitFormAndSubgroups) {
  HloSharding explicit_form =
      *HloSharding::PartialTile(*TileAssignment::Explicit({2, 2}, {0, 2, 1, 3}));
  xla::OpSharding proto = ShardingToProto(explicit_form);
  EXPECT_THAT(proto.tile_assignment_devices(), ElementsAre(0, 2, 1, 3));
  EXPECT_TRUE(proto.replicate_on_last_tile_dim());
  EXPECT_FALSE(RoundTrip(explicit_form).tile_assignment().is_iota());
  HloSharding manual = *HloSharding::Subgroup(
      *TileAssignment::Iota({2, 2, 2}), {OpShardingType::kManual, OpShardingType::kReplicated});
  xla::OpSharding manual_proto = ShardingToProto(manual);
  EXPECT_THAT(manual_proto.last_tile_dims(),
              ElementsAre(xla::OpSharding::MANUAL, xla::OpSharding::REPLICATED));
  RoundTrip(manual);
}

// XLA's tile-assignment proto carries a max or min reduction op as a metadata entry
// (op_type "sdy::reduction_op", op_name "MAX"/"MIN"); it comes back as the op, not as metadata.
TEST(ShardingProtoTest, UnreducedReductionOp) {
  HloSharding max = *HloSharding::Subgroup(*TileAssignment::Iota({2, 2}),
                                           {OpShardingType::kUnreduced}, {"op_name=\"a\""})
                         ->WithReductionOp(ReductionOp::kMax);
  xla::OpSharding proto = ShardingToProto(max);
  ASSERT_EQ(proto.metadata_size(), 2);
  EXPECT_EQ(proto.metadata(1).op_type(), "sdy::reduction_op");
  EXPECT_EQ(proto.metadata(1).op_name(), "MAX");
  HloSharding back = RoundTrip(max);
  EXPECT_EQ(back.reduction_op(), ReductionOp::kMax);
  EXPECT_EQ(back.metadata().size(), 1);
  EXPECT_EQ(RoundTrip(*HloSharding::Unreduced().WithReductionOp(ReductionOp::kMin)).reduction_op(),
            ReductionOp::kMin);
}

TEST(ShardingProtoTest, KindsMetadataAndGroups) {
  HloSharding maximal = *HloSharding::Maximal(5, {"op_name=\"m\" source_line=2"});
  xla::OpSharding proto = ShardingToProto(maximal);
  EXPECT_EQ(proto.type(), xla::OpSharding::MAXIMAL);
  EXPECT_THAT(proto.tile_assignment_devices(), ElementsAre(5));
  ASSERT_EQ(proto.metadata_size(), 1);
  EXPECT_EQ(proto.metadata(0).op_name(), "m");
  EXPECT_EQ(proto.metadata(0).source_line(), 2);
  RoundTrip(maximal);
  RoundTrip(HloSharding::Manual());
  RoundTrip(HloSharding::Unknown());
  RoundTrip(HloSharding::Unreduced());
  HloSharding grouped = HloSharding::Replicate().WithShardGroup(ShardGroup::As(3));
  xla::OpSharding grouped_proto = ShardingToProto(grouped);
  EXPECT_TRUE(grouped_proto.is_shard_group());
  EXPECT_EQ(grouped_proto.shard_group_id(), 3);
  EXPECT_EQ(grouped_proto.shard_group_type(), xla::OpSharding::AS);
  EXPECT_EQ(RoundTrip(grouped).shard_group(), ShardGroup::As(3));
  HloSharding tuple = *HloSharding::Tuple({maximal, HloSharding::Replicate()});
  EXPECT_EQ(ShardingToProto(tuple).tuple_shardings_size(), 2);
  RoundTrip(tuple);
}

TEST(ShardingProtoTest, UnreadableMetadataIsReportedInexact) {
  bool exact = true;
  ShardingToProto(HloSharding::Replicate({"op_name=\"a\" mystery=1"}), &exact);
  EXPECT_FALSE(exact);
}

TEST(ShardingProtoTest, OneDeviceTilingReadsAsMaximal) {
  xla::OpSharding proto;
  proto.set_type(xla::OpSharding::OTHER);
  proto.add_tile_assignment_dimensions(1);
  proto.add_tile_assignment_devices(3);
  absl::StatusOr<HloSharding> sharding = ShardingFromProto(proto);
  ASSERT_TRUE(sharding.ok()) << sharding.status();
  EXPECT_EQ(sharding->ToString(), "{maximal device=3}");
}

}  // namespace
}  // namespace hlo

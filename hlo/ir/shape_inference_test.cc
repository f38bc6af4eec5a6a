// Tests for shape inference: each op family gets a positive case (the inferred shape) and
// negative cases checking that the message names the problem. The last group drives
// InferShape through hand-built instructions.
#include "hlo/ir/shape_inference.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/ir/hlo_module.h"

namespace hlo {
namespace {

using ::testing::HasSubstr;
using PT = PrimitiveType;

Shape F32(std::vector<int64_t> dims) { return Shape::Array(PT::kF32, dims); }
Shape S32(std::vector<int64_t> dims) { return Shape::Array(PT::kS32, dims); }
Shape Pred(std::vector<int64_t> dims) { return Shape::Array(PT::kPred, dims); }
Shape Of(PT type, std::vector<int64_t> dims) { return Shape::Array(type, dims); }

ProgramShape Prog(std::vector<Shape> params, Shape result) {
  ProgramShape p;
  p.parameters = std::move(params);
  p.result = std::move(result);
  return p;
}
ProgramShape ScalarReducer(PT t) { return Prog({Of(t, {}), Of(t, {})}, Of(t, {})); }

void ExpectShape(const absl::StatusOr<Shape>& actual, const Shape& expected) {
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_TRUE(actual->Compatible(expected))
      << "got " << actual->ToString() << ", want " << expected.ToString();
}

void ExpectError(const absl::StatusOr<Shape>& actual, const std::string& substring) {
  ASSERT_FALSE(actual.ok()) << "unexpectedly inferred " << actual->ToString();
  EXPECT_EQ(actual.status().code(), absl::StatusCode::kInvalidArgument) << actual.status();
  EXPECT_THAT(std::string(actual.status().message()), HasSubstr(substring));
}

Window MakeWindow(std::vector<int64_t> sizes, int64_t stride = 1, int64_t pad = 0) {
  Window w;
  for (int64_t s : sizes) {
    WindowDimension d;
    d.size = s;
    d.stride = stride;
    d.padding_low = d.padding_high = pad;
    w.dimensions.push_back(d);
  }
  return w;
}

// ---- Elementwise ----------------------------------------------------------------------------

TEST(ShapeInferenceTest, UnaryKeepsShapeOrChangesType) {
  ExpectShape(InferUnaryOpShape(HloOpcode::kNegate, F32({2, 3})), F32({2, 3}));
  ExpectShape(InferUnaryOpShape(HloOpcode::kIsFinite, F32({2})), Pred({2}));
  ExpectShape(InferUnaryOpShape(HloOpcode::kAbs, Of(PT::kC64, {4})), F32({4}));
  ExpectShape(InferUnaryOpShape(HloOpcode::kReal, Of(PT::kC128, {4})), Of(PT::kF64, {4}));
  ExpectShape(InferUnaryOpShape(HloOpcode::kImag, F32({4})), F32({4}));
  ExpectShape(InferUnaryOpShape(HloOpcode::kNot, Pred({4})), Pred({4}));
  const Shape tuple = Shape::Tuple({F32({1}), Shape::Token()});
  ExpectShape(InferUnaryOpShape(HloOpcode::kCopy, tuple), tuple);
}

TEST(ShapeInferenceTest, UnaryRejectsWrongElementType) {
  ExpectError(InferUnaryOpShape(HloOpcode::kNot, F32({2})),
              "not: operand must have a pred or integral element type, got f32[2]");
  ExpectError(InferUnaryOpShape(HloOpcode::kFloor, S32({2})),
              "floor: operand must have a "
              "floating-point element type");
  ExpectError(InferUnaryOpShape(HloOpcode::kClz, F32({})), "count-leading-zeros");
  ExpectError(InferUnaryOpShape(HloOpcode::kSign, Of(PT::kU32, {})), "sign: operand");
  ExpectError(InferUnaryOpShape(HloOpcode::kAbs, Of(PT::kU8, {})), "abs: operand");
  ExpectError(InferUnaryOpShape(HloOpcode::kIsFinite, S32({})), "is-finite");
  ExpectError(InferUnaryOpShape(HloOpcode::kExp, Shape::Tuple({})), "must be an array");
  ExpectError(InferUnaryOpShape(HloOpcode::kAdd, F32({})), "not a unary elementwise opcode");
}

TEST(ShapeInferenceTest, BinarySameShapes) {
  ExpectShape(InferBinaryOpShape(HloOpcode::kAdd, F32({2, 3}), F32({2, 3})), F32({2, 3}));
  ExpectShape(InferBinaryOpShape(HloOpcode::kAnd, Pred({2}), Pred({2})), Pred({2}));
  ExpectShape(InferBinaryOpShape(HloOpcode::kComplex, F32({2}), F32({2})), Of(PT::kC64, {2}));
  ExpectShape(InferBinaryOpShape(HloOpcode::kComplex, Of(PT::kF64, {}), Of(PT::kF64, {})),
              Of(PT::kC128, {}));
}

TEST(ShapeInferenceTest, BinaryRejectsMismatches) {
  ExpectError(InferBinaryOpShape(HloOpcode::kAdd, F32({4}), F32({5})),
              "add: operands must have the same dimensions (no implicit broadcast), got f32[4] "
              "and f32[5]");
  ExpectError(InferBinaryOpShape(HloOpcode::kAdd, F32({4}), Of(PT::kBF16, {4})),
              "same element type");
  ExpectError(InferBinaryOpShape(HloOpcode::kXor, F32({4}), F32({4})), "pred or integral");
  ExpectError(InferBinaryOpShape(HloOpcode::kSubtract, Pred({}), Pred({})), "got pred");
  ExpectError(InferBinaryOpShape(HloOpcode::kComplex, S32({}), S32({})), "f32 or f64");
}

// The element types of the opcode table, which the CPU executor instantiates its kernels for.
TEST(ShapeInferenceTest, BinaryElementTypesFollowTheOpcodeTable) {
  const Shape c64 = Of(PT::kC64, {2});
  ExpectError(InferBinaryOpShape(HloOpcode::kShiftLeft, F32({2}), F32({2})),
              "shift-left: operand must have an integral element type, got f32[2]");
  ExpectError(InferBinaryOpShape(HloOpcode::kAtan2, S32({2}), S32({2})),
              "floating-point or complex");
  ExpectError(InferBinaryOpShape(HloOpcode::kRemainder, c64, c64), "integral or floating-point");
  ExpectError(InferBinaryOpShape(HloOpcode::kMaximum, c64, c64),
              "pred, integral or floating-point");
  ExpectShape(InferBinaryOpShape(HloOpcode::kMaximum, Pred({2}), Pred({2})), Pred({2}));
  ExpectShape(InferBinaryOpShape(HloOpcode::kMultiply, c64, c64), c64);
  ExpectError(InferUnaryOpShape(HloOpcode::kCbrt, c64), "cbrt: operand must have a floating-point");
}

TEST(ShapeInferenceTest, CompareSelectClamp) {
  ExpectShape(InferCompareShape(S32({3}), S32({3})), Pred({3}));
  ExpectError(InferCompareShape(S32({3}), F32({3})),
              "compare: operands must have the same "
              "element type");
  ExpectShape(InferSelectShape(Pred({3}), F32({3}), F32({3})), F32({3}));
  ExpectError(InferSelectShape(S32({3}), F32({3}), F32({3})), "element type pred");
  ExpectError(InferSelectShape(Pred({2}), F32({3}), F32({3})), "select: pred pred[2]");
  ExpectShape(InferClampShape(F32({}), F32({3}), F32({3})), F32({3}));
  ExpectError(InferClampShape(F32({2}), F32({3}), F32({})), "clamp: min f32[2] must be a scalar");
  ExpectError(InferClampShape(F32({}), F32({3}), S32({})), "clamp: max s32[]");
}

TEST(ShapeInferenceTest, Conversions) {
  ExpectShape(InferConvertShape(F32({2}), PT::kS8), Of(PT::kS8, {2}));
  ExpectError(InferConvertShape(Shape::Tuple({}), PT::kS8), "convert: operand must be an array");
  ExpectShape(InferBitcastConvertShape(F32({4}), PT::kS32), S32({4}));
  ExpectShape(InferBitcastConvertShape(F32({4}), PT::kS16), Of(PT::kS16, {4, 2}));
  ExpectShape(InferBitcastConvertShape(Of(PT::kS16, {4, 2}), PT::kF32), F32({4}));
  ExpectError(InferBitcastConvertShape(Of(PT::kS16, {4, 3}), PT::kF32),
              "needs a minor dimension of size 2");
  ExpectError(InferBitcastConvertShape(Of(PT::kC64, {4}), PT::kF64), "complex and real");
  ExpectShape(InferStochasticConvertShape(F32({2}), Of(PT::kU32, {2}), PT::kBF16),
              Of(PT::kBF16, {2}));
  ExpectError(InferStochasticConvertShape(F32({2}), Of(PT::kU16, {2}), PT::kBF16), "bit width");
  ExpectShape(InferReducePrecisionShape(F32({2}), 5, 10), F32({2}));
  ExpectError(InferReducePrecisionShape(F32({2}), 0, 10), "exponent_bits must be >= 1, got 0");
}

TEST(ShapeInferenceTest, Map) {
  const Shape a = F32({2, 3});
  const Shape b = S32({2, 3});
  ExpectShape(InferMapShape({&a, &b}, Prog({F32({}), S32({})}, Pred({})), {0, 1}), Pred({2, 3}));
  ExpectError(InferMapShape({&a, &b}, Prog({F32({})}, F32({})), {0, 1}),
              "map: to_apply takes 1 parameters but map has 2 operands");
  ExpectError(InferMapShape({&a, &b}, Prog({F32({}), F32({})}, F32({})), {}),
              "to_apply parameter 1 has shape f32[]");
}

// ---- Data movement --------------------------------------------------------------------------

TEST(ShapeInferenceTest, Broadcast) {
  ExpectShape(InferBroadcastShape(F32({3}), F32({2, 3}), {1}), F32({2, 3}));
  ExpectShape(InferBroadcastShape(F32({3}), S32({2, 3}), {1}), F32({2, 3}));  // Operand type.
  ExpectError(InferBroadcastShape(F32({3}), F32({3, 4}), {1}),
              "broadcast: operand dimension 0 has size 3 but result dimension 1 has size 4");
  ExpectError(InferBroadcastShape(F32({3}), F32({3, 4}), {}), "one entry per operand dimension");
  ExpectError(InferBroadcastShape(F32({3, 3}), F32({3, 4}), {0, 0}), "repeats dimension 0");
  ExpectError(InferBroadcastShape(F32({3}), F32({3}), {1}), "out of range [0, 1)");
}

TEST(ShapeInferenceTest, ReshapeTransposeIota) {
  ExpectShape(InferReshapeShape(F32({2, 3}), F32({6})), F32({6}));
  ExpectError(InferReshapeShape(F32({2, 3}), F32({7})),
              "reshape: operand f32[2,3] has 6 elements but the result f32[7] has 7");
  ExpectShape(InferTransposeShape(F32({2, 3, 4}), {2, 0, 1}), F32({4, 2, 3}));
  ExpectError(InferTransposeShape(F32({2, 3}), {0, 0}), "are not a permutation");
  ExpectShape(InferIotaShape(S32({4, 2}), 1), S32({4, 2}));
  ExpectError(InferIotaShape(S32({}), 0), "iota: result must not be a scalar");
  ExpectError(InferIotaShape(S32({4}), 1), "iota_dimension 1 is out of range");
  const Shape size = S32({});
  ExpectShape(InferDynamicReshapeShape(F32({6}), {&size, &size}, F32({2, 3})), F32({2, 3}));
  ExpectError(InferDynamicReshapeShape(F32({6}), {&size}, F32({2, 3})), "expected 2 size");
}

TEST(ShapeInferenceTest, Slice) {
  ExpectShape(InferSliceShape(F32({10, 4}), {{1, 8, 3}, {0, 4, 1}}), F32({3, 4}));
  ExpectError(InferSliceShape(F32({10}), {{0, 11, 1}}),
              "slice: dimension 0 [0:11] must satisfy 0 <= start <= limit <= 10");
  ExpectError(InferSliceShape(F32({10}), {{0, 5, 0}}), "non-positive stride 0");
  ExpectError(InferSliceShape(F32({10}), {}), "expected 1 slice dimensions");
}

TEST(ShapeInferenceTest, DynamicSliceAndUpdate) {
  const Shape i32 = S32({});
  const Shape i64 = Of(PT::kS64, {});
  ExpectShape(InferDynamicSliceShape(F32({8, 4}), {&i32, &i32}, {2, 4}), F32({2, 4}));
  ExpectError(InferDynamicSliceShape(F32({8, 4}), {&i32}, {2, 4}), "expected 2 start indices");
  ExpectError(InferDynamicSliceShape(F32({8, 4}), {&i32, &i64}, {2, 4}), "share one type");
  ExpectError(InferDynamicSliceShape(F32({8, 4}), {&i32, &i32}, {2, 5}),
              "slice size 5 of dimension 1 must be in [0, 4]");
  ExpectShape(InferDynamicUpdateSliceShape(F32({8, 4}), F32({2, 4}), {&i32, &i32}), F32({8, 4}));
  ExpectError(InferDynamicUpdateSliceShape(F32({8, 4}), F32({9, 4}), {&i32, &i32}),
              "update dimension 0 has size 9 but operand dimension 0 has size 8");
}

TEST(ShapeInferenceTest, PadEdgeInteriorNegative) {
  PaddingConfig config;
  config.dimensions = {{1, 2, 0}, {0, 0, 1}, {-1, -1, 0}};
  ExpectShape(InferPadShape(F32({3, 4, 5}), F32({}), config), F32({6, 7, 3}));
  config.dimensions = {{-3, -1, 0}};
  ExpectError(InferPadShape(F32({3}), F32({}), config), "has negative size -1");
  config.dimensions = {{0, 0, -1}};
  ExpectError(InferPadShape(F32({3}), F32({}), config), "negative interior padding -1");
  ExpectError(InferPadShape(F32({3}), F32({1}), config), "padding value must be a scalar");
}

TEST(ShapeInferenceTest, ConcatenateReverseTuples) {
  const Shape a = F32({2, 3});
  const Shape b = F32({4, 3});
  const Shape c = F32({4, 2});
  ExpectShape(InferConcatenateShape({&a, &b}, 0), F32({6, 3}));
  ExpectError(InferConcatenateShape({&a, &c}, 0), "differs from operand 0 f32[2,3] in dimension 1");
  ExpectError(InferConcatenateShape({&a}, 2), "dimension 2 is out of range");
  ExpectShape(InferReverseShape(a, {0, 1}), a);
  ExpectError(InferReverseShape(a, {1, 1}), "reverse: dimensions {1,1} repeats dimension 1");
  const Shape t = Shape::Tuple({a, b});
  ExpectShape(InferTupleShape({&a, &b}), t);
  ExpectShape(InferGetTupleElementShape(t, 1), b);
  ExpectError(InferGetTupleElementShape(t, 2), "index 2 is out of range");
  ExpectError(InferGetTupleElementShape(a, 0), "operand must be a tuple");
}

TEST(ShapeInferenceTest, BitcastAndDimensionSize) {
  ExpectShape(InferBitcastShape(F32({2, 3}), S32({6})), S32({6}));
  ExpectError(InferBitcastShape(F32({2, 3}), S32({5})), "has 24 bytes but the result s32[5]");
  ExpectShape(InferGetDimensionSizeShape(F32({2, 3}), 1), S32({}));
  ExpectError(InferGetDimensionSizeShape(F32({2, 3}), 2), "dimension 2 is out of range");
  Shape dynamic = F32({2, 3});
  dynamic.set_dynamic_dimension(1, true);
  absl::StatusOr<Shape> set = InferSetDimensionSizeShape(F32({2, 3}), S32({}), 1);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(*set, dynamic);
  ExpectError(InferSetDimensionSizeShape(F32({2, 3}), F32({}), 1), "size must be s32[]");
}

GatherDimensionNumbers EmbeddingGather() {
  GatherDimensionNumbers d;
  d.offset_dims = {1};
  d.collapsed_slice_dims = {0};
  d.start_index_map = {0};
  d.index_vector_dim = 1;
  return d;
}

TEST(ShapeInferenceTest, Gather) {
  ExpectShape(InferGatherShape(F32({5, 10}), S32({3}), EmbeddingGather(), {1, 10}), F32({3, 10}));
  ExpectShape(InferGatherShape(F32({5, 10}), S32({3, 1}), EmbeddingGather(), {1, 4}), F32({3, 4}));
  ExpectError(InferGatherShape(F32({5, 10}), S32({3}), EmbeddingGather(), {2, 10}),
              "collapsed or batching dimension 0 must have slice size 0 or 1, got 2");
  ExpectError(InferGatherShape(F32({5, 10}), F32({3}), EmbeddingGather(), {1, 10}),
              "indices must be integral");
  GatherDimensionNumbers bad = EmbeddingGather();
  bad.start_index_map = {0, 1};
  ExpectError(InferGatherShape(F32({5, 10}), S32({3}), bad, {1, 10}),
              "start_index_map {0,1} has 2 entries but the index vector dimension has size 1");
}

TEST(ShapeInferenceTest, GatherWithBatchingDims) {
  GatherDimensionNumbers d;
  d.offset_dims = {2};
  d.collapsed_slice_dims = {1};
  d.operand_batching_dims = {0};
  d.start_indices_batching_dims = {0};
  d.start_index_map = {1};
  d.index_vector_dim = 2;
  ExpectShape(InferGatherShape(F32({2, 5, 10}), S32({2, 3, 1}), d, {1, 1, 10}), F32({2, 3, 10}));
  ExpectError(InferGatherShape(F32({4, 5, 10}), S32({2, 3, 1}), d, {1, 1, 10}),
              "operand batching dimension 0 has size 4 but indices batching dimension 0 has "
              "size 2");
  d.start_indices_batching_dims = {2};
  ExpectError(InferGatherShape(F32({2, 5, 10}), S32({2, 3, 1}), d, {1, 1, 10}),
              "index_vector_dim 2 cannot be an indices batching dimension");
}

ScatterDimensionNumbers RowScatter() {
  ScatterDimensionNumbers d;
  d.update_window_dims = {1};
  d.inserted_window_dims = {0};
  d.scatter_dims_to_operand_dims = {0};
  d.index_vector_dim = 1;
  return d;
}

TEST(ShapeInferenceTest, Scatter) {
  const Shape operand = F32({5, 10});
  const Shape indices = S32({3, 1});
  const Shape updates = F32({3, 10});
  ExpectShape(
      InferScatterShape({&operand, &indices, &updates}, ScalarReducer(PT::kF32), RowScatter()),
      operand);
  const Shape bad_updates = F32({4, 10});
  ExpectError(
      InferScatterShape({&operand, &indices, &bad_updates}, ScalarReducer(PT::kF32), RowScatter()),
      "updates scatter dimension 0 has size 4 but indices dimension 0 has size 3");
  ExpectError(
      InferScatterShape({&operand, &indices, &updates}, ScalarReducer(PT::kS32), RowScatter()),
      "scatter: init value 0 has shape f32[]");
  ExpectError(InferScatterShape({&operand, &indices}, ScalarReducer(PT::kF32), RowScatter()),
              "expected 2N+1 operands");
}

TEST(ShapeInferenceTest, ScatterWithBatchingDims) {
  ScatterDimensionNumbers d;
  d.update_window_dims = {2};
  d.inserted_window_dims = {1};
  d.input_batching_dims = {0};
  d.scatter_indices_batching_dims = {0};
  d.scatter_dims_to_operand_dims = {1};
  d.index_vector_dim = 2;
  const Shape operand = F32({2, 5, 10});
  const Shape indices = S32({2, 3, 1});
  const Shape updates = F32({2, 3, 10});
  ExpectShape(InferScatterShape({&operand, &indices, &updates}, ScalarReducer(PT::kF32), d),
              operand);
  d.inserted_window_dims = {0};
  ExpectError(InferScatterShape({&operand, &indices, &updates}, ScalarReducer(PT::kF32), d),
              "operand dimension 0 is both a batching and a collapsed/inserted dimension");
}

// ---- Reductions -----------------------------------------------------------------------------

TEST(ShapeInferenceTest, Reduce) {
  const Shape input = F32({4, 5, 6});
  const Shape init = F32({});
  ExpectShape(InferReduceShape({&input, &init}, {0, 2}, ScalarReducer(PT::kF32)), F32({5}));
  ExpectError(InferReduceShape({&input, &init}, {3}, ScalarReducer(PT::kF32)),
              "reduce: dimensions {3} has entry 3 out of range [0, 3)");
  ExpectError(InferReduceShape({&input, &init}, {0}, Prog({F32({})}, F32({}))),
              "reduce: reduction computation must take 2 parameters, takes 1");
  const Shape s32_init = S32({});
  ExpectError(InferReduceShape({&input, &s32_init}, {0}, ScalarReducer(PT::kF32)),
              "reduce: init value 0 has shape s32[] but the reduction computation "
              "accumulates f32[]");
}

TEST(ShapeInferenceTest, VariadicReduce) {
  const Shape values = F32({4, 5});
  const Shape indices = S32({4, 5});
  const Shape f = F32({});
  const Shape s = S32({});
  const ProgramShape argmax = Prog({f, s, f, s}, Shape::Tuple({f, s}));
  ExpectShape(InferReduceShape({&values, &indices, &f, &s}, {1}, argmax),
              Shape::Tuple({F32({4}), S32({4})}));
  const ProgramShape wrong = Prog({f, s, f, s}, f);
  ExpectError(InferReduceShape({&values, &indices, &f, &s}, {1}, wrong),
              "must return a tuple of 2 scalars, returns f32[]");
  const Shape short_indices = S32({4});
  ExpectError(InferReduceShape({&values, &short_indices, &f, &s}, {1}, argmax),
              "input 1 s32[4] must have the dimensions of input 0 f32[4,5]");
}

TEST(ShapeInferenceTest, ReduceWindowAndSelectAndScatter) {
  const Shape input = F32({8, 8});
  const Shape init = F32({});
  ExpectShape(
      InferReduceWindowShape({&input, &init}, MakeWindow({3, 3}, 2, 1), ScalarReducer(PT::kF32)),
      F32({4, 4}));
  ExpectError(InferReduceWindowShape({&input, &init}, MakeWindow({3}), ScalarReducer(PT::kF32)),
              "reduce-window: window has 1 dimensions but the base f32[8,8] has rank 2");
  ExpectError(
      InferReduceWindowShape({&input, &init}, MakeWindow({3, 3}, 0), ScalarReducer(PT::kF32)),
      "window dimension 0 needs size, stride and dilations >= 1");
  const ProgramShape select = Prog({F32({}), F32({})}, Pred({}));
  ExpectShape(InferSelectAndScatterShape(input, select, MakeWindow({2, 2}, 2), F32({4, 4}), init,
                                         ScalarReducer(PT::kF32)),
              input);
  ExpectError(InferSelectAndScatterShape(input, select, MakeWindow({2, 2}, 2), F32({4, 3}), init,
                                         ScalarReducer(PT::kF32)),
              "source f32[4,3] must have the window output dimensions of the operand, f32[4,4]");
  ExpectError(InferSelectAndScatterShape(input, ScalarReducer(PT::kF32), MakeWindow({2, 2}, 2),
                                         F32({4, 4}), init, ScalarReducer(PT::kF32)),
              "select computation must be (f32[], f32[]) -> pred[]");
}

TEST(ShapeInferenceTest, SortAndTopK) {
  const Shape keys = F32({4, 5});
  const Shape values = S32({4, 5});
  const ProgramShape cmp = Prog({F32({}), F32({}), S32({}), S32({})}, Pred({}));
  ExpectShape(InferSortShape({&keys, &values}, 1, cmp), Shape::Tuple({keys, values}));
  ExpectShape(InferSortShape({&keys}, 0, Prog({F32({}), F32({})}, Pred({}))), keys);
  ExpectError(InferSortShape({&keys, &values}, 1, Prog({F32({}), F32({})}, Pred({}))),
              "sort: comparator must take 4 parameters, takes 2");
  ExpectError(InferSortShape({&keys}, 2, Prog({F32({}), F32({})}, Pred({}))),
              "sort: dimension 2 is out of range");
  ExpectError(InferSortShape({&keys}, 0, Prog({F32({}), F32({})}, F32({}))),
              "comparator must return pred[]");
  ExpectShape(InferTopKShape(F32({4, 10}), 3), Shape::Tuple({F32({4, 3}), S32({4, 3})}));
  ExpectError(InferTopKShape(F32({4, 10}), 11), "topk: k=11 must be in [0, 10]");
}

// ---- Linear algebra -------------------------------------------------------------------------

DotDimensionNumbers MatMul() {
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {1};
  d.rhs_contracting_dimensions = {0};
  return d;
}

TEST(ShapeInferenceTest, Dot) {
  ExpectShape(InferDotShape(F32({2, 4}), F32({4, 3}), MatMul(), std::nullopt), F32({2, 3}));
  DotDimensionNumbers batched;
  batched.lhs_batch_dimensions = {0};
  batched.rhs_batch_dimensions = {1};
  batched.lhs_contracting_dimensions = {2};
  batched.rhs_contracting_dimensions = {0};
  // Result: batch, lhs free, rhs free.
  ExpectShape(InferDotShape(F32({8, 2, 4}), F32({4, 8, 3}), batched, std::nullopt), F32({8, 2, 3}));
  ExpectShape(InferDotShape(Of(PT::kBF16, {2, 4}), Of(PT::kBF16, {4, 3}), MatMul(), PT::kF32),
              F32({2, 3}));
}

TEST(ShapeInferenceTest, DotErrors) {
  ExpectError(InferDotShape(F32({2, 4}), F32({5, 3}), MatMul(), std::nullopt),
              "dot: lhs contracting dimension 1 has size 4 but rhs contracting dimension 0 has "
              "size 5");
  DotDimensionNumbers batched = MatMul();
  batched.lhs_batch_dimensions = {0};
  ExpectError(InferDotShape(F32({2, 4}), F32({4, 3}), batched, std::nullopt),
              "dot: lhs has 1 batch dimensions {0} but rhs has 0 {}");
  DotDimensionNumbers out_of_range = MatMul();
  out_of_range.lhs_contracting_dimensions = {2};
  ExpectError(InferDotShape(F32({2, 4}), F32({4, 3}), out_of_range, std::nullopt),
              "lhs contracting+batch dimensions {2} has entry 2 out of range [0, 2)");
  ExpectError(InferDotShape(S32({2, 4}), S32({4, 3}), MatMul(), PT::kS8),
              "result type s8 must not be narrower than the operand type s32");
}

ConvolutionConfig NhwcConv(int64_t stride, int64_t pad) {
  ConvolutionConfig c;
  c.dnums.input_batch_dimension = 0;
  c.dnums.input_feature_dimension = 3;
  c.dnums.input_spatial_dimensions = {1, 2};
  c.dnums.kernel_input_feature_dimension = 2;
  c.dnums.kernel_output_feature_dimension = 3;
  c.dnums.kernel_spatial_dimensions = {0, 1};
  c.dnums.output_batch_dimension = 0;
  c.dnums.output_feature_dimension = 3;
  c.dnums.output_spatial_dimensions = {1, 2};
  c.window = MakeWindow({3, 3}, stride, pad);
  return c;
}

TEST(ShapeInferenceTest, Convolution) {
  ExpectShape(InferConvolutionShape(F32({1, 8, 8, 3}), F32({3, 3, 3, 16}), NhwcConv(1, 1)),
              F32({1, 8, 8, 16}));
  ExpectShape(InferConvolutionShape(F32({1, 8, 8, 3}), F32({3, 3, 3, 16}), NhwcConv(2, 1)),
              F32({1, 4, 4, 16}));
  ConvolutionConfig grouped = NhwcConv(1, 0);
  grouped.feature_group_count = 2;
  ExpectShape(InferConvolutionShape(F32({1, 8, 8, 6}), F32({3, 3, 3, 16}), grouped),
              F32({1, 6, 6, 16}));
  ConvolutionConfig batch_grouped = NhwcConv(1, 0);
  batch_grouped.batch_group_count = 2;
  ExpectShape(InferConvolutionShape(F32({4, 8, 8, 3}), F32({3, 3, 3, 8}), batch_grouped),
              F32({2, 6, 6, 8}));
}

TEST(ShapeInferenceTest, ConvolutionErrors) {
  ExpectError(InferConvolutionShape(F32({1, 8, 8, 4}), F32({3, 3, 3, 16}), NhwcConv(1, 1)),
              "convolution: input feature dimension has size 4 but kernel input feature "
              "dimension has size 3 and feature_group_count is 1");
  ExpectError(InferConvolutionShape(F32({1, 8, 8, 3}), F32({2, 3, 3, 16}), NhwcConv(1, 1)),
              "window size 3 of spatial dimension 0 differs from the kernel's size 2");
  ConvolutionConfig grouped = NhwcConv(1, 0);
  grouped.feature_group_count = 2;
  ExpectError(InferConvolutionShape(F32({1, 8, 8, 6}), F32({3, 3, 3, 15}), grouped),
              "kernel output feature size 15 must be divisible by feature_group_count 2");
  ConvolutionConfig bad_labels = NhwcConv(1, 1);
  bad_labels.dnums.output_feature_dimension = 0;
  ExpectError(InferConvolutionShape(F32({1, 8, 8, 3}), F32({3, 3, 3, 16}), bad_labels),
              "output dimension labels must be a permutation");
  ExpectError(InferConvolutionShape(F32({8, 8, 3}), F32({3, 3, 3, 16}), NhwcConv(1, 1)),
              "must have rank 4");
}

TEST(ShapeInferenceTest, FftTriangularSolveCholesky) {
  ExpectShape(InferFftShape(F32({8, 16}), FftType::kRfft, {16}), Of(PT::kC64, {8, 9}));
  ExpectShape(InferFftShape(Of(PT::kC64, {8, 9}), FftType::kIrfft, {16}), F32({8, 16}));
  ExpectShape(InferFftShape(Of(PT::kC64, {8, 9}), FftType::kFft, {9}), Of(PT::kC64, {8, 9}));
  ExpectError(InferFftShape(F32({8}), FftType::kFft, {8}), "FFT needs a complex operand");
  ExpectError(InferFftShape(F32({8, 16}), FftType::kRfft, {8}),
              "operand dimension 1 has size 16 but fft_length[0] is 8");
  ExpectShape(InferTriangularSolveShape(F32({2, 4, 4}), F32({2, 4, 7}), true), F32({2, 4, 7}));
  ExpectShape(InferTriangularSolveShape(F32({2, 4, 4}), F32({2, 7, 4}), false), F32({2, 7, 4}));
  ExpectError(InferTriangularSolveShape(F32({2, 4, 4}), F32({2, 7, 4}), true),
              "b dimension 1 has size 7 but a is 4x4");
  ExpectShape(InferCholeskyShape(F32({3, 3})), F32({3, 3}));
  ExpectError(InferCholeskyShape(F32({3, 4})), "square minor dimensions");
}

TEST(ShapeInferenceTest, BatchNorm) {
  const Shape x = F32({8, 4, 4, 16});
  const Shape f = F32({16});
  ExpectShape(InferBatchNormTrainingShape(x, f, f, 3), Shape::Tuple({x, f, f}));
  ExpectShape(InferBatchNormInferenceShape(x, f, f, f, f, 3), x);
  ExpectShape(InferBatchNormGradShape(x, f, f, f, x, 3), Shape::Tuple({x, f, f}));
  ExpectError(InferBatchNormTrainingShape(x, F32({15}), f, 3),
              "batch-norm-training: scale must be f32[16] (the feature dimension), got f32[15]");
  ExpectError(InferBatchNormInferenceShape(x, f, f, f, f, 4), "feature_index 4 is out of range");
  ExpectError(InferBatchNormGradShape(x, f, f, f, F32({8}), 3), "grad_output f32[8] must match");
}

// ---- Control flow and misc ------------------------------------------------------------------

TEST(ShapeInferenceTest, CallWhileConditional) {
  const Shape a = F32({2});
  const Shape b = S32({});
  ExpectShape(InferCallShape({&a, &b}, Prog({a, b}, Pred({}))), Pred({}));
  ExpectError(InferCallShape({&a}, Prog({a, b}, Pred({}))),
              "call: callee takes 2 parameters but 1 arguments are passed");
  ExpectError(InferCallShape({&b, &a}, Prog({a, b}, Pred({}))),
              "call: argument 0 s32[] does not match parameter 0 f32[2]");
  ExpectShape(InferWhileShape(Prog({a}, Pred({})), Prog({a}, a), a), a);
  ExpectError(InferWhileShape(Prog({a}, Pred({})), Prog({a}, F32({3})), a),
              "while: body result f32[3] does not match the init value f32[2]");
  ExpectError(InferWhileShape(Prog({a}, S32({})), Prog({a}, a), a), "condition must return pred[]");
  const std::vector<ProgramShape> branches = {Prog({a}, b), Prog({b}, b)};
  ExpectShape(InferConditionalShape(S32({}), branches, {&a, &b}), b);
  ExpectError(InferConditionalShape(S32({}), branches, {&a, &a}),
              "branch 1 parameter s32[] does not match its operand f32[2]");
  ExpectError(InferConditionalShape(Pred({}), {Prog({a}, b)}, {&a}),
              "a pred index needs exactly 2 branches");
  ExpectError(InferConditionalShape(S32({}), {Prog({a}, b), Prog({a}, a)}, {&a, &a}),
              "branch 1 returns f32[2] but branch 0 returns s32[]");
}

TEST(ShapeInferenceTest, TokensAndRng) {
  const Shape token = Shape::Token();
  const Shape a = F32({2});
  ExpectShape(InferAfterAllShape({&token, &token}), token);
  ExpectShape(InferAfterAllShape({}), token);
  EXPECT_TRUE(InferAfterAllShape({&token, &a}).ok());  // XLA orders any operands.
  ExpectShape(InferAddDependencyShape(a, token), a);
  ExpectError(InferAddDependencyShape(a, a), "operand 1 must be a token");
  ExpectShape(InferRngShape(F32({}), F32({}), RandomDistribution::kNormal, F32({3})), F32({3}));
  ExpectError(InferRngShape(S32({}), S32({}), RandomDistribution::kNormal, S32({3})),
              "rng_normal needs floating-point parameters");
  ExpectError(InferRngShape(F32({}), S32({}), RandomDistribution::kUniform, F32({3})),
              "parameters must be scalars of one type");
}

TEST(ShapeInferenceTest, Collectives) {
  const Shape a = F32({4, 6});
  const Shape b = S32({2});
  ExpectShape(InferAllReduceShape({&a}, ScalarReducer(PT::kF32)), a);
  ExpectError(InferAllReduceShape({&a, &b}, ScalarReducer(PT::kF32)),
              "all-reduce: operand 1 has element type s32 but the reduction computation takes "
              "f32[]");
  ExpectError(InferAllReduceShape({&a}, Prog({F32({}), F32({})}, S32({}))),
              "must be (T, T) -> T on scalars");
  ExpectShape(InferAllGatherShape({&a}, 1, 4), F32({4, 24}));
  ExpectShape(InferAllGatherShape({&a, &b}, 0, 2), Shape::Tuple({F32({8, 6}), S32({4})}));
  ExpectError(InferAllGatherShape({&a}, 2, 4), "dimension 2 is out of range for operand 0");
  ExpectShape(InferReduceScatterShape({&a}, 1, 3, ScalarReducer(PT::kF32)), F32({4, 2}));
  ExpectError(InferReduceScatterShape({&a}, 1, 4, ScalarReducer(PT::kF32)),
              "operand 0 dimension 1 has size 6, not divisible by the shard count 4");
  ExpectShape(InferAllToAllShape({&a}, 1, 3), a);
  ExpectError(InferAllToAllShape({&a}, 1, 4), "not divisible by the split count 4");
  ExpectShape(InferAllToAllShape({&a, &a}, std::nullopt, 2), Shape::Tuple({a, a}));
  ExpectError(InferAllToAllShape({&a, &b}, std::nullopt, 2), "operand 1 s32[2] differs");
  ExpectShape(InferCollectivePermuteShape({&a}, {{0, 1}, {1, 0}}), a);
  ExpectError(InferCollectivePermuteShape({&a}, {{0, 1}, {0, 2}}),
              "source 0 appears more than once");
  ExpectError(InferCollectivePermuteShape({&a}, {{0, 1}, {2, 1}}),
              "target 1 appears more than once");
}

// ---- InferShape on instructions -------------------------------------------------------------

class InferShapeTest : public ::testing::Test {
 protected:
  InferShapeTest() : module_("m") {
    auto entry = std::make_unique<HloComputation>("entry");
    entry_ = module_.AddComputation(std::move(entry));
    module_.set_entry_computation(entry_);
  }

  HloInstruction* Param(int64_t n, Shape shape) {
    auto p = HloInstruction::Create(HloOpcode::kParameter, std::move(shape), {});
    p->mutable_attrs()->parameter_number = n;
    p->set_name("p" + std::to_string(n));
    return entry_->AddInstruction(std::move(p));
  }

  HloInstruction* Add(HloOpcode opcode, Shape shape, std::vector<HloInstruction*> operands) {
    auto instr = HloInstruction::Create(opcode, std::move(shape), operands);
    instr->set_name(std::string(HloOpcodeString(opcode)) + "." +
                    std::to_string(entry_->instruction_count()));
    return entry_->AddInstruction(std::move(instr));
  }

  HloComputation* ScalarAdd(PT type) {
    auto c = std::make_unique<HloComputation>("add");
    auto x = HloInstruction::Create(HloOpcode::kParameter, Of(type, {}), {});
    auto y = HloInstruction::Create(HloOpcode::kParameter, Of(type, {}), {});
    y->mutable_attrs()->parameter_number = 1;
    HloInstruction* px = c->AddInstruction(std::move(x));
    HloInstruction* py = c->AddInstruction(std::move(y));
    c->set_root_instruction(
        c->AddInstruction(HloInstruction::Create(HloOpcode::kAdd, Of(type, {}), {px, py})));
    return module_.AddComputation(std::move(c));
  }

  HloModule module_;
  HloComputation* entry_;
};

TEST_F(InferShapeTest, ElementwiseAndOperandCount) {
  HloInstruction* p0 = Param(0, F32({4}));
  HloInstruction* p1 = Param(1, F32({4}));
  ExpectShape(InferShape(*Add(HloOpcode::kAdd, F32({4}), {p0, p1})), F32({4}));
  ExpectError(InferShape(*Add(HloOpcode::kAdd, F32({4}), {p0})), "add: expected 2 operands, got 1");
  ExpectShape(InferShape(*Add(HloOpcode::kCompare, Pred({4}), {p0, p1})), Pred({4}));
  ExpectShape(InferShape(*Add(HloOpcode::kPartitionId, S32({}), {})), Of(PT::kU32, {}));
  ExpectShape(InferShape(*p0), F32({4}));
}

TEST_F(InferShapeTest, UnimplementedOpcodesNameTheOpcode) {
  HloInstruction* p0 = Param(0, F32({4}));
  for (HloOpcode op : {HloOpcode::kCustomCall, HloOpcode::kFusion, HloOpcode::kAsyncStart,
                       HloOpcode::kSend, HloOpcode::kInfeed}) {
    absl::StatusOr<Shape> s = InferShape(*Add(op, F32({4}), {p0}));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(std::string(HloOpcodeString(op))));
  }
}

TEST_F(InferShapeTest, AttributesAndDeclaredShapes) {
  HloInstruction* p0 = Param(0, Of(PT::kBF16, {2, 4}));
  HloInstruction* p1 = Param(1, Of(PT::kBF16, {4, 3}));
  HloInstruction* dot = Add(HloOpcode::kDot, F32({2, 3}), {p0, p1});
  dot->mutable_attrs()->dot_dimension_numbers = MatMul();
  ExpectShape(InferShape(*dot), F32({2, 3}));  // Preferred type from the declared shape.
  HloInstruction* bcast = Add(HloOpcode::kBroadcast, Of(PT::kBF16, {3, 2, 4}), {p0});
  bcast->mutable_attrs()->dimensions = {1, 2};
  ExpectShape(InferShape(*bcast), Of(PT::kBF16, {3, 2, 4}));
  HloInstruction* concat = Add(HloOpcode::kConcatenate, Of(PT::kBF16, {4, 4}), {p0, p0});
  ExpectError(InferShape(*concat), "concatenate: expected exactly one entry in dimensions, got 0");
  HloInstruction* pad = Add(HloOpcode::kPad, Of(PT::kBF16, {2, 4}), {p0, p0});
  ExpectError(InferShape(*pad), "pad: missing padding");
}

TEST_F(InferShapeTest, CalledComputations) {
  HloInstruction* p0 = Param(0, F32({4, 5}));
  HloInstruction* zero = Add(HloOpcode::kConstant, F32({}), {});
  zero->mutable_attrs()->literal = Literal(F32({}));
  ExpectShape(InferShape(*zero), F32({}));
  HloInstruction* reduce = Add(HloOpcode::kReduce, F32({4}), {p0, zero});
  reduce->mutable_attrs()->dimensions = {1};
  ExpectError(InferShape(*reduce), "reduce: expected 1 called computation, got 0");
  reduce->AppendCalledComputation(ScalarAdd(PT::kF32));
  ExpectShape(InferShape(*reduce), F32({4}));
  reduce->set_called_computation(0, ScalarAdd(PT::kS32));
  ExpectError(InferShape(*reduce),
              "reduce: init value 0 has shape f32[] but the reduction computation accumulates "
              "s32[]");
}

TEST_F(InferShapeTest, CollectiveGroupSizes) {
  HloInstruction* p0 = Param(0, F32({4, 6}));
  module_.mutable_config()->replica_count = 2;
  module_.mutable_config()->num_partitions = 4;
  HloInstruction* ag = Add(HloOpcode::kAllGather, F32({4, 12}), {p0});
  ag->mutable_attrs()->dimensions = {1};
  ExpectShape(InferShape(*ag), F32({4, 12}));  // No channel: replica_count.
  ag->mutable_attrs()->channel_id = 1;
  ExpectShape(InferShape(*ag), F32({4, 48}));  // Replicas x partitions.
  // Cross-replica-and-partition: replica groups, each spanning all 4 partitions.
  ag->mutable_attrs()->replica_groups = ReplicaGroups{{{0, 1}}, std::nullopt};
  ExpectShape(InferShape(*ag), F32({4, 48}));
  // Global device ids: the groups are the participants.
  ag->mutable_attrs()->use_global_device_ids = true;
  ag->mutable_attrs()->replica_groups = ReplicaGroups{{{0, 1, 2}, {3, 4, 5}}, std::nullopt};
  ExpectShape(InferShape(*ag), F32({4, 18}));
  ag->mutable_attrs()->replica_groups = ReplicaGroups{{{0, 1, 2}, {3, 4}}, std::nullopt};
  ExpectError(InferShape(*ag), "replica groups must have equal sizes, group 1 has 2 devices");
  // A participant named twice would contribute its value twice.
  ag->mutable_attrs()->replica_groups = ReplicaGroups{{{0, 0}, {1, 2}}, std::nullopt};
  ExpectError(InferShape(*ag), "id 0 appears more than once in replica_groups");
  ag->mutable_attrs()->replica_groups = ReplicaGroups{{{0, 1}, {2, -1}}, std::nullopt};
  ExpectError(InferShape(*ag), "replica group 1 has negative id -1");
  ag->mutable_attrs()->replica_groups = ReplicaGroups{{}, IotaReplicaGroupList{2, 4, {8}, {}}};
  ExpectShape(InferShape(*ag), F32({4, 24}));
  HloInstruction* a2a = Add(HloOpcode::kAllToAll, F32({4, 6}), {p0});
  a2a->mutable_attrs()->dimensions = {0};
  a2a->mutable_attrs()->channel_id = 2;
  ExpectShape(InferShape(*a2a), F32({4, 6}));  // 4 partitions split 4 rows.
  a2a->mutable_attrs()->dimensions = {1};
  ExpectError(InferShape(*a2a),
              "split dimension 1 has size 6, not divisible by the split "
              "count 4");
}

TEST(InferShapeStandaloneTest, EmptyGroupsOutsideAModuleAreAnError) {
  auto p = HloInstruction::Create(HloOpcode::kParameter, F32({4}), {});
  auto ag = HloInstruction::Create(HloOpcode::kAllGather, F32({8}), {p.get()});
  ag->mutable_attrs()->dimensions = {0};
  ExpectError(InferShape(*ag), "replica_groups is empty and the instruction is not in a module");
  ag->DetachFromOperands();
}

TEST_F(InferShapeTest, ResultHasNoLayout) {
  HloInstruction* p0 = Param(0, Shape::ArrayWithLayout(PT::kF32, {2, 3}));
  absl::StatusOr<Shape> s = InferShape(*Add(HloOpcode::kNegate, F32({2, 3}), {p0}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(s->has_layout());
}

}  // namespace
}  // namespace hlo

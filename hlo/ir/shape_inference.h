// Shape inference for HLO instructions, following XLA's semantics (openxla.org/xla/
// operation_semantics and xla/service/shape_inference.cc) at the HLO level:
//
//  * no implicit broadcasting: elementwise operands must have equal dimensions;
//  * no mixed floating-point precision: where XLA's client-side inference would accept f32
//    with bf16 and pick the wider type, these functions require equal element types, as XLA's
//    verifier does by default (allow_mixed_precision=false). Dot and convolution are the
//    exception: their result type is a `preferred_element_type` (the declared type);
//  * layouts are ignored (shapes are compared with Shape::Compatible). InferShape's result
//    carries no layout; the per-op functions may return an operand's shape as is.
//
// Every function returns the inferred shape or an InvalidArgument status whose message starts
// with the op name and names the offending dimension/operand, e.g.
// "dot: lhs contracting dimension 1 has size 4 but rhs contracting dimension 0 has size 5".
//
// Ops whose result dimensions are an attribute of the instruction rather than a function of the
// operands (broadcast, reshape, iota, rng, bitcast, dynamic-reshape) take the declared `output`
// shape and return it (with the operands' element type where they imply one) after checking
// that it is consistent with them.
#ifndef HLO_IR_SHAPE_INFERENCE_H_
#define HLO_IR_SHAPE_INFERENCE_H_

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_attributes.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/hlo_opcode.h"
#include "hlo/ir/shape.h"

namespace hlo {

// --- Entry point ---------------------------------------------------------------------------

// Infers the shape of `instr` from its operands' shapes, its attributes and the program shapes
// of its called computations; checks operand and called-computation counts on the way. The
// declared `instr.shape()` is only read where it is an attribute: the dimensions of the ops
// listed in the file comment, the target element type of convert, bitcast-convert and
// stochastic-convert, the preferred element type of dot and convolution, and the whole shape of
// a parameter (returned as is). Collectives whose replica_groups are empty read
// replica_count/num_partitions from the enclosing module's config (an error if `instr` is not
// in a module). Returns UnimplementedError naming the opcode for ops without inference (async
// start/update/done pairs, send/recv, infeed/outfeed, fusion, custom-call, ...): callers then
// trust the declared shape.
absl::StatusOr<Shape> InferShape(const HloInstruction& instr);

// --- Elementwise ---------------------------------------------------------------------------

// Unary elementwise op of `opcode`'s kUnary family. copy accepts any shape; the others need an
// array of a suitable element type. is-finite yields pred; real, imag and abs of a complex
// type yield its component type (f32 for c64, f64 for c128).
absl::StatusOr<Shape> InferUnaryOpShape(HloOpcode opcode, const Shape& operand);
// Binary elementwise op of the kBinary family: equal dimensions and element types. complex
// maps (f32, f32) to c64 and (f64, f64) to c128.
absl::StatusOr<Shape> InferBinaryOpShape(HloOpcode opcode, const Shape& lhs, const Shape& rhs);
// compare: like a binary op, result element type pred.
absl::StatusOr<Shape> InferCompareShape(const Shape& lhs, const Shape& rhs);
// select: `pred` has element type pred and the dimensions of `on_true`, which equals
// `on_false`.
absl::StatusOr<Shape> InferSelectShape(const Shape& pred, const Shape& on_true,
                                       const Shape& on_false);
// clamp: `min` and `max` have `operand`'s element type and either its dimensions or rank 0.
absl::StatusOr<Shape> InferClampShape(const Shape& min, const Shape& operand, const Shape& max);
// convert: `operand` with element type `new_type`.
absl::StatusOr<Shape> InferConvertShape(const Shape& operand, PrimitiveType new_type);
// bitcast-convert: equal widths keep the dimensions; converting to a type N times narrower
// appends a minor dimension of size N; converting to a type N times wider requires (and
// removes) a minor dimension of size N. Complex and real types do not mix.
absl::StatusOr<Shape> InferBitcastConvertShape(const Shape& operand, PrimitiveType new_type);
// stochastic-convert: a floating `operand`, unsigned `random` bits of the same width and
// dimensions; result `operand` with element type `new_type`.
absl::StatusOr<Shape> InferStochasticConvertShape(const Shape& operand, const Shape& random,
                                                  PrimitiveType new_type);
// reduce-precision: floating operand, `exponent_bits` >= 1, `mantissa_bits` >= 0.
absl::StatusOr<Shape> InferReducePrecisionShape(const Shape& operand, int64_t exponent_bits,
                                                int64_t mantissa_bits);
// map: operands of equal dimensions; `to_apply` maps one scalar per operand to a scalar.
// `dimensions` is empty or {0, ..., rank-1}.
absl::StatusOr<Shape> InferMapShape(absl::Span<const Shape* const> operands,
                                    const ProgramShape& to_apply,
                                    absl::Span<const int64_t> dimensions);

// --- Data movement -------------------------------------------------------------------------

// broadcast: operand dimension i becomes `output` dimension `dimensions[i]` (equal sizes; the
// entries are distinct). Returns `output`'s dimensions with the operand's element type.
absl::StatusOr<Shape> InferBroadcastShape(const Shape& operand, const Shape& output,
                                          absl::Span<const int64_t> dimensions);
// reshape: `output`'s dimensions with the operand's element type; element counts must agree.
absl::StatusOr<Shape> InferReshapeShape(const Shape& operand, const Shape& output);
// dynamic-reshape: like reshape (counting bounds), plus one s32 scalar size per output dim.
absl::StatusOr<Shape> InferDynamicReshapeShape(const Shape& operand,
                                               absl::Span<const Shape* const> sizes,
                                               const Shape& output);
// transpose: result dimension i is operand dimension `permutation[i]`.
absl::StatusOr<Shape> InferTransposeShape(const Shape& operand,
                                          absl::Span<const int64_t> permutation);
// iota: `output` must be an array of rank >= 1 with `iota_dimension` < rank.
absl::StatusOr<Shape> InferIotaShape(const Shape& output, int64_t iota_dimension);
// slice: one {start, limit, stride} per dimension, 0 <= start <= limit <= size, stride >= 1;
// result size ceil((limit - start) / stride).
absl::StatusOr<Shape> InferSliceShape(const Shape& operand, absl::Span<const SliceDimension> slice);
// dynamic-slice: one integral scalar start index per dimension (all of one type; a single
// rank-1 index vector is also accepted) and 0 <= slice_sizes[i] <= size.
absl::StatusOr<Shape> InferDynamicSliceShape(const Shape& operand,
                                             absl::Span<const Shape* const> start_indices,
                                             absl::Span<const int64_t> slice_sizes);
// dynamic-update-slice: `update` has the operand's rank and element type and fits inside it;
// start indices as for dynamic-slice. Result: `operand`.
absl::StatusOr<Shape> InferDynamicUpdateSliceShape(const Shape& operand, const Shape& update,
                                                   absl::Span<const Shape* const> start_indices);
// pad: scalar padding value of the operand's element type; per dimension the size becomes
// low + high + size + max(size - 1, 0) * interior. Edge padding may be negative, interior not,
// and no resulting size may be negative.
absl::StatusOr<Shape> InferPadShape(const Shape& operand, const Shape& padding_value,
                                    const PaddingConfig& config);
// concatenate: at least one operand; equal ranks, element types and sizes except along
// `dimension`, whose sizes add up.
absl::StatusOr<Shape> InferConcatenateShape(absl::Span<const Shape* const> operands,
                                            int64_t dimension);
// reverse: distinct in-range `dimensions`; result `operand`.
absl::StatusOr<Shape> InferReverseShape(const Shape& operand, absl::Span<const int64_t> dimensions);
absl::StatusOr<Shape> InferTupleShape(absl::Span<const Shape* const> elements);
absl::StatusOr<Shape> InferGetTupleElementShape(const Shape& tuple, int64_t index);
// bitcast: `output` (any array shape) must occupy as many bytes as `operand`.
absl::StatusOr<Shape> InferBitcastShape(const Shape& operand, const Shape& output);
// get-dimension-size: s32[] for an in-range `dimension`.
absl::StatusOr<Shape> InferGetDimensionSizeShape(const Shape& operand, int64_t dimension);
// set-dimension-size: `operand` with `dimension` marked dynamic; `size` is an s32 scalar.
absl::StatusOr<Shape> InferSetDimensionSizeShape(const Shape& operand, const Shape& size,
                                                 int64_t dimension);
// gather (XLA semantics including operand_batching_dims/start_indices_batching_dims). The
// result has rank |offset_dims| + rank(start_indices) - 1 (rank(start_indices) when
// index_vector_dim == rank(start_indices)); offset_dims take the slice sizes of the operand
// dimensions that are neither collapsed nor batching, the other dimensions take the
// start_indices dimensions other than index_vector_dim, in order.
absl::StatusOr<Shape> InferGatherShape(const Shape& operand, const Shape& start_indices,
                                       const GatherDimensionNumbers& dnums,
                                       absl::Span<const int64_t> slice_sizes);
// scatter: `operands` holds N inputs, the scatter indices, then N updates. `to_apply` reduces
// N scalars of the inputs' types with N of the updates' types. Result: the input, or a tuple
// of the N inputs.
absl::StatusOr<Shape> InferScatterShape(absl::Span<const Shape* const> operands,
                                        const ProgramShape& to_apply,
                                        const ScatterDimensionNumbers& dnums);

// --- Reductions, windows, sorting ----------------------------------------------------------

// Output shape of sliding `window` over `base` (one window dimension per base dimension):
// size >= 1, stride >= 1, dilations >= 1, out = floor((padded - dilated_window) / stride) + 1
// or 0 when the dilated window does not fit.
absl::StatusOr<Shape> InferWindowOutputShape(const Shape& base, const Window& window,
                                             PrimitiveType element_type);
// reduce: `operands` holds N inputs of equal dimensions then N scalar init values. `to_apply`
// takes 2N scalars (N accumulators, then N input elements) and returns a scalar (N == 1) or an
// N-tuple of scalars whose types match the init values. `dimensions` are distinct and in
// range; they are removed from the result.
absl::StatusOr<Shape> InferReduceShape(absl::Span<const Shape* const> operands,
                                       absl::Span<const int64_t> dimensions,
                                       const ProgramShape& to_apply);
// reduce-window: N inputs then N init values, reducer as for reduce; each result is the
// window output shape of its input with its init value's element type.
absl::StatusOr<Shape> InferReduceWindowShape(absl::Span<const Shape* const> operands,
                                             const Window& window, const ProgramShape& to_apply);
// select-and-scatter: `select` is (T, T) -> pred[] for the operand's element type T;
// `scatter` reduces `init_value` with `source` elements; `source` has the window output shape
// of `operand`. Result: `operand`.
absl::StatusOr<Shape> InferSelectAndScatterShape(const Shape& operand, const ProgramShape& select,
                                                 const Window& window, const Shape& source,
                                                 const Shape& init_value,
                                                 const ProgramShape& scatter);
// sort: operands of equal dimensions, `dimension` in range, `comparator` takes two scalars of
// each operand's element type (2N parameters) and returns pred[]. Result: the operand, or a
// tuple of all operands.
absl::StatusOr<Shape> InferSortShape(absl::Span<const Shape* const> operands, int64_t dimension,
                                     const ProgramShape& comparator);
// topk: (values, s32 indices), both the operand with its last dimension replaced by `k`.
absl::StatusOr<Shape> InferTopKShape(const Shape& operand, int64_t k);

// --- Linear algebra ------------------------------------------------------------------------

// dot: contracting and batch dimension lists pair up (same counts and sizes) and are in range
// and distinct per side. Result dimensions: batch dims (lhs order), lhs free dims, rhs free
// dims. The element type is `preferred_element_type` when given (an integral input may not be
// narrowed), else the wider input type.
absl::StatusOr<Shape> InferDotShape(const Shape& lhs, const Shape& rhs,
                                    const DotDimensionNumbers& dnums,
                                    std::optional<PrimitiveType> preferred_element_type);

// A custom-call whose target has a fixed meaning (XLA's `_SPMDInternalOp_*`); UnimplementedError
// for other targets.
absl::StatusOr<Shape> InferCustomCallShape(const HloInstruction& instr);

// ragged-dot(lhs, rhs, group_sizes) in its three modes (by where lhs_ragged_dims lies): batch
// (a plain dot), contracting (a leading dimension of one entry per group), non-contracting
// (rhs's group dimension is consumed).
absl::StatusOr<Shape> InferRaggedDotShape(const Shape& lhs, const Shape& rhs,
                                          const Shape& group_sizes,
                                          const DotDimensionNumbers& dnums, int64_t ragged_dim,
                                          absl::Span<const int64_t> rhs_group_dims,
                                          std::optional<PrimitiveType> preferred_element_type);

// Attributes of a convolution besides its operands.
struct ConvolutionConfig {
  ConvolutionDimensionNumbers dnums;
  Window window;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::optional<PrimitiveType> preferred_element_type;
};
// convolution: dnums are permutations of each operand's dimensions; input features =
// kernel input features * feature_group_count; kernel output features divisible by both group
// counts; input batch divisible by batch_group_count; window sizes equal the kernel spatial
// sizes. Output: batch / batch_group_count, kernel output features, window output sizes.
absl::StatusOr<Shape> InferConvolutionShape(const Shape& lhs, const Shape& rhs,
                                            const ConvolutionConfig& config);
// fft: 1 to 3 `fft_length` entries on the innermost dimensions. FFT/IFFT keep a complex
// operand; RFFT maps f32/f64 to c64/c128 with last dim fft_length/2+1; IRFFT the reverse.
absl::StatusOr<Shape> InferFftShape(const Shape& operand, FftType type,
                                    absl::Span<const int64_t> fft_length);
// triangular-solve: `a` is [..., M, M], `b` is [..., M, N] (`left_side`) or [..., N, M], same
// batch dims and floating/complex element type. Result: `b`.
absl::StatusOr<Shape> InferTriangularSolveShape(const Shape& a, const Shape& b, bool left_side);
// cholesky: `a` is a floating/complex [..., N, N]. Result: `a`.
absl::StatusOr<Shape> InferCholeskyShape(const Shape& a);
// batch-norm-training: (operand, mean[F], variance[F]) where F is the feature dimension size.
absl::StatusOr<Shape> InferBatchNormTrainingShape(const Shape& operand, const Shape& scale,
                                                  const Shape& offset, int64_t feature_index);
// batch-norm-inference: `operand`; scale, offset, mean and variance are [F].
absl::StatusOr<Shape> InferBatchNormInferenceShape(const Shape& operand, const Shape& scale,
                                                   const Shape& offset, const Shape& mean,
                                                   const Shape& variance, int64_t feature_index);
// batch-norm-grad: (grad_operand, grad_scale[F], grad_offset[F]); `grad_output` has the
// operand's dimensions.
absl::StatusOr<Shape> InferBatchNormGradShape(const Shape& operand, const Shape& scale,
                                              const Shape& mean, const Shape& variance,
                                              const Shape& grad_output, int64_t feature_index);

// --- Control flow --------------------------------------------------------------------------

// call: one argument per parameter, each compatible with it. Result: the callee's result.
absl::StatusOr<Shape> InferCallShape(absl::Span<const Shape* const> arguments,
                                     const ProgramShape& to_apply);
// while: condition (T) -> pred[], body (T) -> T, init T. Result: `init`.
// scan(inputs..., carries...), dimensions={d}, num_carries=c: the body takes each input's
// slice (dim d removed) and the carries, and returns the step's outputs and new carries; the
// result stacks the outputs along d, then the final carries (the one output alone when there
// are no carries).
absl::StatusOr<Shape> InferScanShape(absl::Span<const Shape* const> operands, int64_t dimension,
                                     int64_t num_carries, const ProgramShape& body);
absl::StatusOr<Shape> InferWhileShape(const ProgramShape& condition, const ProgramShape& body,
                                      const Shape& init);
// conditional: `branch_index` is pred[] (exactly two branches) or s32[] (at least one); branch
// i takes one parameter compatible with `branch_operands[i]`; all branch results are
// compatible. Result: branch 0's result.
absl::StatusOr<Shape> InferConditionalShape(const Shape& branch_index,
                                            absl::Span<const ProgramShape> branches,
                                            absl::Span<const Shape* const> branch_operands);

// --- Collectives ---------------------------------------------------------------------------

// all-reduce: array operands; `to_apply` is (T, T) -> T on scalars of the operands' element
// type T. Result: the operand, or a tuple of the operands.
absl::StatusOr<Shape> InferAllReduceShape(absl::Span<const Shape* const> operands,
                                          const ProgramShape& to_apply);
// all-gather: each operand's `dimension` is multiplied by `shard_count` (the group size).
absl::StatusOr<Shape> InferAllGatherShape(absl::Span<const Shape* const> operands,
                                          int64_t dimension, int64_t shard_count);
// reduce-scatter: each operand's `dimension` (divisible by `shard_count`) is divided by it;
// `to_apply` as for all-reduce.
absl::StatusOr<Shape> InferReduceScatterShape(absl::Span<const Shape* const> operands,
                                              int64_t dimension, int64_t shard_count,
                                              const ProgramShape& to_apply);
// all-to-all. Array form (`split_dimension` set): one operand whose split dimension is
// divisible by `split_count`; the result is the operand (split and concat dims are the same in
// HLO). Tuple form: operands of one shape; the result is the tuple of them.
absl::StatusOr<Shape> InferAllToAllShape(absl::Span<const Shape* const> operands,
                                         std::optional<int64_t> split_dimension,
                                         int64_t split_count);
// collective-permute: one operand (result: its shape) or the 4-operand in-place form (result:
// operand 1's shape). No source and no target may appear twice in `pairs`; ids are >= 0.
absl::StatusOr<Shape> InferCollectivePermuteShape(
    absl::Span<const Shape* const> operands, absl::Span<const std::pair<int64_t, int64_t>> pairs);

// --- Other ---------------------------------------------------------------------------------

// after-all: token operands only; result token[].
absl::StatusOr<Shape> InferAfterAllShape(absl::Span<const Shape* const> operands);
// add-dependency: (value, token) -> value's shape.
absl::StatusOr<Shape> InferAddDependencyShape(const Shape& operand, const Shape& token);
// rng: `a` and `b` are scalars of one element type (floating for rng_normal; floating,
// integral or pred for rng_uniform). Result: `output`'s dimensions with that element type.
absl::StatusOr<Shape> InferRngShape(const Shape& a, const Shape& b, RandomDistribution distribution,
                                    const Shape& output);

}  // namespace hlo

#endif  // HLO_IR_SHAPE_INFERENCE_H_

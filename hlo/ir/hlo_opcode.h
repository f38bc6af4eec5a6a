// The HLO opcodes, as one X-macro table: each opcode's enumerator, text name, coarse family and
// traits, so that what an op means is written once and every consumer (shape inference, the
// printer, the passes, the executors) reads it here instead of keeping its own switch.
#ifndef HLO_IR_HLO_OPCODE_H_
#define HLO_IR_HLO_OPCODE_H_

#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

#include "hlo/ir/primitive_type.h"

namespace hlo {

// The element-type kinds an elementwise op is defined on, as a bit set. kF32F64Kind admits only
// f32 and f64 among the floating-point types.
using ElementTypeSet = uint8_t;
inline constexpr ElementTypeSet kPredKind = 1 << 0;
inline constexpr ElementTypeSet kSignedKind = 1 << 1;
inline constexpr ElementTypeSet kUnsignedKind = 1 << 2;
inline constexpr ElementTypeSet kFloatKind = 1 << 3;
inline constexpr ElementTypeSet kF32F64Kind = 1 << 4;
inline constexpr ElementTypeSet kComplexKind = 1 << 5;

// The vocabulary of the table's last three columns.
namespace op_traits {

// `types`: the element types an elementwise op accepts (kNoTypes: not elementwise, or its
// operands' types are checked elsewhere).
inline constexpr ElementTypeSet kNoTypes = 0;
inline constexpr ElementTypeSet kIntegral = kSignedKind | kUnsignedKind;
inline constexpr ElementTypeSet kPredOrIntegral = kPredKind | kIntegral;
inline constexpr ElementTypeSet kFloating = kFloatKind;
inline constexpr ElementTypeSet kFloatOrComplex = kFloatKind | kComplexKind;
inline constexpr ElementTypeSet kF32OrF64 = kF32F64Kind;
inline constexpr ElementTypeSet kReal = kIntegral | kFloatKind;
inline constexpr ElementTypeSet kPredOrReal = kPredKind | kReal;
inline constexpr ElementTypeSet kSignedNumeric = kSignedKind | kFloatKind | kComplexKind;
inline constexpr ElementTypeSet kNumeric = kIntegral | kFloatKind | kComplexKind;
inline constexpr ElementTypeSet kAnyType = kPredKind | kNumeric;

// `flags`: what an op does beyond its value.
inline constexpr uint32_t kSideEffect = 1 << 0;       // Kept by dead-code elimination.
inline constexpr uint32_t kForwardsOperand = 1 << 1;  // Its value is its operand's.
// Its called computations run whole as part of it (not a combiner applied per element).
inline constexpr uint32_t kRunsCallees = 1 << 2;
// A commutative, associative reduction recognised in combiner computations (`MatchCombiner`).
inline constexpr uint32_t kReducer = 1 << 3;
// Allocates nothing: its value is its operands' buffers, or a part of them.
inline constexpr uint32_t kAliasesOperands = 1 << 4;
// An asynchronous start whose result tuple holds its operands as element 0 (aliased; the rest
// is allocated).
inline constexpr uint32_t kStartHoldsOperands = 1 << 5;
// May write its result into the buffer of the value it updates: operand 0 (dynamic-update-slice,
// while: the loop state), its inputs (scatter: the first half of the operands but the indices)
// or every operand (sort: result leaf k into operand k, as XLA's dataflow analysis shares them).
inline constexpr uint32_t kUpdatesInPlace = 1 << 6;

// `printed`: the opcode-specific attributes the printer writes, in this order: dimensions, then
// one of index..custom-call, then the attributes any op may carry (window, dot and gather
// numbers, precision), then one of stable..outfeed-config; the called computations are named
// by one of condition-body..called-list, else `to_apply`.
inline constexpr uint32_t kPrintDimensions = 1 << 0;
inline constexpr uint32_t kPrintDimensionsIfAny = 1 << 1;  // Only when non-empty.
inline constexpr uint32_t kPrintIndex = 1 << 2;
inline constexpr uint32_t kPrintIotaDimension = 1 << 3;
inline constexpr uint32_t kPrintSlice = 1 << 4;
inline constexpr uint32_t kPrintSliceSizes = 1 << 5;
inline constexpr uint32_t kPrintPadding = 1 << 6;
inline constexpr uint32_t kPrintComparison = 1 << 7;
inline constexpr uint32_t kPrintCustomCall = 1 << 8;
inline constexpr uint32_t kPrintStable = 1 << 9;
inline constexpr uint32_t kPrintPrecisionBits = 1 << 10;
inline constexpr uint32_t kPrintBatchNorm = 1 << 11;
inline constexpr uint32_t kPrintFft = 1 << 12;
inline constexpr uint32_t kPrintDistribution = 1 << 13;
inline constexpr uint32_t kPrintFusionKind = 1 << 14;
inline constexpr uint32_t kPrintTopK = 1 << 15;
inline constexpr uint32_t kPrintInfeedConfig = 1 << 16;
inline constexpr uint32_t kPrintOutfeedConfig = 1 << 17;
inline constexpr uint32_t kPrintConditionBody = 1 << 18;  // condition=, body=
// true_computation=, false_computation= or branch_computations=
inline constexpr uint32_t kPrintBranches = 1 << 19;
inline constexpr uint32_t kPrintSelectScatter = 1 << 20;  // select=, scatter=
inline constexpr uint32_t kPrintCalls = 1 << 21;          // calls=
inline constexpr uint32_t kPrintCalledList = 1 << 22;     // called_computations={...}

}  // namespace op_traits

// V(enumerator, "text-name", family, types, flags, printed)
#define HLO_OPCODE_LIST(V)                                                                         \
  V(kAbs, "abs", kUnary, kSignedNumeric, 0, 0)                                                     \
  V(kAdd, "add", kBinary, kAnyType, kReducer, 0)                                                   \
  V(kAddDependency, "add-dependency", kOther, kNoTypes, kAliasesOperands, 0)                       \
  V(kAfterAll, "after-all", kOther, kNoTypes, 0, 0)                                                \
  V(kAllGather, "all-gather", kCollective, kNoTypes, 0, kPrintDimensions)                          \
  V(kAllGatherDone, "all-gather-done", kCollective, kNoTypes, kAliasesOperands, 0)                 \
  V(kAllGatherStart, "all-gather-start", kCollective, kNoTypes, kStartHoldsOperands,               \
    kPrintDimensions)                                                                              \
  V(kAllReduce, "all-reduce", kCollective, kNoTypes, 0, 0)                                         \
  V(kAllReduceDone, "all-reduce-done", kCollective, kNoTypes, kAliasesOperands, 0)                 \
  V(kAllReduceStart, "all-reduce-start", kCollective, kNoTypes, 0, 0)                              \
  V(kAllToAll, "all-to-all", kCollective, kNoTypes, 0, kPrintDimensionsIfAny)                      \
  V(kAnd, "and", kBinary, kPredOrIntegral, kReducer, 0)                                            \
  V(kAsyncDone, "async-done", kAsync, kNoTypes, kAliasesOperands, 0)                               \
  V(kAsyncStart, "async-start", kAsync, kNoTypes, kRunsCallees | kStartHoldsOperands, kPrintCalls) \
  V(kAsyncUpdate, "async-update", kAsync, kNoTypes, kAliasesOperands, 0)                           \
  V(kAtan2, "atan2", kBinary, kFloatOrComplex, 0, 0)                                               \
  V(kBatchNormGrad, "batch-norm-grad", kOther, kNoTypes, 0, kPrintBatchNorm)                       \
  V(kBatchNormInference, "batch-norm-inference", kOther, kNoTypes, 0, kPrintBatchNorm)             \
  V(kBatchNormTraining, "batch-norm-training", kOther, kNoTypes, 0, kPrintBatchNorm)               \
  V(kBitcast, "bitcast", kOther, kNoTypes, kAliasesOperands, 0)                                    \
  V(kBitcastConvert, "bitcast-convert", kOther, kNoTypes, 0, 0)                                    \
  V(kBroadcast, "broadcast", kOther, kNoTypes, 0, kPrintDimensions)                                \
  V(kCall, "call", kOther, kNoTypes, kRunsCallees, 0)                                              \
  V(kCbrt, "cbrt", kUnary, kFloating, 0, 0)                                                        \
  V(kCeil, "ceil", kUnary, kFloating, 0, 0)                                                        \
  V(kCholesky, "cholesky", kOther, kNoTypes, 0, 0)                                                 \
  V(kClamp, "clamp", kOther, kNoTypes, 0, 0)                                                       \
  V(kClz, "count-leading-zeros", kUnary, kIntegral, 0, 0)                                          \
  V(kCollectiveBroadcast, "collective-broadcast", kCollective, kNoTypes, 0, 0)                     \
  V(kCollectivePermute, "collective-permute", kCollective, kNoTypes, 0, 0)                         \
  V(kCollectivePermuteDone, "collective-permute-done", kCollective, kNoTypes, kAliasesOperands, 0) \
  V(kCollectivePermuteStart, "collective-permute-start", kCollective, kNoTypes,                    \
    kStartHoldsOperands, 0)                                                                        \
  V(kCollectiveReduce, "collective-reduce", kCollective, kNoTypes, 0, 0)                           \
  V(kCompare, "compare", kOther, kNoTypes, 0, kPrintComparison)                                    \
  V(kComplex, "complex", kBinary, kF32OrF64, 0, 0)                                                 \
  V(kConcatenate, "concatenate", kOther, kNoTypes, 0, kPrintDimensions)                            \
  V(kConditional, "conditional", kOther, kNoTypes, kRunsCallees, kPrintBranches)                   \
  V(kConstant, "constant", kOther, kNoTypes, 0, 0)                                                 \
  V(kConvert, "convert", kOther, kNoTypes, 0, 0)                                                   \
  V(kConvolution, "convolution", kOther, kNoTypes, 0, 0)                                           \
  V(kCopy, "copy", kUnary, kAnyType, kForwardsOperand, 0)                                          \
  V(kCopyDone, "copy-done", kOther, kNoTypes, kAliasesOperands, 0)                                 \
  V(kCopyStart, "copy-start", kOther, kNoTypes, kStartHoldsOperands, 0)                            \
  V(kCos, "cosine", kUnary, kFloatOrComplex, 0, 0)                                                 \
  V(kCustomCall, "custom-call", kOther, kNoTypes, 0, kPrintCustomCall | kPrintCalledList)          \
  V(kDivide, "divide", kBinary, kNumeric, 0, 0)                                                    \
  V(kDomain, "domain", kOther, kNoTypes, 0, 0)                                                     \
  V(kDot, "dot", kOther, kNoTypes, 0, 0)                                                           \
  V(kDynamicReshape, "dynamic-reshape", kOther, kNoTypes, 0, 0)                                    \
  V(kDynamicSlice, "dynamic-slice", kOther, kNoTypes, 0, kPrintSliceSizes)                         \
  V(kDynamicUpdateSlice, "dynamic-update-slice", kOther, kNoTypes, kUpdatesInPlace, 0)             \
  V(kErf, "erf", kUnary, kFloating, 0, 0)                                                          \
  V(kExp, "exponential", kUnary, kFloatOrComplex, 0, 0)                                            \
  V(kExpm1, "exponential-minus-one", kUnary, kFloatOrComplex, 0, 0)                                \
  V(kFft, "fft", kOther, kNoTypes, 0, kPrintFft)                                                   \
  V(kFloor, "floor", kUnary, kFloating, 0, 0)                                                      \
  V(kFusion, "fusion", kOther, kNoTypes, kRunsCallees, kPrintFusionKind | kPrintCalls)             \
  V(kGather, "gather", kOther, kNoTypes, 0, 0)                                                     \
  V(kGetDimensionSize, "get-dimension-size", kOther, kNoTypes, 0, kPrintDimensions)                \
  V(kGetTupleElement, "get-tuple-element", kOther, kNoTypes, kAliasesOperands, kPrintIndex)        \
  V(kImag, "imag", kUnary, kFloatOrComplex, 0, 0)                                                  \
  V(kInfeed, "infeed", kOther, kNoTypes, kSideEffect, kPrintInfeedConfig)                          \
  V(kIota, "iota", kOther, kNoTypes, 0, kPrintIotaDimension)                                       \
  V(kIsFinite, "is-finite", kUnary, kFloating, 0, 0)                                               \
  V(kLog, "log", kUnary, kFloatOrComplex, 0, 0)                                                    \
  V(kLog1p, "log-plus-one", kUnary, kFloatOrComplex, 0, 0)                                         \
  V(kLogistic, "logistic", kUnary, kFloatOrComplex, 0, 0)                                          \
  V(kMap, "map", kOther, kNoTypes, 0, kPrintDimensions)                                            \
  V(kMaximum, "maximum", kBinary, kPredOrReal, kReducer, 0)                                        \
  V(kMinimum, "minimum", kBinary, kPredOrReal, kReducer, 0)                                        \
  V(kMultiply, "multiply", kBinary, kAnyType, kReducer, 0)                                         \
  V(kNegate, "negate", kUnary, kNumeric, 0, 0)                                                     \
  V(kNot, "not", kUnary, kPredOrIntegral, 0, 0)                                                    \
  V(kOptimizationBarrier, "opt-barrier", kOther, kNoTypes, kForwardsOperand | kAliasesOperands, 0) \
  V(kOr, "or", kBinary, kPredOrIntegral, kReducer, 0)                                              \
  V(kOutfeed, "outfeed", kOther, kNoTypes, kSideEffect, kPrintOutfeedConfig)                       \
  V(kPad, "pad", kOther, kNoTypes, 0, kPrintPadding)                                               \
  V(kParameter, "parameter", kOther, kNoTypes, kSideEffect, 0)                                     \
  V(kPartitionId, "partition-id", kOther, kNoTypes, 0, 0)                                          \
  V(kPopulationCount, "popcnt", kUnary, kIntegral, 0, 0)                                           \
  V(kPower, "power", kBinary, kNumeric, 0, 0)                                                      \
  V(kRaggedAllToAll, "ragged-all-to-all", kCollective, kNoTypes, 0, 0)                             \
  V(kRaggedDot, "ragged-dot", kOther, kNoTypes, 0, 0)                                              \
  V(kReal, "real", kUnary, kFloatOrComplex, 0, 0)                                                  \
  V(kRecv, "recv", kOther, kNoTypes, kSideEffect, 0)                                               \
  V(kRecvDone, "recv-done", kOther, kNoTypes, kSideEffect, 0)                                      \
  V(kReduce, "reduce", kOther, kNoTypes, 0, kPrintDimensions)                                      \
  V(kReducePrecision, "reduce-precision", kOther, kNoTypes, 0, kPrintPrecisionBits)                \
  V(kReduceScatter, "reduce-scatter", kCollective, kNoTypes, 0, kPrintDimensions)                  \
  V(kReduceWindow, "reduce-window", kOther, kNoTypes, 0, 0)                                        \
  V(kRemainder, "remainder", kBinary, kReal, 0, 0)                                                 \
  V(kReplicaId, "replica-id", kOther, kNoTypes, 0, 0)                                              \
  V(kReshape, "reshape", kOther, kNoTypes, 0, 0)                                                   \
  V(kReverse, "reverse", kOther, kNoTypes, 0, kPrintDimensions)                                    \
  V(kRng, "rng", kOther, kNoTypes, kSideEffect, kPrintDistribution)                                \
  V(kRngBitGenerator, "rng-bit-generator", kOther, kNoTypes, 0, 0)                                 \
  V(kRngGetAndUpdateState, "rng-get-and-update-state", kOther, kNoTypes, kSideEffect, 0)           \
  V(kRoundNearestAfz, "round-nearest-afz", kUnary, kFloating, 0, 0)                                \
  V(kRoundNearestEven, "round-nearest-even", kUnary, kFloating, 0, 0)                              \
  V(kRsqrt, "rsqrt", kUnary, kFloatOrComplex, 0, 0)                                                \
  V(kScan, "scan", kOther, kNoTypes, 0, kPrintDimensions)                                          \
  V(kScatter, "scatter", kOther, kNoTypes, kUpdatesInPlace, 0)                                     \
  V(kSelect, "select", kOther, kNoTypes, 0, 0)                                                     \
  V(kSelectAndScatter, "select-and-scatter", kOther, kNoTypes, 0, kPrintSelectScatter)             \
  V(kSend, "send", kOther, kNoTypes, kSideEffect, 0)                                               \
  V(kSendDone, "send-done", kOther, kNoTypes, kSideEffect, 0)                                      \
  V(kSetDimensionSize, "set-dimension-size", kOther, kNoTypes, 0, kPrintDimensions)                \
  V(kShiftLeft, "shift-left", kBinary, kIntegral, 0, 0)                                            \
  V(kShiftRightArithmetic, "shift-right-arithmetic", kBinary, kIntegral, 0, 0)                     \
  V(kShiftRightLogical, "shift-right-logical", kBinary, kIntegral, 0, 0)                           \
  V(kSign, "sign", kUnary, kSignedNumeric, 0, 0)                                                   \
  V(kSin, "sine", kUnary, kFloatOrComplex, 0, 0)                                                   \
  V(kSlice, "slice", kOther, kNoTypes, 0, kPrintSlice)                                             \
  V(kSort, "sort", kOther, kNoTypes, kUpdatesInPlace, kPrintDimensions | kPrintStable)             \
  V(kSqrt, "sqrt", kUnary, kFloatOrComplex, 0, 0)                                                  \
  V(kStochasticConvert, "stochastic-convert", kOther, kNoTypes, 0, 0)                              \
  V(kSubtract, "subtract", kBinary, kNumeric, 0, 0)                                                \
  V(kTan, "tan", kUnary, kFloatOrComplex, 0, 0)                                                    \
  V(kTanh, "tanh", kUnary, kFloatOrComplex, 0, 0)                                                  \
  V(kTopK, "topk", kOther, kNoTypes, 0, kPrintTopK)                                                \
  V(kTranspose, "transpose", kOther, kNoTypes, 0, kPrintDimensions)                                \
  V(kTriangularSolve, "triangular-solve", kOther, kNoTypes, 0, 0)                                  \
  V(kTuple, "tuple", kOther, kNoTypes, kAliasesOperands, 0)                                        \
  V(kWhile, "while", kOther, kNoTypes, kRunsCallees | kUpdatesInPlace, kPrintConditionBody)        \
  V(kXor, "xor", kBinary, kPredOrIntegral, 0, 0)

enum class HloOpcode {
#define HLO_OPCODE_ENUM(e, name, family, types, flags, printed) e,
  HLO_OPCODE_LIST(HLO_OPCODE_ENUM)
#undef HLO_OPCODE_ENUM
};

// Coarse grouping used by shape inference and the printer.
enum class HloOpcodeFamily { kUnary, kBinary, kCollective, kAsync, kOther };

// One row of the table.
struct HloOpcodeTraits {
  std::string_view name;
  HloOpcodeFamily family;
  ElementTypeSet types;
  uint32_t flags;
  uint32_t printed;
};

namespace op_traits {
inline constexpr HloOpcodeTraits kTable[] = {
#define HLO_OPCODE_TRAITS(e, name, family, types, flags, printed) \
  {name, HloOpcodeFamily::family, types, flags, printed},
    HLO_OPCODE_LIST(HLO_OPCODE_TRAITS)
#undef HLO_OPCODE_TRAITS
};
}  // namespace op_traits

// The number of opcodes; HloOpcode values are 0 .. kNumHloOpcodes - 1, so tables indexed by
// opcode have this size.
inline constexpr int kNumHloOpcodes = static_cast<int>(std::size(op_traits::kTable));

constexpr const HloOpcodeTraits& GetHloOpcodeTraits(HloOpcode opcode) {
  return op_traits::kTable[static_cast<int>(opcode)];
}
// Whether `opcode` has every bit of `flag` (op_traits::kSideEffect, ...).
constexpr bool HasOpcodeFlag(HloOpcode opcode, uint32_t flag) {
  return (GetHloOpcodeTraits(opcode).flags & flag) == flag;
}
// The element types the elementwise `opcode` accepts (op_traits::kNoTypes for other opcodes).
constexpr ElementTypeSet ElementwiseTypes(HloOpcode opcode) {
  return GetHloOpcodeTraits(opcode).types;
}
// Whether `type` is one of `types`.
bool IsOfElementTypes(PrimitiveType type, ElementTypeSet types);
// `types` as a phrase for messages: "a floating-point or complex", "a pred or integral", ...
std::string_view ElementTypesName(ElementTypeSet types);

std::string_view HloOpcodeString(HloOpcode opcode);
std::optional<HloOpcode> StringToHloOpcode(std::string_view name);
HloOpcodeFamily GetHloOpcodeFamily(HloOpcode opcode);
inline bool IsElementwiseUnary(HloOpcode op) {
  return GetHloOpcodeFamily(op) == HloOpcodeFamily::kUnary;
}
inline bool IsElementwiseBinary(HloOpcode op) {
  return GetHloOpcodeFamily(op) == HloOpcodeFamily::kBinary;
}
// The halves of XLA's asynchronous pairs: the op that starts one and the op that finishes it
// (reading the start's handle). Generic async-update continues one (HloOpcodeFamily::kAsync).
inline bool IsAsyncStartOpcode(HloOpcode op) {
  return op == HloOpcode::kAllGatherStart || op == HloOpcode::kAllReduceStart ||
         op == HloOpcode::kCollectivePermuteStart || op == HloOpcode::kCopyStart ||
         op == HloOpcode::kAsyncStart;
}
inline bool IsAsyncDoneOpcode(HloOpcode op) {
  return op == HloOpcode::kAllGatherDone || op == HloOpcode::kAllReduceDone ||
         op == HloOpcode::kCollectivePermuteDone || op == HloOpcode::kCopyDone ||
         op == HloOpcode::kAsyncDone;
}
// Whether each result element of `op` depends only on the operands' elements at its index:
// unary, binary, compare, select, clamp, convert, reduce-precision and stochastic-convert (a
// value and its random bits, both of the result's shape).
inline bool IsElementwiseOpcode(HloOpcode op) {
  switch (op) {
    case HloOpcode::kCompare:
    case HloOpcode::kSelect:
    case HloOpcode::kClamp:
    case HloOpcode::kConvert:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kStochasticConvert:
      return true;
    default:
      return IsElementwiseUnary(op) || IsElementwiseBinary(op);
  }
}

}  // namespace hlo

#endif  // HLO_IR_HLO_OPCODE_H_

// The HLO opcodes, as one X-macro table: enumerator, text name, and a coarse family that the
// printer, verifier and later passes consult instead of long switches.
#ifndef HLO_IR_HLO_OPCODE_H_
#define HLO_IR_HLO_OPCODE_H_

#include <optional>
#include <string_view>

namespace hlo {

// V(enumerator, "text-name", family)
#define HLO_OPCODE_LIST(V)                                         \
  V(kAbs, "abs", kUnary)                                           \
  V(kAdd, "add", kBinary)                                          \
  V(kAddDependency, "add-dependency", kOther)                      \
  V(kAfterAll, "after-all", kOther)                                \
  V(kAllGather, "all-gather", kCollective)                         \
  V(kAllGatherDone, "all-gather-done", kCollective)                \
  V(kAllGatherStart, "all-gather-start", kCollective)              \
  V(kAllReduce, "all-reduce", kCollective)                         \
  V(kAllReduceDone, "all-reduce-done", kCollective)                \
  V(kAllReduceStart, "all-reduce-start", kCollective)              \
  V(kAllToAll, "all-to-all", kCollective)                          \
  V(kAnd, "and", kBinary)                                          \
  V(kAsyncDone, "async-done", kAsync)                              \
  V(kAsyncStart, "async-start", kAsync)                            \
  V(kAsyncUpdate, "async-update", kAsync)                          \
  V(kAtan2, "atan2", kBinary)                                      \
  V(kBatchNormGrad, "batch-norm-grad", kOther)                     \
  V(kBatchNormInference, "batch-norm-inference", kOther)           \
  V(kBatchNormTraining, "batch-norm-training", kOther)             \
  V(kBitcast, "bitcast", kOther)                                   \
  V(kBitcastConvert, "bitcast-convert", kOther)                    \
  V(kBroadcast, "broadcast", kOther)                               \
  V(kCall, "call", kOther)                                         \
  V(kCbrt, "cbrt", kUnary)                                         \
  V(kCeil, "ceil", kUnary)                                         \
  V(kCholesky, "cholesky", kOther)                                 \
  V(kClamp, "clamp", kOther)                                       \
  V(kClz, "count-leading-zeros", kUnary)                           \
  V(kCollectiveBroadcast, "collective-broadcast", kCollective)     \
  V(kCollectivePermute, "collective-permute", kCollective)         \
  V(kCollectivePermuteDone, "collective-permute-done", kCollective) \
  V(kCollectivePermuteStart, "collective-permute-start", kCollective) \
  V(kCollectiveReduce, "collective-reduce", kCollective)           \
  V(kCompare, "compare", kOther)                                   \
  V(kComplex, "complex", kBinary)                                  \
  V(kConcatenate, "concatenate", kOther)                           \
  V(kConditional, "conditional", kOther)                           \
  V(kConstant, "constant", kOther)                                 \
  V(kConvert, "convert", kOther)                                   \
  V(kConvolution, "convolution", kOther)                           \
  V(kCopy, "copy", kUnary)                                         \
  V(kCopyDone, "copy-done", kOther)                                \
  V(kCopyStart, "copy-start", kOther)                              \
  V(kCos, "cosine", kUnary)                                        \
  V(kCustomCall, "custom-call", kOther)                            \
  V(kDivide, "divide", kBinary)                                    \
  V(kDomain, "domain", kOther)                                     \
  V(kDot, "dot", kOther)                                           \
  V(kDynamicReshape, "dynamic-reshape", kOther)                    \
  V(kDynamicSlice, "dynamic-slice", kOther)                        \
  V(kDynamicUpdateSlice, "dynamic-update-slice", kOther)           \
  V(kErf, "erf", kUnary)                                           \
  V(kExp, "exponential", kUnary)                                   \
  V(kExpm1, "exponential-minus-one", kUnary)                       \
  V(kFft, "fft", kOther)                                           \
  V(kFloor, "floor", kUnary)                                       \
  V(kFusion, "fusion", kOther)                                     \
  V(kGather, "gather", kOther)                                     \
  V(kGetDimensionSize, "get-dimension-size", kOther)               \
  V(kGetTupleElement, "get-tuple-element", kOther)                 \
  V(kImag, "imag", kUnary)                                         \
  V(kInfeed, "infeed", kOther)                                     \
  V(kIota, "iota", kOther)                                         \
  V(kIsFinite, "is-finite", kUnary)                                \
  V(kLog, "log", kUnary)                                           \
  V(kLog1p, "log-plus-one", kUnary)                                \
  V(kLogistic, "logistic", kUnary)                                 \
  V(kMap, "map", kOther)                                           \
  V(kMaximum, "maximum", kBinary)                                  \
  V(kMinimum, "minimum", kBinary)                                  \
  V(kMultiply, "multiply", kBinary)                                \
  V(kNegate, "negate", kUnary)                                     \
  V(kNot, "not", kUnary)                                           \
  V(kOptimizationBarrier, "opt-barrier", kOther)                   \
  V(kOr, "or", kBinary)                                            \
  V(kOutfeed, "outfeed", kOther)                                   \
  V(kPad, "pad", kOther)                                           \
  V(kParameter, "parameter", kOther)                               \
  V(kPartitionId, "partition-id", kOther)                          \
  V(kPopulationCount, "popcnt", kUnary)                            \
  V(kPower, "power", kBinary)                                      \
  V(kRaggedAllToAll, "ragged-all-to-all", kCollective)             \
  V(kRaggedDot, "ragged-dot", kOther)                              \
  V(kReal, "real", kUnary)                                         \
  V(kRecv, "recv", kOther)                                         \
  V(kRecvDone, "recv-done", kOther)                                \
  V(kReduce, "reduce", kOther)                                     \
  V(kReducePrecision, "reduce-precision", kOther)                  \
  V(kReduceScatter, "reduce-scatter", kCollective)                 \
  V(kReduceWindow, "reduce-window", kOther)                        \
  V(kRemainder, "remainder", kBinary)                              \
  V(kReplicaId, "replica-id", kOther)                              \
  V(kReshape, "reshape", kOther)                                   \
  V(kReverse, "reverse", kOther)                                   \
  V(kRng, "rng", kOther)                                           \
  V(kRngBitGenerator, "rng-bit-generator", kOther)                 \
  V(kRngGetAndUpdateState, "rng-get-and-update-state", kOther)     \
  V(kRoundNearestAfz, "round-nearest-afz", kUnary)                 \
  V(kRoundNearestEven, "round-nearest-even", kUnary)               \
  V(kRsqrt, "rsqrt", kUnary)                                       \
  V(kScan, "scan", kOther)                                         \
  V(kScatter, "scatter", kOther)                                   \
  V(kSelect, "select", kOther)                                     \
  V(kSelectAndScatter, "select-and-scatter", kOther)               \
  V(kSend, "send", kOther)                                         \
  V(kSendDone, "send-done", kOther)                                \
  V(kSetDimensionSize, "set-dimension-size", kOther)               \
  V(kShiftLeft, "shift-left", kBinary)                             \
  V(kShiftRightArithmetic, "shift-right-arithmetic", kBinary)      \
  V(kShiftRightLogical, "shift-right-logical", kBinary)            \
  V(kSign, "sign", kUnary)                                         \
  V(kSin, "sine", kUnary)                                          \
  V(kSlice, "slice", kOther)                                       \
  V(kSort, "sort", kOther)                                         \
  V(kSqrt, "sqrt", kUnary)                                         \
  V(kStochasticConvert, "stochastic-convert", kOther)              \
  V(kSubtract, "subtract", kBinary)                                \
  V(kTan, "tan", kUnary)                                           \
  V(kTanh, "tanh", kUnary)                                         \
  V(kTopK, "topk", kOther)                                         \
  V(kTranspose, "transpose", kOther)                               \
  V(kTriangularSolve, "triangular-solve", kOther)                  \
  V(kTuple, "tuple", kOther)                                       \
  V(kWhile, "while", kOther)                                       \
  V(kXor, "xor", kBinary)

enum class HloOpcode {
#define HLO_OPCODE_ENUM(e, name, family) e,
  HLO_OPCODE_LIST(HLO_OPCODE_ENUM)
#undef HLO_OPCODE_ENUM
};

// Coarse grouping used by shape inference and the printer.
enum class HloOpcodeFamily { kUnary, kBinary, kCollective, kAsync, kOther };

std::string_view HloOpcodeString(HloOpcode opcode);
std::optional<HloOpcode> StringToHloOpcode(std::string_view name);
HloOpcodeFamily GetHloOpcodeFamily(HloOpcode opcode);
inline bool IsElementwiseUnary(HloOpcode op) {
  return GetHloOpcodeFamily(op) == HloOpcodeFamily::kUnary;
}
inline bool IsElementwiseBinary(HloOpcode op) {
  return GetHloOpcodeFamily(op) == HloOpcodeFamily::kBinary;
}

}  // namespace hlo

#endif  // HLO_IR_HLO_OPCODE_H_

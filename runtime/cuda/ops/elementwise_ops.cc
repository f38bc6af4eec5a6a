// Elementwise opcodes (unary, binary, compare, select, clamp, convert) and iota, each one launch
// of the generic elementwise kernel. Scalar operands of select and clamp are read at index 0.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cuda/kernels/element_math.h"
#include "runtime/cuda/op_registry.h"
#include "runtime/cuda/ops/op_util.h"

namespace runtime {
namespace cuda {
namespace {

using hlo::HloOpcode;
namespace k = spmd_cuda;

const absl::flat_hash_map<HloOpcode, int>& ElementOps() {
  static const auto* table = new absl::flat_hash_map<HloOpcode, int>{
      {HloOpcode::kNegate, k::kNeg},
      {HloOpcode::kAbs, k::kAbs},
      {HloOpcode::kSign, k::kSign},
      {HloOpcode::kNot, k::kNot},
      {HloOpcode::kExp, k::kExp},
      {HloOpcode::kExpm1, k::kExpm1},
      {HloOpcode::kLog, k::kLog},
      {HloOpcode::kLog1p, k::kLog1p},
      {HloOpcode::kSqrt, k::kSqrt},
      {HloOpcode::kRsqrt, k::kRsqrt},
      {HloOpcode::kCbrt, k::kCbrt},
      {HloOpcode::kTanh, k::kTanh},
      {HloOpcode::kSin, k::kSin},
      {HloOpcode::kCos, k::kCos},
      {HloOpcode::kTan, k::kTan},
      {HloOpcode::kFloor, k::kFloor},
      {HloOpcode::kCeil, k::kCeil},
      {HloOpcode::kRoundNearestAfz, k::kRoundAfz},
      {HloOpcode::kRoundNearestEven, k::kRoundEven},
      {HloOpcode::kLogistic, k::kLogistic},
      {HloOpcode::kIsFinite, k::kIsFinite},
      {HloOpcode::kAdd, k::kAdd},
      {HloOpcode::kSubtract, k::kSub},
      {HloOpcode::kMultiply, k::kMul},
      {HloOpcode::kDivide, k::kDiv},
      {HloOpcode::kRemainder, k::kRem},
      {HloOpcode::kMaximum, k::kMax},
      {HloOpcode::kMinimum, k::kMin},
      {HloOpcode::kPower, k::kPow},
      {HloOpcode::kAtan2, k::kAtan2},
      {HloOpcode::kAnd, k::kAnd},
      {HloOpcode::kOr, k::kOr},
      {HloOpcode::kXor, k::kXor},
      {HloOpcode::kShiftLeft, k::kShl},
      {HloOpcode::kShiftRightArithmetic, k::kShrA},
      {HloOpcode::kShiftRightLogical, k::kShrL},
      {HloOpcode::kCompare, k::kCompare},
      {HloOpcode::kSelect, k::kSelect},
      {HloOpcode::kClamp, k::kClamp},
      {HloOpcode::kConvert, k::kConvert},
      {HloOpcode::kReducePrecision, k::kReducePrecision},
  };
  return *table;
}

absl::Status HandleElementwise(OpContext& ctx) {
  const hlo::HloInstruction& instr = ctx.instr;
  k::ElementwiseParams p;
  p.op = ElementOps().at(instr.opcode());
  ASSIGN_OR_RETURN(p.out_type, DTypeOf(instr.shape().element_type()));
  // The type the op computes in: the compared / converted / selected operand's.
  const DeviceArray& typed = ctx.operands[p.op == k::kSelect ? 1 : 0];
  ASSIGN_OR_RETURN(p.in_type, DTypeOf(typed.shape.element_type()));
  if (p.op == k::kCompare) {
    if (instr.attrs().comparison_type == hlo::ComparisonType::kTotalOrder) {
      return absl::UnimplementedError(
          "compare with type=TOTALORDER is not supported by the CUDA executor");
    }
    p.compare_dir = static_cast<int>(instr.attrs().comparison_direction);
  }
  if (p.op == k::kReducePrecision) {
    const int64_t e = instr.attrs().exponent_bits, m = instr.attrs().mantissa_bits;
    if (e < 1 || m < 0) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0, got ", e, " and ", m));
    }
    if (!k::IsFloatType(p.in_type)) {
      return absl::UnimplementedError("reduce-precision of a non-floating type");
    }
    p.exponent_bits = static_cast<int>(std::min<int64_t>(e, 64));  // Wider is a no-op.
    p.mantissa_bits = static_cast<int>(std::min<int64_t>(m, 64));
  }
  const int64_t n = instr.shape().num_elements();
  for (size_t i = 0; i < ctx.operands.size() && i < 3; ++i) {
    p.in[i] = ctx.operands[i].data;
    const int64_t m = ctx.operands[i].shape.num_elements();
    if (m != n) {
      if (m != 1) return absl::InvalidArgumentError("operand shapes do not match the result");
      p.scalar_mask |= 1 << i;
    }
  }
  p.out = ctx.outputs[0].data;
  p.n = n;
  return ctx.device().Elementwise(p);
}

absl::Status HandleIota(OpContext& ctx) {
  const hlo::Shape& shape = ctx.instr.shape();
  k::IotaParams p;
  ASSIGN_OR_RETURN(p.type, DTypeOf(shape.element_type()));
  const int64_t dim = ctx.instr.attrs().iota_dimension;
  p.dim = shape.dimensions(dim);
  for (int64_t d = dim + 1; d < shape.rank(); ++d) p.inner *= shape.dimensions(d);
  p.out = ctx.outputs[0].data;
  p.n = shape.num_elements();
  return ctx.device().Iota(p);
}

}  // namespace

void RegisterElementwiseOps(CudaOpTable& table) {
  for (const auto& [opcode, op] : ElementOps()) table[opcode] = HandleElementwise;
  table[HloOpcode::kIota] = HandleIota;
}

}  // namespace cuda
}  // namespace runtime

// Element types, copy simplification and reducer recognition for the CUDA op handlers.
#include "runtime/cuda/ops/op_util.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "hlo/analysis/combiner.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace runtime {
namespace cuda {

using hlo::HloOpcode;
using hlo::PrimitiveType;

absl::StatusOr<int> DTypeOf(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred: return spmd_cuda::kPred;
    case PrimitiveType::kS8: return spmd_cuda::kS8;
    case PrimitiveType::kS16: return spmd_cuda::kS16;
    case PrimitiveType::kS32: return spmd_cuda::kS32;
    case PrimitiveType::kS64: return spmd_cuda::kS64;
    case PrimitiveType::kU8: return spmd_cuda::kU8;
    case PrimitiveType::kU16: return spmd_cuda::kU16;
    case PrimitiveType::kU32: return spmd_cuda::kU32;
    case PrimitiveType::kU64: return spmd_cuda::kU64;
    case PrimitiveType::kF16: return spmd_cuda::kF16;
    case PrimitiveType::kBF16: return spmd_cuda::kBF16;
    case PrimitiveType::kF32: return spmd_cuda::kF32;
    case PrimitiveType::kF64: return spmd_cuda::kF64;
    default:
      return absl::UnimplementedError(hlo::StrCat("element type ", hlo::PrimitiveTypeName(type),
                                                  " is not supported by the CUDA executor"));
  }
}

int64_t ElementBytes(const hlo::Shape& shape) { return hlo::ByteWidth(shape.element_type()); }

absl::Status LaunchCopy(DeviceApi& device, const CopySpec& spec, int elem_bytes, const void* src,
                        void* dst) {
  spmd_cuda::StridedCopyParams p;
  p.elem_bytes = elem_bytes;
  p.src = src;
  p.dst = dst;
  p.src_offset = spec.src_offset;
  p.dst_offset = spec.dst_offset;
  p.n = 1;
  std::vector<int64_t> dims, ss, ds;
  for (size_t k = 0; k < spec.dims.size(); ++k) {
    p.n *= spec.dims[k];
    if (spec.dims[k] == 1) continue;
    if (!dims.empty() && ss.back() == spec.src_strides[k] * spec.dims[k] &&
        ds.back() == spec.dst_strides[k] * spec.dims[k]) {
      dims.back() *= spec.dims[k];  // Contiguous with the previous dimension: merge.
      ss.back() = spec.src_strides[k];
      ds.back() = spec.dst_strides[k];
      continue;
    }
    dims.push_back(spec.dims[k]);
    ss.push_back(spec.src_strides[k]);
    ds.push_back(spec.dst_strides[k]);
  }
  if (p.n == 0) return absl::OkStatus();
  if (dims.size() > static_cast<size_t>(spmd_cuda::kMaxRank)) {
    return absl::UnimplementedError(hlo::StrCat("a copy of rank ", dims.size(),
                                                " is beyond the CUDA kernels' limit of ",
                                                spmd_cuda::kMaxRank));
  }
  if (dims.size() == 1 && ss[0] == 1 && ds[0] == 1) {
    return device.CopyOnDevice(static_cast<char*>(dst) + p.dst_offset * elem_bytes,
                               static_cast<const char*>(src) + p.src_offset * elem_bytes,
                               dims[0] * elem_bytes);
  }
  p.rank = static_cast<int>(dims.size());
  for (int k = 0; k < p.rank; ++k) {
    p.dims[k] = dims[k];
    p.src_strides[k] = ss[k];
    p.dst_strides[k] = ds[k];
  }
  return device.StridedCopy(p);
}

absl::StatusOr<DeviceBuffer> ScratchCopyOf(OpContext& ctx, const std::vector<int64_t>& values) {
  ASSIGN_OR_RETURN(DeviceBuffer buffer,
                   ctx.executor.Scratch(std::max<size_t>(values.size(), 1) * sizeof(int64_t)));
  RETURN_IF_ERROR(
      ctx.device().CopyToDevice(buffer.data(), values.data(), values.size() * sizeof(int64_t)));
  return buffer;
}

absl::Status SetGemmTypes(std::string_view what, hlo::PrimitiveType lhs, hlo::PrimitiveType rhs,
                          hlo::PrimitiveType out, spmd_cuda::GemmParams& p) {
  if (lhs != rhs) {
    return absl::UnimplementedError(hlo::StrCat(
        what, " with operands of different element types is not supported by the CUDA executor"));
  }
  ASSIGN_OR_RETURN(p.in_type, DTypeOf(lhs));
  ASSIGN_OR_RETURN(p.out_type, DTypeOf(out));
  auto is_float = [](int t) {
    return t == spmd_cuda::kF16 || t == spmd_cuda::kBF16 || t == spmd_cuda::kF32 ||
           t == spmd_cuda::kF64;
  };
  if (!is_float(p.in_type) || !is_float(p.out_type) ||
      (p.in_type == spmd_cuda::kF64) != (p.out_type == spmd_cuda::kF64)) {
    return absl::UnimplementedError(hlo::StrCat(
        what, " of ", hlo::PrimitiveTypeName(lhs), " -> ", hlo::PrimitiveTypeName(out),
        " is not supported by the CUDA executor (f16, bf16, f32 with f32 accumulation; f64)"));
  }
  return absl::OkStatus();
}

absl::Status CopyUnlessInPlace(DeviceApi& device, const DeviceArray& in, const DeviceArray& out) {
  if (in.data == out.data) return absl::OkStatus();
  return device.CopyOnDevice(out.data, in.data, out.shape.byte_size());
}

absl::Status FillWithScalar(DeviceApi& device, const DeviceArray& out, const void* scalar) {
  CopySpec spec;
  spec.dims = {out.shape.num_elements()};
  spec.src_strides = {0};
  spec.dst_strides = {1};
  return LaunchCopy(device, spec, static_cast<int>(ElementBytes(out.shape)), scalar, out.data);
}

absl::StatusOr<int> ReducerOp(const hlo::HloComputation& computation, bool allow_assign) {
  const hlo::HloInstruction* root = computation.root_instruction();
  auto unsupported = [&] {
    return absl::UnimplementedError(hlo::StrCat(
        "reducer computation ", computation.name(),
        " is not supported by the CUDA executor (supported: add, multiply, maximum, minimum, "
        "and, or of the two parameters", allow_assign ? ", or returning the update" : "", ")"));
  };
  if (computation.num_parameters() != 2 || root == nullptr) return unsupported();
  if (allow_assign && root->opcode() == HloOpcode::kParameter && root->parameter_number() == 1) {
    return spmd_cuda::kCopy;
  }
  static constexpr std::pair<HloOpcode, int> kOps[] = {
      {HloOpcode::kAdd, spmd_cuda::kAdd},     {HloOpcode::kMultiply, spmd_cuda::kMul},
      {HloOpcode::kMaximum, spmd_cuda::kMax}, {HloOpcode::kMinimum, spmd_cuda::kMin},
      {HloOpcode::kAnd, spmd_cuda::kAnd},     {HloOpcode::kOr, spmd_cuda::kOr}};
  const std::optional<HloOpcode> op = hlo::MatchCombiner(computation);
  for (const auto& [opcode, element_op] : kOps) {
    if (op == opcode) return element_op;
  }
  return unsupported();
}

absl::StatusOr<int64_t> ReadScalarIndex(DeviceApi& device, const DeviceArray& array) {
  const int64_t bytes = ElementBytes(array.shape);
  uint64_t raw = 0;
  RETURN_IF_ERROR(device.CopyToHost(&raw, array.data, bytes));
  const PrimitiveType t = array.shape.element_type();
  if (hlo::IsUnsignedIntegralType(t)) return static_cast<int64_t>(raw);
  const int shift = 64 - 8 * static_cast<int>(bytes);
  return static_cast<int64_t>(raw << shift) >> shift;  // Sign-extend.
}

}  // namespace cuda
}  // namespace runtime

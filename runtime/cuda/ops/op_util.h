// Helpers shared by the CUDA op handlers: element types, strided copies (with size-1 and
// contiguous dimensions folded away), reducer recognition and scalar reads.
#ifndef RUNTIME_CUDA_OPS_OP_UTIL_H_
#define RUNTIME_CUDA_OPS_OP_UTIL_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_computation.h"
#include "runtime/cuda/device_api.h"
#include "runtime/cuda/executor.h"
#include "runtime/cuda/kernels/kernel_params.h"
#include "runtime/cuda/op_registry.h"

namespace runtime {
namespace cuda {

// The kernels' element type for `type`; fails naming the type when the kernels lack it.
absl::StatusOr<int> DTypeOf(hlo::PrimitiveType type);

int64_t ElementBytes(const hlo::Shape& shape);

// A strided copy of `dims` elements of `elem_bytes` (see StridedCopyParams), simplified
// (size-1 dimensions dropped, contiguous ones merged) and launched. Fails when the simplified
// rank exceeds kMaxRank.
struct CopySpec {
  std::vector<int64_t> dims;
  std::vector<int64_t> src_strides;
  std::vector<int64_t> dst_strides;
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
};
absl::Status LaunchCopy(DeviceApi& device, const CopySpec& spec, int elem_bytes, const void* src,
                        void* dst);

// A scratch device buffer holding `values` (index tables such as window coordinates).
absl::StatusOr<DeviceBuffer> ScratchCopyOf(OpContext& ctx, const std::vector<int64_t>& values);

// Sets the GEMM's in_type and out_type for `what` ("dot", "convolution") with operands of types
// `lhs` and `rhs` and a result of `out`; fails naming the types unless cuBLAS computes it (equal
// operand types; f16, bf16 or f32 with f32 accumulation, or f64).
absl::Status SetGemmTypes(std::string_view what, hlo::PrimitiveType lhs, hlo::PrimitiveType rhs,
                          hlo::PrimitiveType out, spmd_cuda::GemmParams& p);

// Copies `in` into `out` before an update writes over part of it (dynamic-update-slice,
// scatter); nothing when the buffer plan put both in one buffer (an in-place update).
absl::Status CopyUnlessInPlace(DeviceApi& device, const DeviceArray& in, const DeviceArray& out);

// Fills `out` with the scalar at device pointer `scalar` (one element of the array's type).
absl::Status FillWithScalar(DeviceApi& device, const DeviceArray& out, const void* scalar);
// Fills `out` with zeros (all-zero bits: zero in every supported type).
inline absl::Status FillWithZeros(DeviceApi& device, const DeviceArray& out) {
  return device.SetZero(out.data, out.shape.byte_size());
}

// The ElementOp of a reducer computation: two scalar parameters combined by add, multiply,
// maximum, minimum, and or or (in either order). With `allow_assign`, a body returning its
// second parameter is kCopy (scatter's assignment). Fails naming the computation otherwise.
absl::StatusOr<int> ReducerOp(const hlo::HloComputation& computation, bool allow_assign = false);

// The integer scalar at `array` (read back to the host), for dynamic-slice starts and the like.
absl::StatusOr<int64_t> ReadScalarIndex(DeviceApi& device, const DeviceArray& array);

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_OPS_OP_UTIL_H_

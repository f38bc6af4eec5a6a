// Convolutions that are einsums, rewritten as dots before partitioning (XLA's
// dot_as_convolution_util: its partitioner hands such a convolution to the dot handler).
//
// A convolution with feature_group_count and batch_group_count 1 whose every window dim is one
// of these multiplies, for each output element, one input element by one kernel element per
// contracted index, as a dot does:
//   batch        (hlo::ConvolutionEinsumDim::kBatch) input, kernel, output n: out[j] = in[j]*k[j]
//   kernel-free  (kKernelFree) one input element padded n-1 on both sides, a reversed kernel of
//                n: out[j] = in[0]*k[j]
//   input-free   kernel and window 1, stride 1, no padding: out[j] = in[j]*k[0]
//   contracting  input, kernel and window n, no padding or dilation, not reversed:
//                out[0] = sum_t in[t]*k[t]
// It becomes dot(reshape(input), reshape(kernel)), a transpose to the convolution's dimension
// order and a reshape that restores the contracted dims' size-1 output dims (each only where
// needed; the reshapes of the operands drop the size-1 dims the other side's free dims leave).
// The dot handler then costs its strategies (partial sums over any contracted dim, windowed
// einsum, ...), and each device multiplies only what it must: convolved with its padding, a
// kernel-free dim of n costs n times the products.
//
//   %c = f32[6,8,4] convolution(f32[6,1,8] %x, f32[8,8,4] %k),
//        window={size=8 pad=7_7 rhs_reversal=1}, dim_labels=b0f_0io->b0f
//   => %c.input = f32[6,8] reshape(%x)
//      %c = f32[6,8,4] dot(%c.input, %k), lhs_contracting_dims={1}, rhs_contracting_dims={1}
//
// The last instruction keeps the convolution's name, sharding and metadata (statistics,
// --explain and the verifiers' origin records name it); the others are named after it, carry
// shardings derived from the convolution's and its operands' and are listed in `added`, so
// that no origin record names them (the unpartitioned module has none of them). A convolution
// whose shardings do not map (a split size-1 dim, a maximal or manual sharding), or that orders
// or is ordered by others, is left alone.
#ifndef SPMD_PARTITIONER_CONV_AS_DOT_H_
#define SPMD_PARTITIONER_CONV_AS_DOT_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "hlo/ir/hlo_computation.h"

namespace spmd {

// Rewrites every such convolution of `computation`; returns the rewritten convolutions' names
// and adds the instructions the rewrites introduce, other than the last of each, to `added`.
absl::StatusOr<std::vector<std::string>> ConvolutionsAsDots(
    hlo::HloComputation& computation, absl::flat_hash_set<const hlo::HloInstruction*>& added);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_CONV_AS_DOT_H_

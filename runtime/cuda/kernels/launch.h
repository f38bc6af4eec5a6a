// Launchers of the generic kernels (kernels.cu) and their host twins (host_kernels.cc).
//
// Launch* enqueue one kernel on `stream` (a cudaStream_t; null is the legacy default stream)
// and return the cudaError_t of the launch as an int (0 on success). Host* run the same element
// functions in a loop on host memory and return 0. Neither checks its parameters: the
// executor builds them (runtime/cuda/ops).
#ifndef RUNTIME_CUDA_KERNELS_LAUNCH_H_
#define RUNTIME_CUDA_KERNELS_LAUNCH_H_

#include "runtime/cuda/kernels/kernel_params.h"

namespace spmd_cuda {

int LaunchElementwise(const ElementwiseParams& p, void* stream);
int LaunchStridedCopy(const StridedCopyParams& p, void* stream);
int LaunchReduce(const ReduceParams& p, void* stream);
int LaunchIota(const IotaParams& p, void* stream);
int LaunchGather(const GatherParams& p, void* stream);
int LaunchScatter(const ScatterParams& p, void* stream);
int LaunchIm2Col(const Im2ColParams& p, void* stream);
int LaunchReduceWindow(const ReduceWindowParams& p, void* stream);
int LaunchSelectWindow(const SelectWindowParams& p, void* stream);
int LaunchTopK(const TopKParams& p, void* stream);

int HostElementwise(const ElementwiseParams& p);
int HostStridedCopy(const StridedCopyParams& p);
int HostReduce(const ReduceParams& p);
int HostIota(const IotaParams& p);
int HostGather(const GatherParams& p);
int HostScatter(const ScatterParams& p);
int HostIm2Col(const Im2ColParams& p);
int HostReduceWindow(const ReduceWindowParams& p);
int HostSelectWindow(const SelectWindowParams& p);
int HostTopK(const TopKParams& p);
// C = op(A) op(B) in cuBLAS's column-major terms (kernel_params.h), accumulating in double.
int HostGemm(const GemmParams& p);

}  // namespace spmd_cuda

#endif  // RUNTIME_CUDA_KERNELS_LAUNCH_H_

// Opcode handlers of the CUDA executor, by family (ops/*.cc), and the helpers they share.
#ifndef RUNTIME_CUDA_OP_REGISTRY_H_
#define RUNTIME_CUDA_OP_REGISTRY_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "runtime/cuda/executor.h"

namespace runtime {
namespace cuda {

// What a handler gets: the instruction, its operands (arrays) and its result leaves, already
// allocated by the buffer plan.
struct OpContext {
  const hlo::HloInstruction& instr;
  std::vector<DeviceArray> operands;
  std::vector<DeviceArray> outputs;
  CudaExecutor& executor;
  DeviceApi& device() { return executor.device(); }
};

using CudaOpHandler = absl::Status (*)(OpContext& ctx);
using CudaOpTable = absl::flat_hash_map<hlo::HloOpcode, CudaOpHandler>;

// The handler for `opcode`, or null when the CUDA executor does not run it.
CudaOpHandler FindCudaOpHandler(hlo::HloOpcode opcode);

// Each family adds its opcodes. Defined in ops/<family>_ops.cc.
void RegisterElementwiseOps(CudaOpTable& table);
void RegisterDataMovementOps(CudaOpTable& table);
void RegisterReduceOps(CudaOpTable& table);
void RegisterDotOps(CudaOpTable& table);
void RegisterConvolutionOps(CudaOpTable& table);
void RegisterGatherScatterOps(CudaOpTable& table);
void RegisterCollectiveOps(CudaOpTable& table);
void RegisterScanOps(CudaOpTable& table);

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_OP_REGISTRY_H_

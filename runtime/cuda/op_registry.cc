// The opcode -> handler table of the CUDA executor, built once from every op family.
#include "runtime/cuda/op_registry.h"

namespace runtime {
namespace cuda {

CudaOpHandler FindCudaOpHandler(hlo::HloOpcode opcode) {
  static const CudaOpTable* table = [] {
    auto* t = new CudaOpTable();
    RegisterElementwiseOps(*t);
    RegisterDataMovementOps(*t);
    RegisterReduceOps(*t);
    RegisterDotOps(*t);
    RegisterConvolutionOps(*t);
    RegisterGatherScatterOps(*t);
    RegisterCollectiveOps(*t);
    RegisterScanOps(*t);
    return t;
  }();
  auto it = table->find(opcode);
  return it == table->end() ? nullptr : it->second;
}

}  // namespace cuda
}  // namespace runtime

// Registration of per-family opcode handlers (implemented under ops/).
#ifndef RUNTIME_CPU_OP_REGISTRY_H_
#define RUNTIME_CPU_OP_REGISTRY_H_

#include "absl/container/flat_hash_map.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {

using OpTable = absl::flat_hash_map<hlo::HloOpcode, OpHandler>;

// Each family adds its opcodes to `table`. Defined in ops/<family>_ops.cc.
void RegisterElementwiseOps(OpTable& table);
void RegisterShapeOps(OpTable& table);
void RegisterReduceOps(OpTable& table);
void RegisterDotOps(OpTable& table);
void RegisterGatherScatterOps(OpTable& table);
void RegisterCollectiveOps(OpTable& table);
void RegisterControlFlowOps(OpTable& table);

}  // namespace runtime

#endif  // RUNTIME_CPU_OP_REGISTRY_H_

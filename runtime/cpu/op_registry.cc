// The opcode -> handler table, built once from every op family.
#include "runtime/cpu/op_registry.h"

namespace runtime {

OpHandler FindOpHandler(hlo::HloOpcode opcode) {
  static const OpTable* table = [] {
    auto* t = new OpTable();
    RegisterElementwiseOps(*t);
    RegisterShapeOps(*t);
    RegisterReduceOps(*t);
    RegisterDotOps(*t);
    RegisterGatherScatterOps(*t);
    RegisterCollectiveOps(*t);
    RegisterControlFlowOps(*t);
    return t;
  }();
  auto it = table->find(opcode);
  return it == table->end() ? nullptr : it->second;
}

}  // namespace runtime

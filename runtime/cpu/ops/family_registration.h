// Sub-families of the elementwise and shape handler families, each in its own file under ops/.
// RegisterElementwiseOps and RegisterShapeOps (op_registry.h) call these; nothing else should.
#ifndef RUNTIME_CPU_OPS_FAMILY_REGISTRATION_H_
#define RUNTIME_CPU_OPS_FAMILY_REGISTRATION_H_

#include "runtime/cpu/op_registry.h"

namespace runtime {

// compare, select, clamp (compare_ops.cc).
void RegisterCompareOps(OpTable& table);
// convert, bitcast-convert, reduce-precision, stochastic-convert (convert_ops.cc).
void RegisterConvertOps(OpTable& table);
// dynamic-slice, dynamic-update-slice, pad (slice_ops.cc).
void RegisterSliceOps(OpTable& table);

}  // namespace runtime

#endif  // RUNTIME_CPU_OPS_FAMILY_REGISTRATION_H_

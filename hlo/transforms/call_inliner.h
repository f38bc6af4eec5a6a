// Inlining calls: a `call` whose callee only it runs is replaced by the callee's instructions,
// its parameters by the call's operands, its root by the call's result. XLA's partitioner sees
// JAX's programs so (its CallInliner runs before sharding propagation): a value built inside a
// jitted helper (`_where`, `jnp.flip`) is then an instruction like any other, which the
// partitioner can compute again where a user wants it, or see through when it composes windows.
//
// The inlined instructions keep their names (their callee goes away with the call), so errors,
// --explain and the verifiers' records name what the input names. Run after FlattenCallGraph,
// which gives each call its own callee. A call is kept when inlining would lose something:
//   - its callee is also run by another instruction (a reducer, a second site);
//   - it runs a shard_map body: an operand is manual (its partition-ids and collectives mean
//     that only inside the region, where the partitioner runs the body as written);
//   - it carries a sharding of its own (a user's annotation of the result), control
//     dependencies, `is_composite` (a composite op a later pass decomposes) or the frontend
//     attribute `inlineable="false"`.
//
//   %f { %p = parameter(0)  ROOT %n = negate(%p) }   %c = call(%x), to_apply=%f   %u = exp(%c)
//   -> %n = negate(%x)   %u = exp(%n)
#ifndef HLO_TRANSFORMS_CALL_INLINER_H_
#define HLO_TRANSFORMS_CALL_INLINER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"

namespace hlo {

// Inlines every call that may be (see the file comment) in the computations the entry runs in
// sequence, calls inside inlined callees included. Returns how many calls were inlined; their
// callees are removed.
absl::StatusOr<int64_t> InlineCalls(HloModule& module);

}  // namespace hlo

#endif  // HLO_TRANSFORMS_CALL_INLINER_H_

// Dimensions along which an array value is the same at every index: a broadcast's new
// dimensions, an iota's other dimensions, and what elementwise ops, transposes, reshapes and
// slices keep of their operands'. The partitioner reads it to reshard such a
// value without moving its copies along those dimensions.
//
//   b = f32[20,2,20] broadcast(f32[2] p), dimensions={1}     => {0, 2}
//   a = f32[20,2,20] add(b, broadcast(f32[20,2] q, {0,1}))   => {2}
//   r = f32[10,4,20] reshape(b)                              => {0, 2}
//       (r's dim 0 steps b's dim 0 by 2; r's dim 1 moves b's dim 1)
#ifndef HLO_ANALYSIS_CONSTANT_DIMS_H_
#define HLO_ANALYSIS_CONSTANT_DIMS_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/ir/hlo_instruction.h"

namespace hlo {

// The sorted dimensions of `instr`'s array value along which it does not vary (empty for
// tuples and whenever in doubt).
//
// A reshape keeps output dimension j when a run of adjacent source dimensions that are all
// constant (or of size 1) covers j's digits exactly enough that a step along j changes only
// that run's digits: the run's lowest stride divides j's stride and j's top (stride x size)
// divides the run's top.
std::vector<int64_t> ConstantAlongDims(const HloInstruction& instr);

// The same, remembering each instruction's answer in `memo` (one map per module walk), so a
// DAG of elementwise ops is visited once per instruction. The answer does not depend on what
// the memo already holds: every caller (the partitioner, the verifier) sees the same dims.
using ConstantDimsMemo = absl::flat_hash_map<const HloInstruction*, std::vector<int64_t>>;
const std::vector<int64_t>& ConstantAlongDims(const HloInstruction& instr, ConstantDimsMemo& memo);

}  // namespace hlo

#endif  // HLO_ANALYSIS_CONSTANT_DIMS_H_

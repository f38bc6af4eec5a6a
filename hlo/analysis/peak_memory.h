// Peak live memory of one device running a computation in its instruction order (the schedule,
// for XLA's scheduled dumps).
#ifndef HLO_ANALYSIS_PEAK_MEMORY_H_
#define HLO_ANALYSIS_PEAK_MEMORY_H_

#include <cstdint>
#include <vector>

#include "hlo/ir/hlo_computation.h"

namespace hlo {

struct PeakMemory {
  int64_t bytes = 0;                   // The largest sum of live buffers.
  const HloInstruction* at = nullptr;  // The instruction at which it is first reached.
  // The instructions whose buffers are live there, largest buffer first (ties by order).
  std::vector<const HloInstruction*> live;
  // The bytes each of `live` allocated (less than AllocatedBytes where it writes into operand
  // buffers it reads last, InPlaceOperands).
  std::vector<int64_t> live_allocated;
  // The live bytes at each instruction of the computation, in order (after it allocates, before
  // the buffers it last uses die): the memory-over-program curve whose maximum is `bytes`.
  std::vector<int64_t> live_bytes;
};

// The bytes `instr` allocates: its shape's size, except for instructions that only alias
// their operands (get-tuple-element, tuple, bitcast, the -done half of an async pair,
// opt-barrier, add-dependency, a copy of a tuple: XLA's is shallow), which allocate nothing,
// and async starts, whose tuple's first element is the operand itself.
int64_t AllocatedBytes(const HloInstruction& instr);

// The operands whose buffers `instr` may write its result into when it reads them last, as
// XLA's buffer assignment does: dynamic-update-slice's operand, scatter's inputs, while's
// initial state, sort's operands, and an elementwise op's operands of the result's dimensions
// and element width.
std::vector<int64_t> InPlaceOperands(const HloInstruction& instr);

// For each instruction of `comp` (by position), the position of the last instruction that reads
// its value (itself when none does; the computation's size for the root, which the caller reads
// after the end). Operands defined later than their reader are ignored.
std::vector<size_t> LastReaders(const HloComputation& comp);

// True when the body of `while_instr` returns element `element` of its state unchanged (the
// root tuple's operand is get-tuple-element(parameter(0)) of that index): the loop never writes
// it, so the state can keep it in the initial value's buffer, even an argument's.
bool WhileBodyForwards(const HloInstruction& while_instr, int64_t element);

// For each instruction of `comp` (by position in its order), the positions of the
// instructions whose buffers its value may alias: itself when it allocates, and the buffers of
// the operands it only forwards (AllocatedBytes), sorted.
std::vector<std::vector<size_t>> AliasedBuffers(const HloComputation& comp);

// A buffer lives from its definition to the last use of any value that aliases it; parameters
// (the program's arguments, there before it starts) are live from the start and, with the
// root's buffers, to the end. An instruction with InPlaceOperands reuses the buffers of those
// operands that no later instruction reads (never an argument's or a constant's) and allocates
// only the bytes they lack. A call or conditional also holds, while it runs, the largest of its
// callees' own peaks less their parameters (the caller's operands); a while loop counts as its
// result's buffers (its body's temporaries are not modelled: the body updates the state in
// place, which separate parameter buffers cannot say).
PeakMemory ComputePeakMemory(const HloComputation& comp);

}  // namespace hlo

#endif  // HLO_ANALYSIS_PEAK_MEMORY_H_

// Memory-aware instruction order: reorders each computation so that fewer bytes are live at
// once. Executors run instructions in their order (runtime/cuda/buffer_plan.cc allocates by
// it), and spmd-inspect reports peak memory by it (hlo/analysis/peak_memory.h), so the order is
// part of what a program costs.
//
// Candidate orders, as XLA's memory scheduler tries several and keeps the best (the third is
// the second improved by the first's moves):
// - local moves on the given order (the program's own, usually good): an instruction that frees
//   more bytes than it allocates moves up, towards just after its last predecessor and the other
//   readers of what it frees; one that allocates more than it frees moves down, towards just
//   before its first successor or the next reader of anything it reads. Each move lowers the
//   live bytes between the two places, and goes only as far as keeps its own place below the
//   old maximum there (memory_order.cc, LocalMoves).
// - a greedy list order (XLA's ListScheduler heuristic): of the ready instructions, the one that
//   frees the most bytes less the bytes it allocates; ties to the earlier.
// Edges are operands, control predecessors and, between instructions with side effects (their
// own or their callees'), their order. Parameters come first and the root last. A candidate
// replaces the order only where it lowers the computation's peak (ComputePeakMemory), so no
// computation's peak grows. Computations with async pairs (placed for overlap, which the
// memory model does not see) and modules whose header says `is_scheduled=true` keep their
// order.
//
//   a = f32[1M] multiply(x, x)          a = f32[1M] multiply(x, x)
//   s = f32[] reduce(a, ...)            s = f32[] reduce(a, ...)
//   b = f32[1M] add(x, x)        ->     t = f32[] reduce(a, ...)     <- a dies here, not
//   ...                                 b = f32[1M] add(x, x)           after b's work
//   t = f32[] reduce(a, ...)
//
// The partitioner's cleanup stage runs it last: common-subexpression elimination merges equal
// instructions far apart (a gradient's square read by two norms), which holds a buffer live
// from the first use to the last; this moves the last use up.
#ifndef HLO_TRANSFORMS_MEMORY_ORDER_H_
#define HLO_TRANSFORMS_MEMORY_ORDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/ir/hlo_computation.h"
#include "hlo/pass/hlo_pass_interface.h"

namespace hlo {

// The two candidate orders of `comp`'s instructions described above (every instruction once).
std::vector<HloInstruction*> LocallyImprovedOrder(const HloComputation& comp);
std::vector<HloInstruction*> MemoryAwareOrder(const HloComputation& comp);

// One reordered computation: its peak before and after, and which candidate won.
struct Reordered {
  std::string computation;
  int64_t peak_before = 0;
  int64_t peak_after = 0;
  std::string order;  // "local moves", "list order" or "list order and local moves".
};

class MemoryOrder : public HloModulePass {
 public:
  std::string_view name() const override { return "cleanup"; }
  // What the last run reordered, in module order (the driver's --explain prints it).
  const std::vector<Reordered>& reordered() const { return reordered_; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule* module) override;

 private:
  std::vector<Reordered> reordered_;
};

}  // namespace hlo

#endif  // HLO_TRANSFORMS_MEMORY_ORDER_H_

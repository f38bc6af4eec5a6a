// Common-subexpression elimination: within each computation, an instruction that computes what
// an earlier one computes (same opcode, shape, operands, called computations and attributes,
// metadata and channel ids aside) is replaced by the earlier one in all its uses; dead-code
// elimination then removes it. The partitioner's `cleanup` stage runs it before dead-code
// elimination, as XLA's SPMD partitioner runs HloCSE: handlers and reshards that rebuild the same
// index arithmetic, slices or collectives leave one copy.
//
//   %a = s32[] partition-id()          %a = s32[] partition-id()
//   %b = s32[] partition-id()     ->   %m = s32[] multiply(%a, %a)
//   %m = s32[] multiply(%a, %b)
//
// Never merged: instructions with side effects (hlo::HasSideEffect), parameters, custom-calls,
// control flow and async ops (they run or call code whose effects the IR does not state),
// instructions with control dependencies, constants over kMaxMergedConstantBytes (comparing them
// costs more than it saves), a fill (broadcast of a scalar) that a dynamic-update-slice,
// scatter or sort updates in place (sharing it would cost that writer a copy), and a computation's
// root (its caller reads it by position). Two collectives that differ only in channel id are
// merged: in an SPMD program every device runs both, in the same order, so one serves (but not one
// with a channel id and one without: an all-reduce without one reduces across replicas).
#ifndef HLO_TRANSFORMS_COMMON_SUBEXPRESSION_ELIMINATION_H_
#define HLO_TRANSFORMS_COMMON_SUBEXPRESSION_ELIMINATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/pass/hlo_pass_interface.h"

namespace hlo {

inline constexpr int64_t kMaxMergedConstantBytes = 1024;

// Whether CSE merges equal copies of the constant `instr`: its literal is known (not elided)
// and at most kMaxMergedConstantBytes.
inline bool IsMergeableConstant(const HloInstruction& instr) {
  return instr.opcode() == HloOpcode::kConstant && !instr.attrs().literal_elided &&
         instr.shape().byte_size() <= kMaxMergedConstantBytes;
}

// One merge: in computation `computation`, `removed` now reads as `kept`.
struct MergedInstruction {
  std::string computation;
  std::string removed;
  std::string kept;
};

class CommonSubexpressionElimination : public HloModulePass {
 public:
  std::string_view name() const override { return "cse"; }
  // The merges of the last run, in the order made (records naming a removed instruction, such
  // as the partitioner's origins, follow them to the kept one).
  const std::vector<MergedInstruction>& merged() const { return merged_; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule* module) override;

 private:
  std::vector<MergedInstruction> merged_;
};

}  // namespace hlo

#endif  // HLO_TRANSFORMS_COMMON_SUBEXPRESSION_ELIMINATION_H_

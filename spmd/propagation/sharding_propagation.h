// The `propagate` pass: fills in shardings for the instructions the user did not annotate, so
// that partitioning is cheap, and logs where each one came from.
//
// Runs before `partition` (which treats an instruction without a sharding as replicated). It
// works on the whole module: values that a tuple, get-tuple-element, while, call, conditional
// or shard group passes through unchanged share one sharding (value_classes.h), and every op
// with a FactorRule (factor_rule.h) carries shardings between its operands and result in both
// directions until nothing changes (propagation_engine.h). User shardings are held as
// user_shardings.h describes; inferred ones never replace them.
//
//   ENTRY e { %x = f32[8,16] parameter(0), sharding={replicated}
//             %a = f32[16,32] parameter(1), sharding={devices=[1,2]<=[2]}
//             %d = f32[8,32] dot(%x, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
//             ROOT %t = f32[8,32] tanh(%d) }
//   -> %d and %t get sharding={devices=[1,2]<=[2]}; the log says
//      "%t: {devices=[1,2]<=[2]} <- %d via %t (elementwise result <- operand 0) ... from %a".
//
// Fails (InvalidArgument) when a while loop's annotations place it on two devices.
// Every sharding it assigns is validated against the instruction's shape and the module's
// partition count; a value it cannot shard validly is left without a sharding (replicated).
#ifndef SPMD_PROPAGATION_SHARDING_PROPAGATION_H_
#define SPMD_PROPAGATION_SHARDING_PROPAGATION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/pass/hlo_pass_interface.h"
#include "hlo/transforms/flatten_call_graph.h"

namespace spmd {

struct PropagationLog {
  // One line per instruction that holds a sharding after the pass, in module order:
  // `%name: SHARDING <- annotation` or `%name: SHARDING <- %from via %instr (rule ...); from
  // annotation on %a`.
  std::vector<std::string> lines;
  int64_t assigned = 0;  // Instructions that received a sharding from propagation.
  int64_t visits = 0;    // Rule applications until the fixed point.
  // The computations the pass copied so that each call site holds its own shardings
  // (hlo/transforms/flatten_call_graph.h), with their instructions: copy -> original name.
  hlo::CloneNames clones;
  // Calls replaced by their callees' instructions (hlo/transforms/call_inliner.h).
  int64_t inlined_calls = 0;
};

class ShardingPropagation : public hlo::HloModulePass {
 public:
  // `keep_lines`: build PropagationLog::lines (--explain); the counts are kept either way.
  explicit ShardingPropagation(bool keep_lines = true) : keep_lines_(keep_lines) {}
  std::string_view name() const override { return "propagate"; }
  // The log of the last Run.
  const PropagationLog& log() const { return log_; }

 protected:
  absl::StatusOr<bool> RunImpl(hlo::HloModule* module) override;

 private:
  PropagationLog log_;
  bool keep_lines_ = true;
};

}  // namespace spmd

#endif  // SPMD_PROPAGATION_SHARDING_PROPAGATION_H_

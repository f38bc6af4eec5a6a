// The CPU evaluator: runs an HLO module on one (simulated) device.
//
// A computation is executed in instruction order (operands before users). Each value is a
// Literal owned by the evaluator and dropped after its last use, so a program's resident
// memory follows its live set. Opcode semantics live in per-family handler files under ops/,
// registered in op_registry.cc -- control flow too (ops/control_flow_ops.cc: constant, tuple,
// get-tuple-element, call, fusion (its `calls=` computation), async, while, conditional, which
// call back into the evaluator); only parameters are read here. An opcode without a handler is
// an error naming it.
#ifndef RUNTIME_CPU_EVALUATOR_H_
#define RUNTIME_CPU_EVALUATOR_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/literal.h"
#include "runtime/common/device_context.h"
#include "runtime/cpu/collective_hub.h"

namespace runtime {

class Evaluator {
 public:
  Evaluator(const hlo::HloModule& module, DeviceContext device)
      : module_(module), device_(device) {}

  // Runs the entry computation on `args` (one per parameter, consumed).
  absl::StatusOr<hlo::Literal> RunEntry(std::vector<hlo::Literal> args);
  // Runs `computation` on `args` (not consumed). Used by handlers for to_apply bodies.
  absl::StatusOr<hlo::Literal> Call(const hlo::HloComputation& computation,
                                    absl::Span<const hlo::Literal* const> args);

  // A while loop whose condition still holds after this many body runs is an error naming the
  // loop (instead of running forever, e.g. on random inputs that never meet the condition).
  static constexpr int64_t kDefaultMaxWhileTrips = 10'000'000;
  // Loop states up to this size are compared after each iteration of a deterministic body;
  // an unchanged state is an error (the loop never ends).
  static constexpr int64_t kProgressCheckBytes = 64 * 1024;
  void set_max_while_trips(int64_t trips) { max_while_trips_ = trips; }

  // Runs while loop `instr` from state `init` (the trip limit and endless-loop checks above).
  absl::StatusOr<hlo::Literal> RunWhile(const hlo::HloInstruction& instr, const hlo::Literal& init);
  // async-start runs its computation at once: the result tuple holds (the operands, the
  // computation's value, zeros for any context); async-done takes element 1.
  absl::StatusOr<hlo::Literal> RunAsyncStart(const hlo::HloInstruction& instr,
                                             absl::Span<const hlo::Literal* const> operands);

  const DeviceContext& device() const { return device_; }
  const hlo::HloModule& module() const { return module_; }
  // How many times this device has run `instr` before (keys collective rendezvous).
  int64_t NextSequence(const hlo::HloInstruction& instr) { return sequence_[&instr]++; }

 private:
  // What RunWhile's endless-loop checks need to know about a loop's computations, worked out
  // once per while instruction (a loop nested in another runs many times).
  struct LoopFacts {
    bool deterministic = false;        // Condition and body give the same result on the same state.
    bool condition_invariant = false;  // The condition reads only state the body passes through.
  };
  const LoopFacts& FactsOf(const hlo::HloInstruction& loop);
  absl::StatusOr<hlo::Literal> Execute(const hlo::HloComputation& computation,
                                       std::vector<const hlo::Literal*> params,
                                       std::vector<hlo::Literal> owned_params);

  const hlo::HloModule& module_;
  DeviceContext device_;
  absl::flat_hash_map<const hlo::HloInstruction*, int64_t> sequence_;
  absl::flat_hash_map<const hlo::HloInstruction*, LoopFacts> loop_facts_;
  int64_t max_while_trips_ = kDefaultMaxWhileTrips;
};

// Handler of one opcode: computes the instruction's value from its operands' values.
using OpHandler = absl::StatusOr<hlo::Literal> (*)(const hlo::HloInstruction& instr,
                                                   absl::Span<const hlo::Literal* const> operands,
                                                   Evaluator& evaluator);

// The handler for `opcode`, or null when the CPU executor does not run it.
OpHandler FindOpHandler(hlo::HloOpcode opcode);

}  // namespace runtime

#endif  // RUNTIME_CPU_EVALUATOR_H_

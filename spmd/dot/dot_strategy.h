// The cost-aware choice of a dot's partitioning strategy.
//
// Every strategy is a tiling of the dot's iteration space (dot_space.h) plus how the local
// results are finished and how communication is scheduled:
//   (a) batch-, (b) non-contracting- and (c) contracting-partitioned tilings arise from
//       lifting the operands' current shardings (alone or merged);
//   (d) "operands": compute in the tiling the operands already have, reshard the result;
//   (e) "result": reshard the operands to the tiling of the wanted result;
//   (c) finishes partial sums by all-reduce, or by reduce-scatter along a result dim;
//   (f) windowed einsum: an all-gather of one operand, or a reduce-scatter of the result,
//       replaced by a loop of collective-permutes that overlaps each step's transfer with a
//       block of the dot (unidirectional ring, g-1 transfers);
//   (g) 2-D/3-D meshes need no recursion here: a space tiling may split several dims at once
//       (for example batch by one mesh axis and contracting by another), and each candidate's
//       collectives run over the device groups of the axes involved.
// "replicated" (all-gather both operands, compute the full dot everywhere: XLA's behaviour in
// openxla/xla#4062) is always costed for comparison.
//
// Each candidate's time = operand reshards + local compute + finishing collective + the
// reshard of the result to the wanted sharding (windowed loops: per step the larger of the
// block's compute and transfer). Candidates whose peak memory exceeds the device's memory are
// ineligible. The cheapest eligible one wins; ties go to fewer bytes, then to the earlier
// candidate in a fixed order, so the choice is deterministic.
#ifndef SPMD_DOT_DOT_STRATEGY_H_
#define SPMD_DOT_DOT_STRATEGY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/cost/device_model.h"
#include "spmd/dot/dot_space.h"
#include "spmd/reshard/reshard_planner.h"

namespace spmd {

// How partial sums over contracting tiles are finished: not at all (none pending), all-reduce,
// reduce-scatter, or kept as an unreduced sharding (when the wanted sharding is unreduced).
enum class DotFinish { kNone, kAllReduce, kReduceScatter, kKeepUnreduced };
enum class WindowedKind { kNone, kAllGatherLoop, kReduceScatterLoop };

// A windowed-einsum loop: `steps` blocks around the ring `groups` (each group ordered as the
// ring: member i exchanges with members i-1 and i+1).
struct WindowedLoop {
  WindowedKind kind = WindowedKind::kNone;
  int64_t operand = -1;      // All-gather loop: the operand circulated (0 lhs, 1 rhs).
  int64_t operand_dim = -1;  // All-gather loop: its dim the ring gathers.
  int64_t result_dim = -1;   // Reduce-scatter loop: the result dim scattered.
  int64_t steps = 0;
  std::vector<std::vector<int64_t>> groups;
  // All-gather loop: blocks travel both ways round the ring (about g/2 transfer steps).
  // Reduce-scatter loop: each block's halves are summed travelling opposite ways.
  bool bidirectional = false;
};

struct DotCandidate {
  std::string family;   // operands, operands+replicas, lhs, rhs, result, result+lhs,
                        // result+rhs, replicated, windowed-ag, windowed-ag-bidir, windowed-rs,
                        // windowed-rs-bidir.
  std::string letters;  // The strategy letters this candidate realizes, e.g. "(d)".
  std::string tiling;   // The space tiling in short form, e.g. "m:4 n:2".
  hlo::HloSharding space = hlo::HloSharding::Replicate();
  hlo::HloSharding lhs = hlo::HloSharding::Replicate();  // What the local dot needs.
  hlo::HloSharding rhs = hlo::HloSharding::Replicate();
  hlo::HloSharding local = hlo::HloSharding::Replicate();  // Local result (sums pending).
  std::vector<std::vector<int64_t>> pending_groups;        // Partial-sum groups, or empty.
  DotFinish finish = DotFinish::kNone;
  int64_t scatter_dim = -1;                                   // kReduceScatter: result dim.
  hlo::HloSharding produced = hlo::HloSharding::Replicate();  // After finishing.
  WindowedLoop windowed;

  // Estimates (microseconds, bytes one device receives, bytes one device holds at peak).
  double operands_us = 0, compute_us = 0, finish_us = 0, result_us = 0, total_us = 0;
  int64_t comm_bytes = 0;
  // Each operand's part of operands_us and comm_bytes (its share when other dots read it
  // alike), and whether it is rebuilt where wanted rather than resharded (lhs, rhs).
  double operand_us[2] = {0, 0};
  double operand_bytes[2] = {0, 0};
  bool operand_rebuilt[2] = {false, false};
  int64_t memory_bytes = 0;
  double flops = 0;  // Per device.
  bool full_rematerialization = false;
  bool eligible = true;
  std::string note;  // Why ineligible, or what the loop overlaps.

  std::string Name() const;  // family + finish, e.g. "operands+reduce-scatter(d1)".
};

struct DotProblem {
  DotSpace space;
  hlo::Shape lhs_shape, rhs_shape, result_shape;
  hlo::HloSharding lhs_current = hlo::HloSharding::Replicate();
  hlo::HloSharding rhs_current = hlo::HloSharding::Replicate();
  hlo::HloSharding wanted = hlo::HloSharding::Replicate();  // The dot's own sharding.
  int64_t num_devices = 1;
  // Other shardings each operand already exists in (reshards emitted for earlier users, e.g.
  // a weight gathered for the forward dot and used again by the backward one): a candidate
  // needing one of them pays nothing for that operand.
  std::vector<hlo::HloSharding> lhs_available, rhs_available;
  // How many dots not yet partitioned (this one included) read each operand alike: one
  // reshard of it serves them all (the partitioner caches it), so a candidate counts its share.
  int64_t lhs_sharers = 1, rhs_sharers = 1;
  // The estimated time to compute operand i (0 lhs, 1 rhs) again in a sharding from values
  // available there, moving nothing (spmd/partitioner/rebuild.h); nullopt when it cannot be.
  // A candidate pays that instead of the reshard when it is less. Unset: never.
  std::function<std::optional<double>(int64_t, const hlo::HloSharding&)> rebuild_us;
};

struct DotStrategyOptions {
  std::string forced_family;  // Non-empty: only candidates of this family are eligible.
  bool enable_windowed_einsum = true;
  // Windowed loops are considered only when the circulated operand (all-gather loop) or the
  // result (reduce-scatter loop) has at least this many bytes in full.
  int64_t windowed_threshold_bytes = 0;
  // Cost every candidate (the --explain table lists them all). Off, a tiling or finish whose
  // compute time alone exceeds the best eligible total found so far, plus kEstimateTolerance,
  // is dropped before its reshards are planned: every candidate's total is at least its
  // compute time (a windowed loop's too), so it could not come within the tolerance of the
  // least time, the winner is the same, and only the table and the runner-up differ.
  bool cost_every_candidate = true;
};

struct DotDecision {
  std::vector<DotCandidate> candidates;
  int64_t winner = -1;
  std::string reason;
  // No candidate fits the device model's memory: the winner is the one needing least memory.
  bool over_memory = false;
  // Candidates dropped unplanned because their compute time alone exceeds the least total,
  // plus kEstimateTolerance (DotStrategyOptions::cost_every_candidate off).
  int64_t pruned = 0;
  // The table for --explain, headed by `title`.
  std::string Explain(std::string_view title) const;
  // The table alone: one line per candidate and the choice.
  std::string Table() const;
};

// The family names a user may force.
const std::vector<std::string>& DotStrategyFamilies();

// Enumerates and costs the candidates and picks one: among those that fit the device's memory
// and come within kEstimateTolerance of the least estimated time, the fewest bytes, else (nothing
// fits and no family is forced) the one needing least memory, with `over_memory` set. Fails when no
// candidate is eligible otherwise (for example a forced family that does not apply), naming the
// reason.
absl::StatusOr<DotDecision> ChooseDotStrategy(const DotProblem& problem,
                                              const DeviceModel& model,
                                              ReshardPlanner& planner,
                                              const DotStrategyOptions& options);

}  // namespace spmd

#endif  // SPMD_DOT_DOT_STRATEGY_H_

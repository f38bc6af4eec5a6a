// The estimated times handlers compare their candidate strategies by: the reshards a candidate
// needs, priced by the reshard planner (its α-β estimate of the cheapest plan).
#ifndef SPMD_PARTITIONER_CANDIDATE_COST_H_
#define SPMD_PARTITIONER_CANDIDATE_COST_H_

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {

// The estimated time (us) to bring the partitioned `operand` from its current sharding to `to`:
// 0 when it is already there, or when it is a scalar broadcast (GetInSharding rebuilds those in
// place).
absl::StatusOr<double> ReshardCost(const hlo::HloInstruction* operand, const hlo::HloSharding& to,
                                   PartitionContext& ctx);

// The estimated time (us) to reshard an array of `shape` from `from` to `to` (0 when equal).
absl::StatusOr<double> ResultCost(const hlo::Shape& shape, const hlo::HloSharding& from,
                                  const hlo::HloSharding& to, PartitionContext& ctx);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_CANDIDATE_COST_H_

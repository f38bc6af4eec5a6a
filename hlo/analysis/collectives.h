// The collectives of a partitioned module, one record per collective instruction, with the
// bytes one device receives by the convention of ../shared/docs/cli-contract.md. Synchronous
// collectives and XLA's asynchronous forms are both understood: an async pair
// (all-gather-start/-done, all-reduce-start/-done, collective-permute-start/-done, or a generic
// async-start wrapping a collective such as `reduce-scatter-start`) is one collective, recorded
// at its start.
#ifndef HLO_ANALYSIS_COLLECTIVES_H_
#define HLO_ANALYSIS_COLLECTIVES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir/hlo_module.h"

namespace hlo {

enum class CollectiveKind { kAllGather, kAllReduce, kReduceScatter, kAllToAll, kCollectivePermute };
inline constexpr int kNumCollectiveKinds = 5;

// "all-gather", "all-reduce", ... as in the statistics schema.
std::string_view CollectiveKindName(CollectiveKind kind);

struct CollectiveRecord {
  const HloInstruction* instr = nullptr;  // The collective, or the start of an async pair.
  CollectiveKind kind = CollectiveKind::kAllGather;
  const Shape* output_shape = nullptr;  // The collective's result (inside a start's tuple).
  int64_t group_size = 1;    // The largest replica group (num_partitions when none given).
  int64_t buffer_bytes = 0;  // S in the contract's formulas (per device).
  int64_t bytes = 0;         // Received by one device per execution, maximum over devices.
  int64_t executions = 1;    // Static trip counts of the enclosing loops, multiplied.
};

// The record for `instr` when it is a collective of the five kinds (or the start of an async
// one); std::nullopt otherwise, including for the -done halves. `num_partitions` is the group
// size of a collective that names no replica groups. `executions` is left at 1.
std::optional<CollectiveRecord> DescribeCollective(const HloInstruction& instr,
                                                   int64_t num_partitions);

// Every collective the module executes (ForEachExecutedInstruction order), with executions set.
std::vector<CollectiveRecord> ListCollectives(const HloModule& module);

// The replica groups as written in HLO text (`{{0,1},{2,3}}` or `[2,2]<=[4]`), or "{}" when the
// instruction has none; source_target_pairs for collective-permutes.
std::string DescribeGroups(const HloInstruction& instr);

}  // namespace hlo

#endif  // HLO_ANALYSIS_COLLECTIVES_H_

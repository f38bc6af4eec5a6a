// Who one device is among the N that run a module: what both executors (runtime/cpu and
// runtime/cuda) hand to their op handlers and to the collective-group resolution
// (collective_groups.h).
#ifndef RUNTIME_COMMON_DEVICE_CONTEXT_H_
#define RUNTIME_COMMON_DEVICE_CONTEXT_H_

#include <cstdint>

#include "hlo/ir/hlo_instruction.h"

namespace runtime {

// The CPU executor's in-process rendezvous (runtime/cpu/collective_hub.h); the CUDA executor
// leaves it null and exchanges data through its own Collectives.
class CollectiveHub;

// Who this device is among the N (simulated or real) ones.
struct DeviceContext {
  int64_t partition_id = 0;
  int64_t replica_id = 0;
  int64_t num_partitions = 1;
  int64_t num_replicas = 1;
  CollectiveHub* hub = nullptr;  // Required by CPU collectives when num_partitions > 1.
};

// Custom-calls that are identities on the values they carry (the list is hlo::ForwardsOperand's:
// Sharding, SPMDFullToShardShape/ShardToFullShape, ShardBarrierFrom/To, LayoutConstraint and
// the placement annotations). Executors run them as copies.
bool IsIdentityCustomCall(const hlo::HloInstruction& instr);

}  // namespace runtime

#endif  // RUNTIME_COMMON_DEVICE_CONTEXT_H_

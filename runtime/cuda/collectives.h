// The collective layer of the CUDA executor, behind one small interface with two
// implementations: NcclCollectives (nccl_collectives.h; one GPU per device, over NCCL) and
// CopyCollectives (copy_collectives.h; several logical devices sharing a GPU, by
// device-to-device copies). The op handlers (ops/collective_ops.cc) bring every collective to
// contiguous chunks first, so implementations only see flat buffers.
#ifndef RUNTIME_CUDA_COLLECTIVES_H_
#define RUNTIME_CUDA_COLLECTIVES_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "hlo/ir/hlo_instruction.h"
#include "runtime/cuda/collective_grouping.h"

namespace runtime {
namespace cuda {

enum class ReduceKind { kSum, kProd, kMax, kMin };

// Bytes of `count` elements of `dtype` (spmd_cuda::DType), and pointers `bytes` past `p`.
int64_t ChunkBytes(int dtype, int64_t count);
inline const char* BytesAfter(const void* p, int64_t bytes) {
  return static_cast<const char*>(p) + bytes;
}
inline char* BytesAfter(void* p, int64_t bytes) { return static_cast<char*>(p) + bytes; }

// One collective as issued by one device.
struct CollectiveOp {
  const hlo::HloInstruction* instr = nullptr;  // For messages and rendezvous keys.
  Grouping grouping;                           // Unused by collective-permute.
  int dtype = 0;                               // spmd_cuda::DType of the elements.
  ReduceKind reduce = ReduceKind::kSum;        // Reducing collectives only.
  int64_t sequence = 0;  // How many times this device ran `instr` before.
  int64_t device = 0;    // Global id of the issuing device.
  // Global ids of the devices that meet at this collective, ascending or in group order: the
  // device's group, or the devices a collective-permute's pairs join to it. Groups meet apart
  // (as in XLA's runtimes), so groups that take different branches never wait for each other.
  std::vector<int64_t> members;
};

class Collectives {
 public:
  virtual ~Collectives() = default;
  // `out` (count elements) = reduction over the group of every member's `in`.
  virtual absl::Status AllReduce(const CollectiveOp& op, const void* in, void* out,
                                 int64_t count) = 0;
  // `out` = every member's `in` (count elements each), concatenated in group order.
  virtual absl::Status AllGather(const CollectiveOp& op, const void* in, void* out,
                                 int64_t count) = 0;
  // `in` holds group-size chunks of `count` elements; `out` = chunk `rank` of their reduction.
  virtual absl::Status ReduceScatter(const CollectiveOp& op, const void* in, void* out,
                                     int64_t count) = 0;
  // Chunk j (count elements) of `in` goes to member j; chunk j of `out` comes from member j.
  virtual absl::Status AllToAll(const CollectiveOp& op, const void* in, void* out,
                                int64_t count) = 0;
  // Sends `in` to each global device id in `targets`; receives `out` from `source` (-1: none;
  // the caller has zeroed `out`).
  virtual absl::Status CollectivePermute(const CollectiveOp& op, const void* in, void* out,
                                         int64_t count, const std::vector<int64_t>& targets,
                                         int64_t source) = 0;
};

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_COLLECTIVES_H_

// The NCCL calls the executor makes, behind an interface so that tests can record them with a
// fake (fake_nccl.h) on a machine without GPUs. RealNccl (MakeRealNccl) forwards to libnccl.
// Every failure is a Status naming the NCCL call and NCCL's own message; callers add the
// instruction.
#ifndef RUNTIME_CUDA_NCCL_API_H_
#define RUNTIME_CUDA_NCCL_API_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cuda/collectives.h"

namespace runtime {
namespace cuda {

using NcclComm = void*;  // An ncclComm_t.

// ncclUniqueId's bytes (NCCL_UNIQUE_ID_BYTES).
struct NcclUniqueId {
  char bytes[128] = {};
};

class NcclApi {
 public:
  virtual ~NcclApi() = default;
  virtual absl::StatusOr<NcclUniqueId> GetUniqueId() = 0;
  // The world communicator of `rank` among `world_size` ranks (collective over all ranks).
  virtual absl::StatusOr<NcclComm> CommInitRank(int world_size, const NcclUniqueId& id,
                                                int rank) = 0;
  // Collective over every rank of `comm`: ranks with the same `color` form one communicator,
  // ordered by `key`.
  virtual absl::StatusOr<NcclComm> CommSplit(NcclComm comm, int color, int key) = 0;
  virtual absl::Status CommAbort(NcclComm comm) = 0;
  virtual absl::Status CommDestroy(NcclComm comm) = 0;
  // OK, or the asynchronous error the communicator has hit.
  virtual absl::Status AsyncError(NcclComm comm) = 0;

  virtual absl::Status AllReduce(const void* send, void* recv, int64_t count, int dtype,
                                 ReduceKind op, NcclComm comm, void* stream) = 0;
  virtual absl::Status AllGather(const void* send, void* recv, int64_t send_count, int dtype,
                                 NcclComm comm, void* stream) = 0;
  virtual absl::Status ReduceScatter(const void* send, void* recv, int64_t recv_count, int dtype,
                                     ReduceKind op, NcclComm comm, void* stream) = 0;
  virtual absl::Status Send(const void* send, int64_t count, int dtype, int peer, NcclComm comm,
                            void* stream) = 0;
  virtual absl::Status Recv(void* recv, int64_t count, int dtype, int peer, NcclComm comm,
                            void* stream) = 0;
  virtual absl::Status GroupStart() = 0;
  virtual absl::Status GroupEnd() = 0;
};

// NCCL itself (libnccl, linked; NCCL loads the CUDA driver lazily, so creating this object never
// fails on a machine without one; its calls do).
std::unique_ptr<NcclApi> MakeRealNccl();

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_NCCL_API_H_

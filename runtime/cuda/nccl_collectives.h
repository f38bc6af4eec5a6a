// Collectives over NCCL for one device (one GPU, one rank of the world communicator).
//
// Each distinct grouping (collective_grouping.h) gets its communicators once, by ncclCommSplit
// of the world communicator (color = group index, key = rank in the group); a grouping that is
// the whole world in rank order uses the world communicator itself. all-reduce, all-gather and
// reduce-scatter are NCCL's own; all-to-all is grouped send/recv with every member; collective-
// permute is grouped send/recv pairs on the world communicator. All run on the device's stream.
//
// The watchdog: after issuing, the calling thread polls the stream and the communicator's
// asynchronous error until the collective is done. An NCCL error, or no completion within the
// timeout, aborts the communicator (ncclCommAbort) and becomes an error naming the instruction,
// so a missing peer turns into an error instead of a hang.
#ifndef RUNTIME_CUDA_NCCL_COLLECTIVES_H_
#define RUNTIME_CUDA_NCCL_COLLECTIVES_H_

#include <map>
#include <vector>

#include "runtime/cuda/collectives.h"
#include "runtime/cuda/device_api.h"
#include "runtime/cuda/nccl_api.h"

namespace runtime {
namespace cuda {

struct NcclRank {
  NcclComm world = nullptr;  // The world communicator (owned by the caller).
  int64_t rank = 0;          // This device's global id.
  int64_t world_size = 1;
};

class NcclCollectives : public Collectives {
 public:
  NcclCollectives(NcclApi& nccl, DeviceApi& device, NcclRank rank, double timeout_seconds)
      : nccl_(nccl), device_(device), rank_(rank), timeout_seconds_(timeout_seconds) {}
  // Destroys the communicators it split (not the world one).
  ~NcclCollectives() override;

  absl::Status AllReduce(const CollectiveOp& op, const void* in, void* out,
                         int64_t count) override;
  absl::Status AllGather(const CollectiveOp& op, const void* in, void* out,
                         int64_t count) override;
  absl::Status ReduceScatter(const CollectiveOp& op, const void* in, void* out,
                             int64_t count) override;
  absl::Status AllToAll(const CollectiveOp& op, const void* in, void* out,
                        int64_t count) override;
  absl::Status CollectivePermute(const CollectiveOp& op, const void* in, void* out, int64_t count,
                                 const std::vector<int64_t>& targets, int64_t source) override;

 private:
  absl::StatusOr<NcclComm> CommFor(const CollectiveOp& op);
  // Waits for the collective `what` of `op` issued on `comm` (`issued`: the issuing calls'
  // status) under the watchdog; errors name the instruction.
  absl::Status Finish(const CollectiveOp& op, NcclComm comm, absl::Status issued,
                      std::string_view what);

  NcclApi& nccl_;
  DeviceApi& device_;
  NcclRank rank_;
  double timeout_seconds_;
  std::map<std::vector<std::vector<int64_t>>, NcclComm> comms_;
};

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_NCCL_COLLECTIVES_H_

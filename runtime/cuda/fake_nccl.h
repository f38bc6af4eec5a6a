// A fake NcclApi for tests: records every call as one line of text, moves no data, and hands
// out numbered communicators ("world0", "split1", ...). With `hang` set, AsyncError keeps
// reporting nothing and the watchdog's stream never drains (see HangingDevice in the test), so
// timeouts can be exercised.
#ifndef RUNTIME_CUDA_FAKE_NCCL_H_
#define RUNTIME_CUDA_FAKE_NCCL_H_

#include <mutex>
#include <string>
#include <vector>

#include "runtime/cuda/nccl_api.h"

namespace runtime {
namespace cuda {

class FakeNccl : public NcclApi {
 public:
  // The calls so far, in order (all threads).
  std::vector<std::string> calls() const;
  // The calls whose text contains `comm` (a communicator's name) or no communicator at all.
  std::vector<std::string> CallsOn(const std::string& comm) const;
  // Makes the next call named `call` ("AllReduce", ...) fail with an NCCL-like error.
  void FailNext(const std::string& call);

  absl::StatusOr<NcclUniqueId> GetUniqueId() override;
  absl::StatusOr<NcclComm> CommInitRank(int world_size, const NcclUniqueId& id, int rank) override;
  absl::StatusOr<NcclComm> CommSplit(NcclComm comm, int color, int key) override;
  absl::Status CommAbort(NcclComm comm) override;
  absl::Status CommDestroy(NcclComm comm) override;
  absl::Status AsyncError(NcclComm comm) override;
  absl::Status AllReduce(const void* send, void* recv, int64_t count, int dtype, ReduceKind op,
                         NcclComm comm, void* stream) override;
  absl::Status AllGather(const void* send, void* recv, int64_t send_count, int dtype,
                         NcclComm comm, void* stream) override;
  absl::Status ReduceScatter(const void* send, void* recv, int64_t recv_count, int dtype,
                             ReduceKind op, NcclComm comm, void* stream) override;
  absl::Status Send(const void* send, int64_t count, int dtype, int peer, NcclComm comm,
                    void* stream) override;
  absl::Status Recv(void* recv, int64_t count, int dtype, int peer, NcclComm comm,
                    void* stream) override;
  absl::Status GroupStart() override;
  absl::Status GroupEnd() override;

 private:
  absl::Status Record(const std::string& call, const std::string& text);
  NcclComm NewComm(const std::string& name);
  std::string Name(NcclComm comm) const;

  mutable std::mutex mu_;
  std::vector<std::string> calls_;
  std::vector<std::string> comm_names_;  // Communicator k is the pointer value k + 1.
  std::string fail_next_;
};

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_FAKE_NCCL_H_

// Collectives for several logical devices in one process that share memory (one GPU, or the
// host device in tests), done by device-to-device copies and elementwise kernels instead of
// NCCL.
//
// Every device that reaches a collective publishes its input and output pointers in a shared
// CopyHub after finishing its pending work; when its group has arrived (each group of a
// collective meets on its own, as in XLA's runtimes, so groups that take different branches
// never wait for each other), each device fills its own output by reading its group's inputs
// (copies; reductions in group order with the elementwise kernel), waits for its stream, and
// leaves only when every member is done, so no input is overwritten while a peer reads it. A device
// that does not arrive within the timeout becomes an error naming the instruction; an error on any
// device aborts the hub.
#ifndef RUNTIME_CUDA_COPY_COLLECTIVES_H_
#define RUNTIME_CUDA_COPY_COLLECTIVES_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/cuda/collectives.h"
#include "runtime/cuda/device_api.h"

namespace runtime {
namespace cuda {

class CopyHub {
 public:
  struct Entry {
    const void* in = nullptr;
    void* out = nullptr;
  };
  CopyHub(int64_t num_devices, double timeout_seconds)
      : num_devices_(num_devices), timeout_seconds_(timeout_seconds) {}

  // Publishes `mine` for (`op`'s instruction, sequence, group), waits for `op.members` (every
  // device when empty), runs `work` on the entries (indexed by global id; only the members'
  // are set), and waits until every member finished `work`. Each group meets in its own round.
  absl::Status Exchange(const CollectiveOp& op, Entry mine,
                        const std::function<absl::Status(const std::vector<Entry>&)>& work);
  void Abort(const absl::Status& status);

 private:
  struct Round {
    std::vector<Entry> entries;
    std::vector<bool> present;
    int64_t arrived = 0, finished = 0, departed = 0;
  };
  const int64_t num_devices_;
  const double timeout_seconds_;
  std::mutex mu_;
  std::condition_variable cv_;
  // By (instruction id, sequence, the group's least member).
  std::map<std::tuple<int64_t, int64_t, int64_t>, Round> rounds_;
  absl::Status aborted_;
};

class CopyCollectives : public Collectives {
 public:
  CopyCollectives(CopyHub& hub, DeviceApi& device) : hub_(hub), device_(device) {}

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
  // Runs `work` inside a hub exchange, with the stream drained before and after.
  absl::Status Run(const CollectiveOp& op, const void* in, void* out,
                   const std::function<absl::Status(const std::vector<CopyHub::Entry>&)>& work);
  // out = reduction of `count` elements at byte offset `offset` of each group member's input.
  absl::Status ReduceInto(const CollectiveOp& op, const std::vector<CopyHub::Entry>& entries,
                          int64_t offset, void* out, int64_t count);

  CopyHub& hub_;
  DeviceApi& device_;
};

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_COPY_COLLECTIVES_H_

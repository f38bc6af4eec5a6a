// Where the collectives of N simulated devices (one thread each) meet.
//
// Every device that executes a collective instruction calls Rendezvous with the same key (the
// instruction and how many times this device has run it) and the devices it meets there: its
// group (every device when none is given). Groups meet apart, as in XLA's runtimes, so devices
// that take another branch or trip count (manual subgroups) are not waited for. When the
// whole group has arrived, each member's `compute` callback runs with the inputs indexed by
// device id (null for devices outside the group), and no member leaves before all callbacks
// are done, so inputs stay alive while they are read. A member that does not arrive within
// the timeout turns into an error naming the instruction and the missing devices, never a
// hang.
//
// In a multi-process job (a `transport`, collective_transport.h) only this process's devices
// arrive here; when a group has members in other processes, the member whose arrival completes
// the local part trades the local inputs for the others' through the transport, and then
// every local member computes on the whole group's inputs as above.
#ifndef RUNTIME_CPU_COLLECTIVE_HUB_H_
#define RUNTIME_CPU_COLLECTIVE_HUB_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hlo/ir/literal.h"
#include "runtime/cpu/collective_transport.h"

namespace runtime {

class CollectiveHub {
 public:
  // `num_devices` counts every device of the job; `transport` (not owned; null in one process)
  // reaches the devices of other processes.
  CollectiveHub(int64_t num_devices, double timeout_seconds,
                CollectiveTransport* transport = nullptr)
      : num_devices_(num_devices), timeout_seconds_(timeout_seconds), transport_(transport) {}

  int64_t num_devices() const { return num_devices_; }

  // See the file comment. `name` is the instruction's name for messages; `group` holds
  // `device` and the devices it meets (every device when empty), the same on each of them.
  // After an error (a timeout or a failing callback on any device) every later Rendezvous
  // fails fast.
  absl::Status Rendezvous(
      const CollectiveKey& key, int64_t device, std::string_view name, const hlo::Literal* input,
      const std::function<absl::Status(absl::Span<const hlo::Literal* const>)>& compute,
      absl::Span<const int64_t> group = {});

  // Makes every waiting and later Rendezvous fail with `status` (a device hit an error).
  void Abort(const absl::Status& status);

 private:
  struct Slot {
    std::vector<const hlo::Literal*> inputs;
    std::vector<hlo::Literal> remote;  // The inputs of other processes' members.
    int64_t expected = 0;              // The group's size in this process.
    bool exchanged = false;            // The remote inputs are in (or the exchange failed).
    int64_t arrived = 0;
    int64_t finished = 0;
    int64_t departed = 0;
  };

  bool IsLocal(int64_t device) const {
    return transport_ == nullptr || transport_->ProcessOf(device) == transport_->process();
  }

  // Waits until the remote members' inputs are in `slot`, fetching them when `exchanger`.
  absl::Status JoinExchange(const CollectiveKey& key, std::string_view name,
                            const std::vector<int64_t>& members, bool exchanger, Slot& slot,
                            std::unique_lock<std::mutex>& lock);

  const int64_t num_devices_;
  const double timeout_seconds_;
  CollectiveTransport* const transport_;
  std::mutex mu_;
  std::condition_variable cv_;
  // By key and the group's least device: each group of a collective meets in its own slot.
  std::map<std::pair<CollectiveKey, int64_t>, Slot> slots_;
  absl::Status aborted_;
};

}  // namespace runtime

#endif  // RUNTIME_CPU_COLLECTIVE_HUB_H_

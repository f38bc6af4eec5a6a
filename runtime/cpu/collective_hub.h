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

namespace runtime {

struct CollectiveKey {
  int64_t instruction_id = 0;
  int64_t sequence = 0;
  bool operator<(const CollectiveKey& o) const {
    return instruction_id != o.instruction_id ? instruction_id < o.instruction_id
                                              : sequence < o.sequence;
  }
};

class CollectiveHub {
 public:
  CollectiveHub(int64_t num_devices, double timeout_seconds)
      : num_devices_(num_devices), timeout_seconds_(timeout_seconds) {}

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
    int64_t expected = 0;  // The group's size.
    int64_t arrived = 0;
    int64_t finished = 0;
    int64_t departed = 0;
  };

  const int64_t num_devices_;
  const double timeout_seconds_;
  std::mutex mu_;
  std::condition_variable cv_;
  // By key and the group's least device: each group of a collective meets in its own slot.
  std::map<std::pair<CollectiveKey, int64_t>, Slot> slots_;
  absl::Status aborted_;
};

}  // namespace runtime

#endif  // RUNTIME_CPU_COLLECTIVE_HUB_H_

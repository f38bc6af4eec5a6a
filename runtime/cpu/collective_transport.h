// How a CollectiveHub reaches the devices that other processes run (a multi-process job:
// runtime/mpi). The hub stays the one place where a collective's inputs meet: the devices of
// this process arrive in its hub, then the processes holding the group trade their devices'
// inputs through the transport, and every member computes on the whole group's inputs exactly
// as in one process -- the same reduction order, so the same bits.
//
// Device d runs in process ProcessOf(d). The hub packs its local members' inputs (in device
// order) into one payload per collective; the transport only moves bytes, so this interface
// and the in-process executor do not depend on MPI.
#ifndef RUNTIME_CPU_COLLECTIVE_TRANSPORT_H_
#define RUNTIME_CPU_COLLECTIVE_TRANSPORT_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace runtime {

// One execution of one collective instruction: the instruction and how many times the device
// has run it.
struct CollectiveKey {
  int64_t instruction_id = 0;
  int64_t sequence = 0;
  bool operator<(const CollectiveKey& o) const {
    return instruction_id != o.instruction_id ? instruction_id < o.instruction_id
                                              : sequence < o.sequence;
  }
};

class CollectiveTransport {
 public:
  virtual ~CollectiveTransport() = default;

  // This process's index, and the process that runs `device`.
  virtual int process() const = 0;
  virtual int ProcessOf(int64_t device) const = 0;

  // Sends `payload` to every process of `peers` and returns the payload each of them sent
  // (in `peers` order), which must be `expected_bytes[i]` long. `key`, `leader` (the group's
  // least device) and `name` (the instruction, for messages) identify the collective on
  // every side. Fails -- naming the instruction and the processes that never answered --
  // when the exchange does not complete within the transport's timeout.
  virtual absl::StatusOr<std::vector<std::vector<uint8_t>>> Exchange(
      const CollectiveKey& key, int64_t leader, std::string_view name, absl::Span<const int> peers,
      std::vector<uint8_t> payload, absl::Span<const size_t> expected_bytes) = 0;
};

}  // namespace runtime

#endif  // RUNTIME_CPU_COLLECTIVE_TRANSPORT_H_

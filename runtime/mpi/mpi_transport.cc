// Each message is a header (instruction id, execution, group leader, sender) and the sender's
// packed inputs. Messages of one collective's group travel on one tag (the instruction and the
// group's least device); MPI keeps messages of one tag between two processes in order, and a
// group's executions follow each other, so the header's check never fails unless two groups'
// tags collide modulo MPI's tag bound -- then it is an error, not a wrong value.
#include "runtime/mpi/mpi_transport.h"

#include <cstring>
#include <memory>

#include "hlo/strings.h"

namespace runtime::mpi {
namespace {

constexpr size_t kHeaderWords = 4;
constexpr size_t kHeaderBytes = kHeaderWords * sizeof(int64_t);

}  // namespace

absl::StatusOr<std::vector<std::vector<uint8_t>>> MpiTransport::Exchange(
    const CollectiveKey& key, int64_t leader, std::string_view name, absl::Span<const int> peers,
    std::vector<uint8_t> payload, absl::Span<const size_t> expected_bytes) {
  const int64_t header[kHeaderWords] = {key.instruction_id, key.sequence, leader, process()};
  // Owned on the heap: left alive (leaked) when the exchange fails with requests still open,
  // which MPI may still write into until the job is aborted.
  auto sent = std::make_unique<std::vector<uint8_t>>(kHeaderBytes + payload.size());
  std::memcpy(sent->data(), header, kHeaderBytes);
  if (!payload.empty()) std::memcpy(sent->data() + kHeaderBytes, payload.data(), payload.size());
  auto received = std::make_unique<std::vector<std::vector<uint8_t>>>(peers.size());
  const int tag = static_cast<int>((key.instruction_id * num_devices_ + leader) %
                                   (static_cast<int64_t>(session_.tag_ub()) + 1));
  std::vector<MPI_Request> requests(2 * peers.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < peers.size(); ++i) {
    (*received)[i].resize(kHeaderBytes + expected_bytes[i]);
    if (sent->size() > (size_t{1} << 31) - 1 || (*received)[i].size() > (size_t{1} << 31) - 1) {
      return absl::ResourceExhaustedError(hlo::StrCat(
          "collective ", name, ": inputs over 2 GiB per process are not supported over MPI"));
    }
    const int code = session_.Call([&] {
      int c = MPI_Irecv((*received)[i].data(), static_cast<int>((*received)[i].size()), MPI_BYTE,
                        peers[i], tag, session_.collective_comm(), &requests[2 * i]);
      if (c != MPI_SUCCESS) return c;
      return MPI_Isend(sent->data(), static_cast<int>(sent->size()), MPI_BYTE, peers[i], tag,
                       session_.collective_comm(), &requests[2 * i + 1]);
    });
    if (int c = code; c != MPI_SUCCESS) return MpiStatus(c, hlo::StrCat("collective ", name));
  }
  if (absl::Status s = session_.WaitAll(requests, timeout_seconds_); !s.ok()) {
    sent.release();
    received.release();
    if (!absl::IsDeadlineExceeded(s)) return s;
    std::string missing;
    for (size_t i = 0; i < peers.size(); ++i) {
      const bool sent_nothing = requests[2 * i] != MPI_REQUEST_NULL;
      if (!sent_nothing && requests[2 * i + 1] == MPI_REQUEST_NULL) continue;
      const int64_t first = peers[i] * devices_per_process_;
      hlo::StrAppend(&missing, missing.empty() ? "" : ", ", "rank ", peers[i],
                     devices_per_process_ == 1 ? hlo::StrCat(" (device ", first, ")")
                                               : hlo::StrCat(" (devices ", first, "-",
                                                             first + devices_per_process_ - 1, ")"),
                     sent_nothing ? "" : " (took nothing)");
    }
    return absl::DeadlineExceededError(
        hlo::StrCat("collective ", name, " (execution ", key.sequence, "): rank ", process(),
                    " timed out after ", timeout_seconds_, " s (--collective-timeout) waiting for ",
                    missing, ", which died or hangs"));
  }
  std::vector<std::vector<uint8_t>> out(peers.size());
  for (size_t i = 0; i < peers.size(); ++i) {
    int64_t got[kHeaderWords];
    std::memcpy(got, (*received)[i].data(), kHeaderBytes);
    if (got[0] != header[0] || got[1] != header[1] || got[2] != header[2] || got[3] != peers[i]) {
      return absl::InternalError(hlo::StrCat("collective ", name, ": rank ", peers[i],
                                             " sent the inputs of another collective (instruction ",
                                             got[0], " execution ", got[1], ")"));
    }
    out[i].assign((*received)[i].begin() + kHeaderBytes, (*received)[i].end());
  }
  return out;
}

}  // namespace runtime::mpi

// Each process sends every peer of the group two messages on one tag (the instruction and the
// group's least device): a header (instruction id, execution, group leader, sender, payload
// bytes) and its packed inputs, in pieces (MpiSession::PostPieces), received straight into the
// returned buffers. MPI keeps messages of one tag between two processes in order, and a group's
// executions follow each other, so the header's check fails only when two groups' tags collide
// modulo MPI's tag bound or the peers disagree on the inputs' size -- an error, not a wrong
// value.
#include "runtime/mpi/mpi_transport.h"

#include <array>
#include <memory>

#include "hlo/strings.h"

namespace runtime::mpi {
namespace {

constexpr size_t kHeaderWords = 5;
using Header = std::array<int64_t, kHeaderWords>;

uint8_t* Bytes(Header& header) { return reinterpret_cast<uint8_t*>(header.data()); }

// What the exchange's open requests read or write: owned on the heap and left alive (leaked)
// when the exchange fails with requests still open, which MPI may still use until the job is
// aborted.
struct Buffers {
  std::vector<uint8_t> payload;
  Header header;
  std::vector<Header> headers;                 // Received, one per peer.
  std::vector<std::vector<uint8_t>> payloads;  // Received, one per peer.
};

// The requests of one peer: receives in [begin, sends), sends in [sends, end).
struct PeerRequests {
  size_t begin = 0, sends = 0, end = 0;
};

bool AnyOpen(const std::vector<MPI_Request>& requests, size_t begin, size_t end) {
  for (size_t r = begin; r < end; ++r) {
    if (requests[r] != MPI_REQUEST_NULL) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<uint8_t>>> MpiTransport::Exchange(
    const CollectiveKey& key, int64_t leader, std::string_view name, absl::Span<const int> peers,
    std::vector<uint8_t> payload, absl::Span<const size_t> expected_bytes) {
  auto buffers = std::make_unique<Buffers>();
  buffers->header = {key.instruction_id, key.sequence, leader, process(),
                     static_cast<int64_t>(payload.size())};
  buffers->payload = std::move(payload);
  buffers->headers.resize(peers.size());
  buffers->payloads.resize(peers.size());
  const int tag = static_cast<int>((key.instruction_id * num_devices_ + leader) %
                                   (static_cast<int64_t>(session_.tag_ub()) + 1));
  const MPI_Comm comm = session_.collective_comm();
  std::vector<MPI_Request> requests;
  std::vector<PeerRequests> by_peer(peers.size());
  for (size_t i = 0; i < peers.size(); ++i) {
    buffers->payloads[i].resize(expected_bytes[i]);
    PeerRequests& mine = by_peer[i];
    mine.begin = requests.size();
    int code = session_.PostPieces(false, comm, peers[i], tag, Bytes(buffers->headers[i]),
                                   sizeof(Header), &requests);
    if (code == MPI_SUCCESS) {
      code = session_.PostPieces(false, comm, peers[i], tag, buffers->payloads[i].data(),
                                 buffers->payloads[i].size(), &requests);
    }
    mine.sends = requests.size();
    if (code == MPI_SUCCESS) {
      code = session_.PostPieces(true, comm, peers[i], tag, Bytes(buffers->header), sizeof(Header),
                                 &requests);
    }
    if (code == MPI_SUCCESS) {
      code = session_.PostPieces(true, comm, peers[i], tag, buffers->payload.data(),
                                 buffers->payload.size(), &requests);
    }
    mine.end = requests.size();
    if (code != MPI_SUCCESS) {
      buffers.release();  // Earlier peers' requests are open.
      return MpiStatus(code, hlo::StrCat("collective ", name));
    }
  }
  if (absl::Status s = session_.WaitAll(requests, timeout_seconds_); !s.ok()) {
    buffers.release();
    if (!absl::IsDeadlineExceeded(s)) return s;
    std::string missing;
    PeerTimeout timeout{{}, std::string(name), key.sequence};
    for (size_t i = 0; i < peers.size(); ++i) {
      const bool sent_nothing = AnyOpen(requests, by_peer[i].begin, by_peer[i].sends);
      if (!sent_nothing && !AnyOpen(requests, by_peer[i].sends, by_peer[i].end)) continue;
      timeout.ranks.push_back(peers[i]);
      const int64_t first = peers[i] * devices_per_process_;
      hlo::StrAppend(&missing, missing.empty() ? "" : ", ", "rank ", peers[i],
                     devices_per_process_ == 1 ? hlo::StrCat(" (device ", first, ")")
                                               : hlo::StrCat(" (devices ", first, "-",
                                                             first + devices_per_process_ - 1, ")"),
                     sent_nothing ? "" : " (took nothing)");
    }
    RecordTimeout(std::move(timeout));
    return absl::DeadlineExceededError(
        hlo::StrCat("collective ", name, " (execution ", key.sequence, "): rank ", process(),
                    " timed out after ", timeout_seconds_, " s (--collective-timeout) waiting for ",
                    missing, ", which died or hangs"));
  }
  for (size_t i = 0; i < peers.size(); ++i) {
    const Header& got = buffers->headers[i];
    const Header& want = buffers->header;
    if (got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != peers[i]) {
      return absl::InternalError(hlo::StrCat("collective ", name, ": rank ", peers[i],
                                             " sent the inputs of another collective (instruction ",
                                             got[0], " execution ", got[1], ")"));
    }
    if (got[4] != static_cast<int64_t>(expected_bytes[i])) {
      return absl::InternalError(hlo::StrCat("collective ", name, ": rank ", peers[i], " sent ",
                                             got[4], " bytes of inputs, ", expected_bytes[i],
                                             " expected (the processes disagree on their shapes)"));
    }
  }
  return std::move(buffers->payloads);
}

std::optional<PeerTimeout> MpiTransport::first_timeout() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_timeout_;
}

void MpiTransport::RecordTimeout(PeerTimeout timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!first_timeout_) first_timeout_ = std::move(timeout);
}

}  // namespace runtime::mpi

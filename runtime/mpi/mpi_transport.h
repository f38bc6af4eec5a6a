// The CPU executor's CollectiveTransport over MPI: process p runs devices
// [p * devices_per_process, (p + 1) * devices_per_process). A collective's processes send each
// other their devices' inputs with nonblocking point-to-point messages (never MPI's reducing
// collectives: the hub reduces in the in-process order, so results are the same bits), and a
// process that does not answer within the collective timeout becomes an error naming it, its
// devices and the instruction.
#ifndef RUNTIME_MPI_MPI_TRANSPORT_H_
#define RUNTIME_MPI_MPI_TRANSPORT_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cpu/collective_transport.h"
#include "runtime/mpi/mpi_session.h"

namespace runtime::mpi {

// A collective that timed out waiting for other processes.
struct PeerTimeout {
  std::vector<int> ranks;  // The processes that sent or took nothing.
  std::string collective;  // The instruction, e.g. "%ar".
  int64_t execution = 0;   // Its execution count (a loop's collective runs once per trip).
};

class MpiTransport : public CollectiveTransport {
 public:
  MpiTransport(MpiSession& session, int64_t num_devices, int64_t devices_per_process,
               double timeout_seconds)
      : session_(session),
        num_devices_(num_devices),
        devices_per_process_(devices_per_process),
        timeout_seconds_(timeout_seconds) {}

  int process() const override { return session_.rank(); }
  int ProcessOf(int64_t device) const override {
    return static_cast<int>(device / devices_per_process_);
  }

  absl::StatusOr<std::vector<std::vector<uint8_t>>> Exchange(
      const CollectiveKey& key, int64_t leader, std::string_view name, absl::Span<const int> peers,
      std::vector<uint8_t> payload, absl::Span<const size_t> expected_bytes) override;

  // The first of this transport's collectives that timed out waiting for peers, if any.
  std::optional<PeerTimeout> first_timeout() const;

 private:
  void RecordTimeout(PeerTimeout timeout);

  mutable std::mutex mu_;
  std::optional<PeerTimeout> first_timeout_;
  MpiSession& session_;
  const int64_t num_devices_;
  const int64_t devices_per_process_;
  const double timeout_seconds_;
};

}  // namespace runtime::mpi

#endif  // RUNTIME_MPI_MPI_TRANSPORT_H_

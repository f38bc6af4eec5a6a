// One process's MPI: initialisation (MPI_THREAD_MULTIPLE: every device thread may trade a
// collective's inputs), point-to-point messages of any size, a barrier, and the abort that
// ends the whole job. Every wait polls nonblocking requests with short sleeps -- never MPI's
// busy-waiting blocking calls, which would take the cores the device threads compute on --
// against a deadline, so a peer that died or hangs becomes an error naming it instead of a
// hang.
#ifndef RUNTIME_MPI_MPI_SESSION_H_
#define RUNTIME_MPI_MPI_SESSION_H_

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace runtime::mpi {

class MpiSession {
 public:
  // MPI_Init_thread; fails when MPI cannot be called from several threads (at least
  // MPI_THREAD_SERIALIZED: every call goes through Call). One session per process.
  static absl::StatusOr<std::unique_ptr<MpiSession>> Init(int* argc, char*** argv);
  ~MpiSession();  // MPI_Finalize.
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int tag_ub() const { return tag_ub_; }
  // For the collectives' own messages: a duplicate of MPI_COMM_WORLD, so their tags never
  // meet the setup messages'.
  MPI_Comm collective_comm() const { return collectives_; }

  // Sends / receives `bytes` (any size: a length, then pieces of at most 1 GiB) on
  // MPI_COMM_WORLD. `timeout_seconds` <= 0 waits without a deadline; `what` names the message
  // in errors.
  absl::Status Send(int dest, int tag, const std::vector<uint8_t>& bytes, double timeout_seconds,
                    std::string_view what);
  absl::StatusOr<std::vector<uint8_t>> Receive(int source, int tag, double timeout_seconds,
                                               std::string_view what);

  // Posts a nonblocking send (`send`) or receive of `size` bytes at `data` with `peer` on
  // `comm`, in pieces of at most 1 GiB (MPI counts are ints), appending their requests.
  // Messages of one source, tag and communicator arrive in order, so the receiving side posts
  // the same pieces. Returns MPI's code (MPI_SUCCESS, or the first failing post's).
  int PostPieces(bool send, MPI_Comm comm, int peer, int tag, uint8_t* data, size_t size,
                 std::vector<MPI_Request>* requests);

  // Waits for every request of `requests` (made on this session's communicators); a finished
  // request becomes MPI_REQUEST_NULL. Fails after `timeout_seconds` (<= 0: never), leaving the
  // open requests as they are (their buffers must then stay alive).
  absl::Status WaitAll(std::vector<MPI_Request>& requests, double timeout_seconds);

  // An MPI_Barrier polled without a deadline.
  absl::Status Barrier();

  // Prints `message` on stderr and ends every process of the job with `code` (MPI_Abort).
  [[noreturn]] void Abort(std::string_view message, int code);

  // Runs an MPI call under the session's lock (MPI calls of several threads never overlap).
  int Call(const std::function<int()>& call);

 private:
  MpiSession() = default;

  int rank_ = 0;
  int size_ = 1;
  int tag_ub_ = 32767;
  MPI_Comm collectives_ = MPI_COMM_NULL;
  std::mutex mu_;
};

// An MPI error code as a status (its MPI_Error_string), or OK.
absl::Status MpiStatus(int code, std::string_view what);

}  // namespace runtime::mpi

#endif  // RUNTIME_MPI_MPI_SESSION_H_

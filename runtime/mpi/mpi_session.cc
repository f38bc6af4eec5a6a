#include "runtime/mpi/mpi_session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "hlo/strings.h"

namespace runtime::mpi {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kPieceBytes = size_t{1} << 30;  // MPI counts are ints.

}  // namespace

absl::Status MpiStatus(int code, std::string_view what) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return absl::InternalError(hlo::StrCat(what, ": MPI error: ", std::string(text, length)));
}

absl::StatusOr<std::unique_ptr<MpiSession>> MpiSession::Init(int* argc, char*** argv) {
  int provided = 0;
  if (int code = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided); code != 0) {
    return MpiStatus(code, "MPI_Init_thread");
  }
  std::unique_ptr<MpiSession> session(new MpiSession());
  if (provided < MPI_THREAD_SERIALIZED) {
    return absl::FailedPreconditionError(
        "this MPI library cannot be called from several threads (MPI_THREAD_SERIALIZED)");
  }
  // Errors come back as codes and become messages naming the peer, not MPI's own abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &session->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &session->size_);
  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found);
  if (found && tag_ub != nullptr) session->tag_ub_ = *tag_ub;
  MPI_Comm_dup(MPI_COMM_WORLD, &session->collectives_);
  MPI_Comm_set_errhandler(session->collectives_, MPI_ERRORS_RETURN);
  return session;
}

MpiSession::~MpiSession() {
  if (collectives_ != MPI_COMM_NULL) MPI_Comm_free(&collectives_);
  MPI_Finalize();
}

int MpiSession::Call(const std::function<int()>& call) {
  std::lock_guard<std::mutex> lock(mu_);
  return call();
}

absl::Status MpiSession::WaitAll(std::vector<MPI_Request>& requests, double timeout_seconds) {
  const auto start = Clock::now();
  auto pause = std::chrono::microseconds(20);
  while (true) {
    bool done = true;
    for (MPI_Request& request : requests) {
      if (request == MPI_REQUEST_NULL) continue;
      int finished = 0;
      MPI_Status status;
      const int code = Call([&] { return MPI_Test(&request, &finished, &status); });
      if (code != MPI_SUCCESS) return MpiStatus(code, "MPI_Test");
      done = done && finished;
    }
    if (done) return absl::OkStatus();
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (timeout_seconds > 0 && waited > timeout_seconds) {
      return absl::DeadlineExceededError(hlo::StrCat("waited ", timeout_seconds, " s"));
    }
    // Short sleeps while a message is expected soon, longer ones (up to 2 ms) after.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
}

int MpiSession::PostPieces(bool send, MPI_Comm comm, int peer, int tag, uint8_t* data, size_t size,
                           std::vector<MPI_Request>* requests) {
  int code = MPI_SUCCESS;
  for (size_t at = 0; code == MPI_SUCCESS && at < size; at += kPieceBytes) {
    requests->push_back(MPI_REQUEST_NULL);
    const int count = static_cast<int>(std::min(kPieceBytes, size - at));
    code = Call([&] {
      return send ? MPI_Isend(data + at, count, MPI_BYTE, peer, tag, comm, &requests->back())
                  : MPI_Irecv(data + at, count, MPI_BYTE, peer, tag, comm, &requests->back());
    });
  }
  return code;
}

absl::Status MpiSession::Send(int dest, int tag, const std::vector<uint8_t>& bytes,
                              double timeout_seconds, std::string_view what) {
  uint64_t length = bytes.size();
  std::vector<MPI_Request> requests;
  int code = PostPieces(true, MPI_COMM_WORLD, dest, tag, reinterpret_cast<uint8_t*>(&length),
                        sizeof(length), &requests);
  if (code == MPI_SUCCESS) {
    code = PostPieces(true, MPI_COMM_WORLD, dest, tag, const_cast<uint8_t*>(bytes.data()),
                      bytes.size(), &requests);
  }
  if (code != MPI_SUCCESS) return MpiStatus(code, what);
  if (absl::Status s = WaitAll(requests, timeout_seconds); !s.ok()) {
    return absl::DeadlineExceededError(
        hlo::StrCat(what, ": rank ", dest, " did not take it (", s.message(), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint8_t>> MpiSession::Receive(int source, int tag,
                                                         double timeout_seconds,
                                                         std::string_view what) {
  auto fail = [&](const absl::Status& s) {
    return absl::DeadlineExceededError(
        hlo::StrCat(what, ": nothing from rank ", source, " (", s.message(), ")"));
  };
  uint64_t length = 0;
  std::vector<MPI_Request> requests;
  int code = PostPieces(false, MPI_COMM_WORLD, source, tag, reinterpret_cast<uint8_t*>(&length),
                        sizeof(length), &requests);
  if (code != MPI_SUCCESS) return MpiStatus(code, what);
  if (absl::Status s = WaitAll(requests, timeout_seconds); !s.ok()) return fail(s);
  std::vector<uint8_t> bytes(length);
  requests.clear();
  code = PostPieces(false, MPI_COMM_WORLD, source, tag, bytes.data(), bytes.size(), &requests);
  if (code != MPI_SUCCESS) return MpiStatus(code, what);
  if (absl::Status s = WaitAll(requests, timeout_seconds); !s.ok()) return fail(s);
  return bytes;
}

absl::Status MpiSession::Barrier() {
  std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
  if (int code = Call([&] { return MPI_Ibarrier(MPI_COMM_WORLD, &requests[0]); }); code != 0) {
    return MpiStatus(code, "MPI_Ibarrier");
  }
  return WaitAll(requests, 0);
}

void MpiSession::Abort(std::string_view message, int code) {
  std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; in case it does.
}

}  // namespace runtime::mpi

// spmd-run's multi-process mode (`--mpi`, or started by mpirun / srun with several processes):
// rank 0 does everything spmd-run does in one process -- reads or draws the inputs, shards
// them, runs the reference, compares, writes the outputs -- except running the devices: it
// sends every rank the program (as HLO text, which every rank, rank 0 included, parses the
// same way, so instruction ids and collective keys agree) and its devices' arguments, runs its
// own devices, and gathers the others' results. The other ranks need no files; they serve
// that one request (Serve). Collectives go through runtime/mpi's transport.
// With --per-process-io (RunPerProcess) rank 0 sends only the program and where the files are:
// every rank reads its own devices' arguments and writes its own devices' results
// (tools/spmd_run_io.h), so no process holds more than its devices' values.
#ifndef TOOLS_SPMD_RUN_MPI_H_
#define TOOLS_SPMD_RUN_MPI_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/literal.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/mpi/job_failure.h"
#include "runtime/mpi/mpi_session.h"
#include "runtime/mpi/mpi_transport.h"
#include "tools/spmd_run_io.h"

namespace tools {

class MpiJob {
 public:
  // Starts MPI when `requested` (--mpi) or a launcher's environment names more than one
  // process (runtime/mpi/launcher_env.h); nullptr when neither. `devices_per_process` 0: the
  // device count divided by the number of processes.
  // `serve`: the other ranks serve rank 0's Run (the CPU executor); without it every rank runs
  // spmd-run itself, for its own device (the CUDA executor, with ShareBytes for NCCL's id).
  static absl::StatusOr<std::unique_ptr<MpiJob>> Start(bool requested, int64_t devices_per_process,
                                                       double collective_timeout_seconds,
                                                       bool serve = true);

  ~MpiJob() { StopWatch(); }

  int rank() const { return session_->rank(); }
  int size() const { return session_->size(); }

  // Rank 0: runs `module` on its num_partitions x num_replicas devices across the job;
  // `arguments` holds every device's (in device order). Returns every device's result. A
  // device's error is returned; Finish then ends the job.
  absl::StatusOr<std::vector<hlo::Literal>> Run(const hlo::HloModule& module,
                                                int64_t num_partitions, int64_t num_replicas,
                                                std::vector<std::vector<hlo::Literal>> arguments);

  // Rank 0, --per-process-io: runs `module` on its num_partitions x num_replicas devices
  // across the job, every rank reading its devices' arguments and writing (or printing) its
  // devices' results as `files` says. The ranks agree twice: every one read its arguments
  // before any runs, and every one staged its results before any is renamed into place, so an
  // input or output error (named with its rank) leaves no outputs and ends no process
  // abnormally. A failed run is returned; Finish then ends the job.
  absl::Status RunPerProcess(const hlo::HloModule& module, int64_t num_partitions,
                             int64_t num_replicas, const RunFiles& files);

  // Devices per process for a program on `num_devices`: --devices-per-process, else
  // `num_devices` over the number of processes; an error when they do not cover the devices.
  absl::StatusOr<int64_t> DevicesPerProcess(int64_t num_devices) const;

  // Rank 0's `bytes` on every rank (rank 0 passes them, the others anything).
  absl::StatusOr<std::vector<uint8_t>> ShareBytes(std::vector<uint8_t> bytes);

  // The local rank the launcher gave this process (its GPU), else the rank.
  int local_rank() const { return local_rank_; }

  // The other ranks: runs what rank 0 sends; returns the exit code (a failure aborts the job).
  int Serve();

  // Rank 0 at the end: releases ranks still waiting for a program, or ends the job after a
  // failed run (its error already printed) with one line naming the rank that failed first
  // (runtime/mpi/job_failure.h) and exit code 1, and waits for every rank. Returns `code`.
  int Finish(int code);

 private:
  MpiJob(std::unique_ptr<runtime::mpi::MpiSession> session, int64_t devices_per_process,
         double timeout, bool serve, int local_rank)
      : session_(std::move(session)),
        devices_per_process_(devices_per_process),
        timeout_(timeout),
        serve_(serve),
        local_rank_(local_rank) {}

  // Runs this rank's devices of `module`; `arguments` are theirs.
  absl::StatusOr<std::vector<hlo::Literal>> RunLocal(
      const hlo::HloModule& module, int64_t num_partitions, int64_t num_replicas,
      int64_t per_process, std::vector<std::vector<hlo::Literal>> arguments);

  // Sends every other rank the program message `text`; returns the module every rank parses.
  absl::StatusOr<hlo::ParsedModule> SendProgram(const std::string& text);

  // A rank other than 0 without --per-process-io: receives its devices' arguments, runs them
  // and sends rank 0 their results.
  absl::Status ServeArguments(const hlo::HloModule& module, int64_t num_partitions,
                              int64_t num_replicas, int64_t per_process);

  // --per-process-io on every rank: reads this rank's devices' arguments, runs them, and
  // writes their results (RunPerProcess). A failed run is returned with `run_failed_` set.
  absl::Status RunOwnFiles(const hlo::HloModule& module, int64_t num_partitions,
                           int64_t num_replicas, int64_t per_process, const RunFiles& files);

  // Every rank's `mine` at `step`: rank 0 collects them and sends every rank the first
  // failure in rank order (its message followed by the rank), or OK; all return that.
  absl::Status Agree(const absl::Status& mine, std::string_view step);

  // The failure report of this rank's failed run, whose error is `error`.
  runtime::mpi::FailureReport ReportOf(const absl::Status& error) const;
  // A rank other than 0 whose run failed: prints `error`, reports it to rank 0, which ends the
  // job naming the rank that failed first, and ends the job itself if rank 0 has not within a
  // grace period (rank 0 may be the one that died or hangs).
  [[noreturn]] void FailRun(const absl::Status& error);
  // Rank 0: from the program's start to Finish, a thread (Watch) receives the other ranks'
  // failure reports and ends the job 200 ms after the first (EndJob: the first failure's line,
  // MPI_Abort with code 1).
  void StartWatch();
  void StopWatch();
  void Watch();
  [[noreturn]] void EndJob();

  std::unique_ptr<runtime::mpi::MpiSession> session_;
  const int64_t devices_per_process_;
  const double timeout_;
  const bool serve_;
  const int local_rank_;
  bool program_sent_ = false;
  bool run_failed_ = false;
  int64_t per_process_ = 1;  // Devices per process of the program being run.
  absl::Status run_error_;   // The error of this rank's failed run.
  std::optional<runtime::mpi::PeerTimeout> timeout_seen_;  // Its first collective timeout.
  std::mutex reports_mu_;
  std::vector<runtime::mpi::FailureReport> reports_;  // Rank 0: in the order they came.
  std::thread watcher_;
  std::atomic<bool> stop_watch_{false};
  std::atomic<bool> ending_{false};
};

}  // namespace tools

#endif  // TOOLS_SPMD_RUN_MPI_H_

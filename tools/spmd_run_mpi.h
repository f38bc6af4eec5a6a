// spmd-run's multi-process mode (`--mpi`, or started by mpirun / srun with several processes):
// rank 0 does everything spmd-run does in one process -- reads or draws the inputs, shards
// them, runs the reference, compares, writes the outputs -- except running the devices: it
// sends every rank the program (as HLO text, which every rank, rank 0 included, parses the
// same way, so instruction ids and collective keys agree) and its devices' arguments, runs its
// own devices, and gathers the others' results. The other ranks need no files; they serve
// that one request (Serve). Collectives go through runtime/mpi's transport.
#ifndef TOOLS_SPMD_RUN_MPI_H_
#define TOOLS_SPMD_RUN_MPI_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/literal.h"
#include "runtime/mpi/mpi_session.h"

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

  int rank() const { return session_->rank(); }
  int size() const { return session_->size(); }

  // Rank 0: runs `module` on its num_partitions x num_replicas devices across the job;
  // `arguments` holds every device's (in device order). Returns every device's result. A
  // device's error is returned; Finish then ends the job.
  absl::StatusOr<std::vector<hlo::Literal>> Run(const hlo::HloModule& module,
                                                int64_t num_partitions, int64_t num_replicas,
                                                std::vector<std::vector<hlo::Literal>> arguments);

  // Rank 0's `bytes` on every rank (rank 0 passes them, the others anything).
  absl::StatusOr<std::vector<uint8_t>> ShareBytes(std::vector<uint8_t> bytes);

  // The local rank the launcher gave this process (its GPU), else the rank.
  int local_rank() const { return local_rank_; }

  // The other ranks: runs what rank 0 sends; returns the exit code (a failure aborts the job).
  int Serve();

  // Rank 0 at the end: releases ranks still waiting for a program, or aborts the job after a
  // failed run (its error already printed), and waits for every rank. Returns `code`.
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

  std::unique_ptr<runtime::mpi::MpiSession> session_;
  const int64_t devices_per_process_;
  const double timeout_;
  const bool serve_;
  const int local_rank_;
  bool program_sent_ = false;
  bool run_failed_ = false;
};

}  // namespace tools

#endif  // TOOLS_SPMD_RUN_MPI_H_

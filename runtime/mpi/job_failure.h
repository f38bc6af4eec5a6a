// Which process of a failed MPI job failed first. A process whose run fails sends rank 0 a
// FailureReport -- its own error, or the peers it timed out waiting for at a collective -- and
// rank 0 ends the job with one line naming the first failure (FirstFailureLine). The other
// processes' own lines may blame whoever they waited for: a rank waiting for a hung rank, or a
// hung rank that resumes only to find the others gone.
#ifndef RUNTIME_MPI_JOB_FAILURE_H_
#define RUNTIME_MPI_JOB_FAILURE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace runtime::mpi {

struct FailureReport {
  int rank = 0;             // The reporting process.
  std::vector<int> blamed;  // Empty: its own error; else the peers it timed out waiting for,
  std::string collective;   // at this collective
  int64_t execution = 0;    // and execution,
  double timeout_seconds = 0;  // after this long.
  std::string message;      // Its error.
};

std::string EncodeFailureReport(const FailureReport& report);
absl::StatusOr<FailureReport> DecodeFailureReport(std::string_view bytes);

// The job's outcome from `reports` (not empty, in the order rank 0 learnt of them), for a job
// whose process p runs devices [p * `devices_per_process`, (p + 1) * `devices_per_process`):
// the earliest own error is the first failure ("rank 1 (device 1) failed first: MESSAGE");
// without one, the first peer blamed by the earliest timeout ("rank 2 (device 2) failed
// first: it did not answer at collective %ar (execution 17) within 4 s
// (--collective-timeout); ranks 0, 1, 3 waited for it").
std::string FirstFailureLine(const std::vector<FailureReport>& reports,
                             int64_t devices_per_process);

}  // namespace runtime::mpi

#endif  // RUNTIME_MPI_JOB_FAILURE_H_

// Sharing the ncclUniqueId between processes through a file on a path every process can read
// (a shared filesystem across machines): rank 0 creates the id and writes it atomically
// (temporary file + rename); the other ranks poll until the file appears. Remove or change the
// path between jobs: a stale file from an earlier job would be read as this job's id.
#ifndef RUNTIME_CUDA_NCCL_ID_FILE_H_
#define RUNTIME_CUDA_NCCL_ID_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "runtime/cuda/nccl_api.h"

namespace runtime {
namespace cuda {

absl::Status WriteNcclIdFile(const std::string& path, const NcclUniqueId& id);

// Waits up to `timeout_seconds` for `path` to hold a whole id.
absl::StatusOr<NcclUniqueId> ReadNcclIdFile(const std::string& path, double timeout_seconds);

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_NCCL_ID_FILE_H_

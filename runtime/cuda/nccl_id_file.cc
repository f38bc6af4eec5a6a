// The id file holds the 128 raw bytes of the ncclUniqueId, nothing else.
#include "runtime/cuda/nccl_id_file.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "hlo/strings.h"

namespace runtime {
namespace cuda {

absl::Status WriteNcclIdFile(const std::string& path, const NcclUniqueId& id) {
  const std::string tmp = hlo::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(id.bytes, sizeof(id.bytes));
    if (!out.good()) return absl::PermissionDeniedError(hlo::StrCat(tmp, ": cannot write the NCCL id"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::PermissionDeniedError(hlo::StrCat(path, ": cannot publish the NCCL id"));
  }
  return absl::OkStatus();
}

absl::StatusOr<NcclUniqueId> ReadNcclIdFile(const std::string& path, double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_seconds));
  while (true) {
    std::ifstream in(path, std::ios::binary);
    NcclUniqueId id;
    if (in.read(id.bytes, sizeof(id.bytes)) && in.gcount() == sizeof(id.bytes)) return id;
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(hlo::StrCat(
          path, ": no NCCL id after ", timeout_seconds, " s (is rank 0 running, and is the path "
          "on a filesystem every process sees?)"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace cuda
}  // namespace runtime

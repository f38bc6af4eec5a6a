// Differential testing of the CUDA executor against the CPU executor: the same module and
// seeded random arguments on both, every output leaf compared with the CPU verifier's
// per-type tolerance. The CUDA side runs on the host device (host twins of the kernels) unless
// the caller passes GPU options.
#ifndef RUNTIME_CUDA_TESTING_DIFFERENTIAL_TEST_UTIL_H_
#define RUNTIME_CUDA_TESTING_DIFFERENTIAL_TEST_UTIL_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "hlo/ir/hlo_module.h"
#include "runtime/cuda/cuda_runner.h"

namespace runtime {
namespace cuda {

// Parses and verifies `text`.
absl::StatusOr<std::unique_ptr<hlo::HloModule>> ParseForTest(const std::string& text);

// Options that run every logical device on its own host device with copy collectives.
CudaRunOptions HostOptions(int64_t num_partitions);

// Runs `module` on `options`' devices and on the CPU executor (same per-device random
// arguments); OK when every device's result matches (within each type's default tolerance, or
// bit for bit when `bitwise`), else a description of the first difference.
absl::Status CompareWithCpu(const hlo::HloModule& module, const CudaRunOptions& options,
                            uint64_t seed = 1, bool bitwise = false);

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_TESTING_DIFFERENTIAL_TEST_UTIL_H_

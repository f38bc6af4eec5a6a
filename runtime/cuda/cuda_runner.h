// Running a module on several devices with the CUDA executor.
//
// One process, all local GPUs: RunOnCudaDevices starts a thread per logical device. With at
// least as many GPUs as devices, device d runs on GPU d and collectives go over NCCL (a world
// communicator from one ncclUniqueId, split per replica grouping). With fewer GPUs (even one),
// every logical device runs on GPU 0, each with its own stream, and collectives are
// device-to-device copies (CopyCollectives). Tests pass `make_device` (the host device) and a
// fake NcclApi to run all of this without a GPU; SPMD_CUDA_DEVICE=host in the environment does
// the same for callers that pass no `make_device` (spmd-run's end-to-end tests).
//
// Many processes (one per GPU, any machines): RunDistributed runs global device RANK on GPU
// LOCAL_RANK of a WORLD_SIZE-device job (environment variables set by mpirun, torchrun-style
// launchers or by hand); rank 0 publishes the ncclUniqueId in a file every rank can read
// (nccl_id_file.h, docs/cuda.md), or -- under spmd-run --mpi -- sends it over MPI (share_id).
#ifndef RUNTIME_CUDA_CUDA_RUNNER_H_
#define RUNTIME_CUDA_CUDA_RUNNER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/literal.h"
#include "runtime/cuda/device_api.h"
#include "runtime/cuda/nccl_api.h"

namespace runtime {
namespace cuda {

enum class CollectiveBackend { kAuto, kNccl, kCopies };

struct CudaRunOptions {
  int64_t num_partitions = 1;
  int64_t num_replicas = 1;
  double collective_timeout_seconds = 60.0;
  // kAuto: NCCL when there are at least as many GPUs as devices, else copies.
  CollectiveBackend collectives = CollectiveBackend::kAuto;
  // The device of logical device `d` (default: a CudaDevice on the GPU chosen above).
  std::function<absl::StatusOr<std::unique_ptr<DeviceApi>>(int64_t d)> make_device;
  // The NCCL to use (default: libnccl).
  NcclApi* nccl = nullptr;
};

// `arguments[d]`: device d's entry arguments. Returns one result per device, in device order,
// or the first device's error (the others are stopped at their next collective).
absl::StatusOr<std::vector<hlo::Literal>> RunOnCudaDevices(
    const hlo::HloModule& module, const std::vector<std::vector<hlo::Literal>>& arguments,
    const CudaRunOptions& options);

// The multi-process launch environment.
struct DistributedEnv {
  int64_t rank = 0;
  int64_t world_size = 1;
  int64_t local_rank = 0;
  std::string id_file;  // Where rank 0 publishes the ncclUniqueId.
  // When set (an MPI job: spmd-run --mpi), the ncclUniqueId travels through it instead of
  // id_file: rank 0 passes its id and gets it back, the others pass nullopt and get rank 0's.
  std::function<absl::StatusOr<NcclUniqueId>(std::optional<NcclUniqueId>)> share_id;
};

// RANK, WORLD_SIZE, LOCAL_RANK (default: RANK) and SPMD_NCCL_ID_FILE from the environment;
// nullopt when RANK and WORLD_SIZE are unset; an error when they are malformed or the id file
// is missing.
absl::StatusOr<std::optional<DistributedEnv>> DistributedEnvFromEnvironment();

// Runs this process's device (global id env.rank) on GPU env.local_rank with NCCL over all
// processes; `arguments` are this device's. options.num_partitions x num_replicas must equal
// env.world_size.
absl::StatusOr<hlo::Literal> RunDistributed(const hlo::HloModule& module,
                                            const std::vector<hlo::Literal>& arguments,
                                            const DistributedEnv& env,
                                            const CudaRunOptions& options);

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_CUDA_RUNNER_H_

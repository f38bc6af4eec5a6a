// Thread per logical device; NCCL world set up by rank 0's unique id (in-process: shared in
// memory; across processes: through the id file); copy collectives through one CopyHub.
#include "runtime/cuda/cuda_runner.h"

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cuda/copy_collectives.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/executor.h"
#include "runtime/cuda/host_device.h"
#include "runtime/cuda/nccl_collectives.h"
#include "runtime/cuda/nccl_id_file.h"

namespace runtime {
namespace cuda {
namespace {

DeviceContext ContextOf(int64_t d, const CudaRunOptions& options) {
  DeviceContext c;
  c.partition_id = d % options.num_partitions;
  c.replica_id = d / options.num_partitions;
  c.num_partitions = options.num_partitions;
  c.num_replicas = options.num_replicas;
  return c;
}

// One device's run with NCCL: world communicator, executor, result.
absl::StatusOr<hlo::Literal> RunNcclDevice(const hlo::HloModule& module,
                                           const std::vector<hlo::Literal>& args, int64_t d,
                                           int64_t world, const NcclUniqueId& id,
                                           DeviceApi& device, NcclApi& nccl,
                                           const CudaRunOptions& options) {
  ASSIGN_OR_RETURN(NcclComm comm, nccl.CommInitRank(static_cast<int>(world), id, static_cast<int>(d)));
  absl::StatusOr<hlo::Literal> result;
  {
    NcclCollectives collectives(nccl, device, {comm, d, world}, options.collective_timeout_seconds);
    CudaExecutor executor(module, device, &collectives, ContextOf(d, options));
    result = executor.RunEntry(args);
  }
  if (result.ok()) {
    RETURN_IF_ERROR(nccl.CommDestroy(comm));
  } else {
    nccl.CommAbort(comm).IgnoreError();
  }
  return result;
}

absl::StatusOr<int64_t> EnvInt(const char* name, std::optional<int64_t> fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    if (fallback) return *fallback;
    return absl::InvalidArgumentError(hlo::StrCat(name, " is not set"));
  }
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (*end != '\0' || x < 0) {
    return absl::InvalidArgumentError(hlo::StrCat(name, "=", v, " is not a non-negative integer"));
  }
  return static_cast<int64_t>(x);
}

// SPMD_CUDA_DEVICE=host: every logical device on the host device (the kernels' host twins),
// so the whole CUDA path can be exercised without a GPU.
bool HostDeviceRequested() {
  const char* v = std::getenv("SPMD_CUDA_DEVICE");
  return v != nullptr && std::string(v) == "host";
}

}  // namespace

absl::StatusOr<std::vector<hlo::Literal>> RunOnCudaDevices(
    const hlo::HloModule& module, const std::vector<std::vector<hlo::Literal>>& arguments,
    const CudaRunOptions& options) {
  const int64_t n = options.num_partitions * options.num_replicas;
  if (n < 1) return absl::InvalidArgumentError("device counts must be at least 1");
  if (static_cast<int64_t>(arguments.size()) != n) {
    return absl::InvalidArgumentError(
        hlo::StrCat("expected arguments for ", n, " devices, got ", arguments.size()));
  }
  CollectiveBackend backend = options.collectives;
  std::function<absl::StatusOr<std::unique_ptr<DeviceApi>>(int64_t)> make_device =
      options.make_device;
  if (!make_device && HostDeviceRequested()) {
    make_device = [](int64_t) -> absl::StatusOr<std::unique_ptr<DeviceApi>> {
      return MakeHostDevice();
    };
  }
  if (!make_device) {
    std::string reason;
    const int gpus = CudaDeviceCount(&reason);
    if (gpus == 0) return absl::FailedPreconditionError(hlo::StrCat("no usable GPU: ", reason));
    if (backend == CollectiveBackend::kAuto) {
      backend = gpus >= n ? CollectiveBackend::kNccl : CollectiveBackend::kCopies;
    }
    if (backend == CollectiveBackend::kNccl && gpus < n) {
      return absl::FailedPreconditionError(
          hlo::StrCat("NCCL needs one GPU per device: ", n, " devices, ", gpus, " GPUs"));
    }
    const bool one_gpu = backend == CollectiveBackend::kCopies;
    make_device = [one_gpu](int64_t d) { return MakeCudaDevice(one_gpu ? 0 : static_cast<int>(d)); };
  } else if (backend == CollectiveBackend::kAuto) {
    backend = CollectiveBackend::kCopies;
  }
  std::unique_ptr<NcclApi> real_nccl;
  NcclApi* nccl = options.nccl;
  NcclUniqueId id;
  if (backend == CollectiveBackend::kNccl) {
    if (nccl == nullptr) {
      real_nccl = MakeRealNccl();
      nccl = real_nccl.get();
    }
    ASSIGN_OR_RETURN(id, nccl->GetUniqueId());
  }
  CopyHub hub(n, options.collective_timeout_seconds);
  std::vector<std::optional<hlo::Literal>> results(n);
  std::mutex mu;
  absl::Status first_error;
  // Every device is created before any joins the NCCL world: ncclCommInitRank blocks until all
  // ranks join, so a device that failed to start must stop the others before they call it.
  std::condition_variable started_cv;
  int64_t started = 0;
  bool start_failed = false;
  auto all_started = [&](bool ok) {
    std::unique_lock<std::mutex> lock(mu);
    start_failed |= !ok;
    ++started;
    started_cv.notify_all();
    started_cv.wait(lock, [&] { return started == n; });
    return !start_failed;
  };
  auto run_device = [&](int64_t d) {
    absl::StatusOr<hlo::Literal> result = [&]() -> absl::StatusOr<hlo::Literal> {
      absl::StatusOr<std::unique_ptr<DeviceApi>> made = make_device(d);
      if (!all_started(made.ok()) && made.ok()) {
        return absl::AbortedError("another device failed to start");
      }
      ASSIGN_OR_RETURN(std::unique_ptr<DeviceApi> device, std::move(made));
      if (backend == CollectiveBackend::kNccl) {
        return RunNcclDevice(module, arguments[d], d, n, id, *device, *nccl, options);
      }
      CopyCollectives collectives(hub, *device);
      CudaExecutor executor(module, *device, &collectives, ContextOf(d, options));
      return executor.RunEntry(arguments[d]);
    }();
    if (result.ok()) {
      results[d] = *std::move(result);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      if (first_error.ok() || absl::IsAborted(first_error)) first_error = result.status();
    }
    hub.Abort(result.status());
  };
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < n; ++d) threads.emplace_back(run_device, d);
  for (std::thread& t : threads) t.join();
  if (!first_error.ok()) return first_error;
  std::vector<hlo::Literal> out;
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

absl::StatusOr<std::optional<DistributedEnv>> DistributedEnvFromEnvironment() {
  if (std::getenv("RANK") == nullptr && std::getenv("WORLD_SIZE") == nullptr) return std::nullopt;
  DistributedEnv env;
  ASSIGN_OR_RETURN(env.rank, EnvInt("RANK", std::nullopt));
  ASSIGN_OR_RETURN(env.world_size, EnvInt("WORLD_SIZE", std::nullopt));
  ASSIGN_OR_RETURN(env.local_rank, EnvInt("LOCAL_RANK", env.rank));
  if (env.rank >= env.world_size) {
    return absl::InvalidArgumentError(hlo::StrCat("RANK=", env.rank, " is not below WORLD_SIZE=",
                                                  env.world_size));
  }
  const char* file = std::getenv("SPMD_NCCL_ID_FILE");
  if (file == nullptr || *file == '\0') {
    return absl::InvalidArgumentError(
        "SPMD_NCCL_ID_FILE must name a file on a path every process can read (docs/cuda.md)");
  }
  env.id_file = file;
  return env;
}

absl::StatusOr<hlo::Literal> RunDistributed(const hlo::HloModule& module,
                                            const std::vector<hlo::Literal>& arguments,
                                            const DistributedEnv& env,
                                            const CudaRunOptions& options) {
  if (options.num_partitions * options.num_replicas != env.world_size) {
    return absl::InvalidArgumentError(hlo::StrCat(
        "the program runs on ", options.num_partitions * options.num_replicas,
        " devices but WORLD_SIZE=", env.world_size));
  }
  std::unique_ptr<NcclApi> real_nccl;
  NcclApi* nccl = options.nccl;
  if (nccl == nullptr) {
    real_nccl = MakeRealNccl();
    nccl = real_nccl.get();
  }
  NcclUniqueId id;
  if (env.share_id) {
    std::optional<NcclUniqueId> mine;
    if (env.rank == 0) {
      ASSIGN_OR_RETURN(mine, nccl->GetUniqueId());
    }
    ASSIGN_OR_RETURN(id, env.share_id(mine));
  } else if (env.rank == 0) {
    ASSIGN_OR_RETURN(id, nccl->GetUniqueId());
    RETURN_IF_ERROR(WriteNcclIdFile(env.id_file, id));
  } else {
    ASSIGN_OR_RETURN(id, ReadNcclIdFile(env.id_file, options.collective_timeout_seconds));
  }
  std::unique_ptr<DeviceApi> device;
  if (options.make_device) {
    ASSIGN_OR_RETURN(device, options.make_device(env.rank));
  } else {
    ASSIGN_OR_RETURN(device, MakeCudaDevice(static_cast<int>(env.local_rank)));
  }
  return RunNcclDevice(module, arguments, env.rank, env.world_size, id, *device, *nccl, options);
}

}  // namespace cuda
}  // namespace runtime

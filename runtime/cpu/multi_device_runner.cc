// One thread per device; each runs Evaluator::RunEntry and records its result. The first
// failing device records its status and aborts the hub, which makes every waiting and later
// rendezvous fail fast with that same status.
#include "runtime/cpu/multi_device_runner.h"

#include <mutex>
#include <new>
#include <optional>
#include <system_error>
#include <thread>

#include "hlo/large_stack.h"
#include "hlo/strings.h"
#include "runtime/cpu/collective_hub.h"
#include "runtime/cpu/evaluator.h"
#include "runtime/cpu/host_malloc.h"
#include "runtime/cpu/ops/gemm.h"

namespace runtime {
namespace {

// Each simulated device's stack: nested calls recurse once per level in the evaluator.
constexpr size_t kDeviceStackBytes = size_t{256} << 20;

}  // namespace

absl::StatusOr<std::vector<hlo::Literal>> RunOnDevices(
    const hlo::HloModule& module, std::vector<std::vector<hlo::Literal>> arguments,
    const MultiDeviceOptions& options) {
  if (options.num_partitions < 1 || options.num_replicas < 1) {
    return absl::InvalidArgumentError("device counts must be at least 1");
  }
  const int64_t total_devices = options.num_partitions * options.num_replicas;
  const int64_t num_devices = options.local_devices > 0 ? options.local_devices : total_devices;
  const int64_t first = options.first_device;
  if (first < 0 || first + num_devices > total_devices) {
    return absl::InvalidArgumentError(hlo::StrCat("devices ", first, "..", first + num_devices - 1,
                                                  " are not all among ", total_devices));
  }
  if (static_cast<int64_t>(arguments.size()) != num_devices) {
    return absl::InvalidArgumentError(
        hlo::StrCat("expected arguments for ", num_devices, " devices, got ", arguments.size()));
  }
  TuneMallocForExecutor();  // Reuse freed result buffers instead of re-faulting new ones.
  CollectiveHub hub(total_devices, options.collective_timeout_seconds, options.transport);
  std::vector<std::optional<hlo::Literal>> results(num_devices);
  std::mutex mu;
  absl::Status first_error;
  auto run_device = [&](int64_t k) {  // The k-th local device, global id d.
    const int64_t d = first + k;
    DeviceContext context;
    context.partition_id = d % options.num_partitions;
    context.replica_id = d / options.num_partitions;
    context.num_partitions = options.num_partitions;
    context.num_replicas = options.num_replicas;
    context.hub = &hub;
    absl::StatusOr<hlo::Literal> result = absl::InternalError("not run");
    try {
      Evaluator evaluator(module, context);
      result = evaluator.RunEntry(std::move(arguments[k]));
    } catch (const std::bad_alloc&) {
      // An allocation failure in a device thread would otherwise abort the whole process.
      result = absl::ResourceExhaustedError(hlo::StrCat(
          "device ", d, " ran out of host memory while simulating the module (lower the "
          "problem size, or run fewer devices)"));
    }
    if (result.ok()) {
      results[k] = *std::move(result);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      if (first_error.ok()) first_error = result.status();
    }
    hub.Abort(result.status());
  };
  ScopedDeviceThreads claim(num_devices);  // Large GEMMs borrow only the cores left over.
  if (num_devices == 1) {
    run_device(0);
  } else {
    // Large stacks (reserved, not committed): nested calls recurse once per level.
    std::vector<hlo::LargeStackThread> threads;
    threads.reserve(num_devices);
    for (int64_t k = 0; k < num_devices; ++k) {
      try {
        threads.emplace_back([&run_device, k] { run_device(k); }, kDeviceStackBytes);
      } catch (const std::system_error& e) {
        // The devices already started wait for this one at their first collective: stop them.
        const absl::Status status = absl::ResourceExhaustedError(
            hlo::StrCat("cannot start a thread for device ", first + k, " of ", total_devices, " (",
                        e.what(), "); simulate fewer devices"));
        {
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.ok()) first_error = status;
        }
        hub.Abort(status);
        break;
      }
    }
    for (hlo::LargeStackThread& t : threads) t.join();
  }
  if (!first_error.ok()) return first_error;
  std::vector<hlo::Literal> out;
  out.reserve(num_devices);
  for (std::optional<hlo::Literal>& r : results) out.push_back(std::move(*r));
  return out;
}

}  // namespace runtime

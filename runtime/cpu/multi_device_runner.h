// Runs one module on N simulated devices: one Evaluator and one std::thread per device, all
// meeting in a shared CollectiveHub.
//
// Device d (global id) is replica d / num_partitions, partition d % num_partitions. When any
// device fails, the hub is aborted so the others stop at their next collective instead of
// waiting for a peer that will never come; a device that never reaches a collective becomes a
// timeout error naming the instruction. The first error (in time) is returned.
#ifndef RUNTIME_CPU_MULTI_DEVICE_RUNNER_H_
#define RUNTIME_CPU_MULTI_DEVICE_RUNNER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/literal.h"
#include "runtime/cpu/collective_transport.h"

namespace runtime {

struct MultiDeviceOptions {
  int64_t num_partitions = 1;
  int64_t num_replicas = 1;
  // How long a device waits at a collective for its peers before failing.
  double collective_timeout_seconds = 60.0;
  // A multi-process job (runtime/mpi): this process runs devices [first_device,
  // first_device + local_devices) and reaches the others through `transport` (not owned).
  // local_devices 0: every device, in this process.
  int64_t first_device = 0;
  int64_t local_devices = 0;
  CollectiveTransport* transport = nullptr;
};

// Runs the entry computation of `module` on num_replicas x num_partitions devices.
// `arguments[k]` holds the entry arguments (one literal per parameter) of the k-th device this
// process runs and is consumed. Returns one result per device run here, in device order.
// Fails when `arguments` does not have one entry per device, or with the first device error.
absl::StatusOr<std::vector<hlo::Literal>> RunOnDevices(
    const hlo::HloModule& module, std::vector<std::vector<hlo::Literal>> arguments,
    const MultiDeviceOptions& options);

}  // namespace runtime

#endif  // RUNTIME_CPU_MULTI_DEVICE_RUNNER_H_

// Random per-device arguments (runtime/cpu/verify.h's RandomLiteral), both executors, and a
// leaf-by-leaf comparison (runtime/cpu/compare.h).
#include "runtime/cuda/testing/differential_test_util.h"

#include "hlo/parser/hlo_parser.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "hlo/verifier/hlo_verifier.h"
#include "runtime/common/tuple_leaves.h"
#include "runtime/cpu/compare.h"
#include "runtime/cpu/multi_device_runner.h"
#include "runtime/cpu/verify.h"
#include "runtime/cuda/host_device.h"

namespace runtime {
namespace cuda {

absl::StatusOr<std::unique_ptr<hlo::HloModule>> ParseForTest(const std::string& text) {
  ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> module, hlo::ParseHloModule(text));
  RETURN_IF_ERROR(hlo::VerifyModule(*module));
  return module;
}

CudaRunOptions HostOptions(int64_t num_partitions) {
  CudaRunOptions options;
  options.num_partitions = num_partitions;
  options.collectives = CollectiveBackend::kCopies;
  options.collective_timeout_seconds = 20;
  options.make_device = [](int64_t) -> absl::StatusOr<std::unique_ptr<DeviceApi>> {
    return MakeHostDevice();
  };
  return options;
}

absl::Status CompareWithCpu(const hlo::HloModule& module, const CudaRunOptions& options,
                            uint64_t seed, bool bitwise) {
  const int64_t n = options.num_partitions * options.num_replicas;
  const hlo::HloComputation& entry = *module.entry_computation();
  std::vector<std::vector<hlo::Literal>> args(n);
  for (int64_t d = 0; d < n; ++d) {
    for (int64_t p = 0; p < entry.num_parameters(); ++p) {
      args[d].push_back(RandomLiteral(entry.parameter_instruction(p)->shape(), seed, (d << 20) + p));
    }
  }
  MultiDeviceOptions cpu;
  cpu.num_partitions = options.num_partitions;
  cpu.num_replicas = options.num_replicas;
  ASSIGN_OR_RETURN(std::vector<hlo::Literal> expected, RunOnDevices(module, args, cpu));
  ASSIGN_OR_RETURN(std::vector<hlo::Literal> actual, RunOnCudaDevices(module, args, options));
  for (int64_t d = 0; d < n; ++d) {
    for (const hlo::ShapeIndex& index : LeafIndices(expected[d].shape())) {
      const hlo::Literal& e = LeafOf(expected[d], index);
      if (!e.shape().IsArray()) continue;
      const ArrayComparison c =
          CompareArrays(e, LeafOf(actual[d], index),
                        bitwise ? Tolerance{} : DefaultTolerance(e.shape().element_type()));
      if (!c.ok()) {
        return absl::InternalError(hlo::StrCat(
            "device ", d, " ", LeafName("output", index), ": ", c.mismatches, " of ", c.elements,
            " differ; first at ", FormatIndex(c.first_mismatch), ": expected ", c.expected_value,
            ", got ", c.actual_value, c.problem.empty() ? "" : " ", c.problem));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace cuda
}  // namespace runtime

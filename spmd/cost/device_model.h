// Device models for the cost model: how fast a device computes, how much memory it has, and
// how fast its links are at each level of the machine hierarchy (e.g. NVLink inside a node of
// 8 GPUs, InfiniBand between nodes).
//
// A collective among a group of devices uses the innermost level that contains the whole group:
// level i holds blocks of `devices_per_group` consecutive device ids (devices d and e share a
// level-i group iff d / n == e / n). The last level holds every device.
//
// Built-in models (DeviceModelByName): h100-nvlink, h200-nvlink, tpu-torus, cpu-test. A JSON
// file has the same fields:
//   {"name": "my-gpu", "flops_per_second": {"f32": 6.7e13, "bf16": 9.9e14},
//    "compute_efficiency": 0.7, "memory_bytes": 8.5e10, "memory_bandwidth_gbps": 3350,
//    "loop_step_us": 2,
//    "levels": [{"name": "nvlink", "devices_per_group": 8, "latency_us": 8,
//                "bandwidth_gbps": 350},
//               {"name": "ib", "devices_per_group": 0, "latency_us": 15, "bandwidth_gbps": 45}]}
// (`bandwidth_gbps` is GB/s per device; devices_per_group 0 means "all devices";
// `loop_step_us` and `memory_bandwidth_gbps` are optional, 0 when absent).
#ifndef SPMD_COST_DEVICE_MODEL_H_
#define SPMD_COST_DEVICE_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/primitive_type.h"
#include "spmd/cost/collective_cost.h"

namespace spmd {

struct MeshLevel {
  std::string name;
  int64_t devices_per_group = 0;  // 0: every device.
  LinkModel link;
};

struct DeviceModel {
  std::string name;
  double f32_flops_per_us = 1e5;   // Dense matmul rate for f32 and wider.
  double bf16_flops_per_us = 1e5;  // For bf16, f16 and narrower floating types.
  double int_flops_per_us = 1e5;   // Integer types.
  double compute_efficiency = 1.0;  // Fraction of the peak rate a large dot reaches.
  double memory_bytes = 8.0 * (1LL << 30);
  // Bytes a device reads or writes in its own memory per microsecond (0: unknown, and memory
  // traffic is not timed): what bounds elementwise and data-movement kernels.
  double memory_bandwidth_bytes_per_us = 0;
  // What one iteration of a windowed-einsum loop costs besides its dot and its transfer: loop
  // control and the kernels that slice and place the block. A loop that overlaps nothing then
  // loses to the one collective it replaces, whose result later users can reuse.
  double loop_step_us = 0;
  std::vector<MeshLevel> levels;  // Innermost first; never empty.

  // Microseconds to execute `flops` operations on elements of `type`.
  double ComputeTimeUs(double flops, hlo::PrimitiveType type) const;
  // Microseconds to read and write `bytes` of device memory (0 when the bandwidth is unknown).
  double MemoryTimeUs(double bytes) const;
  // The innermost level whose groups contain all of `devices` (the last level otherwise).
  const MeshLevel& LevelFor(absl::Span<const int64_t> devices) const;
  // The link that a collective over each of `groups` uses: the slowest level any group needs.
  const LinkModel& LinkFor(const std::vector<std::vector<int64_t>>& groups) const;
  // One line: name, rates, memory and links.
  std::string Describe() const;
};

// Estimated times within this fraction of the least count as equal: the model is not that
// precise, the bytes a plan moves (and the memory it holds) are certain. Among candidates that
// close to the least estimated time, the dot and convolution choices take the fewest bytes.
inline constexpr double kEstimateTolerance = 0.05;

// The rule every strategy choice follows: among the candidates whose estimated time `us[i]` is
// within kEstimateTolerance of the least, the one whose devices receive the fewest bytes
// (`bytes[i]`); equal bytes go to the one `prefer(a, b)` puts first (when given, else the lesser
// time), then to the earlier. The index chosen; 0 for no candidates.
// REQUIRES: us.size() == bytes.size().
size_t ChooseNearFastest(absl::Span<const double> us, absl::Span<const int64_t> bytes,
                         const std::function<bool(size_t, size_t)>& prefer = nullptr);

// The default model (h100-nvlink).
DeviceModel DefaultDeviceModel();
// The names DeviceModelByName knows.
std::vector<std::string> BuiltinDeviceModelNames();
// A built-in model; NotFound (listing the names) for an unknown one.
absl::StatusOr<DeviceModel> DeviceModelByName(std::string_view name);
// Parses a model from JSON text (format in the file comment). Errors name the field.
absl::StatusOr<DeviceModel> ParseDeviceModelJson(std::string_view json);
// `spec` is a built-in name or a path to a JSON file; empty selects the default (h100-nvlink).
absl::StatusOr<DeviceModel> LoadDeviceModel(std::string_view spec);

}  // namespace spmd

#endif  // SPMD_COST_DEVICE_MODEL_H_

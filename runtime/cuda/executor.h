// The CUDA executor: runs an HLO module on one device (a GPU, or the host device in tests).
//
// It mirrors runtime/cpu's Evaluator: instructions in order, opcode semantics in per-family
// handler files under ops/ (registered in op_registry.cc), control flow here. Values live in
// device memory placed by the buffer plan (buffer_plan.h): one arena per computation, kept
// between runs; root leaves in their own allocations. while and conditional are driven from
// the host (the loop condition and the branch index are read back). An opcode without a
// handler is an error naming it.
#ifndef RUNTIME_CUDA_EXECUTOR_H_
#define RUNTIME_CUDA_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/literal.h"
#include "runtime/common/device_context.h"
#include "runtime/cuda/buffer_plan.h"
#include "runtime/cuda/collectives.h"
#include "runtime/cuda/device_api.h"

namespace runtime {
namespace cuda {

// An array in device memory (row-major).
struct DeviceArray {
  void* data = nullptr;
  hlo::Shape shape;
};

// A value: its array leaves in flattened order (tokens are leaves without data).
struct DeviceValue {
  hlo::Shape shape;
  std::vector<DeviceArray> leaves;
};

// A value with the memory it owns.
struct OwnedValue {
  DeviceValue value;
  std::vector<DeviceBuffer> buffers;
};

class CudaExecutor {
 public:
  // `collectives` may be null for programs without collectives (they then fail clearly).
  CudaExecutor(const hlo::HloModule& module, DeviceApi& device, Collectives* collectives,
               DeviceContext context)
      : module_(module), device_(device), collectives_(collectives), context_(context) {}

  // Uploads `args` (one per entry parameter), runs the entry computation, downloads the result.
  absl::StatusOr<hlo::Literal> RunEntry(const std::vector<hlo::Literal>& args);
  // Runs the entry computation on device-resident arguments.
  absl::StatusOr<OwnedValue> RunEntryOnDevice(absl::Span<const DeviceValue> args);
  // Runs `computation` with `params` borrowed. With `forward_state`, a result leaf that is
  // leaf k of parameter 0 returned at position k (a while body's unchanged state) comes back
  // borrowed, not copied.
  absl::StatusOr<OwnedValue> Execute(const hlo::HloComputation& computation,
                                     absl::Span<const DeviceValue> params,
                                     bool forward_state = false);

  absl::StatusOr<OwnedValue> Upload(const hlo::Literal& literal);
  absl::StatusOr<hlo::Literal> Download(const DeviceValue& value);

  DeviceApi& device() { return device_; }
  Collectives* collectives() { return collectives_; }
  const DeviceContext& context() const { return context_; }
  const hlo::HloModule& module() const { return module_; }
  int64_t NextSequence(const hlo::HloInstruction& instr) { return sequence_[&instr]++; }
  // Scratch device memory for a handler (freed when the returned buffer goes).
  absl::StatusOr<DeviceBuffer> Scratch(int64_t bytes) {
    return DeviceBuffer::Allocate(device_, bytes);
  }

 private:
  struct ComputationState {
    BufferPlan plan;
    DeviceBuffer arena;
  };
  struct Frame;
  absl::StatusOr<ComputationState*> StateFor(const hlo::HloComputation& computation);
  // Points the frame at the buffers instruction `i` (`instr`) defines.
  absl::Status PlaceBuffers(Frame& frame, size_t i, const hlo::HloInstruction& instr,
                            absl::Span<const DeviceValue> params);
  // Computes `instr` into `result` (control flow here, everything else by its handler).
  absl::Status Compute(const hlo::HloInstruction& instr, const std::vector<DeviceValue>& operands,
                       const DeviceValue& result);
  // The computation's result, owning its memory.
  absl::StatusOr<OwnedValue> TakeResult(Frame& frame, const hlo::HloComputation& computation,
                                        size_t root, bool forward_state);
  absl::StatusOr<void*> ConstantLeaf(const hlo::HloInstruction& instr, int64_t leaf);
  // Runs control-flow opcodes: fills `result` from a called computation.
  absl::Status RunControlFlow(const hlo::HloInstruction& instr,
                              const std::vector<DeviceValue>& operands,
                              const DeviceValue& result);

  const hlo::HloModule& module_;
  DeviceApi& device_;
  Collectives* collectives_;
  DeviceContext context_;
  absl::flat_hash_map<const hlo::HloComputation*, std::unique_ptr<ComputationState>> states_;
  absl::flat_hash_map<const hlo::HloInstruction*, OwnedValue> constants_;
  absl::flat_hash_map<const hlo::HloInstruction*, int64_t> sequence_;
};

// Copies every leaf of `src` into the matching leaf of `dst` (same shapes), in stream order.
absl::Status CopyValue(DeviceApi& device, const DeviceValue& src, const DeviceValue& dst);

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_EXECUTOR_H_

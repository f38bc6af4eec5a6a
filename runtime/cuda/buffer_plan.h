// Where each value of a computation lives on the device, with memory reused by liveness.
//
// Every array leaf an instruction computes is a buffer. Instructions that only rename values
// (tuple, get-tuple-element, bitcast, bitcast-convert, reshape, copy, optimization-barrier,
// add-dependency, and the identity custom-calls: the partitioner's, propagation barriers,
// layout constraints) define no buffer: their leaves are their operands' buffers. A buffer is live
// from the instruction that defines it to the last instruction that reads it through any name; two
// buffers whose live ranges overlap (ends included, so no op writes over an input it is
// reading) never share bytes. Buffers are placed in one arena per computation, largest first,
// each at the lowest 256-byte-aligned offset free during its whole range. Root leaves are
// outputs, allocated separately on every run so they outlive the arena; parameters and
// constants live elsewhere (the caller's and the executor's memory).
//
// In-place updates (hlo::InPlaceOperands: dynamic-update-slice, scatter, while, sort, elementwise
// ops) write into an operand's arena buffer when nothing reads it afterwards under any name, and a
// while's state leaf that its body returns unchanged stays in the initial value's buffer.
//
// Example: p = parameter(0); a = reverse(p); b = reverse(a); c = reverse(b); ROOT d = reverse(c),
// all f32[1024]. a, b and c are arena buffers, at most two live at once (a dies at b, b at c), so
// a and c share bytes: an 8 KiB arena instead of 12 KiB. d is an output, p a parameter. Were b
// negate(a), it would write into a's buffer.
#ifndef RUNTIME_CUDA_BUFFER_PLAN_H_
#define RUNTIME_CUDA_BUFFER_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_computation.h"

namespace runtime {
namespace cuda {

enum class BufferKind {
  kArena,      // Placed in the computation's arena at `offset`.
  kOutput,     // A root leaf: allocated on its own for every run.
  kParameter,  // Leaf `leaf` of parameter `instruction`'s argument.
  kConstant,   // Leaf `leaf` of the constant `instruction`.
};

struct PlannedBuffer {
  BufferKind kind = BufferKind::kArena;
  int64_t instruction = 0;  // Index (in computation order) of the defining instruction.
  int64_t leaf = 0;         // Leaf of that instruction's value, flattened order.
  int64_t bytes = 0;
  int64_t first = 0;  // Live range, as instruction indices (inclusive).
  int64_t last = 0;
  int64_t offset = 0;  // kArena only.
};

struct BufferPlan {
  std::vector<PlannedBuffer> buffers;
  // For each instruction (computation order), the buffer id of each of its leaves.
  std::vector<std::vector<int64_t>> leaves;
  int64_t arena_bytes = 0;
  // What the arena buffers would take without reuse (for reports and tests).
  int64_t unshared_bytes = 0;
};

// True for the opcodes that define no buffer (see the file comment) on `instr`.
bool IsAliasingInstruction(const hlo::HloInstruction& instr);

// Plans `computation`. Fails when an operand is not defined before its use.
absl::StatusOr<BufferPlan> PlanBuffers(const hlo::HloComputation& computation);

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_BUFFER_PLAN_H_

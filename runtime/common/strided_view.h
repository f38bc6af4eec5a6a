// Each data-movement op's index map, written once for every executor.
//
// Two forms cover the family:
//   * `StridedView` -- the result reads one operand element per result element: result element
//     `i` (a multi-index over `sizes`) is operand element `offset + sum_d i[d] * strides[d]`
//     (dense row-major, in elements). transpose, broadcast (stride 0), slice (start, step),
//     reverse (negative stride from the last index), reshape (the result's own row-major
//     strides) and dynamic-slice (clamped runtime starts) are such views.
//   * `Placement` -- an operand's elements are written into part of the result: per dimension,
//     operand index `first + k` lands at result index `position + k * step` for k < `count`.
//     concatenate (one per operand), pad (interior step, negative edges crop) and
//     dynamic-update-slice (the update at the clamped starts) are placements.
// The CPU executor turns them into byte strides (runtime/cpu/ops/strided_copy.h), the CUDA
// executor into copy kernels (runtime/cuda/ops/data_movement_ops.cc), and the point evaluator
// maps sampled result indices through them (`At`, `Placement::Find`).
// Example: slice f32[10]{[2:8:3]} -> f32[2] is {offset 2, strides {3}, sizes {2}}: elements 2, 5.
#ifndef RUNTIME_COMMON_STRIDED_VIEW_H_
#define RUNTIME_COMMON_STRIDED_VIEW_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/hlo_opcode.h"
#include "hlo/ir/shape.h"

namespace runtime {

struct StridedView {
  int64_t offset = 0;            // Operand element of the result's first element.
  std::vector<int64_t> strides;  // Operand elements per step along each result dimension.
  std::vector<int64_t> sizes;    // The result region's dimensions.

  // The operand element that result multi-index `index` (sizes.size() entries) reads.
  int64_t At(const int64_t* index) const;
};

// transpose: result dimension i walks operand dimension perm[i].
// `dims` are the operand's dimensions.
StridedView TransposeView(absl::Span<const int64_t> dims, absl::Span<const int64_t> perm);
// broadcast: operand dimension i is result dimension dims[i]; the others (and operand
// dimensions of size 1) have stride 0.
StridedView BroadcastView(const hlo::Shape& operand, const hlo::Shape& result,
                          absl::Span<const int64_t> dims);
// slice: each dimension starts at `start` and steps by `stride`.
StridedView SliceView(const hlo::Shape& operand, const hlo::Shape& result,
                      absl::Span<const hlo::SliceDimension> slices);
// reverse: the reversed dimensions (of nonzero size) start at their last index and step back.
StridedView ReverseView(const hlo::Shape& operand, absl::Span<const int64_t> dims);
// dynamic-slice: a window of `sizes` at (already clamped) `starts`.
StridedView WindowView(const hlo::Shape& operand, absl::Span<const int64_t> starts,
                       absl::Span<const int64_t> sizes);
// reshape: the same row-major elements under the result's dimensions.
StridedView ReshapeView(const hlo::Shape& result);

// The view of `instr` (transpose, broadcast, slice, reverse, reshape) over its operand 0, from
// the instruction's attributes and shapes; nullopt for any other opcode (dynamic-slice needs
// runtime starts: WindowView). REQUIRES: the attributes fit the shapes (checked by callers,
// e.g. with hlo::InferShape).
std::optional<StridedView> SourceViewOf(const hlo::HloInstruction& instr);
// Whether SourceViewOf has a view for `opcode`, and every such opcode: the CPU and CUDA op
// registries and the point evaluator run all of them through one handler each, so a new op of
// this kind needs only its line in strided_view.cc's table (docs/architecture.md).
bool HasSourceView(hlo::HloOpcode opcode);
std::vector<hlo::HloOpcode> SourceViewOpcodes();

// Dynamic-(update-)slice start indices as XLA clamps them: start[d] = clamp(raw[d], 0,
// full[d] - window[d]), so the window fits.
std::vector<int64_t> ClampStarts(absl::Span<const int64_t> raw, absl::Span<const int64_t> full,
                                 absl::Span<const int64_t> window);

struct Placement {
  std::vector<int64_t> first;     // Operand index of the first element copied.
  std::vector<int64_t> position;  // The result index it lands at.
  std::vector<int64_t> step;      // Result positions between consecutive operand elements.
  std::vector<int64_t> count;     // Operand elements copied (0: nothing lands).

  bool empty() const;
  // The elements copied, as a view of the operand (`operand` is its shape).
  StridedView OperandView(const hlo::Shape& operand) const;
  // Where they go, as a view of the result (`result` is its shape).
  StridedView ResultView(const hlo::Shape& result) const;
  // The operand multi-index whose element lands at result multi-index `index`; false when no
  // operand element lands there.
  bool Find(const int64_t* index, int64_t* operand_index) const;
};

// pad: operand element c lands at low + c * (interior + 1); those outside the result are
// cropped. REQUIRES: one padding entry per dimension.
Placement PadPlacement(const hlo::Shape& operand, const hlo::Shape& result,
                       const hlo::PaddingConfig& config);
// concatenate along `dim`: operand k's band starts after operands 0..k-1.
std::vector<Placement> ConcatenatePlacements(absl::Span<const hlo::Shape* const> operands,
                                             int64_t dim);
// dynamic-update-slice: the whole update at (already clamped) `starts`.
Placement UpdatePlacement(const hlo::Shape& update, absl::Span<const int64_t> starts);

}  // namespace runtime

#endif  // RUNTIME_COMMON_STRIDED_VIEW_H_

// Internals of the point evaluator's opcode semantics (point_ops*.cc): where an asked element
// comes from, synthetic instructions for the executor's handlers, and the PointOps class whose
// members the opcode families define (point_ops.cc: dispatch, data movement, arithmetic;
// point_ops_devices.cc: collectives and manual conversions; point_ops_indexed.cc: gather,
// scatter; point_ops_window.cc: convolution, reduce-window, select-and-scatter).
#ifndef RUNTIME_CPU_POINT_OPS_H_
#define RUNTIME_CPU_POINT_OPS_H_

#include <functional>
#include <optional>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/literal.h"
#include "hlo/strings.h"
#include "runtime/common/collective_groups.h"
#include "runtime/common/strided_view.h"
#include "runtime/cpu/point_evaluator.h"

namespace runtime {
namespace points {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::Shape;
using Frame = PointEvaluator::Frame;

struct WindowStack;  // point_ops_window.cc

// Where an asked element comes from: element `index` of leaf `leaf` of `instr` in `frame`;
// a null `instr` gives zero (a collective-permute target nobody sends to).
struct Source {
  const HloInstruction* instr = nullptr;
  int64_t leaf = 0;
  const Frame* frame = nullptr;
  int64_t index = 0;
};

// Owns synthetic instructions: a copy of an instruction's opcode and attributes over
// placeholder operands of the gathered arrays' shapes, for the executor's handlers.
class Synthetic {
 public:
  ~Synthetic() {
    while (!owned_.empty()) owned_.pop_back();  // Users before their operands.
  }
  // A bare `opcode` instruction of `shape` over placeholders shaped like `operands`.
  HloInstruction* Make(HloOpcode opcode, Shape shape, absl::Span<const Literal* const> operands) {
    std::vector<HloInstruction*> placeholders;
    for (const Literal* operand : operands) {
      owned_.push_back(HloInstruction::Create(HloOpcode::kParameter, operand->shape(), {}));
      placeholders.push_back(owned_.back().get());
    }
    owned_.push_back(HloInstruction::Create(opcode, std::move(shape), placeholders));
    return owned_.back().get();
  }
  // `like`'s opcode, attributes and called computations.
  HloInstruction* Like(const HloInstruction& like, Shape shape,
                       absl::Span<const Literal* const> operands) {
    HloInstruction* made = Make(like.opcode(), std::move(shape), operands);
    *made->mutable_attrs() = like.attrs();
    for (hlo::HloComputation* c : like.called_computations()) made->AppendCalledComputation(c);
    made->set_name(like.name());
    return made;
  }

 private:
  std::vector<std::unique_ptr<HloInstruction>> owned_;
};

// `flat` (n*k elements) viewed as [n, k].
inline Literal AsMatrix(Literal flat, int64_t n, int64_t k) {
  Literal out(Shape::Array(flat.shape().element_type(), {n, k}));
  *out.mutable_data() = std::move(*flat.mutable_data());
  return out;
}

inline Literal AsScalar(const Literal& one) {
  Literal out(Shape::Array(one.shape().element_type(), {}));
  *out.mutable_data() = one.data();
  return out;
}

inline absl::Status Unsupported(const HloInstruction& instr, std::string_view why = "") {
  return absl::UnimplementedError(
      hlo::StrCat("sampled evaluation does not support ", hlo::HloOpcodeString(instr.opcode()),
                  why.empty() ? "" : " ", why, " (%", instr.name(), ")"));
}

}  // namespace points

class PointOps {
 public:
  static absl::StatusOr<hlo::Literal> Compute(PointEvaluator& ev, const hlo::HloInstruction& instr,
                                              int64_t leaf, const points::Frame* frame,
                                              absl::Span<const int64_t> indices);

  // Computes the elements `indices` of leaf `leaf` of `instr` in `frame`.
  using ComputeFn = absl::StatusOr<hlo::Literal> (*)(PointEvaluator& ev,
                                                     const hlo::HloInstruction& instr, int64_t leaf,
                                                     const points::Frame* frame,
                                                     absl::Span<const int64_t> indices);
  // The point evaluator's opcode table (point_ops.cc): one handler for every opcode with a
  // strided view (runtime::HasSourceView); null for the placements and dynamic-slice, elementwise
  // ops and anything unsupported. Public so tests can see which opcodes share a handler.
  static ComputeFn HandlerOf(hlo::HloOpcode opcode);
  // The dimension along which computing one element of leaf `leaf` of `instr` computes its
  // whole row (sort, top-k), so the evaluator memoizes the rows whole: a row asked by 64
  // devices element range by element range is sorted once. Null for other ops.
  static std::optional<int64_t> WholeRowDimension(const hlo::HloInstruction& instr,
                                                  int64_t leaf);

 private:
  using Mapper = std::function<absl::Status(int64_t* index, points::Source& source)>;

  // Elements of `sources`, an array of `type`.
  static absl::StatusOr<hlo::Literal> Fetch(PointEvaluator& ev, hlo::PrimitiveType type,
                                            const std::vector<points::Source>& sources);
  // Data movement: `map` turns each asked element's multi-index (which it may overwrite) into
  // its source.
  static absl::StatusOr<hlo::Literal> Move(PointEvaluator& ev, const hlo::HloInstruction& instr,
                                           int64_t leaf, absl::Span<const int64_t> indices,
                                           const Mapper& map);
  static absl::StatusOr<hlo::Literal> RunHandler(PointEvaluator& ev,
                                                 const hlo::HloInstruction& synthetic,
                                                 absl::Span<const hlo::Literal* const> operands);
  static absl::StatusOr<std::vector<int64_t>> Offsets(PointEvaluator& ev,
                                                      const hlo::HloInstruction& instr,
                                                      int64_t first, const points::Frame* frame,
                                                      const hlo::Shape& sliced,
                                                      const std::vector<int64_t>& sizes);
  // What a concatenate, pad or dynamic-update-slice result element reads: the first of `parts`
  // (an operand and where runtime/common/strided_view.h places it) holding it, else
  // `otherwise` (pad's value when `scalar`; dynamic-update-slice's operand at the same index).
  // Empty `parts` for any other opcode.
  struct Placed {
    std::vector<std::pair<const hlo::HloInstruction*, Placement>> parts;
    const hlo::HloInstruction* otherwise = nullptr;
    bool scalar = false;
  };
  static absl::StatusOr<Placed> PlacedOperands(PointEvaluator& ev, const hlo::HloInstruction& instr,
                                               const points::Frame* frame);
  // Each asked element read from operand 0 through `view`.
  static absl::StatusOr<hlo::Literal> ReadView(PointEvaluator& ev, const hlo::HloInstruction& instr,
                                               int64_t leaf, const points::Frame* frame,
                                               absl::Span<const int64_t> indices,
                                               const runtime::StridedView& view);
  // An op with a strided view: each asked element reads operand 0 through SourceViewOf.
  static absl::StatusOr<hlo::Literal> SourceView(PointEvaluator& ev,
                                                 const hlo::HloInstruction& instr, int64_t leaf,
                                                 const points::Frame* frame,
                                                 absl::Span<const int64_t> indices);
  // Data movement through runtime/common/strided_view.h's placements and dynamic-slice's
  // window; `*handled` is false for other opcodes.
  static absl::StatusOr<hlo::Literal> DataMovement(PointEvaluator& ev,
                                                   const hlo::HloInstruction& instr, int64_t leaf,
                                                   const points::Frame* frame,
                                                   absl::Span<const int64_t> indices,
                                                   bool* handled);
  static absl::StatusOr<hlo::Literal> Elementwise(PointEvaluator& ev,
                                                  const hlo::HloInstruction& instr,
                                                  const points::Frame* frame,
                                                  absl::Span<const int64_t> indices);
  static absl::StatusOr<hlo::Literal> Dot(PointEvaluator& ev, const hlo::HloInstruction& instr,
                                          const points::Frame* frame,
                                          absl::Span<const int64_t> indices);
  static absl::StatusOr<hlo::Literal> Reduce(PointEvaluator& ev, const hlo::HloInstruction& instr,
                                             int64_t leaf, const points::Frame* frame,
                                             absl::Span<const int64_t> indices);
  // A reduce's results (one [n] array per input) for output elements `indices` over the
  // reduced coordinates [begin, end) (row-major over the reduced dimensions), starting from
  // `inits` (one scalar per input; empty: the reduce's own initial values).
  static absl::StatusOr<std::vector<hlo::Literal>> ReduceRange(
      PointEvaluator& ev, const hlo::HloInstruction& instr, const points::Frame* frame,
      absl::Span<const int64_t> indices, int64_t begin, int64_t end,
      std::vector<hlo::Literal> inits);
  static absl::StatusOr<hlo::Literal> Sort(PointEvaluator& ev, const hlo::HloInstruction& instr,
                                           int64_t leaf, const points::Frame* frame,
                                           absl::Span<const int64_t> indices);
  static absl::StatusOr<hlo::Literal> TopK(PointEvaluator& ev, const hlo::HloInstruction& instr,
                                           int64_t leaf, const points::Frame* frame,
                                           absl::Span<const int64_t> indices);
  static absl::StatusOr<hlo::Literal> Collective(PointEvaluator& ev,
                                                 const hlo::HloInstruction& instr, int64_t leaf,
                                                 const points::Frame* frame,
                                                 absl::Span<const int64_t> indices);
  // SPMDFullToShardShape and SPMDShardToFullShape as each device (point_ops_devices.cc).
  static absl::StatusOr<hlo::Literal> ManualConversion(PointEvaluator& ev,
                                                       const hlo::HloInstruction& instr,
                                                       int64_t leaf, const points::Frame* frame,
                                                       absl::Span<const int64_t> indices);
  static absl::StatusOr<hlo::Literal> FullToShard(PointEvaluator& ev,
                                                  const hlo::HloInstruction& instr,
                                                  const points::Frame* frame,
                                                  absl::Span<const int64_t> indices);
  static absl::StatusOr<hlo::Literal> ShardToFull(PointEvaluator& ev,
                                                  const hlo::HloInstruction& instr,
                                                  const points::Frame* frame,
                                                  absl::Span<const int64_t> indices);
  // fft, cholesky, triangular-solve: whole blocks of their `trailing` dims (point_ops.cc).
  static absl::StatusOr<hlo::Literal> TrailingBlocks(PointEvaluator& ev,
                                                     const hlo::HloInstruction& instr,
                                                     const points::Frame* frame,
                                                     absl::Span<const int64_t> indices,
                                                     int64_t trailing);
  // Indexed ops (point_ops_indexed.cc).
  static absl::StatusOr<hlo::Literal> Gather(PointEvaluator& ev, const hlo::HloInstruction& instr,
                                             const points::Frame* frame,
                                             absl::Span<const int64_t> indices);
  static absl::StatusOr<hlo::Literal> Scatter(PointEvaluator& ev, const hlo::HloInstruction& instr,
                                              int64_t leaf, const points::Frame* frame,
                                              absl::Span<const int64_t> indices);
  // Window ops (point_ops_window.cc).
  static absl::StatusOr<hlo::Literal> Convolution(PointEvaluator& ev,
                                                  const hlo::HloInstruction& instr,
                                                  const points::Frame* frame,
                                                  absl::Span<const int64_t> indices);
  static absl::StatusOr<hlo::Literal> WindowOp(PointEvaluator& ev, const hlo::HloInstruction& instr,
                                               int64_t leaf, const points::Frame* frame,
                                               absl::Span<const int64_t> indices);
  static absl::StatusOr<hlo::Literal> StackedWindowOp(PointEvaluator& ev,
                                                      const hlo::HloInstruction& instr,
                                                      int64_t leaf, const points::Frame* frame,
                                                      const points::WindowStack& stack);
  static absl::StatusOr<hlo::Literal> CombineOverGroup(PointEvaluator& ev,
                                                       const hlo::HloInstruction& instr,
                                                       const hlo::HloInstruction& operand,
                                                       int64_t leaf, const points::Frame* frame,
                                                       const DeviceGroup& group,
                                                       absl::Span<const int64_t> indices);
};

}  // namespace runtime

#endif  // RUNTIME_CPU_POINT_OPS_H_

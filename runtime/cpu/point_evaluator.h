// The point evaluator: computes chosen elements of an HLO program's values without computing
// whole arrays, for programs too large to run (sampled verification, sampled_verify.h).
//
// Evaluation is driven by demand. Asked for elements of an instruction's value, it works out
// which operand elements those need (a transpose's one element, a dot's row and column along
// the contracting dims, a reduce's reduced slice, a sort's or topk's row, an all-reduce's
// element on each device of the group, a gather's index vector and one operand element, a
// scatter's whole index array and the updates landing on the element, a convolution's window,
// the box of input a reduce-window or select-and-scatter element's windows read), asks for
// those, and computes the asked elements.
// Arithmetic runs through the CPU executor's own op handlers on small arrays gathered from the
// operands (a dot of f32[n,K] by f32[n,K] with batch dim 0 gives n results), so element
// semantics are the executor's. Values are memoized per (instruction, leaf, frame) and element
// (points::ElementMemo: hashed while sparse, dense once a quarter of a value is known).
//
// A frame says where a value lives: on which simulated device (or the unpartitioned
// reference), and inside which called computation, conditional branch or while iteration.
// Collectives read their operand's frame on the other devices of the group, at the same loop
// iterations (SPMD programs run collectives in lockstep). A while loop's trip count is found by
// evaluating its condition (which asks for the loop state elements it reads) iteration by
// iteration; iteration t's state is the body's root in iteration t-1.
//
// Entry parameter elements come from an ArgumentSource. Opcodes without element semantics here
// (rng, fft, opaque custom-calls, ...) are an error naming them.
#ifndef RUNTIME_CPU_POINT_EVALUATOR_H_
#define RUNTIME_CPU_POINT_EVALUATOR_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/literal.h"
#include "runtime/cpu/point_elements.h"

namespace runtime {

// Values of entry parameter elements.
class ArgumentSource {
 public:
  virtual ~ArgumentSource() = default;
  // Elements `indices` (row-major linear indices) of leaf `leaf` (flattened order) of entry
  // parameter `parameter` as seen by `device` (-1: the unpartitioned reference), written to
  // `out`, an array of the leaf's element type with indices.size() elements.
  virtual absl::Status Fill(int64_t parameter, int64_t leaf, int64_t device,
                            absl::Span<const int64_t> indices, hlo::Literal& out) const = 0;
};

// Values that stand in for instructions' own (modular verification, modular_verify.h): a cut
// instruction is not computed; its elements come from Fill.
class CutSource {
 public:
  virtual ~CutSource() = default;
  virtual bool IsCut(const hlo::HloInstruction& instr) const = 0;
  // Elements `indices` of leaf `leaf` of cut `instr` on `device` (-1: the reference), written to
  // `out`, an array of the leaf's element type with indices.size() elements.
  virtual absl::Status Fill(const hlo::HloInstruction& instr, int64_t leaf, int64_t device,
                            absl::Span<const int64_t> indices, hlo::Literal& out) const = 0;
};

class PointEvaluator {
 public:
  // `num_devices`: the devices of an SPMD program (1 for a reference run).
  PointEvaluator(const hlo::HloModule& module, const ArgumentSource& arguments,
                 int64_t num_devices);
  ~PointEvaluator();

  // Elements `indices` of root leaf `leaf` of the entry computation on `device` (-1: the
  // unpartitioned reference, which has no collectives or partition-id). Returns an array of
  // the leaf's element type with indices.size() elements.
  absl::StatusOr<hlo::Literal> EntryRootElements(int64_t device, int64_t leaf,
                                                 absl::Span<const int64_t> indices);

  // Elements `indices` of leaf `leaf` of any instruction `instr` of the module on `device`, in
  // its computation's first call path (iteration 0 of a loop, branch 0's frame). With
  // `compute`, `instr` is computed even when the cuts cut it.
  absl::StatusOr<hlo::Literal> Elements(const hlo::HloInstruction& instr, int64_t leaf,
                                        int64_t device, absl::Span<const int64_t> indices,
                                        bool compute);
  // Instructions whose values `cuts` gives (not owned; null: none).
  void set_cuts(const CutSource* cuts) { cuts_ = cuts; }

  // Elements memoized so far (a measure of the work done).
  int64_t memoized_elements() const { return memoized_elements_; }
  // Asking for more than this many elements in all is an error (the sample would cost about as
  // much as running the program).
  void set_element_budget(int64_t budget) { element_budget_ = budget; }
  // Operand elements a reduce gathers at once. A larger demand is met in pieces: groups of
  // output elements, and a slice longer than this in blocks, each block's result the next one's
  // initial value -- the executor's order of operations, so the result is the same to the bit.
  void set_reduce_block(int64_t elements) { reduce_block_ = elements; }
  // Evaluation past `deadline` fails (ResourceExhausted), like a demand over the budget.
  void set_deadline(std::chrono::steady_clock::time_point deadline) { deadline_ = deadline; }
  int64_t reduce_block() const { return reduce_block_; }

  struct Frame;

 private:
  // Fails when gathering `count` more operand elements would go over the element budget (so
  // a dot over a huge contraction fails cleanly instead of exhausting memory).
  absl::Status Reserve(int64_t count, const hlo::HloInstruction& instr) const;
  friend class PointOps;
  using MemoKey = std::tuple<const hlo::HloInstruction*, int64_t, const Frame*>;

  // The elements `indices` of leaf `leaf` of `instr` in `frame`.
  absl::StatusOr<hlo::Literal> Get(const hlo::HloInstruction& instr, int64_t leaf,
                                   const Frame* frame, absl::Span<const int64_t> indices);
  // Every element of leaf `leaf` of `instr` in `frame` (shaped as [n]), computed once and kept
  // (an operand read whole by each request, such as scatter's indices).
  absl::StatusOr<const hlo::Literal*> GetAll(const hlo::HloInstruction& instr, int64_t leaf,
                                             const Frame* frame);
  // Compute one level deeper, refused past the nesting limit.
  absl::StatusOr<hlo::Literal> ComputeNested(const hlo::HloInstruction& instr, int64_t leaf,
                                             const Frame* frame,
                                             absl::Span<const int64_t> indices);
  // Computes elements not memoized yet (the opcode dispatch, point_ops.cc).
  absl::StatusOr<hlo::Literal> Compute(const hlo::HloInstruction& instr, int64_t leaf,
                                       const Frame* frame, absl::Span<const int64_t> indices);
  // Control flow and parameters (point_evaluator.cc).
  absl::StatusOr<hlo::Literal> ComputeParameter(const hlo::HloInstruction& instr, int64_t leaf,
                                                const Frame* frame,
                                                absl::Span<const int64_t> indices);
  absl::StatusOr<hlo::Literal> ComputeCalled(const hlo::HloInstruction& instr, int64_t leaf,
                                             const Frame* frame, absl::Span<const int64_t> indices);
  absl::StatusOr<int64_t> TripCount(const hlo::HloInstruction& loop, const Frame* frame);
  absl::StatusOr<int64_t> ScalarInt(const hlo::HloInstruction& instr, const Frame* frame);

  // Interned frames: one object per (parent, caller, iteration) and per device root.
  const Frame* RootFrame(int64_t device);
  const Frame* Child(const Frame* parent, const hlo::HloInstruction* caller, int64_t iteration);
  // `frame` with its root on `device` (the same call path on another device).
  const Frame* OnDevice(const Frame* frame, int64_t device);
  // A frame of `computation` on `device`: the entry's root frame, or a child of its first
  // caller's frame.
  absl::StatusOr<const Frame*> FrameOf(const hlo::HloComputation* computation, int64_t device);

  const hlo::HloModule& module_;
  const ArgumentSource& arguments_;
  int64_t num_devices_;
  std::vector<std::unique_ptr<Frame>> frames_;
  absl::flat_hash_map<int64_t, const Frame*> roots_;
  absl::flat_hash_map<std::tuple<const Frame*, const hlo::HloInstruction*, int64_t>, const Frame*>
      children_;
  absl::flat_hash_map<MemoKey, points::ElementMemo> memo_;
  absl::flat_hash_map<MemoKey, std::unique_ptr<hlo::Literal>> whole_;
  absl::flat_hash_map<std::pair<const hlo::HloInstruction*, const Frame*>, int64_t> trips_;
  absl::flat_hash_map<const hlo::HloComputation*, const hlo::HloInstruction*> callers_;
  const CutSource* cuts_ = nullptr;
  const hlo::HloInstruction* computed_ = nullptr;  // Elements(compute=true)'s instruction.
  int64_t memoized_elements_ = 0;
  int64_t element_budget_ = 200'000'000;
  int64_t reduce_block_ = int64_t{1} << 22;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  int depth_ = 0;
};

struct PointEvaluator::Frame {
  const Frame* parent = nullptr;           // Null for a root frame.
  const hlo::HloInstruction* caller = nullptr;  // while, call, fusion or conditional.
  int64_t iteration = 0;                   // While iteration, or conditional branch.
  int64_t device = -1;                     // The root's device (-1: reference).
};

}  // namespace runtime

#endif  // RUNTIME_CPU_POINT_EVALUATOR_H_

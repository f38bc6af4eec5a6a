// Demand-driven evaluation (point_evaluator.h): memoization, frames, parameters and control
// flow. Opcode semantics are in point_ops.cc.
#include "runtime/cpu/point_evaluator.h"

#include <algorithm>
#include <cstring>

#include "hlo/ir/primitive_type.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/opcode_table.h"
#include "runtime/common/strided_view.h"
#include "runtime/cpu/evaluator.h"
#include "runtime/cpu/point_elements.h"
#include "runtime/cpu/point_ops.h"

namespace runtime {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;

namespace {

// Nesting deeper than this (a chain of operands times loop iterations) is refused rather than
// risking the stack; sampled verification runs on a thread with a large stack.
constexpr int kMaxDepth = 40'000;
// A loop running longer than this on the sampled path is refused.
constexpr int64_t kMaxTrips = 100'000;

// Whether `instr`'s elements are its operand's (or its called computation's) elements.
// Pure data movement (a strided view, or a collective that only moves elements between
// devices) passes through too: its elements are memoized where they are computed, and a chain
// of reshards (reshape, all-to-all, transpose, reshape) costs no hashing per element and step.
bool PassesThrough(const HloInstruction& instr, const PointEvaluator::Frame* frame) {
  if (hlo::ForwardsOperand(instr) || HasSourceView(instr.opcode())) return true;
  if (instr.opcode() == HloOpcode::kParameter) return frame->parent != nullptr;
  return IsOneOf(instr.opcode(),
                 {HloOpcode::kAddDependency, HloOpcode::kGetTupleElement, HloOpcode::kTuple,
                  HloOpcode::kCall, HloOpcode::kFusion, HloOpcode::kWhile,
                  HloOpcode::kConditional, HloOpcode::kAllToAll, HloOpcode::kAllGather,
                  HloOpcode::kCollectivePermute});
}

}  // namespace

PointEvaluator::PointEvaluator(const hlo::HloModule& module, const ArgumentSource& arguments,
                               int64_t num_devices)
    : module_(module), arguments_(arguments), num_devices_(num_devices) {}

PointEvaluator::~PointEvaluator() = default;

const PointEvaluator::Frame* PointEvaluator::RootFrame(int64_t device) {
  auto [it, inserted] = roots_.try_emplace(device, nullptr);
  if (inserted) {
    frames_.push_back(std::make_unique<Frame>());
    frames_.back()->device = device;
    it->second = frames_.back().get();
  }
  return it->second;
}

const PointEvaluator::Frame* PointEvaluator::Child(const Frame* parent,
                                                   const HloInstruction* caller,
                                                   int64_t iteration) {
  auto [it, inserted] = children_.try_emplace({parent, caller, iteration}, nullptr);
  if (inserted) {
    frames_.push_back(std::make_unique<Frame>());
    Frame& f = *frames_.back();
    f.parent = parent;
    f.caller = caller;
    f.iteration = iteration;
    f.device = parent->device;
    it->second = &f;
  }
  return it->second;
}

const PointEvaluator::Frame* PointEvaluator::OnDevice(const Frame* frame, int64_t device) {
  if (frame->device == device) return frame;
  if (frame->parent == nullptr) return RootFrame(device);
  return Child(OnDevice(frame->parent, device), frame->caller, frame->iteration);
}

absl::StatusOr<Literal> PointEvaluator::EntryRootElements(int64_t device, int64_t leaf,
                                                          absl::Span<const int64_t> indices) {
  const HloInstruction* root = module_.entry_computation()->root_instruction();
  if (device >= num_devices_) {
    return absl::InvalidArgumentError(
        hlo::StrCat("device ", device, " is out of range for ", num_devices_, " devices"));
  }
  return Get(*root, leaf, RootFrame(device), indices);
}

absl::StatusOr<const PointEvaluator::Frame*> PointEvaluator::FrameOf(
    const hlo::HloComputation* computation, int64_t device) {
  if (computation == module_.entry_computation()) return RootFrame(device);
  if (callers_.empty()) {
    for (const auto& c : module_.computations()) {
      for (const auto& instr : c->instructions()) {
        for (const hlo::HloComputation* called : instr->called_computations()) {
          callers_.try_emplace(called, instr.get());
        }
      }
    }
  }
  const auto found = callers_.find(computation);
  if (found == callers_.end()) {
    return absl::InvalidArgumentError(
        hlo::StrCat("computation %", computation->name(), " is called from nowhere"));
  }
  const HloInstruction* caller = found->second;
  ASSIGN_OR_RETURN(const Frame* parent, FrameOf(caller->parent(), device));
  return Child(parent, caller, 0);
}

absl::StatusOr<Literal> PointEvaluator::Elements(const HloInstruction& instr, int64_t leaf,
                                                 int64_t device,
                                                 absl::Span<const int64_t> indices, bool compute) {
  if (device >= num_devices_) {
    return absl::InvalidArgumentError(
        hlo::StrCat("device ", device, " is out of range for ", num_devices_, " devices"));
  }
  ASSIGN_OR_RETURN(const Frame* frame, FrameOf(instr.parent(), device));
  computed_ = compute ? &instr : nullptr;
  absl::StatusOr<Literal> values = Get(instr, leaf, frame, indices);
  computed_ = nullptr;
  return values;
}

absl::Status PointEvaluator::Reserve(int64_t count, const HloInstruction& instr) const {
  if (count > element_budget_ - memoized_elements_) {
    return absl::ResourceExhaustedError(hlo::StrCat(
        "sampled evaluation needs more than ", element_budget_, " elements (at %", instr.name(),
        ", which asks for ", count, " more)"));
  }
  if (deadline_ != std::chrono::steady_clock::time_point::max() &&
      std::chrono::steady_clock::now() > deadline_) {
    return absl::ResourceExhaustedError(
        hlo::StrCat("sampled evaluation ran out of its time (at %", instr.name(), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> PointEvaluator::ComputeNested(const HloInstruction& instr, int64_t leaf,
                                                      const Frame* frame,
                                                      absl::Span<const int64_t> indices) {
  if (depth_ >= kMaxDepth) {
    return absl::ResourceExhaustedError(hlo::StrCat(
        "sampled evaluation nests deeper than ", kMaxDepth, " (at %", instr.name(), ")"));
  }
  ++depth_;
  absl::StatusOr<Literal> values = Compute(instr, leaf, frame, indices);
  --depth_;
  return values;
}

absl::StatusOr<Literal> PointEvaluator::Get(const HloInstruction& instr, int64_t leaf,
                                            const Frame* frame,
                                            absl::Span<const int64_t> indices) {
  ASSIGN_OR_RETURN(const hlo::Shape* shape, points::FlatLeafShape(instr, leaf));
  if (cuts_ != nullptr && &instr != computed_ && cuts_->IsCut(instr)) {
    RETURN_IF_ERROR(Reserve(static_cast<int64_t>(indices.size()), instr));
    memoized_elements_ += static_cast<int64_t>(indices.size());
    Literal out(hlo::Shape::Array(shape->element_type(), {static_cast<int64_t>(indices.size())}));
    RETURN_IF_ERROR(cuts_->Fill(instr, leaf, frame->device, indices, out));
    return out;
  }
  // Values that are another instruction's elements are not memoized a second time.
  if (PassesThrough(instr, frame)) return ComputeNested(instr, leaf, frame, indices);
  const hlo::PrimitiveType type = shape->element_type();
  const int width = hlo::ByteWidth(type);
  const MemoKey key{&instr, leaf, frame};
  std::vector<int64_t> missing;
  {
    const auto found = memo_.find(key);
    for (int64_t i : indices) {
      if (found == memo_.end() || !found->second.Has(i)) missing.push_back(i);
    }
    if (!missing.empty()) {
      if (const std::optional<int64_t> dim = PointOps::WholeRowDimension(instr, leaf)) {
        missing = points::WholeRows(missing, shape->dimensions(), *dim, [&](int64_t i) {
          return found != memo_.end() && found->second.Has(i);
        });
      }
    }
    // Asked indices usually come in order (rows, runs): sort only when they do not.
    if (!std::is_sorted(missing.begin(), missing.end())) std::sort(missing.begin(), missing.end());
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  }
  if (!missing.empty()) {
    RETURN_IF_ERROR(Reserve(static_cast<int64_t>(missing.size()), instr));
    memoized_elements_ += static_cast<int64_t>(missing.size());
    absl::StatusOr<Literal> values = ComputeNested(instr, leaf, frame, missing);
    if (!values.ok()) return values.status();
    // Compute may have grown memo_: look the entry up again.
    memo_[key].SetSorted(missing, *values, width, shape->num_elements());
  }
  const points::ElementMemo& memo = memo_[key];
  Literal out(hlo::Shape::Array(type, {static_cast<int64_t>(indices.size())}));
  for (size_t i = 0; i < indices.size(); ++i) {
    points::SetBits(out, static_cast<int64_t>(i), width, memo.At(indices[i]));
  }
  return out;
}

absl::StatusOr<const Literal*> PointEvaluator::GetAll(const HloInstruction& instr, int64_t leaf,
                                                      const Frame* frame) {
  const MemoKey key{&instr, leaf, frame};
  auto found = whole_.find(key);
  if (found != whole_.end()) return found->second.get();
  ASSIGN_OR_RETURN(const hlo::Shape* shape, points::FlatLeafShape(instr, leaf));
  const int64_t count = shape->num_elements();
  std::vector<int64_t> all(count);
  for (int64_t i = 0; i < count; ++i) all[i] = i;
  ASSIGN_OR_RETURN(Literal values, Get(instr, leaf, frame, all));
  auto made = std::make_unique<Literal>(std::move(values));
  const Literal* out = made.get();
  whole_[key] = std::move(made);
  return out;
}

absl::StatusOr<int64_t> PointEvaluator::ScalarInt(const HloInstruction& instr,
                                                  const Frame* frame) {
  ASSIGN_OR_RETURN(Literal value, Get(instr, 0, frame, {0}));
  if (!hlo::IsIntegralType(value.shape().element_type()) &&
      value.shape().element_type() != hlo::PrimitiveType::kPred) {
    return absl::UnimplementedError(hlo::StrCat("sampled evaluation: %", instr.name(),
                                                " is used as an index but is not an integer"));
  }
  return value.GetInt(0);
}

absl::StatusOr<Literal> PointEvaluator::ComputeParameter(const HloInstruction& instr,
                                                         int64_t leaf, const Frame* frame,
                                                         absl::Span<const int64_t> indices) {
  const int64_t p = instr.parameter_number();
  if (frame->parent == nullptr) {
    if (instr.parent() != module_.entry_computation()) {
      return absl::InternalError(hlo::StrCat("parameter %", instr.name(), " outside its call"));
    }
    ASSIGN_OR_RETURN(const hlo::Shape* shape, points::FlatLeafShape(instr, leaf));
    Literal out(hlo::Shape::Array(shape->element_type(), {static_cast<int64_t>(indices.size())}));
    RETURN_IF_ERROR(arguments_.Fill(p, leaf, frame->device, indices, out));
    return out;
  }
  const HloInstruction& caller = *frame->caller;
  if (caller.opcode() == HloOpcode::kWhile) {  // Iteration 0 reads the init; k reads body k-1.
    if (frame->iteration == 0) return Get(*caller.operand(0), leaf, frame->parent, indices);
    return Get(*caller.while_body()->root_instruction(), leaf,
               Child(frame->parent, &caller, frame->iteration - 1), indices);
  }
  if (caller.opcode() == HloOpcode::kConditional) {  // The frame's branch reads its operand.
    return Get(*caller.operand(frame->iteration + 1), leaf, frame->parent, indices);
  }
  return Get(*caller.operand(p), leaf, frame->parent, indices);  // call, fusion
}

absl::StatusOr<int64_t> PointEvaluator::TripCount(const HloInstruction& loop, const Frame* frame) {
  auto found = trips_.find({&loop, frame});
  if (found != trips_.end()) return found->second;
  const HloInstruction& condition = *loop.while_condition()->root_instruction();
  int64_t t = 0;
  for (;; ++t) {
    ASSIGN_OR_RETURN(int64_t go, ScalarInt(condition, Child(frame, &loop, t)));
    if (go == 0) break;
    if (t >= kMaxTrips) {
      return absl::OutOfRangeError(hlo::StrCat(
          "sampled evaluation: while loop %", loop.name(), " runs over ", kMaxTrips, " trips"));
    }
  }
  trips_[{&loop, frame}] = t;
  return t;
}

absl::StatusOr<Literal> PointEvaluator::ComputeCalled(const HloInstruction& instr, int64_t leaf,
                                                      const Frame* frame,
                                                      absl::Span<const int64_t> indices) {
  if (instr.opcode() == HloOpcode::kWhile) {
    ASSIGN_OR_RETURN(int64_t trips, TripCount(instr, frame));
    if (trips == 0) return Get(*instr.operand(0), leaf, frame, indices);
    return Get(*instr.while_body()->root_instruction(), leaf, Child(frame, &instr, trips - 1),
               indices);
  }
  if (instr.opcode() == HloOpcode::kConditional) {
    ASSIGN_OR_RETURN(int64_t selector, ScalarInt(*instr.operand(0), frame));
    const int64_t branches = static_cast<int64_t>(instr.called_computations().size());
    int64_t branch;
    if (instr.operand(0)->shape().element_type() == hlo::PrimitiveType::kPred) {
      branch = selector != 0 ? 0 : 1;
    } else {
      branch = selector < 0 || selector >= branches ? branches - 1 : selector;
    }
    return Get(*instr.called_computations()[branch]->root_instruction(), leaf,
               Child(frame, &instr, branch), indices);
  }
  return Get(*instr.called_computations().front()->root_instruction(), leaf,  // call, fusion
             Child(frame, &instr, 0), indices);
}

}  // namespace runtime

// XLA's internal SPMD custom-calls whose results are windows of their operand X along one
// dimension d of size N (their meanings: runtime/cpu/ops/spmd_internal_ops.cc). Each result is a
// concatenate of windows of X, so each is built as a composed concatenate (composed_concat.h):
// every block of the result fetches exactly the positions of X it needs from X's shards. The
// windows of each target, written once:
//
//   RotateRight  amount=A                      [X[N-a:N], X[0:N-a]], a = A mod N
//   MultiRotate  left_amount=L, right_amount=R  result i: [X[s:N], X[0:s]], s = (L - i) mod N
//   Wrap         left_amount=L, right_amount=R  [X[N-L:N], X, X[0:R], 0...] cut to the result's
//   size MultiPad     amt=A, operands (X, v)         result i: X with A-i v's low and i high
//
//   %r = (f32[12], f32[12], f32[12]) custom-call(f32[12] %x {devices=[4]<=[4]}),
//        custom_call_target="_SPMDInternalOp_MultiRotate", backend_config="dimension=0,
//        left_amount=1,right_amount=1"
//   -> each result's blocks fetch one neighbour's edge element (collective-permutes), not %x.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir/custom_call_config.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/composed_concat.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

// What the windows of one result read: X and, for a pad, its value.
struct WindowOperands {
  const HloInstruction* x = nullptr;
  const HloInstruction* fill = nullptr;
};

// The windows of result `i` (of `m` positions along d) of a target, from its config; nullopt
// when the config asks for something its meaning does not cover.
using WindowsOf = std::optional<std::vector<ConcatSegment>> (*)(const hlo::CustomCallConfig&,
                                                                const WindowOperands&, int64_t i,
                                                                int64_t n, int64_t m);

// X rotated so that position k holds X[(k + s) mod n].
std::vector<ConcatSegment> Rotated(const HloInstruction* x, int64_t s, int64_t n) {
  s = ((s % n) + n) % n;
  if (s == 0) return {{x, 0, n, 0}};
  return {{x, 0, n - s, s}, {x, n - s, s, 0}};
}

std::optional<std::vector<ConcatSegment>> RotateRight(const hlo::CustomCallConfig& config,
                                                      const WindowOperands& in, int64_t, int64_t n,
                                                      int64_t) {
  absl::StatusOr<int64_t> amount = config.Int("amount");
  if (!amount.ok() || *amount < 0) return std::nullopt;
  return Rotated(in.x, -*amount, n);
}

std::optional<std::vector<ConcatSegment>> MultiRotate(const hlo::CustomCallConfig& config,
                                                      const WindowOperands& in, int64_t i,
                                                      int64_t n, int64_t) {
  absl::StatusOr<int64_t> left = config.Int("left_amount");
  if (!left.ok()) return std::nullopt;
  return Rotated(in.x, *left - i, n);
}

std::optional<std::vector<ConcatSegment>> Wrap(const hlo::CustomCallConfig& config,
                                               const WindowOperands& in, int64_t, int64_t n,
                                               int64_t m) {
  absl::StatusOr<int64_t> left = config.Int("left_amount");
  absl::StatusOr<int64_t> right = config.Int("right_amount");
  if (!left.ok() || !right.ok() || *left < 0 || *right < 0 || *left > n || *right > n) {
    return std::nullopt;
  }
  std::vector<ConcatSegment> out;
  // Positions past the wrapped value hold zeros: a window wholly past X, which fetches nothing
  // into its zero buffer.
  const int64_t wrapped = *left + n + *right;
  const ConcatSegment parts[] = {{in.x, 0, *left, n - *left},
                                 {in.x, *left, n, 0},
                                 {in.x, *left + n, *right, 0},
                                 {in.x, wrapped, std::max<int64_t>(m - wrapped, 0), n}};
  for (ConcatSegment part : parts) {
    part.size = std::min(part.size, m - part.offset);
    if (part.size > 0) out.push_back(part);
  }
  return out;
}

std::optional<std::vector<ConcatSegment>> MultiPad(const hlo::CustomCallConfig& config,
                                                   const WindowOperands& in, int64_t i, int64_t,
                                                   int64_t m) {
  absl::StatusOr<int64_t> amount = config.Int("amt");
  if (!amount.ok() || in.fill == nullptr || i > *amount) return std::nullopt;
  ConcatSegment padded{in.x, 0, m, i - *amount};
  padded.fill = in.fill;
  return std::vector<ConcatSegment>{padded};
}

struct WindowTarget {
  std::string_view target;
  std::vector<std::string_view> keys;  // Config keys besides `dimension` and `bufferize`.
  WindowsOf windows;
};

const std::vector<WindowTarget>& WindowTargets() {
  static const auto* targets = new std::vector<WindowTarget>{
      {"_SPMDInternalOp_RotateRight", {"amount"}, &RotateRight},
      {"_SPMDInternalOp_MultiRotate", {"left_amount", "right_amount"}, &MultiRotate},
      {"_SPMDInternalOp_Wrap", {"left_amount", "right_amount"}, &Wrap},
      {"_SPMDInternalOp_MultiPad", {"amt"}, &MultiPad},
  };
  return *targets;
}

}  // namespace

absl::Status HandleWindowCustomCall(const HloInstruction& original, const HloSharding& sharding,
                                    PartitionContext& ctx) {
  const std::string& name = original.attrs().custom_call_target;
  const WindowTarget* target = nullptr;
  for (const WindowTarget& t : WindowTargets()) {
    if (t.target == name) target = &t;
  }
  std::vector<std::string_view> keys = {"dimension", "bufferize"};
  if (target != nullptr) keys.insert(keys.end(), target->keys.begin(), target->keys.end());
  absl::StatusOr<hlo::CustomCallConfig> config =
      hlo::CustomCallConfig::Parse(name, original.attrs().backend_config, keys);
  absl::StatusOr<int64_t> d = config.ok() ? config->Int("dimension") : config.status();
  const WindowOperands in{original.operand_count() >= 1 ? original.operand(0) : nullptr,
                          original.operand_count() == 2 ? original.operand(1) : nullptr};
  const std::vector<Shape> leaves = original.shape().IsTuple()
                                        ? original.shape().tuple_shapes()
                                        : std::vector<Shape>{original.shape()};
  const bool well_formed = target != nullptr && in.x != nullptr && in.x->shape().IsArray() &&
                           d.ok() && *d >= 0 && *d < in.x->shape().rank() &&
                           in.x->shape().dimensions(*d) > 0;
  if (!well_formed) {
    return FallBackToReplicated(original, sharding, ctx,
                                hlo::StrCat(name,
                                            " without an array operand or a dimension in "
                                            "range of positive size"));
  }
  const int64_t n = in.x->shape().dimensions(*d);
  std::vector<HloInstruction*> values;
  for (int64_t i = 0; i < static_cast<int64_t>(leaves.size()); ++i) {
    const HloSharding& leaf = sharding.IsTuple() ? sharding.tuple_elements()[i] : sharding;
    const Shape& shape = leaves[i];
    if (!MovesDataInTiling(leaf) || !leaf.IsTiled() || !shape.IsArray() ||
        shape.rank() != in.x->shape().rank()) {
      return FallBackToReplicated(original, sharding, ctx,
                                  hlo::StrCat(name,
                                              " with a result not tiled, or with partial "
                                              "sums in its sharding"));
    }
    const int64_t m = shape.dimensions(*d);
    std::optional<std::vector<ConcatSegment>> windows = target->windows(*config, in, i, n, m);
    std::optional<ComposedConcat> plan;
    if (windows.has_value()) {
      plan = PlanFromSegments(*std::move(windows), *d, leaf.tile_assignment().dim(*d), m);
    }
    if (!plan.has_value()) {
      return FallBackToReplicated(original, sharding, ctx,
                                  hlo::StrCat(name, " whose config its windows do not cover"));
    }
    ASSIGN_OR_RETURN(HloInstruction * value, EmitComposedConcat(*plan, shape, leaf, ctx));
    values.push_back(value);
  }
  HloInstruction* result = values[0];
  if (original.shape().IsTuple()) {
    std::vector<Shape> shapes;
    for (const HloInstruction* v : values) shapes.push_back(v->shape());
    result = ctx.Add(hlo::HloOpcode::kTuple, Shape::Tuple(shapes), values);
  }
  ctx.Set(&original, {result, sharding, original.shape()});
  return absl::OkStatus();
}

}  // namespace spmd

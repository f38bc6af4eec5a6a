#include "spmd/partitioner/windowed_einsum.h"

#include <functional>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/builder/spmd_builder.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/reshard/reshard_plan.h"

namespace spmd {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

// A builder of one computation of a windowed loop (the SPMD entry, or the loop's body or
// condition) naming instructions `<prefix>.<n>` from `*counter`, shared by the loop's builders so
// that names are unique in the module.
SpmdBuilder LoopBuilder(HloComputation* computation, const std::string& prefix, int64_t* counter,
                        PartitionContext& ctx) {
  SpmdBuilder builder(computation, &ctx.channel_ids(),
                      NameScheme{".", /*by_unique_id=*/false, prefix});
  builder.NumberFrom(counter);
  return builder;
}

// The local dot of `original` (its attributes, a loop name) on `lhs` and `rhs`.
HloInstruction* AddDot(SpmdBuilder& b, const HloInstruction& original, HloInstruction* lhs,
                       HloInstruction* rhs, Shape shape) {
  HloInstruction* dot = b.Add(HloOpcode::kDot, std::move(shape), {lhs, rhs});
  dot->ShareAttributes(original);
  return dot;
}

// Ring position of every device (-1 where a device is in no ring) and the permute pairs that
// move data from member j+shift to member j of each ring.
std::vector<int64_t> RingPositions(const std::vector<std::vector<int64_t>>& rings, int64_t n) {
  std::vector<int64_t> pos(n, 0);
  for (const std::vector<int64_t>& ring : rings) {
    for (size_t i = 0; i < ring.size(); ++i) pos[ring[i]] = static_cast<int64_t>(i);
  }
  return pos;
}

std::vector<std::pair<int64_t, int64_t>> RingPairs(const std::vector<std::vector<int64_t>>& rings,
                                                   int64_t source_shift) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const std::vector<int64_t>& ring : rings) {
    const int64_t g = static_cast<int64_t>(ring.size());
    for (int64_t j = 0; j < g; ++j) pairs.push_back({ring[(j + source_shift + g) % g], ring[j]});
  }
  return pairs;
}

// The shape of the loop state and the pieces every loop shares.
struct Loop {
  HloComputation* body = nullptr;
  HloComputation* condition = nullptr;
  HloInstruction* body_param = nullptr;
};

// Creates body and condition computations for a state of `state_shape` whose element 0 is
// the s32 step counter; the condition is `k < trip_count`.
Loop MakeLoop(const std::string& name, const Shape& state_shape, int64_t trip_count,
              PartitionContext& ctx, int64_t* counter) {
  hlo::HloModule* module = ctx.output()->parent();
  Loop loop;
  loop.body = module->AddComputation(std::make_unique<HloComputation>(name + ".body"));
  loop.condition = module->AddComputation(std::make_unique<HloComputation>(name + ".cond"));
  SpmdBuilder body = LoopBuilder(loop.body, name + ".body", counter, ctx);
  loop.body_param = body.Add(HloOpcode::kParameter, state_shape, {});
  SpmdBuilder cond = LoopBuilder(loop.condition, name + ".cond", counter, ctx);
  HloInstruction* param = cond.Add(HloOpcode::kParameter, state_shape, {});
  HloInstruction* k = cond.GetTupleElement(param, 0);
  HloInstruction* lt = cond.Add(HloOpcode::kCompare, Shape::Array(PrimitiveType::kPred, {}),
                                {k, cond.S32(trip_count)});
  lt->mutable_attrs()->comparison_direction = hlo::ComparisonDirection::kLt;
  loop.condition->set_root_instruction(lt);
  return loop;
}

// A unidirectional ring loop: `steps` applications of `step`, the circulated state element
// `moving` permuted by `pairs` after each but the last.
struct LoopSpec {
  std::string name;
  int64_t steps = 0;
  std::vector<HloInstruction*> state;  // Beyond (k, r). The last one is the accumulator.
  int64_t moving = 0;                  // Index into `state` of the circulated value.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  // Computes the new accumulator from (k, r, state) inside `b`.
  std::function<HloInstruction*(SpmdBuilder&, HloInstruction*, HloInstruction*,
                                const std::vector<HloInstruction*>&)>
      step;
};

// Emits `spec`: a while loop of steps-1 iterations over the state (k, r, state...), each one
// step and one permute, then the last step outside the loop. Returns the final accumulator.
absl::StatusOr<HloInstruction*> EmitRingLoop(const LoopSpec& spec, HloInstruction* rank,
                                             PartitionContext& ctx) {
  int64_t counter = 0;
  const std::string prefix = ctx.UniqueName(spec.name);
  SpmdBuilder outer = LoopBuilder(ctx.output(), prefix, &counter, ctx);
  std::vector<HloInstruction*> init = {outer.S32(0), rank};
  init.insert(init.end(), spec.state.begin(), spec.state.end());
  std::vector<Shape> shapes;
  for (HloInstruction* v : init) shapes.push_back(v->shape());
  const Shape state_shape = Shape::Tuple(shapes);
  HloInstruction* tuple = outer.Add(HloOpcode::kTuple, state_shape, init);
  Loop loop = MakeLoop(prefix, state_shape, spec.steps - 1, ctx, &counter);
  const int64_t acc = static_cast<int64_t>(spec.state.size()) - 1;
  const int64_t moving = spec.moving;
  // Body: one step, then the circulated value moves one position around the ring.
  {
    SpmdBuilder b = LoopBuilder(loop.body, prefix + ".body", &counter, ctx);
    std::vector<HloInstruction*> parts;
    for (int64_t i = 0; i < static_cast<int64_t>(init.size()); ++i) {
      parts.push_back(b.GetTupleElement(loop.body_param, i));
    }
    std::vector<HloInstruction*> state(parts.begin() + 2, parts.end());
    state[acc] = spec.step(b, parts[0], parts[1], state);
    state[moving] = b.CollectivePermute(state[moving], spec.pairs);
    std::vector<HloInstruction*> next = {b.Binary(HloOpcode::kAdd, parts[0], b.S32(1)), parts[1]};
    next.insert(next.end(), state.begin(), state.end());
    loop.body->set_root_instruction(b.Add(HloOpcode::kTuple, state_shape, next));
  }
  HloInstruction* w = outer.Add(HloOpcode::kWhile, state_shape, {tuple});
  w->AppendCalledComputation(loop.condition);
  w->AppendCalledComputation(loop.body);
  // The last step, outside the loop: nothing moves after it.
  std::vector<HloInstruction*> parts;
  for (int64_t i = 0; i < static_cast<int64_t>(init.size()); ++i)
    parts.push_back(outer.GetTupleElement(w, i));
  std::vector<HloInstruction*> state(parts.begin() + 2, parts.end());
  return spec.step(outer, parts[0], parts[1], state);
}

absl::StatusOr<Shape> LocalResultShape(const DotCandidate& c, const DotProblem& p) {
  return LocalShape(c.local, p.result_shape);
}

// What every all-gather loop step does: the dot of the block that came from ring position
// `index` with the matching part of the other operand, written into (or added to) the
// accumulator. A null `acc` (the first step, when blocks are added) starts the sum with the
// partial itself: no zeros to add it to.
struct AllGatherBlocks {
  const HloInstruction* dot = nullptr;
  bool lhs_moves = true;
  int64_t g = 0, blk = 0, other_dim = -1, out_dim = -1;
  Shape partial_shape;

  HloInstruction* Accumulate(SpmdBuilder& b, HloInstruction* acc, HloInstruction* index,
                             HloInstruction* block, HloInstruction* other) const {
    HloInstruction* start = b.Binary(HloOpcode::kMultiply, index, b.S32(blk));
    HloInstruction* rest = other_dim >= 0 ? b.SliceDim(other, other_dim, start, blk) : other;
    HloInstruction* partial = lhs_moves ? AddDot(b, *dot, block, rest, partial_shape)
                                        : AddDot(b, *dot, rest, block, partial_shape);
    if (out_dim >= 0) return b.UpdateDim(acc, partial, out_dim, start);
    return acc == nullptr ? partial : b.Binary(HloOpcode::kAdd, acc, partial);
  }
  // (r + shift) mod g for a non-negative `shift` expression.
  HloInstruction* Index(SpmdBuilder& b, HloInstruction* r, HloInstruction* shift) const {
    return b.Binary(HloOpcode::kRemainder, b.Binary(HloOpcode::kAdd, r, shift), b.S32(g));
  }
};

absl::StatusOr<AllGatherBlocks> MakeAllGatherBlocks(const HloInstruction& dot,
                                                    const DotProblem& problem,
                                                    const DotCandidate& c,
                                                    const HloInstruction* block) {
  const WindowedLoop& w = c.windowed;
  const DotSpace& s = problem.space;
  AllGatherBlocks blocks;
  blocks.dot = &dot;
  blocks.lhs_moves = w.operand == 0;
  const int64_t sd =
      blocks.lhs_moves ? s.lhs_to_space()[w.operand_dim] : s.rhs_to_space()[w.operand_dim];
  blocks.other_dim = blocks.lhs_moves ? s.dim(sd).rhs : s.dim(sd).lhs;
  blocks.out_dim = s.dim(sd).result;
  blocks.g = w.steps;
  blocks.blk = block->shape().dimensions()[w.operand_dim];
  ASSIGN_OR_RETURN(Shape acc_shape, LocalResultShape(c, problem));
  RET_CHECK(blocks.out_dim < 0 || acc_shape.dimensions()[blocks.out_dim] == blocks.g * blocks.blk);
  std::vector<int64_t> dims = acc_shape.dimensions();
  if (blocks.out_dim >= 0) dims[blocks.out_dim] = blocks.blk;
  blocks.partial_shape = Shape::Array(acc_shape.element_type(), dims);
  return blocks;
}

// Bidirectional: blocks travel both ways round the ring at once, so about g/2 transfer steps
// (each moving one block in each direction) replace g-1. Step 0 uses the device's own block;
// step i >= 1 the blocks from positions r+i and r-i; for even g a last step takes r+g/2.
absl::StatusOr<HloInstruction*> EmitBidirectionalAllGatherLoop(
    const AllGatherBlocks& blocks, const std::vector<std::vector<int64_t>>& rings,
    HloInstruction* block, HloInstruction* other, HloInstruction* acc_init,
    HloInstruction* rank, PartitionContext& ctx) {
  const int64_t g = blocks.g;
  int64_t counter = 0;
  const std::string prefix = ctx.UniqueName(blocks.dot->name() + ".window_ag2");
  SpmdBuilder outer = LoopBuilder(ctx.output(), prefix, &counter, ctx);
  HloInstruction* acc = blocks.Accumulate(outer, acc_init, rank, block, other);
  const auto forward = RingPairs(rings, 1), backward = RingPairs(rings, -1);
  const int64_t full_steps = (g - 1) / 2;
  std::vector<HloInstruction*> init = {outer.S32(0), rank, block, block, other, acc};
  std::vector<Shape> shapes;
  for (HloInstruction* v : init) shapes.push_back(v->shape());
  const Shape state_shape = Shape::Tuple(shapes);
  Loop loop = MakeLoop(prefix, state_shape, full_steps, ctx, &counter);
  {
    SpmdBuilder b = LoopBuilder(loop.body, prefix + ".body", &counter, ctx);
    std::vector<HloInstruction*> p;
    for (int64_t i = 0; i < 6; ++i) p.push_back(b.GetTupleElement(loop.body_param, i));
    HloInstruction* step = b.Binary(HloOpcode::kAdd, p[0], b.S32(1));
    HloInstruction* fwd = b.CollectivePermute(p[2], forward);
    HloInstruction* bwd = b.CollectivePermute(p[3], backward);
    HloInstruction* a = blocks.Accumulate(b, p[5], blocks.Index(b, p[1], step), fwd, p[4]);
    HloInstruction* back = b.Binary(HloOpcode::kSubtract, b.S32(g), step);
    a = blocks.Accumulate(b, a, blocks.Index(b, p[1], back), bwd, p[4]);
    loop.body->set_root_instruction(b.Add(HloOpcode::kTuple, state_shape,
                                          {step, p[1], fwd, bwd, p[4], a}));
  }
  HloInstruction* w = outer.Add(HloOpcode::kWhile, state_shape,
                                {outer.Add(HloOpcode::kTuple, state_shape, init)});
  w->AppendCalledComputation(loop.condition);
  w->AppendCalledComputation(loop.body);
  acc = outer.GetTupleElement(w, 5);
  if (g % 2 == 0) {  // The block opposite on the ring arrives last, one way only.
    HloInstruction* fwd = outer.CollectivePermute(outer.GetTupleElement(w, 2), forward);
    acc = blocks.Accumulate(outer, acc, blocks.Index(outer, rank, outer.S32(g / 2)), fwd,
                            outer.GetTupleElement(w, 4));
  }
  return acc;
}

// What every reduce-scatter loop step does: the partial dot of result block `index` (rows
// `offset`..`offset`+size of it along the result dim `d`) added to the travelling sum.
struct ReduceScatterBlocks {
  const HloInstruction* dot = nullptr;
  int64_t g = 0, blk = 0, lhs_dim = -1, rhs_dim = -1, d = -1;

  HloInstruction* Accumulate(SpmdBuilder& b, HloInstruction* acc, HloInstruction* index,
                             int64_t offset, const Shape& part_shape, HloInstruction* lhs,
                             HloInstruction* rhs) const {
    const int64_t size = part_shape.dimensions()[d];
    HloInstruction* start = b.Binary(HloOpcode::kAdd,
                                      b.Binary(HloOpcode::kMultiply, index, b.S32(blk)),
                                      b.S32(offset));
    HloInstruction* l = lhs_dim >= 0 ? b.SliceDim(lhs, lhs_dim, start, size) : lhs;
    HloInstruction* r = rhs_dim >= 0 ? b.SliceDim(rhs, rhs_dim, start, size) : rhs;
    return b.Binary(HloOpcode::kAdd, acc, AddDot(b, *dot, l, r, part_shape));
  }
  // (r + shift) mod g for a non-negative `shift` expression.
  HloInstruction* Index(SpmdBuilder& b, HloInstruction* r, HloInstruction* shift) const {
    return b.Binary(HloOpcode::kRemainder, b.Binary(HloOpcode::kAdd, r, shift), b.S32(g));
  }
};

// Bidirectional reduce-scatter: the first half of every block is summed by a partial sum
// travelling forward round the ring (step k adds block r-k-1), the second half by one
// travelling backward (step k adds block r+k+1); after g steps both halves of block r are on
// device r and are concatenated. Each step moves half a block each way.
absl::StatusOr<HloInstruction*> EmitBidirectionalReduceScatterLoop(
    const ReduceScatterBlocks& blocks, const std::vector<std::vector<int64_t>>& rings,
    HloInstruction* lhs, HloInstruction* rhs, const Shape& block_shape, HloInstruction* rank,
    PartitionContext& ctx) {
  const int64_t g = blocks.g, half = blocks.blk / 2;
  std::vector<int64_t> half_dims = block_shape.dimensions();
  half_dims[blocks.d] = half;
  const Shape half_shape = Shape::Array(block_shape.element_type(), half_dims);
  int64_t counter = 0;
  const std::string prefix = ctx.UniqueName(blocks.dot->name() + ".window_rs2");
  SpmdBuilder outer = LoopBuilder(ctx.output(), prefix, &counter, ctx);
  // Step k: the forward sum adds block (r + g-1-k) mod g, the backward one (r + k+1) mod g.
  auto step = [&](SpmdBuilder& b, HloInstruction* k, HloInstruction* r, HloInstruction* l,
                  HloInstruction* rr, HloInstruction* fwd, HloInstruction* bwd) {
    HloInstruction* f_index =
        blocks.Index(b, r, b.Binary(HloOpcode::kSubtract, b.S32(g - 1), k));
    HloInstruction* b_index = blocks.Index(b, r, b.Binary(HloOpcode::kAdd, k, b.S32(1)));
    return std::make_pair(blocks.Accumulate(b, fwd, f_index, 0, half_shape, l, rr),
                          blocks.Accumulate(b, bwd, b_index, half, half_shape, l, rr));
  };
  std::vector<HloInstruction*> init = {outer.S32(0), rank, lhs, rhs, outer.Zeros(half_shape),
                                       outer.Zeros(half_shape)};
  std::vector<Shape> shapes;
  for (HloInstruction* v : init) shapes.push_back(v->shape());
  const Shape state_shape = Shape::Tuple(shapes);
  Loop loop = MakeLoop(prefix, state_shape, g - 1, ctx, &counter);
  {
    SpmdBuilder b = LoopBuilder(loop.body, prefix + ".body", &counter, ctx);
    std::vector<HloInstruction*> p;
    for (int64_t i = 0; i < 6; ++i) p.push_back(b.GetTupleElement(loop.body_param, i));
    auto [fwd, bwd] = step(b, p[0], p[1], p[2], p[3], p[4], p[5]);
    fwd = b.CollectivePermute(fwd, RingPairs(rings, -1));
    bwd = b.CollectivePermute(bwd, RingPairs(rings, 1));
    HloInstruction* next = b.Binary(HloOpcode::kAdd, p[0], b.S32(1));
    loop.body->set_root_instruction(
        b.Add(HloOpcode::kTuple, state_shape, {next, p[1], p[2], p[3], fwd, bwd}));
  }
  HloInstruction* w = outer.Add(HloOpcode::kWhile, state_shape,
                                {outer.Add(HloOpcode::kTuple, state_shape, init)});
  w->AppendCalledComputation(loop.condition);
  w->AppendCalledComputation(loop.body);
  // The last step, outside the loop: nothing moves after it.
  auto [fwd, bwd] = step(outer, outer.GetTupleElement(w, 0), outer.GetTupleElement(w, 1),
                         outer.GetTupleElement(w, 2), outer.GetTupleElement(w, 3),
                         outer.GetTupleElement(w, 4), outer.GetTupleElement(w, 5));
  HloInstruction* joined = outer.Add(HloOpcode::kConcatenate, block_shape, {fwd, bwd});
  joined->mutable_attrs()->dimensions = {blocks.d};
  return joined;
}

}  // namespace

absl::StatusOr<HloInstruction*> EmitAllGatherLoop(const HloInstruction& dot,
                                                  const DotProblem& problem,
                                                  const DotCandidate& c, HloInstruction* block,
                                                  HloInstruction* other, PartitionContext& ctx) {
  const WindowedLoop& w = c.windowed;
  ASSIGN_OR_RETURN(AllGatherBlocks blocks, MakeAllGatherBlocks(dot, problem, c, block));
  ASSIGN_OR_RETURN(Shape acc_shape, LocalResultShape(c, problem));
  HloInstruction* rank = ctx.PerDeviceScalar(RingPositions(w.groups, ctx.num_devices()));
  int64_t zero_counter = 0;
  SpmdBuilder outer =
      LoopBuilder(ctx.output(), ctx.UniqueName(dot.name() + ".acc"), &zero_counter, ctx);
  if (w.bidirectional) {
    // Its first step runs before the loop: a sum starts from that step's partial.
    HloInstruction* first = blocks.out_dim < 0 ? nullptr : outer.Zeros(acc_shape);
    return EmitBidirectionalAllGatherLoop(blocks, w.groups, block, other, first, rank, ctx);
  }
  HloInstruction* zeros = outer.Zeros(acc_shape);
  LoopSpec spec;
  spec.name = dot.name() + ".window_ag";
  spec.steps = blocks.g;
  spec.state = {block, other, zeros};
  spec.moving = 0;
  spec.pairs = RingPairs(w.groups, /*source_shift=*/1);
  spec.step = [&blocks](SpmdBuilder& b, HloInstruction* k, HloInstruction* r,
                        const std::vector<HloInstruction*>& st) {
    return blocks.Accumulate(b, st[2], blocks.Index(b, r, k), st[0], st[1]);
  };
  return EmitRingLoop(spec, rank, ctx);
}

absl::StatusOr<HloInstruction*> EmitReduceScatterLoop(const HloInstruction& dot,
                                                      const DotProblem& problem,
                                                      const DotCandidate& c, HloInstruction* lhs,
                                                      HloInstruction* rhs, PartitionContext& ctx) {
  const WindowedLoop& w = c.windowed;
  const DotSpace& s = problem.space;
  const int64_t d = c.scatter_dim;
  const int64_t sd = s.result_to_space()[d];
  const int64_t lhs_dim = s.dim(sd).lhs, rhs_dim = s.dim(sd).rhs;
  const int64_t g = w.steps;
  ASSIGN_OR_RETURN(Shape local, LocalResultShape(c, problem));
  RET_CHECK(local.dimensions()[d] % g == 0);
  const int64_t blk = local.dimensions()[d] / g;
  std::vector<int64_t> block_dims = local.dimensions();
  block_dims[d] = blk;
  const Shape block_shape = Shape::Array(local.element_type(), block_dims);
  HloInstruction* rank = ctx.PerDeviceScalar(RingPositions(w.groups, ctx.num_devices()));
  int64_t zero_counter = 0;
  SpmdBuilder outer =
      LoopBuilder(ctx.output(), ctx.UniqueName(dot.name() + ".acc"), &zero_counter, ctx);
  const ReduceScatterBlocks blocks{&dot, g, blk, lhs_dim, rhs_dim, d};
  if (w.bidirectional) {
    return EmitBidirectionalReduceScatterLoop(blocks, w.groups, lhs, rhs, block_shape, rank,
                                              ctx);
  }
  LoopSpec spec;
  spec.name = dot.name() + ".window_rs";
  spec.steps = g;
  spec.state = {lhs, rhs, outer.Zeros(block_shape)};
  spec.moving = 2;
  spec.pairs = RingPairs(w.groups, /*source_shift=*/-1);
  spec.step = [&blocks, block_shape](SpmdBuilder& b, HloInstruction* k, HloInstruction* r,
                                     const std::vector<HloInstruction*>& st) {
    // Block (r - k - 1) mod g, kept non-negative: r + (g - 1 - k) with k <= g - 1.
    HloInstruction* shifted = b.Binary(HloOpcode::kSubtract, b.S32(blocks.g - 1), k);
    return blocks.Accumulate(b, st[2], blocks.Index(b, r, shifted), 0, block_shape, st[0], st[1]);
  };
  return EmitRingLoop(spec, rank, ctx);
}

}  // namespace spmd

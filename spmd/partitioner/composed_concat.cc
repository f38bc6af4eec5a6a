#include "spmd/partitioner/composed_concat.h"

#include <algorithm>
#include <set>
#include <utility>

#include "hlo/ir/custom_call_config.h"
#include "hlo/ir/hlo_opcode.h"
#include "hlo/status_macros.h"
#include "spmd/partitioner/halo_exchange.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

// `v` with the copies and sharding annotations in front of it skipped (JAX's exports put a
// `Sharding` custom-call between a roll's slices and its concatenate).
const HloInstruction* SkipCopies(const HloInstruction* v) {
  while (v->opcode() == HloOpcode::kCopy || MarksItsOperand(*v)) v = v->operand(0);
  return v;
}

// A unit-stride slice that keeps every dim but `d` whole.
bool SlicesAlongOnly(const HloInstruction& v, int64_t d) {
  if (v.opcode() != HloOpcode::kSlice) return false;
  const std::vector<hlo::SliceDimension>& dims = v.attrs().slice_dimensions;
  for (int64_t k = 0; k < static_cast<int64_t>(dims.size()); ++k) {
    if (dims[k].stride != 1) return false;
    if (k != d && (dims[k].start != 0 || dims[k].limit != v.operand(0)->shape().dimensions(k))) {
      return false;
    }
  }
  return true;
}

// An edge pad along `d` alone.
bool PadsAlongOnly(const HloInstruction& v, int64_t d) {
  if (v.opcode() != HloOpcode::kPad || !v.attrs().padding_config.has_value()) return false;
  const std::vector<hlo::PaddingDimension>& dims = v.attrs().padding_config->dimensions;
  for (int64_t k = 0; k < static_cast<int64_t>(dims.size()); ++k) {
    if (dims[k].interior_padding != 0) return false;
    if (k != d && (dims[k].edge_padding_low != 0 || dims[k].edge_padding_high != 0)) return false;
  }
  return true;
}

// A unary elementwise op (negate, convert, ...) keeping its operand's dims.
bool IsModifier(const HloInstruction& v) {
  return v.operand_count() == 1 && hlo::IsElementwiseOpcode(v.opcode()) &&
         v.operand(0)->shape().IsArray() &&
         v.operand(0)->shape().dimensions() == v.shape().dimensions();
}

// `operand` as a window of its source: [modifiers] [slice] [pad], through copies and sharding
// annotations; the operand itself when it is no window of another value.
ConcatSegment Walk(const HloInstruction* operand, int64_t d, int64_t offset) {
  ConcatSegment self{operand, offset, operand->shape().dimensions(d)};
  ConcatSegment s = self;
  std::vector<const HloInstruction*> modifiers;
  const HloInstruction* v = SkipCopies(operand);
  while (IsModifier(*v)) {
    modifiers.push_back(v);
    v = SkipCopies(v->operand(0));
  }
  bool window = false;
  if (SlicesAlongOnly(*v, d)) {
    s.start += v->attrs().slice_dimensions[d].start;
    v = SkipCopies(v->operand(0));
    window = true;
  }
  if (PadsAlongOnly(*v, d)) {
    s.start -= v->attrs().padding_config->dimensions[d].edge_padding_low;
    s.fill = v->operand(1);
    v = SkipCopies(v->operand(0));
    window = true;
  }
  if (!window || !v->shape().IsArray() || v->shape().dimensions(d) == 0) return self;
  s.source = v;
  s.modifiers.assign(modifiers.rbegin(), modifiers.rend());
  return s;
}

// The pieces block `b` (result positions [b*os, min((b+1)*os, m))) reads from segment `k`'s
// source, whose shards along `d` hold `shard` positions each.
void AddPieces(const ConcatSegment& seg, int64_t k, int64_t d, int64_t b, int64_t os, int64_t m,
               int64_t shard, SourcePieces& out) {
  const int64_t lo = std::max(b * os, seg.offset);
  const int64_t hi = std::min({(b + 1) * os, m, seg.offset + seg.size});
  if (lo >= hi) return;
  const int64_t n = seg.source->shape().dimensions(d);
  const int64_t shift = seg.start - seg.offset;  // Source position of result position 0.
  const int64_t xlo = std::max<int64_t>(lo + shift, 0);
  const int64_t xhi = std::min(hi + shift, n);
  for (int64_t j = xlo / shard; xlo < xhi && j * shard < xhi; ++j) {
    const int64_t rs = std::max(xlo, j * shard) - j * shard;
    const int64_t re = std::min(xhi, (j + 1) * shard) - j * shard;
    out.pieces.push_back({b, j, rs, re - rs, std::min(shard, n - j * shard)});
    out.segment.push_back(k);
    out.destination.push_back(j * shard + rs - shift - b * os);
  }
}

// The local shape of `value` in `sharding` with `length` positions along `d`.
absl::StatusOr<Shape> BlockShape(const HloInstruction& value, const HloSharding& sharding,
                                 int64_t d, int64_t length) {
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, value.shape()));
  std::vector<int64_t> dims = local.dimensions();
  dims[d] = length;
  return Shape::Array(value.shape().element_type(), dims);
}

int64_t Slack(const ComposedConcat& plan) {
  int64_t slack = 0;
  for (const SourcePieces& src : plan.sources) {
    for (const FetchRound& r : src.rounds) slack = std::max(slack, r.width);
  }
  return slack;
}

// Writes round `r` of `src` into the buffers of the segments it fills. `piece` is what each
// device received; a device whose piece fills another segment parks it in the high slack.
void WriteRound(const SourcePieces& src, const FetchRound& r, HloInstruction* piece, int64_t d,
                const std::vector<int64_t>& block, int64_t os, int64_t slack,
                std::vector<HloInstruction*>& buffers, PartitionContext& ctx) {
  std::set<int64_t> filled;
  for (int64_t id : r.piece) {
    if (id >= 0) filled.insert(src.segment[id]);
  }
  for (int64_t k : filled) {
    HloInstruction* at = PerBlockScalar(ctx, block, [&](int64_t i) -> int64_t {
      const int64_t id = r.piece[i];
      if (id < 0 || src.segment[id] != k) return os + 2 * slack - r.width;
      // A piece riding a wider round starts earlier in its sender's shard.
      return slack + src.destination[id] - (src.pieces[id].rs - r.start[i]);
    });
    buffers[k] = ctx.builder().UpdateDim(buffers[k], piece, d, at);
  }
}

}  // namespace

std::optional<ComposedConcat> PlanFromSegments(std::vector<ConcatSegment> segments, int64_t d,
                                               int64_t tiles, int64_t m) {
  ComposedConcat plan;
  plan.dim = d;
  plan.tiles = tiles;
  plan.block = CeilDiv(m, tiles);
  plan.segments = std::move(segments);
  if (plan.block == 0) return std::nullopt;
  for (int64_t k = 0; k < static_cast<int64_t>(plan.segments.size()); ++k) {
    const ConcatSegment& seg = plan.segments[k];
    auto it = std::find_if(plan.sources.begin(), plan.sources.end(),
                           [&](const SourcePieces& s) { return s.source == seg.source; });
    if (it == plan.sources.end()) {
      plan.sources.push_back({seg.source});
      it = plan.sources.end() - 1;
    }
    const int64_t shard = CeilDiv(seg.source->shape().dimensions(d), tiles);
    if (shard == 0) return std::nullopt;
    for (int64_t b = 0; b < tiles; ++b) AddPieces(seg, k, d, b, plan.block, m, shard, *it);
  }
  for (SourcePieces& src : plan.sources) src.rounds = PackWidestFirst(src.pieces, tiles);
  return plan;
}

std::optional<ComposedConcat> PlanComposedConcat(const HloInstruction& concatenate,
                                                 const HloSharding& sharding) {
  const int64_t d = concatenate.dimensions()[0];
  std::vector<ConcatSegment> segments;
  bool composed = false;
  int64_t offset = 0;
  for (const HloInstruction* operand : concatenate.operands()) {
    segments.push_back(Walk(operand, d, offset));
    composed |= segments.back().source != operand;
    offset += operand->shape().dimensions(d);
  }
  if (!composed) return std::nullopt;
  return PlanFromSegments(std::move(segments), d, sharding.tile_assignment().dim(d),
                          concatenate.shape().dimensions(d));
}

Received ComposedConcatCost(const ComposedConcat& plan, const HloSharding& sharding,
                            PartitionContext& ctx) {
  Received total;
  // A pad's value that is no constant is fetched whole (each distinct one once).
  std::set<const HloInstruction*> fills;
  for (const ConcatSegment& seg : plan.segments) {
    if (seg.fill != nullptr && seg.fill->opcode() != HloOpcode::kConstant &&
        fills.insert(seg.fill).second) {
      absl::StatusOr<HloSharding> whole = ReplicatedIn(sharding, seg.fill->shape());
      total =
          total + (whole.ok() ? ReshardReceived(seg.fill, *whole, ctx) : Received::Unplannable());
    }
  }
  for (const SourcePieces& src : plan.sources) {
    total = total + ReshardReceived(src.source, sharding, ctx);
    absl::StatusOr<Shape> row = BlockShape(*src.source, sharding, plan.dim, 1);
    if (!row.ok()) return Received::Unplannable();
    for (const FetchRound& r : src.rounds) {
      if (r.local) continue;
      const int64_t bytes = r.width * row->byte_size();
      total = total + Received{bytes, TransferTimeUs(bytes, CollectiveLink(ctx))};
    }
  }
  return total;
}

absl::StatusOr<HloInstruction*> EmitComposedConcat(const ComposedConcat& plan,
                                                   const Shape& result_shape,
                                                   const HloSharding& sharding,
                                                   PartitionContext& ctx) {
  const int64_t d = plan.dim, os = plan.block, slack = Slack(plan);
  const std::vector<int64_t> block = BlockOfDevice(sharding, d, ctx.num_devices());
  std::vector<HloInstruction*> buffers(plan.segments.size(), nullptr);
  for (size_t k = 0; k < plan.segments.size(); ++k) {
    ASSIGN_OR_RETURN(Shape shape,
                     BlockShape(*plan.segments[k].source, sharding, d, os + 2 * slack));
    buffers[k] = ctx.builder().Zeros(shape);
  }
  for (const SourcePieces& src : plan.sources) {
    ASSIGN_OR_RETURN(HloInstruction * x, ctx.GetInSharding(src.source, sharding));
    for (const FetchRound& r : src.rounds) {
      HloInstruction* piece = SendRound(ctx, x, sharding, d, block, r);
      WriteRound(src, r, piece, d, block, os, slack, buffers, ctx);
    }
  }
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, result_shape));
  HloInstruction* block_start = PerBlockScalar(ctx, block, [&](int64_t i) { return i * os; });
  HloInstruction* result = nullptr;
  for (size_t k = 0; k < plan.segments.size(); ++k) {
    const ConcatSegment& seg = plan.segments[k];
    HloInstruction* window = SliceDim(ctx, buffers[k], d, slack, slack + os);
    if (seg.fill != nullptr && !IsZeroConstant(*seg.fill)) {
      // Positions outside the source hold the pad's value.
      HloInstruction* origin =
          PerBlockScalar(ctx, block, [&](int64_t i) { return i * os + seg.start - seg.offset; });
      HloInstruction* inside = ctx.PositionInRange(
          window->shape(), d, origin, ctx.ScalarConstant(hlo::PrimitiveType::kS32, 0),
          ctx.ScalarConstant(hlo::PrimitiveType::kS32,
                             static_cast<double>(seg.source->shape().dimensions(d))));
      ASSIGN_OR_RETURN(HloInstruction * fill, GetReplicated(seg.fill, ctx));
      window = ctx.Add(HloOpcode::kSelect, window->shape(),
                       {inside, window, ctx.Add(HloOpcode::kBroadcast, window->shape(), {fill})});
    }
    for (const HloInstruction* modifier : seg.modifiers) {
      window = CloneWithOperands(
          *modifier, Shape::Array(modifier->shape().element_type(), window->shape().dimensions()),
          {window}, ctx);
    }
    if (result == nullptr) {
      result = window;
      continue;
    }
    HloInstruction* in_range = ctx.PositionInRange(
        local, d, block_start, ctx.ScalarConstant(hlo::PrimitiveType::kS32, seg.offset),
        ctx.ScalarConstant(hlo::PrimitiveType::kS32, seg.offset + seg.size));
    result = ctx.Add(HloOpcode::kSelect, local, {in_range, window, result});
  }
  return result;
}

}  // namespace spmd

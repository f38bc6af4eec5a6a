// Elementwise ops (unary, binary, compare, select, clamp, convert, copy, ..., and a cross-replica
// all-reduce): every array operand of the result's rank is asked for in the result's sharding;
// scalars stay replicated; the op runs locally on the padded shards (padding stays in the
// padding).
//
//   %r = f32[16] add(%a, %b), sharding={devices=[4]<=[4]}
//   -> %r.spmd = f32[4] add(%a.shard, %b.shard)
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "hlo/sharding/unreduced.h"
#include "hlo/status_macros.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

// Whether `original`, run on each device's partial sums, gives partial sums of its result:
// sums, differences, negation and copies of operands that are all partial sums alike (a
// replicated or scalar operand would be counted once per device; a convert rounds each part).
bool KeepsPartialSums(const HloInstruction& original) {
  static const auto* linear =
      new absl::flat_hash_set<HloOpcode>{HloOpcode::kAdd, HloOpcode::kSubtract, HloOpcode::kNegate,
                                         HloOpcode::kCopy};
  if (!linear->contains(original.opcode())) return false;
  for (const HloInstruction* operand : original.operands()) {
    if (!operand->shape().IsArray() || operand->shape().rank() != original.shape().rank()) {
      return false;
    }
  }
  return true;
}

absl::Status HandleElementwise(const HloInstruction& original, const HloSharding& wanted,
                               PartitionContext& ctx) {
  if (!original.shape().IsArray() || wanted.IsTuple()) {
    return FallBackToReplicated(original, wanted, ctx, "an elementwise op with a tuple result");
  }
  // A non-linear op (exp, multiply, ...) needs whole values: it runs on the summed operands,
  // and the result is made partial again only where a user asks for that.
  std::optional<HloSharding> reduced;
  if (hlo::HasUnreduced(wanted) && !KeepsPartialSums(original)) {
    ASSIGN_OR_RETURN(reduced, hlo::UnreducedAsReplicated(wanted));
  }
  const HloSharding& sharding = reduced ? *reduced : wanted;
  static const HloSharding* const kReplicated = new HloSharding(HloSharding::Replicate());
  std::vector<HloInstruction*> operands;
  operands.reserve(original.operand_count());
  for (const HloInstruction* operand : original.operands()) {
    const bool scalar_operand = operand->shape().IsArray() && operand->shape().rank() == 0 &&
                                original.shape().rank() > 0;
    ASSIGN_OR_RETURN(HloInstruction * value,
                     ctx.GetInSharding(operand, scalar_operand ? *kReplicated : sharding));
    operands.push_back(value);
  }
  ASSIGN_OR_RETURN(Shape local, LocalShape(sharding, original.shape()));
  HloInstruction* result = CloneWithOperands(original, std::move(local), std::move(operands), ctx);
  ctx.Set(&original, {result, sharding, original.shape()});
  return absl::OkStatus();
}

// An all-reduce without a channel reduces across replicas only (XLA's kCrossReplica mode):
// across partitions it acts element by element, so it runs on each device's tile. One with a
// channel reduces across partitions and is computed whole.
absl::Status HandleAllReduce(const HloInstruction& original, const HloSharding& wanted,
                             PartitionContext& ctx) {
  if (original.attrs().channel_id.has_value()) {
    return HandleReplicated(original, wanted, ctx);
  }
  return HandleElementwise(original, wanted, ctx);
}

}  // namespace

void RegisterElementwiseHandlers(HandlerTable& table) {
  for (int op = 0; op < hlo::kNumHloOpcodes; ++op) {
    HloOpcode opcode = static_cast<HloOpcode>(op);
    if (hlo::IsElementwiseOpcode(opcode)) table[opcode] = &HandleElementwise;
  }
  table[HloOpcode::kAllReduce] = &HandleAllReduce;
}

}  // namespace spmd

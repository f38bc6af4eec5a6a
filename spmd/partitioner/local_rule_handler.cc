// Ops whose factor rule is their whole partitioning (RuleKind::kLocal in
// spmd/propagation/factor_rule.h): fft, cholesky, triangular-solve. The result runs in its
// requested tiling with the dims that must stay whole made whole (WholeDimsTiling: their tiles
// moved to a dim that takes them evenly, else replicated); each operand is brought to that
// tiling seen through the rule, and the op runs as written on the shards.
//
//   %x = f32[8,16,4] triangular-solve(f32[8,16,16] %a, f32[8,16,4] %b), left_side=true,
//        sharding={devices=[4,1,1]<=[4]}
//   -> %a, %b in {devices=[4,1,1]<=[4]}, %x.spmd = f32[2,16,4] triangular-solve(...)
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/propagation/factor_projection.h"
#include "spmd/propagation/factor_rule.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Shape;

absl::Status HandleLocalRule(const HloInstruction& original, const HloSharding& sharding,
                             PartitionContext& ctx) {
  const std::optional<FactorRule> rule = FactorRuleFor(original);
  if (!rule.has_value() || !original.shape().IsArray() || !MovesDataInTiling(sharding)) {
    return FallBackToReplicated(original, sharding, ctx,
                                hlo::StrCat("the ", hlo::HloOpcodeString(original.opcode()),
                                            " is not a plain tiled array with a factor rule"));
  }
  const Shape& shape = original.shape();
  std::vector<int64_t> whole;
  for (const Factor& factor : rule->factors) {
    const int64_t d = factor.dims[rule->result_side()];
    if (d >= 0 && factor.kind == Factor::Kind::kNeedReplication) whole.push_back(d);
  }
  ASSIGN_OR_RETURN(HloSharding local, WholeDimsTiling(sharding, shape, whole));
  // Tiles no other dim took leave their share of the work done on several devices: a fallback
  // (counted, explained, refused under --strict), wholly so when none is left.
  if (hlo::DataTiles(local) < hlo::DataTiles(sharding)) {
    const std::string reason =
        hlo::StrCat(whole.size() == 1 ? "its dim " : "its dims ", absl::StrJoin(whole, ","),
                    " must stay whole and no other dim takes ",
                    whole.size() == 1 ? "its tiles" : "their tiles");
    if (hlo::DataTiles(local) == 1) return FallBackToReplicated(original, sharding, ctx, reason);
    RETURN_IF_ERROR(ctx.RecordFallback(original, sharding, reason));
  }
  std::vector<HloInstruction*> operands;
  for (int64_t i = 0; i < original.operand_count(); ++i) {
    const HloInstruction* operand = original.operand(i);
    ASSIGN_OR_RETURN(HloSharding wanted, ProjectSharding(*rule, rule->result_side(), i, local,
                                                         shape, operand->shape()));
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(operand, wanted));
    operands.push_back(value);
  }
  ASSIGN_OR_RETURN(Shape local_shape, LocalShape(local, shape));
  ctx.Set(&original, {CloneWithOperands(original, local_shape, operands, ctx), local, shape});
  return absl::OkStatus();
}

}  // namespace

void RegisterLocalRuleHandler(HandlerTable& table) {
  for (hlo::HloOpcode opcode : OpcodesOfRuleKind(RuleKind::kLocal)) {
    table[opcode] = &HandleLocalRule;
  }
}

}  // namespace spmd

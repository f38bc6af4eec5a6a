// Per-op-family partitioning handlers. A handler partitions one original instruction into the
// SPMD computation: it asks the context for its operands in the shardings it needs, emits the
// per-device computation, and records the result (ctx.Set) in the sharding it produced, which
// is `sharding` whenever it can produce it locally. Consumers reshard as they need.
#ifndef SPMD_PARTITIONER_HANDLERS_H_
#define SPMD_PARTITIONER_HANDLERS_H_

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "spmd/partitioner/partition_context.h"

namespace spmd {

using PartitionHandler = absl::Status (*)(const hlo::HloInstruction& original,
                                          const hlo::HloSharding& sharding,
                                          PartitionContext& ctx);
using HandlerTable = absl::flat_hash_map<hlo::HloOpcode, PartitionHandler>;

// Each family adds its opcodes. Defined in <family>_handler(s).cc.
void RegisterElementwiseHandlers(HandlerTable& table);
void RegisterDataMovementHandlers(HandlerTable& table);
void RegisterReduceHandlers(HandlerTable& table);
void RegisterDotHandlers(HandlerTable& table);
void RegisterStructuralHandlers(HandlerTable& table);
void RegisterSortHandler(HandlerTable& table);
void RegisterLocalRuleHandler(HandlerTable& table);
void RegisterTopKHandler(HandlerTable& table);
void RegisterConvolutionHandler(HandlerTable& table);
void RegisterWindowHandlers(HandlerTable& table);
void RegisterSelectAndScatterHandler(HandlerTable& table);
void RegisterDynamicSliceHandler(HandlerTable& table);
void RegisterDynamicUpdateSliceHandler(HandlerTable& table);
void RegisterRaggedDotHandler(HandlerTable& table);
void RegisterGatherScatterHandlers(HandlerTable& table);
void RegisterControlFlowHandlers(HandlerTable& table);
void RegisterScanHandler(HandlerTable& table);

// The handler for `opcode`; the replicated fallback (HandleReplicated) when no family claims it.
PartitionHandler FindPartitionHandler(hlo::HloOpcode opcode);

// Computes `original` on every device in full: operands are gathered to replicated and the
// instruction is cloned with its full shape and attributes. Correct for any op. When `sharding`
// splits the value this is a fallback: FallBackToReplicated records it with `reason` (the
// statistics' replicated_fallbacks, --explain), and under PartitionerOptions::strict it is an
// error naming the instruction instead. HandleReplicated is the table's default (reason: no
// strategy for the opcode).
absl::Status HandleReplicated(const hlo::HloInstruction& original,
                              const hlo::HloSharding& sharding, PartitionContext& ctx);
absl::Status FallBackToReplicated(const hlo::HloInstruction& original,
                                  const hlo::HloSharding& sharding, PartitionContext& ctx,
                                  std::string_view reason);

// Manual sharding (manual_handlers.cc): an instruction sharded {manual} runs as written on
// each device's own values; the two custom-calls move values into and out of manual regions.
absl::Status HandleManual(const hlo::HloInstruction& original, const hlo::HloSharding& sharding,
                          PartitionContext& ctx);
// HandleManual without sending a call or dot on operands split inside their groups to its own
// handler: how a handler that gives up inside manual groups computes whole there.
absl::Status HandleManualAsWritten(const hlo::HloInstruction& original,
                                   const hlo::HloSharding& sharding, PartitionContext& ctx);
// Whether `instr` under `sharding` runs as written (HandleManual): {manual}, values whole on
// every device inside manual subgroups, and the input's own collectives in manual subgroups.
bool RunsAsWritten(const hlo::HloInstruction& instr, const hlo::HloSharding& sharding);
absl::Status HandleFullToShardShape(const hlo::HloInstruction& original,
                                    const hlo::HloSharding& sharding, PartitionContext& ctx);
absl::Status HandleShardToFullShape(const hlo::HloInstruction& original,
                                    const hlo::HloSharding& sharding, PartitionContext& ctx);

// Replicated, or a tiling without subgroup dims (no partial replication, manual or unreduced
// dims): what a handler can see through a dimension map (OperandShardingFromResult) and cost
// candidates in.
inline bool IsPlainTiling(const hlo::HloSharding& sharding) {
  return sharding.IsReplicated() || (sharding.IsTiled() && sharding.subgroup_types().empty());
}

// A tiling that a handler which only moves data (slices, pads, sorts, gathers...) runs in as
// it is: no partial sums (unreduced subgroups). Partial replication and manual subgroups keep
// their dims through the sharding transforms; inside manual subgroups each group runs alike,
// and the collectives made stay inside the groups (the partition pass refuses any that leave).
bool MovesDataInTiling(const hlo::HloSharding& sharding);

// A custom-call that only marks its operand's value: a `Sharding` annotation and the like
// (hlo::ForwardsOperand), not a placement, of its one operand's type and dims.
bool MarksItsOperand(const hlo::HloInstruction& instr);

// "Replicated" where `like` lives: whole on every device, or, when `like` has manual subgroups,
// whole on every device of each of its groups (WholeInManualGroups) for a value of `shape`.
absl::StatusOr<hlo::HloSharding> ReplicatedIn(const hlo::HloSharding& like,
                                              const hlo::Shape& shape);

// Whether `sharding` keeps the value whole where it lives: replicated, or whole on every device
// of each manual group (a handler that finds no split it can keep has fallen back).
bool WholeWhereItLives(const hlo::HloSharding& sharding);

// Whether `a` and `b` have the same manual groups, or neither has manual subgroups.
bool SameManualGroupsOrNone(const hlo::HloSharding& a, const hlo::HloSharding& b);

// The first leaf of `sharding` (itself when not a tuple) with a manual subgroup dim, or null.
const hlo::HloSharding* ManualSubgroupLeaf(const hlo::HloSharding& sharding);

// A sharding of `shape` that keeps the value whole on every device inside the manual
// subgroups of `like` (its first leaf with a manual subgroup dim); tuples leaf by leaf.
absl::StatusOr<hlo::HloSharding> WholeInManualGroups(const hlo::HloSharding& like,
                                                     const hlo::Shape& shape);

// Whether `a` and `b` (both with a manual subgroup dim) split the devices into the same
// manual groups (the same device sets, in any order).
bool SameManualGroups(const hlo::HloSharding& a, const hlo::HloSharding& b);

// Fails when `instr` is a collective that combines devices of two manual groups of `groups`
// (its first leaf with a manual subgroup dim; XLA's group modes, as the input program's
// collectives are read): inside a branch or loop that each group runs on its own decision
// (`per_group_decisions`), the other group's devices may never arrive; elsewhere the groups
// hold different values, which no collective the partitioner makes may mix.
absl::Status CheckStaysInManualGroups(const hlo::HloInstruction& instr,
                                      const hlo::HloSharding& groups, int64_t num_devices,
                                      bool per_group_decisions = true);

// Partitions `original`, a computation called by a while, conditional or call, into a new
// computation of the module (spmd_partitioner.cc): parameter i arrives in `params[i]` and the
// root leaves in `*root` (null: in the sharding its handler produced); `*root_sharding`, when
// given, receives the root's sharding. Each call site gets its own copy, so one computation
// called with different shardings is partitioned once per sharding. `groups`, when given, is a
// sharding whose manual groups each run the computation on their own decision (a per-group
// branch index or loop condition): every collective made for an instruction must stay inside
// one group (CheckStaysInManualGroups), else an error naming that instruction.
// With `unread_get_zeros` (a call's callee), parameters that UnreadArrayParameter names are
// passed zeros by the caller and get no origin record.
absl::StatusOr<hlo::HloComputation*> PartitionCalledComputation(
    const hlo::HloComputation& original, absl::Span<const hlo::HloSharding> params,
    const hlo::HloSharding* root, PartitionContext& caller,
    hlo::HloSharding* root_sharding = nullptr, const hlo::HloSharding* groups = nullptr,
    bool unread_get_zeros = false);

// Whether `instr` is an array parameter of `computation` that nothing reads (not even as the
// root): a call may pass it anything, zeros of its shard's shape included.
bool UnreadArrayParameter(const hlo::HloComputation& computation, const hlo::HloInstruction& instr);

// A custom-call with a Shardy sharding rule (sharding_rule_handler.cc), partitioned by the
// rule; sets `*handled` false (and does nothing) when it has no rule or `sharding` is not a
// plain tiling.
absl::Status HandleShardingRuleCustomCall(const hlo::HloInstruction& original,
                                          const hlo::HloSharding& sharding, PartitionContext& ctx,
                                          bool* handled);

// The opcode topk and XLA's custom-call "TopK" (topk_handler.cc): batch dims locally, a split
// top-k dim by a local top-k and a merge of the candidates, whichever is cheapest.
absl::Status HandleTopK(const hlo::HloInstruction& original, const hlo::HloSharding& sharding,
                        PartitionContext& ctx);

// XLA's custom-call _SPMDInternalOp_MultiSlice (window_handlers.cc): shifted slices of one
// window input per device along the split slice dimension.
absl::Status HandleMultiSliceCustomCall(const hlo::HloInstruction& original,
                                        const hlo::HloSharding& sharding, PartitionContext& ctx);

// XLA's custom-calls whose results are windows of their operand along one dimension
// (window_custom_calls.cc): _SPMDInternalOp_RotateRight, MultiRotate, Wrap and MultiPad, each
// result built as a composed concatenate of windows of the operand.
absl::Status HandleWindowCustomCall(const hlo::HloInstruction& original,
                                    const hlo::HloSharding& sharding, PartitionContext& ctx);

// The custom-call __op$block_scaled_dot (special_dot_handlers.cc).
absl::Status HandleBlockScaledDot(const hlo::HloInstruction& original,
                                  const hlo::HloSharding& sharding, PartitionContext& ctx);

// Shared helpers for handlers.
// The tiling an op needing `whole` dims of arrays shaped `shape` runs in, given the requested
// `leaf` (sort_handler.cc): each split whole dim's tiles moved to the other dim that takes them
// evenly with the most elements per tile, else replicated.
absl::StatusOr<hlo::HloSharding> WholeDimsTiling(hlo::HloSharding leaf, const hlo::Shape& shape,
                                                 const std::vector<int64_t>& whole);
// `base`, or `base.N` for the first N that no computation of `module` is named.
std::string UniqueComputationName(const hlo::HloModule& module, const std::string& base);
// A copy of `original`'s opcode, attributes and called computations with new operands/shape.
hlo::HloInstruction* CloneWithOperands(const hlo::HloInstruction& original, hlo::Shape shape,
                                       std::vector<hlo::HloInstruction*> operands,
                                       PartitionContext& ctx);
// The padded per-device shape of `base` under `sharding`.
absl::StatusOr<hlo::Shape> LocalShape(const hlo::HloSharding& sharding, const hlo::Shape& base);
// The tiling of a reshape's operand that gives `sharding` of its result by a local reshape: the
// result's tiling seen on the operand (hlo::ReshapeSharding), when it maps exactly and evenly
// (no padding on either side); else nullopt.
std::optional<hlo::HloSharding> DirectOperandSharding(const hlo::HloInstruction& reshape,
                                                      const hlo::HloSharding& sharding);
// `original` fully replicated (tuples element by element); inside manual subgroups, whole on
// each device of its group.
absl::StatusOr<hlo::HloInstruction*> GetReplicated(const hlo::HloInstruction* original,
                                                   PartitionContext& ctx);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_HANDLERS_H_

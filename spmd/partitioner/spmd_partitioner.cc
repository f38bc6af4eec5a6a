// The partition pass. The entry computation is walked operands-first; each instruction is
// partitioned by the handler of its opcode family (handlers.h) into a new computation, which
// then replaces the entry. Before -> after, on 2 devices:
//
//   ENTRY e { %p = f32[8] parameter(0), sharding={devices=[2]<=[2]}
//             ROOT %n = f32[8] negate(%p), sharding={replicated} }
//   -> ENTRY e { %p = f32[4] parameter(0)
//                %n.spmd = f32[4] negate(%p)
//                ROOT %ag = f32[8] all-gather(%n.spmd), dimensions={0}, ... }
#include "spmd/partitioner/spmd_partitioner.h"

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/handlers.h"

namespace spmd {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloSharding;

HloSharding ShardingOf(const HloInstruction& instr) {
  if (instr.has_sharding()) {
    const HloSharding& s = instr.sharding();
    if (instr.shape().IsTuple() && !s.IsTuple()) {
      return HloSharding::SingleTuple(instr.shape(), s);
    }
    return s;
  }
  if (instr.shape().IsTuple()) {
    return HloSharding::SingleTuple(instr.shape(), HloSharding::Replicate());
  }
  return HloSharding::Replicate();
}

// An instruction without a sharding that consumes a manual value is part of the manual region
// (as sharding propagation would make it): manual, or whole inside the manual subgroups of a
// value with manual subgroups, not replicated.
HloSharding InferredSharding(const HloInstruction& instr, const PartitionContext& ctx) {
  HloSharding sharding = ShardingOf(instr);
  if (instr.has_sharding()) return sharding;
  for (const HloInstruction* operand : instr.operands()) {
    absl::StatusOr<const PartitionedValue*> value = ctx.Get(operand);
    if (!value.ok()) continue;
    if ((*value)->sharding.IsManual()) {
      return instr.shape().IsTuple() ? HloSharding::SingleTuple(instr.shape(),
                                                                HloSharding::Manual())
                                     : HloSharding::Manual();
    }
    // Inside manual subgroups: whole within each group.
    if (absl::StatusOr<HloSharding> whole = WholeInManualGroups((*value)->sharding, instr.shape());
        whole.ok()) {
      return *std::move(whole);
    }
  }
  return sharding;
}

// The handler for `instr`: its family's, except that a manual instruction runs as written.
// Parameters, tuples, get-tuple-element and custom-calls keep their own handlers (they
// handle manual leaves and the manual custom-calls themselves).
PartitionHandler HandlerFor(const HloInstruction& instr, const HloSharding& sharding) {
  switch (instr.opcode()) {
    case hlo::HloOpcode::kParameter:
    case hlo::HloOpcode::kTuple:
    case hlo::HloOpcode::kGetTupleElement:
    case hlo::HloOpcode::kCustomCall:
      return FindPartitionHandler(instr.opcode());
    default:
      return RunsAsWritten(instr, sharding) ? &HandleManual : FindPartitionHandler(instr.opcode());
  }
}

// The root's per-device value in the root's sharding.
// An unannotated root computed in a {manual} region stays manual; one with manual subgroups
// is not given them (the reference reads it as replicated), so leaving the subgroups that way
// is an error unless the root is annotated or propagation claimed it.
absl::StatusOr<HloInstruction*> FinalizeRoot(const HloInstruction& root, PartitionContext& ctx) {
  HloSharding sharding = InferredSharding(root, ctx);
  if (!root.has_sharding() && !sharding.IsManual()) sharding = ShardingOf(root);
  return ctx.GetInSharding(&root, sharding);
}

absl::Status CheckShardingFits(const HloInstruction& instr, const HloSharding& sharding,
                               int64_t num_devices) {
  absl::Status s = sharding.Validate(instr.shape(), num_devices);
  if (s.ok()) return s;
  return absl::InvalidArgumentError(hlo::StrCat("instruction %", instr.name(), ": ",
                                                hlo::ToStd(s.message())));
}

}  // namespace

absl::StatusOr<bool> SpmdPartitioner::RunImpl(hlo::HloModule* module) {
  log_ = PartitionLog();
  const int64_t num_devices = module->config().num_partitions;
  HloComputation* entry = module->entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  ReshardPlanner planner(options_.device_model.levels.front().link);
  ChannelIdAllocator channel_ids = ChannelIdAllocator::ForModule(*module);
  // The new entry joins the module first: reshards may add reducer computations to it.
  HloComputation* output = module->AddComputation(std::make_unique<HloComputation>(entry->name()));
  PartitionContext ctx(output, num_devices, &planner, &channel_ids, &log_, &options_);
  for (HloInstruction* instr : entry->MakeInstructionPostOrder()) {
    const HloSharding sharding = InferredSharding(*instr, ctx);
    RETURN_IF_ERROR(CheckShardingFits(*instr, sharding, num_devices));
    absl::Status status = HandlerFor(*instr, sharding)(*instr, sharding, ctx);
    if (!status.ok()) {
      std::string message(status.message());
      if (message.rfind("instruction %", 0) == 0) return status;
      return absl::Status(status.code(),
                          hlo::StrCat("instruction %", instr->name(), ": ", message));
    }
  }
  ASSIGN_OR_RETURN(HloInstruction * root, FinalizeRoot(*entry->root_instruction(), ctx));
  output->set_root_instruction(root);
  // Swap the new entry in: callees stay; the old entry's instructions go away with it.
  HloComputation* new_entry = output;
  module->set_entry_computation(new_entry);
  RETURN_IF_ERROR(module->RemoveComputation(entry));
  hlo::ProgramShape layout = new_entry->ComputeProgramShape();
  layout.parameter_names.clear();
  module->mutable_config()->entry_computation_layout = std::move(layout);
  module->mutable_config()->use_spmd_partitioning = true;
  return true;
}

}  // namespace spmd

// The partition pass. The entry computation is walked operands-first; each instruction is
// partitioned by the handler of its opcode family (handlers.h) into a new computation, which
// then replaces the entry. The control-flow handlers partition their called computations the
// same way (PartitionCalledComputation). Before -> after, on 2 devices:
//
//   ENTRY e { %p = f32[8] parameter(0), sharding={devices=[2]<=[2]}
//             ROOT %n = f32[8] negate(%p), sharding={replicated} }
//   -> ENTRY e { %p = f32[4] parameter(0)
//                %n.spmd = f32[4] negate(%p)
//                ROOT %ag = f32[8] all-gather(%n.spmd), dimensions={0}, ... }
#include "spmd/partitioner/spmd_partitioner.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/sharding/implied_sharding.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/conv_as_dot.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/partitioner/merge_windows.h"
#include "spmd/partitioner/sort_slices.h"

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
    // XLA shards an outfeed as (its data's leaves..., its token): the token result takes the
    // last leaf.
    if (instr.opcode() == hlo::HloOpcode::kOutfeed && s.IsTuple() && !instr.shape().IsTuple() &&
        !s.tuple_elements().empty()) {
      return s.tuple_elements().back();
    }
    return s;
  }
  if (instr.shape().IsTuple()) {
    return HloSharding::SingleTuple(instr.shape(), HloSharding::Replicate());
  }
  return HloSharding::Replicate();
}

// An instruction without a sharding that consumes a manual value is part of the manual region
// (hlo::ManualFlowsToResults, the rule sharding propagation applies too): manual, or whole
// inside the manual subgroups of a value with manual subgroups, not replicated.
// Tuples and get-tuple-element move no data: without a sharding they keep their operands'
// (hlo::PassThroughSharding; replicating them would gather every element, e.g. around a loop
// whose state is sharded).
std::optional<HloSharding> PassThroughSharding(const HloInstruction& instr,
                                               const PartitionContext& ctx) {
  std::vector<HloSharding> leaves;
  for (const HloInstruction* operand : instr.operands()) {
    absl::StatusOr<const PartitionedValue*> value = ctx.Get(operand);
    if (!value.ok()) return std::nullopt;
    const HloSharding s = (*value)->sharding.NormalizeTupleSharding(operand->shape());
    if (s.IsTuple()) {
      leaves.insert(leaves.end(), s.tuple_elements().begin(), s.tuple_elements().end());
    } else {
      leaves.push_back(s);
    }
  }
  return hlo::PassThroughSharding(instr, std::move(leaves));
}

// An instruction reading a value that is inside manual subgroups stays inside them when it is
// unannotated or annotated replicated: "replicated" is read within each manual group, as XLA
// reads it (the groups hold independent values, which only SPMDShardToFullShape joins; it
// leaves them whatever its sharding, ManualFlowsToResults).
HloSharding InferredSharding(const HloInstruction& instr, const PartitionContext& ctx) {
  HloSharding sharding = ShardingOf(instr);
  const bool within_groups = sharding.IsReplicated() && hlo::ManualFlowsToResults(instr);
  if (instr.has_sharding() && !within_groups) return sharding;
  for (const HloInstruction* operand : instr.operands()) {
    absl::StatusOr<const PartitionedValue*> value = ctx.Get(operand);
    if (!value.ok()) continue;
    if (!instr.has_sharding() && (*value)->sharding.IsManual() &&
        hlo::ManualFlowsToResults(instr)) {
      return hlo::ManualOver(instr.shape());
    }
    // Inside manual subgroups: whole within each group. (Asked only of a sharding that has
    // them: the refusal's message is not free.)
    if (ManualSubgroupLeaf((*value)->sharding) == nullptr) continue;
    if (absl::StatusOr<HloSharding> whole = WholeInManualGroups((*value)->sharding, instr.shape());
        whole.ok()) {
      return *std::move(whole);
    }
  }
  if (instr.has_sharding()) return sharding;
  if (instr.opcode() == hlo::HloOpcode::kTuple ||
      instr.opcode() == hlo::HloOpcode::kGetTupleElement) {
    if (std::optional<HloSharding> passed = PassThroughSharding(instr, ctx)) return *passed;
  }
  return sharding;
}

// The handler for `instr`: its family's, except that a manual instruction runs as written.
// Parameters, tuples, get-tuple-element and custom-calls keep their own handlers (they
// handle manual leaves and the manual custom-calls themselves); so does reduce, whose operand
// may be split inside the manual subgroups of a result that is whole in them.
PartitionHandler HandlerFor(const HloInstruction& instr, const HloSharding& sharding) {
  static constexpr hlo::HloOpcode kOwnManualHandling[] = {
      hlo::HloOpcode::kParameter, hlo::HloOpcode::kTuple, hlo::HloOpcode::kGetTupleElement,
      hlo::HloOpcode::kCustomCall, hlo::HloOpcode::kReduce};
  const bool own = std::find(std::begin(kOwnManualHandling), std::end(kOwnManualHandling),
                             instr.opcode()) != std::end(kOwnManualHandling);
  return !own && RunsAsWritten(instr, sharding) ? &HandleManual
                                                : FindPartitionHandler(instr.opcode());
}

// `status` of resharding unannotated `root` to replicated, saying why it was asked for.
absl::Status UnannotatedRootHint(const absl::Status& status, const HloInstruction& root) {
  if (status.ok() || root.has_sharding()) return status;
  return absl::Status(status.code(),
                      hlo::StrCat(status.message(),
                                  " (the root has no sharding, so it is replicated: annotate it, "
                                  "e.g. sharding={manual}, or run the propagate pass)"));
}

absl::Status CheckShardingFits(const HloInstruction& instr, const HloSharding& sharding,
                               int64_t num_devices) {
  absl::Status s = sharding.Validate(instr.shape(), num_devices);
  if (s.ok()) return s;
  return absl::InvalidArgumentError(hlo::StrCat("instruction %", instr.name(), ": ",
                                                hlo::ToStd(s.message())));
}

// `status` with the instruction named first (errors of called computations already name theirs).
absl::Status NameInstruction(const absl::Status& status, const HloInstruction& instr) {
  if (status.ok()) return status;
  std::string message(status.message());
  if (message.rfind("instruction %", 0) == 0) return status;
  return absl::Status(status.code(), hlo::StrCat("instruction %", instr.name(), ": ", message));
}

// Where the instructions a handler creates land: the SPMD computation and any computation
// it adds (windowed-einsum loops). Read before and after a handler runs.
struct OutputMark {
  size_t instructions;
  size_t computations;
};

OutputMark MarkOutput(const PartitionContext& ctx) {
  return {ctx.output()->instructions().size(), ctx.output()->parent()->computations().size()};
}

void StampIfUnset(HloInstruction& instr, const hlo::OpMetadata& metadata) {
  if (instr.attrs().metadata.empty()) instr.mutable_attrs()->metadata = metadata;
}

// Gives the instructions made for `original` since `mark` (collectives, reshards, index
// arithmetic, loop bodies) its source metadata, as XLA's partitioner does, so each collective
// names the op and source line it serves. What already has metadata keeps it. A while,
// conditional or call partitions its callees into copies whose instructions were stamped by
// their own handlers: only a copy none of whose instructions has metadata takes the caller's.
// Any other op's new computations (windowed loops, a custom-call's body on local shapes) serve
// that op alone, even when they hold a copy of it (the loop body's local dot).
void StampSourceMetadata(const HloInstruction& original, const OutputMark& mark,
                         PartitionContext& ctx) {
  const hlo::OpMetadata& metadata = original.attrs().metadata;
  if (metadata.empty()) return;
  const auto& instructions = ctx.output()->instructions();
  for (size_t i = mark.instructions; i < instructions.size(); ++i) {
    StampIfUnset(*instructions[i], metadata);
  }
  const bool copies = hlo::HasOpcodeFlag(original.opcode(), hlo::op_traits::kRunsCallees);
  const auto& computations = ctx.output()->parent()->computations();
  for (size_t c = mark.computations; c < computations.size(); ++c) {
    const auto& body = computations[c]->instructions();
    const bool bare = std::all_of(body.begin(), body.end(),
                                  [](const auto& i) { return i->attrs().metadata.empty(); });
    // Scalar computations are reducers and comparators that many instructions share.
    const HloInstruction* root = computations[c]->root_instruction();
    const bool scalar = root != nullptr && root->shape().IsArray() && root->shape().rank() == 0;
    if ((copies && !bare) || root == nullptr || scalar) continue;
    for (const auto& instr : body) StampIfUnset(*instr, metadata);
  }
}

// Fails when an instruction made since `mark`, or one of a computation added since, is a
// collective that leaves a manual group of `groups` (none given: nothing to check).
absl::Status CheckMadeInManualGroups(const OutputMark& mark, const HloSharding* groups,
                                     const PartitionContext& ctx, bool per_group_decisions = true) {
  if (groups == nullptr) return absl::OkStatus();
  const auto& instructions = ctx.output()->instructions();
  for (size_t i = mark.instructions; i < instructions.size(); ++i) {
    // A global value entering the groups is alike in all of them (not so for a group that
    // runs on its own decision: the others may never arrive).
    if (!per_group_decisions && ctx.EntersManualGroups(instructions[i].get())) continue;
    RETURN_IF_ERROR(CheckStaysInManualGroups(*instructions[i], *groups, ctx.num_devices(),
                                             per_group_decisions));
  }
  const auto& computations = ctx.output()->parent()->computations();
  for (size_t c = mark.computations; c < computations.size(); ++c) {
    for (const auto& instr : computations[c]->instructions()) {
      RETURN_IF_ERROR(
          CheckStaysInManualGroups(*instr, *groups, ctx.num_devices(), per_group_decisions));
    }
  }
  return absl::OkStatus();
}

// The sharding the entry returns its root in: the root's own; an unannotated root is
// replicated (XLA's rule, and what the reference reads). A replicated root computed inside
// manual subgroups is replicated within each group (InferredSharding's reading); computed in a
// fully manual region, leaving it that way is an error (UnannotatedRootHint) unless
// propagation claimed the root.
HloSharding RootSharding(const HloInstruction& root, const PartitionContext& ctx) {
  const HloSharding sharding = ShardingOf(root);
  absl::StatusOr<const PartitionedValue*> value = ctx.Get(&root);
  if (!value.ok() || !sharding.IsReplicated() ||
      ManualSubgroupLeaf((*value)->sharding) == nullptr) {
    return sharding;
  }
  absl::StatusOr<HloSharding> whole = WholeInManualGroups((*value)->sharding, root.shape());
  return whole.ok() ? *std::move(whole) : sharding;
}

// The root's per-device value in RootSharding.
absl::StatusOr<HloInstruction*> FinalizeRoot(const HloInstruction& root, PartitionContext& ctx) {
  const HloSharding sharding = RootSharding(root, ctx);
  const OutputMark mark = MarkOutput(ctx);
  absl::StatusOr<HloInstruction*> value = ctx.GetInSharding(&root, sharding);
  StampSourceMetadata(root, mark, ctx);
  return value;
}

// The manual groups whose bounds the collectives made for `instr` (sharded `sharding`) must
// keep: `groups` where given (a per-group loop or branch), else those of a sharding in manual
// subgroups, whose values differ between the groups. Collectives of the input program, the
// conversions into and out of manual regions, and control flow (whose bodies are checked
// instruction by instruction) are not bound to them.
const HloSharding* GroupsToKeep(const HloInstruction& instr, const HloSharding& sharding,
                                const HloSharding* groups) {
  static constexpr hlo::HloOpcode kControlFlow[] = {
      hlo::HloOpcode::kWhile, hlo::HloOpcode::kConditional, hlo::HloOpcode::kCall};
  if (groups != nullptr) return groups;
  const hlo::HloOpcode op = instr.opcode();
  const bool unbound =
      hlo::GetHloOpcodeFamily(op) == hlo::HloOpcodeFamily::kCollective ||
      std::find(std::begin(kControlFlow), std::end(kControlFlow), op) != std::end(kControlFlow) ||
      hlo::IsManualConversion(instr);
  return unbound ? nullptr : ManualSubgroupLeaf(sharding);
}

// Partitions `original`'s instructions, operands first, into ctx.output(). Parameter i takes
// `params[i]` where given (a called computation's parameters arrive as the caller sends
// them), else its own sharding. `groups`: as for PartitionCalledComputation.
absl::Status PartitionInstructions(const HloComputation& original,
                                   absl::Span<const HloSharding> params, PartitionContext& ctx,
                                   const HloSharding* groups = nullptr) {
  for (HloInstruction* instr : original.MakeInstructionPostOrder()) {
    const bool given = instr->opcode() == hlo::HloOpcode::kParameter &&
                       instr->parameter_number() < static_cast<int64_t>(params.size());
    const HloSharding sharding =
        given ? params[instr->parameter_number()] : InferredSharding(*instr, ctx);
    RETURN_IF_ERROR(CheckShardingFits(*instr, sharding, ctx.num_devices()));
    const OutputMark mark = MarkOutput(ctx);
    RETURN_IF_ERROR(NameInstruction(HandlerFor(*instr, sharding)(*instr, sharding, ctx), *instr));
    RETURN_IF_ERROR(
        NameInstruction(CheckMadeInManualGroups(mark, GroupsToKeep(*instr, sharding, groups), ctx,
                                                groups != nullptr),
                        *instr));
    StampSourceMetadata(*instr, mark, ctx);
  }
  return absl::OkStatus();
}

// Records where `output`'s values come from (PartitionerOptions::record_origins): each
// instruction of `original` that was partitioned, in post order (a value two instructions
// share belongs to the first), then `returned`, the root laid out as `returned_sharding`.
// With `unread_get_zeros`, unread array parameters (passed zeros by the call) are left out.
void RecordOrigins(const HloComputation& original, const HloInstruction& returned,
                   const HloSharding& returned_sharding, PartitionContext& ctx,
                   bool unread_get_zeros = false) {
  if (!ctx.options().record_origins) return;
  std::vector<hlo::SpmdOrigin>& origins = ctx.log().origins;
  const std::string& output = ctx.output()->name();
  for (const HloInstruction* instr : original.MakeInstructionPostOrder()) {
    if (unread_get_zeros && UnreadArrayParameter(original, *instr)) continue;
    if (ctx.log().preprocessed.contains(instr)) continue;
    absl::StatusOr<const PartitionedValue*> value = ctx.Get(instr);
    if (!value.ok()) continue;
    origins.push_back({hlo::SpmdOrigin::Kind::kValue, output, (*value)->value->name(),
                       original.name(), instr->name(), (*value)->sharding});
  }
  origins.push_back({hlo::SpmdOrigin::Kind::kReturn, output, returned.name(), original.name(),
                     original.root_instruction()->name(), returned_sharding});
}

}  // namespace

std::string UniqueComputationName(const hlo::HloModule& module, const std::string& base) {
  std::string name = base;
  for (int64_t n = 1; module.GetComputation(name) != nullptr; ++n) name = hlo::StrCat(base, ".", n);
  return name;
}

bool UnreadArrayParameter(const HloComputation& computation, const HloInstruction& instr) {
  return instr.opcode() == hlo::HloOpcode::kParameter && instr.shape().IsArray() &&
         instr.users().empty() && computation.root_instruction() != &instr;
}

absl::StatusOr<HloComputation*> PartitionCalledComputation(
    const HloComputation& original, absl::Span<const HloSharding> params, const HloSharding* root,
    PartitionContext& caller, HloSharding* root_sharding, const HloSharding* groups,
    bool unread_get_zeros) {
  hlo::HloModule* module = caller.output()->parent();
  HloComputation* output = module->AddComputation(std::make_unique<HloComputation>(
      UniqueComputationName(*module, hlo::StrCat(original.name(), ".spmd"))));
  PartitionContext ctx(output, caller);
  absl::Status status = PartitionInstructions(original, params, ctx, groups);
  // Parameters keep their original names in the entry (which is replaced); here the original
  // computation stays in the module until cleanup, so they take fresh ones.
  for (HloInstruction* param : output->parameter_instructions()) {
    if (param != nullptr) param->set_name(ctx.UniqueName(param->name()));
  }
  const HloInstruction* original_root = original.root_instruction();
  absl::StatusOr<HloInstruction*> result = absl::InternalError("no root");
  if (!status.ok()) {
    result = status;
  } else {
    absl::StatusOr<const PartitionedValue*> own = ctx.Get(original_root);
    if (!own.ok()) {
      result = own.status();
    } else {
      const HloSharding wanted = root != nullptr ? *root : (*own)->sharding;
      const OutputMark mark = MarkOutput(ctx);
      result = ctx.GetInSharding(original_root, wanted);
      if (absl::Status kept = CheckMadeInManualGroups(mark, groups, ctx); !kept.ok()) {
        result = kept;
      }
      if (root_sharding != nullptr) *root_sharding = wanted;
      if (result.ok()) RecordOrigins(original, **result, wanted, ctx, unread_get_zeros);
    }
  }
  ctx.ReturnNamesTo(caller);
  if (!result.ok()) {
    return NameInstruction(result.status(), *original.root_instruction());
  }
  output->set_root_instruction(*result);
  return output;
}

// The computations of the input program that the partitioned program calls as they are (a
// reducer, a comparator, the body of a call that runs as written in a manual region) lose
// what only the partitioner reads: their sharding annotations, and the "Sharding" custom-calls
// that hold them (each forwards its operand; JAX writes one into the reducer of a psum inside
// a partly manual shard_map). Any other partitioner custom-call left there is an error.
absl::Status StripKeptCallees(const HloComputation& entry,
                              const std::vector<HloComputation*>& originals) {
  absl::flat_hash_set<const HloComputation*> called = {&entry};  // Reachable from the entry.
  std::vector<const HloComputation*> unread = {&entry};
  while (!unread.empty()) {
    const HloComputation* next = unread.back();
    unread.pop_back();
    for (const auto& instr : next->instructions()) {
      for (const HloComputation* callee : instr->called_computations()) {
        if (called.insert(callee).second) unread.push_back(callee);
      }
    }
  }
  for (HloComputation* computation : originals) {
    if (!called.contains(computation)) continue;
    std::vector<HloInstruction*> marks;
    for (const auto& instr : computation->instructions()) {
      instr->clear_sharding();
      const std::string& target = instr->attrs().custom_call_target;
      if (MarksItsOperand(*instr) && target == "Sharding") {
        marks.push_back(instr.get());
      } else if (target == "Sharding" || hlo::IsManualConversion(*instr)) {
        return NameInstruction(
            absl::UnimplementedError(hlo::StrCat(
                "custom-call \"", target, "\" in computation %", computation->name(),
                ", which the partitioned program runs as written (it is not partitioned)")),
            *instr);
      }
    }
    for (HloInstruction* mark : marks) {
      HloInstruction* operand = mark->operand(0);
      mark->ReplaceAllUsesWith(operand);
      if (computation->root_instruction() == mark) computation->set_root_instruction(operand);
      RETURN_IF_ERROR(computation->RemoveInstruction(mark));
    }
  }
  return absl::OkStatus();
}

absl::Status SpmdPartitioner::Preprocess(hlo::HloModule& module) {
  for (const std::unique_ptr<HloComputation>& computation : module.computations()) {
    if (computation->is_fusion_computation()) continue;
    ASSIGN_OR_RETURN(std::vector<std::string> merged, MergeSlicesOfPads(*computation));
    ASSIGN_OR_RETURN(std::vector<std::string> dots,
                     ConvolutionsAsDots(*computation, log_.preprocessed));
    ASSIGN_OR_RETURN(std::vector<NarrowedSort> sorts,
                     NarrowSlicedSorts(*computation, log_.preprocessed));
    if (!log_.keep_lines) continue;
    for (const std::string& name : merged) {
      log_.lines.push_back(hlo::StrCat("%", name,
                                       ": a slice of a pad, merged into one pad of the "
                                       "pad's operand (merge_windows.h)"));
    }
    for (const std::string& name : dots) {
      log_.lines.push_back(hlo::StrCat("%", name,
                                       ": a convolution that is an einsum, partitioned as a dot "
                                       "(conv_as_dot.h)"));
    }
    for (const NarrowedSort& sort : sorts) {
      log_.lines.push_back(hlo::StrCat("%", sort.name, ": read only through slices, ", sort.how,
                                       " (sort_slices.h)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> SpmdPartitioner::RunImpl(hlo::HloModule* module) {
  log_ = PartitionLog();
  log_.keep_lines = options_.explain;
  // Without --explain nobody reads the losing dot candidates' costs: those that cannot win are
  // not planned (the winner is the same).
  options_.dot.cost_every_candidate = options_.explain;
  const int64_t num_devices = module->config().num_partitions;
  HloComputation* entry = module->entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  RETURN_IF_ERROR(Preprocess(*module));
  std::vector<HloComputation*> originals;  // The input's computations other than the entry.
  for (const std::unique_ptr<HloComputation>& computation : module->computations()) {
    if (computation.get() != entry) originals.push_back(computation.get());
  }
  ReshardPlanner planner(options_.device_model.levels.front().link);
  ChannelIdAllocator channel_ids = ChannelIdAllocator::ForModule(*module);
  // The new entry joins the module first: reshards may add reducer computations to it.
  HloComputation* output = module->AddComputation(std::make_unique<HloComputation>(entry->name()));
  PartitionContext ctx(output, num_devices, &planner, &channel_ids, &log_, &options_);
  RETURN_IF_ERROR(PartitionInstructions(*entry, {}, ctx));
  absl::StatusOr<HloInstruction*> root = FinalizeRoot(*entry->root_instruction(), ctx);
  RETURN_IF_ERROR(NameInstruction(UnannotatedRootHint(root.status(), *entry->root_instruction()),
                                  *entry->root_instruction()));
  output->set_root_instruction(*root);
  RecordOrigins(*entry, **root, RootSharding(*entry->root_instruction(), ctx), ctx);
  log_.preprocessed.clear();  // Their instructions go with the old entry and its callees.
  // Swap the new entry in: callees stay; the old entry's instructions go away with it.
  HloComputation* new_entry = output;
  module->set_entry_computation(new_entry);
  RETURN_IF_ERROR(module->RemoveComputation(entry));
  RETURN_IF_ERROR(StripKeptCallees(*new_entry, originals));
  hlo::ProgramShape layout = new_entry->ComputeProgramShape();
  layout.parameter_names.clear();
  module->mutable_config()->entry_computation_layout = std::move(layout);
  module->mutable_config()->use_spmd_partitioning = true;
  return true;
}

}  // namespace spmd

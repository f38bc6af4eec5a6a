// Scan (hlo/ir/scan_attributes.h): scan(inputs..., inits...), dimensions={d}, num_carries=c.
//
// A scan whose body is slice-parallel -- elementwise ops on arrays of the slice's dims (the
// inputs' dims without d), scalar constants and broadcasts of scalars, any other value only
// handed from a parameter to the root -- computes each position of a slice apart from the
// others, so it runs on shards of its slices. Its strategies, costed by the reshards they need,
// their collectives and their sequential steps (each a kernel pass over the local slice plus
// the device model's loop step), the cheapest taken (ChooseNearFastest):
//   local        every slice-shaped value in one tiling T of the slice's dims (dim d whole
//                in the inputs and outputs), the body run as written on T's shards: nothing
//                moves inside the loop. T is the wanted outputs' tiling without dim d, an
//                input's, or the wanted one with dim d's tiles moved to another dim (the sort's
//                rule, WholeDimsTiling: an all-to-all before and after, no all-gather).
//   prefix       dim d split n ways as wanted, when the body is declared associative (the
//                program's promise, trusted as XLA trusts it: a body that breaks it gets its
//                blocks combined in another order) and each carry is typed like its input's
//                slice: each device folds its block (its first
//                slice as the initial carry), the n block totals are all-gathered, each device
//                scans them from the init for the carry its block starts from (the last one's
//                end is the final carry), then scans its block from there: 2N/n + n steps
//                instead of N, and only the totals move.
// A body that is not slice-parallel computes whole on every device (a counted fallback).
//
//   %s = (f32[128,1024], f32[128]) scan(f32[128,1024] %x, f32[128] %init), dimensions={1},
//        num_carries=1, to_apply=%add, sharding={{devices=[8,1]<=[8]}, {devices=[8]<=[8]}}
//   -> %s.spmd = (f32[16,1024], f32[16]) scan(%x.shard, %init.shard), to_apply=%add.spmd
//      (%add.spmd: the body on f32[16] slices)
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/scan_attributes.h"
#include "hlo/ir/shape_inference.h"
#include "hlo/sharding/device_groups.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/handlers.h"
#include "spmd/reshard/reshard_plan.h"

namespace spmd {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

// What the handler reads of one scan.
struct ScanParts {
  hlo::ScanAttributes attrs;
  int64_t num_inputs = 0;
  int64_t num_outputs = 0;
  int64_t length = 0;               // The scanned dim's size.
  std::vector<int64_t> slice_dims;  // Input 0's dims without d.
  std::vector<Shape> leaves;        // The result's leaves: outputs, then carries.
};

absl::StatusOr<ScanParts> ReadScan(const HloInstruction& scan) {
  ScanParts parts;
  ASSIGN_OR_RETURN(parts.attrs, hlo::ReadScanAttributes(scan));
  parts.num_inputs = scan.operand_count() - parts.attrs.num_carries;
  parts.leaves =
      scan.shape().IsTuple() ? scan.shape().tuple_shapes() : std::vector<Shape>{scan.shape()};
  parts.num_outputs = static_cast<int64_t>(parts.leaves.size()) - parts.attrs.num_carries;
  const Shape& first = scan.operand(0)->shape();
  parts.length = first.dimensions(parts.attrs.dimension);
  parts.slice_dims = first.dimensions();
  parts.slice_dims.erase(parts.slice_dims.begin() + parts.attrs.dimension);
  return parts;
}

bool HasSliceDims(const Shape& shape, const ScanParts& scan) {
  return shape.IsArray() && shape.dimensions() == scan.slice_dims;
}

// The body's root leaves: its outputs, then its new carries.
std::vector<const HloInstruction*> RootLeaves(const HloComputation& body) {
  const HloInstruction* root = body.root_instruction();
  if (root->opcode() != HloOpcode::kTuple) return {root};
  return {root->operands().begin(), root->operands().end()};
}

// Why `computation` (the body, or a fusion or call it makes) is not elementwise on slices (see
// the file comment), or nothing when it is. The root of the body may be the tuple of its step.
std::optional<std::string> NotElementwiseOnSlices(const HloComputation& computation,
                                                  const ScanParts& scan) {
  for (const auto& owned : computation.instructions()) {
    const HloInstruction& instr = *owned;
    const HloOpcode op = instr.opcode();
    const bool sliced = HasSliceDims(instr.shape(), scan);
    bool fits = false;
    if (op == HloOpcode::kParameter) {
      fits = instr.shape().IsArray();
    } else if (op == HloOpcode::kTuple) {
      fits = &instr == computation.root_instruction();
    } else if (op == HloOpcode::kConstant) {
      fits = instr.shape().IsArray() && instr.shape().rank() == 0;
    } else if (op == HloOpcode::kBroadcast) {
      fits = sliced && instr.operand(0)->shape().rank() == 0;
    } else if (op == HloOpcode::kFusion || op == HloOpcode::kCall) {
      // A fused or called computation elementwise on slices, given slices and scalars.
      fits = sliced && instr.called_computations().size() == 1;
      for (const HloInstruction* operand : instr.operands()) {
        fits = fits && (HasSliceDims(operand->shape(), scan) || operand->shape().rank() == 0);
      }
      if (fits) {
        const HloComputation& callee = *instr.called_computations()[0];
        if (std::optional<std::string> why = NotElementwiseOnSlices(callee, scan)) return why;
        fits = callee.root_instruction()->opcode() != HloOpcode::kTuple;
      }
    } else {
      fits = sliced && hlo::IsElementwiseOpcode(op) && instr.called_computations().empty() &&
             !hlo::HasSideEffect(instr);
    }
    if (!fits) {
      return hlo::StrCat("its body computes %", instr.name(), " (", hlo::HloOpcodeString(op),
                         "), not elementwise on slices");
    }
    // A value of other dims only passes through: a scalar into broadcasts, a parameter to the
    // root as it is.
    if (sliced || instr.shape().rank() == 0) continue;
    for (const HloInstruction* user : instr.users()) {
      if (user != computation.root_instruction()) {
        return hlo::StrCat("its body reads %", instr.name(), ", which is not slice-shaped");
      }
    }
  }
  return std::nullopt;
}

// Why the scan's body is not slice-parallel, or nothing when it is.
std::optional<std::string> NotSliceParallel(const HloComputation& body, const ScanParts& scan) {
  const std::vector<const HloInstruction*> leaves = RootLeaves(body);
  if (static_cast<int64_t>(leaves.size()) != scan.num_outputs + scan.attrs.num_carries) {
    return std::string("its body's root is not a tuple of its outputs and carries");
  }
  if (std::optional<std::string> why = NotElementwiseOnSlices(body, scan)) return why;
  for (int64_t k = 0; k < scan.attrs.num_carries; ++k) {
    const HloInstruction* carry = leaves[scan.num_outputs + k];
    if (!HasSliceDims(carry->shape(), scan) &&
        !(carry->opcode() == HloOpcode::kParameter &&
          carry->parameter_number() == scan.num_inputs + k)) {
      return hlo::StrCat("carry ", k, " is neither slice-shaped nor passed on unchanged");
    }
  }
  return std::nullopt;
}

// The array sharding whose slices (dim d removed) are in `slice`: dim d whole.
absl::StatusOr<HloSharding> WithScanDimWhole(const HloSharding& slice, int64_t d, int64_t rank) {
  std::vector<int64_t> to_slice;
  for (int64_t i = 0; i < rank; ++i) to_slice.push_back(i == d ? -1 : i - (i > d ? 1 : 0));
  return hlo::OperandShardingFromResult(slice, rank - 1, to_slice);
}

// The tiling of the slices of an array in `array` (dim d's tiles become replication).
absl::StatusOr<HloSharding> SliceSharding(const HloSharding& array, int64_t d, int64_t rank) {
  std::vector<int64_t> to_array;
  for (int64_t i = 0; i + 1 < rank; ++i) to_array.push_back(i < d ? i : i + 1);
  return hlo::OperandShardingFromResult(array, rank, to_array);
}

// One way to run the scan, and its cost.
struct ScanPlan {
  std::string name;
  HloSharding slice = HloSharding::Replicate();  // T: the slice-shaped values' tiling.
  int64_t blocks = 1;                      // The prefix's n (dim d's tiles); 1 for a local plan.
  std::vector<HloSharding> inputs, inits;  // What the operands are resharded to.
  HloSharding result = HloSharding::Replicate();
  Received cost;
};

// A body step's time on slices of `local` dims: one pass of each op over its values and the
// loop's own step.
double StepUs(const HloComputation& body, const ScanParts& scan, const std::vector<int64_t>& local,
              PartitionContext& ctx) {
  double bytes = 0;
  for (const auto& instr : body.instructions()) {
    if (!HasSliceDims(instr->shape(), scan) || instr->opcode() == HloOpcode::kParameter) continue;
    bytes += 2.0 * static_cast<double>(WithDims(instr->shape(), local).byte_size());
  }
  const DeviceModel& model = ctx.options().device_model;
  return model.MemoryTimeUs(bytes) + model.loop_step_us;
}

// The plan that keeps every slice-shaped value in `array`'s tiling of the slice dims, the
// stacked inputs and outputs with dim d whole (`blocks` 1: a local plan) or in `array`'s
// `blocks` tiles (the prefix), every other value replicated.
absl::StatusOr<ScanPlan> PlanIn(std::string name, const HloSharding& array, int64_t blocks,
                                const HloInstruction& original, const HloSharding& sharding,
                                const ScanParts& scan, PartitionContext& ctx) {
  const HloComputation& body = *original.to_apply();
  const int64_t d = scan.attrs.dimension;
  const int64_t rank = static_cast<int64_t>(scan.slice_dims.size()) + 1;
  ScanPlan plan{std::move(name)};
  plan.blocks = blocks;
  ASSIGN_OR_RETURN(plan.slice, SliceSharding(array, d, rank));
  ASSIGN_OR_RETURN(HloSharding whole, WithScanDimWhole(plan.slice, d, rank));
  const HloSharding& stacked = blocks > 1 ? array : whole;
  const std::vector<const HloInstruction*> leaves = RootLeaves(body);
  std::vector<HloSharding> results;
  for (int64_t i = 0; i < original.operand_count(); ++i) {
    const bool input = i < scan.num_inputs;
    const Shape& shape = body.parameter_instruction(i)->shape();
    HloSharding in = HloSharding::Replicate();
    if (HasSliceDims(shape, scan)) in = input ? stacked : plan.slice;
    (input ? plan.inputs : plan.inits).push_back(in);
    plan.cost = plan.cost + ReshardReceived(original.operand(i), in, ctx);
  }
  for (int64_t j = 0; j < static_cast<int64_t>(leaves.size()); ++j) {
    const bool output = j < scan.num_outputs;
    HloSharding leaf = HloSharding::Replicate();
    if (HasSliceDims(leaves[j]->shape(), scan)) leaf = output ? stacked : plan.slice;
    results.push_back(leaf);
    const HloSharding wanted = sharding.IsTuple() ? sharding.tuple_elements()[j] : sharding;
    plan.cost = plan.cost + ReshardReceived(scan.leaves[j], leaf, wanted, ctx);
  }
  if (original.shape().IsTuple()) {
    ASSIGN_OR_RETURN(plan.result, HloSharding::Tuple(std::move(results)));
  } else {
    plan.result = results[0];
  }
  ASSIGN_OR_RETURN(Shape local,
                   LocalShape(plan.slice, Shape::Array(hlo::PrimitiveType::kF32, scan.slice_dims)));
  const double step = StepUs(body, scan, local.dimensions(), ctx);
  if (blocks == 1) {
    plan.cost.us += static_cast<double>(scan.length) * step;
    return plan;
  }
  // The prefix: two passes over a block and one over the totals, which are all-gathered.
  const int64_t block = scan.length / blocks;
  plan.cost.us += static_cast<double>(2 * block - 1 + blocks) * step;
  int64_t total_bytes = 0;
  for (int64_t k = 0; k < scan.attrs.num_carries; ++k) {
    total_bytes += WithDims(scan.leaves[scan.num_outputs + k], local.dimensions()).byte_size();
  }
  plan.cost =
      plan.cost + Received::Of(EstimateCollective(CollectiveKind::kAllGather, total_bytes * blocks,
                                                  blocks, CollectiveLink(ctx)));
  return plan;
}

// Whether the prefix applies: an associative slice-parallel body whose carries are typed like
// their inputs' slices, and dim d split evenly in the wanted outputs over all devices.
std::optional<int64_t> PrefixBlocks(const HloInstruction& original, const HloSharding& wanted,
                                    const ScanParts& scan, int64_t num_devices) {
  // The totals' all-gather needs every device in a group: a tiling of all of them.
  if (!scan.attrs.associative || scan.num_inputs != scan.attrs.num_carries || !wanted.IsTiled() ||
      wanted.tile_assignment().num_devices() != num_devices) {
    return std::nullopt;
  }
  for (int64_t k = 0; k < scan.num_inputs; ++k) {
    const Shape& slice = original.to_apply()->parameter_instruction(k)->shape();
    const Shape& carry = original.operand(scan.num_inputs + k)->shape();
    if (!HasSliceDims(slice, scan) || !slice.Compatible(carry)) return std::nullopt;
  }
  // Each block's outputs are stacked along d, so they must be slices too.
  for (const HloInstruction* leaf : RootLeaves(*original.to_apply())) {
    if (!HasSliceDims(leaf->shape(), scan)) return std::nullopt;
  }
  // Blocks of one slice would gather every slice as a total: the local plans do that better.
  const int64_t n = wanted.tile_assignment().dim(scan.attrs.dimension);
  if (n <= 1 || scan.length % n != 0 || scan.length / n < 2) return std::nullopt;
  return n;
}

// The candidate array tilings (of the scan's inputs' shape) a plan may keep the slices in.
std::vector<std::pair<std::string, HloSharding>> CandidateTilings(const HloInstruction& original,
                                                                  const HloSharding& sharding,
                                                                  const ScanParts& scan,
                                                                  PartitionContext& ctx) {
  std::vector<std::pair<std::string, HloSharding>> out;
  const Shape& shape = original.operand(0)->shape();
  auto add = [&](std::string name, const HloSharding& s) {
    if (!s.IsTiled() && !s.IsReplicated()) return;
    if (s.IsTiled() && !MovesDataInTiling(s)) return;
    if (s.IsTiled() && ManualSubgroupLeaf(s) != nullptr) return;
    for (const auto& [n, t] : out) {
      if (t == s) return;
    }
    out.emplace_back(std::move(name), s);
  };
  for (int64_t j = 0; j < scan.num_outputs; ++j) {
    const HloSharding& leaf = sharding.IsTuple() ? sharding.tuple_elements()[j] : sharding;
    if (scan.leaves[j].dimensions() != shape.dimensions()) continue;
    add(hlo::StrCat("output ", j), leaf);
    if (leaf.IsTiled() && MovesDataInTiling(leaf)) {
      absl::StatusOr<HloSharding> moved = WholeDimsTiling(leaf, shape, {scan.attrs.dimension});
      if (moved.ok()) add(hlo::StrCat("output ", j, " moved"), *moved);
    }
  }
  for (int64_t i = 0; i < scan.num_inputs; ++i) {
    absl::StatusOr<const PartitionedValue*> value = ctx.Get(original.operand(i));
    if (!value.ok() || original.operand(i)->shape().dimensions() != shape.dimensions()) continue;
    add(hlo::StrCat("input ", i), (*value)->sharding);
  }
  return out;
}

std::string ExplainLine(const HloInstruction& original, const std::vector<ScanPlan>& plans,
                        const ScanPlan& chosen) {
  std::string line = hlo::StrCat("scan %", original.name(), ": chose ", chosen.name, " -> ",
                                 chosen.result.ToStringWithoutMetadata());
  for (const ScanPlan& plan : plans) {
    hlo::StrAppend(&line, "\n  ", plan.name, ": slices ", plan.slice.ToStringWithoutMetadata(),
                   plan.blocks > 1 ? hlo::StrCat(", ", plan.blocks, " blocks") : "", ": ",
                   plan.cost.bytes, " bytes per device, ", plan.cost.us, " us");
  }
  return line;
}

// A copy of `computation` (elementwise on slices) in the output module, every slice-shaped value
// of `local` dims (its shard under the plan's tiling), every other one as it is; the
// computations it fuses or calls copied alike. With `skip_root`, the root tuple is left out
// (the caller makes its own) and `copies` maps each original instruction to its copy.
HloComputation* LocalCopy(const HloComputation& computation, const ScanParts& scan,
                          const std::vector<int64_t>& local, bool skip_root,
                          absl::flat_hash_map<const HloInstruction*, HloInstruction*>& copies,
                          PartitionContext& ctx) {
  hlo::HloModule* module = ctx.output()->parent();
  HloComputation* out = module->AddComputation(std::make_unique<HloComputation>(
      UniqueComputationName(*module, hlo::StrCat(computation.name(), ".spmd"))));
  out->set_is_fusion_computation(computation.is_fusion_computation());
  SpmdBuilder in(out, &ctx.channel_ids(), NameScheme{".spmd", false, ""});
  in.set_next_number(ctx.builder().next_number());  // Names stay unique in the module.
  for (const HloInstruction* instr : computation.MakeInstructionPostOrder()) {
    if (skip_root && instr == computation.root_instruction()) continue;
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* operand : instr->operands()) operands.push_back(copies[operand]);
    const Shape shape =
        HasSliceDims(instr->shape(), scan) ? WithDims(instr->shape(), local) : instr->shape();
    HloInstruction* copy = in.AddClone(*instr, shape, std::move(operands));
    ctx.builder().set_next_number(in.next_number());
    for (size_t c = 0; c < instr->called_computations().size(); ++c) {
      absl::flat_hash_map<const HloInstruction*, HloInstruction*> inner;
      copy->set_called_computation(
          c, LocalCopy(*instr->called_computations()[c], scan, local, false, inner, ctx));
      in.set_next_number(ctx.builder().next_number());
    }
    copies[instr] = copy;
  }
  if (!skip_root) out->set_root_instruction(copies[computation.root_instruction()]);
  ctx.builder().set_next_number(in.next_number());
  return out;
}

// How a local copy of the body returns: as written, only its new carries, or its new carries
// twice (as the outputs too: the scan over the block totals keeps every step's carry).
enum class RootForm { kAsWritten, kCarries, kCarriesTwice };

// The slice-parallel `body` copied to `local` slices (LocalCopy), returning as `form` says.
HloComputation* LocalBody(const HloComputation& body, const ScanParts& scan,
                          const std::vector<int64_t>& local, RootForm form, PartitionContext& ctx) {
  const bool tuple = body.root_instruction()->opcode() == HloOpcode::kTuple;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> copies;
  HloComputation* out = LocalCopy(body, scan, local, tuple, copies, ctx);
  if (!tuple && form == RootForm::kAsWritten) return out;
  std::vector<HloInstruction*> leaves;
  for (const HloInstruction* leaf : RootLeaves(body)) leaves.push_back(copies[leaf]);
  const std::vector<HloInstruction*> carries(leaves.begin() + scan.num_outputs, leaves.end());
  if (form == RootForm::kCarries) leaves = carries;
  if (form == RootForm::kCarriesTwice) {
    leaves = carries;
    leaves.insert(leaves.end(), carries.begin(), carries.end());
  }
  std::vector<Shape> shapes;
  for (const HloInstruction* leaf : leaves) shapes.push_back(leaf->shape());
  SpmdBuilder in(out, &ctx.channel_ids(), NameScheme{".spmd", false, ""});
  in.set_next_number(ctx.builder().next_number());
  out->set_root_instruction(in.Add(HloOpcode::kTuple, Shape::Tuple(shapes), leaves));
  ctx.builder().set_next_number(in.next_number());
  return out;
}

// A scan of `operands` along `dim` like `original`'s, with `body`; its shape as shape
// inference gives it.
absl::StatusOr<HloInstruction*> AddScan(const HloInstruction& original,
                                        std::vector<HloInstruction*> operands, int64_t dim,
                                        bool reverse, int64_t num_carries, HloComputation* body,
                                        PartitionContext& ctx) {
  std::vector<const Shape*> shapes;
  for (const HloInstruction* operand : operands) shapes.push_back(&operand->shape());
  ASSIGN_OR_RETURN(const Shape shape,
                   hlo::InferScanShape(shapes, dim, num_carries, body->ComputeProgramShape()));
  HloInstruction* scan = ctx.AddClone(original, shape, std::move(operands));
  scan->set_called_computation(0, body);
  hlo::InstructionAttributes* attrs = scan->mutable_attrs();
  attrs->dimensions = {dim};
  for (hlo::RawAttribute& raw : attrs->raw_attributes) {
    if (raw.name == "num_carries") raw.value = hlo::StrCat(num_carries);
    if (raw.name == "is_reverse") raw.value = reverse ? "true" : "false";
  }
  return scan;
}

HloInstruction* Reshaped(HloInstruction* value, std::vector<int64_t> dims, PartitionContext& ctx) {
  return ctx.Add(HloOpcode::kReshape, WithDims(value->shape(), dims), {value});
}

absl::Status EmitLocal(const HloInstruction& original, const ScanPlan& plan, const ScanParts& scan,
                       PartitionContext& ctx) {
  std::vector<HloInstruction*> operands;
  for (int64_t i = 0; i < original.operand_count(); ++i) {
    const HloSharding& in = i < scan.num_inputs ? plan.inputs[i] : plan.inits[i - scan.num_inputs];
    ASSIGN_OR_RETURN(HloInstruction * value, ctx.GetInSharding(original.operand(i), in));
    operands.push_back(value);
  }
  ASSIGN_OR_RETURN(Shape local,
                   LocalShape(plan.slice, Shape::Array(hlo::PrimitiveType::kF32, scan.slice_dims)));
  HloComputation* body =
      LocalBody(*original.to_apply(), scan, local.dimensions(), RootForm::kAsWritten, ctx);
  ASSIGN_OR_RETURN(HloInstruction * out,
                   AddScan(original, std::move(operands), scan.attrs.dimension, scan.attrs.reverse,
                           scan.attrs.num_carries, body, ctx));
  ctx.Set(&original, {out, plan.result, original.shape()});
  return absl::OkStatus();
}

// The prefix (file comment). Block p's carry in: the init for the first block (the last when
// reversed), else the totals' scan after block p-1 (p+1).
absl::Status EmitPrefix(const HloInstruction& original, const ScanPlan& plan,
                        const HloSharding& array, const ScanParts& scan, PartitionContext& ctx) {
  const int64_t d = scan.attrs.dimension;
  const int64_t nc = scan.attrs.num_carries;
  const int64_t n = plan.blocks;
  const bool reverse = scan.attrs.reverse;
  std::vector<HloInstruction*> blocks, inits;
  for (int64_t i = 0; i < original.operand_count(); ++i) {
    const bool input = i < scan.num_inputs;
    ASSIGN_OR_RETURN(HloInstruction * value,
                     ctx.GetInSharding(original.operand(i),
                                       input ? plan.inputs[i] : plan.inits[i - scan.num_inputs]));
    (input ? blocks : inits).push_back(value);
  }
  ASSIGN_OR_RETURN(Shape local,
                   LocalShape(plan.slice, Shape::Array(hlo::PrimitiveType::kF32, scan.slice_dims)));
  const std::vector<int64_t>& slice = local.dimensions();
  const HloComputation& body = *original.to_apply();
  HloComputation* as_written = LocalBody(body, scan, slice, RootForm::kAsWritten, ctx);
  const int64_t block = blocks[0]->shape().dimensions(d);
  // Each block's total: its first slice (last when reversed) folded with the others.
  std::vector<HloInstruction*> totals;
  std::vector<int64_t> one = slice;
  one.insert(one.begin(), 1);
  std::vector<HloInstruction*> firsts, rests;
  for (HloInstruction* x : blocks) {
    const int64_t at = reverse ? block - 1 : 0;
    firsts.push_back(Reshaped(ctx.builder().SliceAlong(x, d, at, at + 1), slice, ctx));
    rests.push_back(reverse ? ctx.builder().SliceAlong(x, d, 0, block - 1)
                            : ctx.builder().SliceAlong(x, d, 1, block));
  }
  HloComputation* carries_only = LocalBody(body, scan, slice, RootForm::kCarries, ctx);
  std::vector<HloInstruction*> operands = rests;
  operands.insert(operands.end(), firsts.begin(), firsts.end());
  ASSIGN_OR_RETURN(HloInstruction * fold,
                   AddScan(original, operands, d, reverse, nc, carries_only, ctx));
  for (int64_t k = 0; k < nc; ++k) totals.push_back(ctx.builder().GetTupleElement(fold, k));
  // The totals of the n blocks, in block order, on every device of a block row.
  SpmdBuilder& b = ctx.builder();
  std::vector<HloInstruction*> rows;
  for (HloInstruction* t : totals) rows.push_back(Reshaped(t, one, ctx));
  ASSIGN_OR_RETURN(hlo::TileAssignment groups,
                   hlo::DeviceGroupsAlongDims(array.tile_assignment(), {d}));
  HloInstruction* gathered = b.AllGather(rows, 0, MakeReplicaGroups(hlo::GroupLists(groups)), n);
  operands.clear();
  for (int64_t k = 0; k < nc; ++k) {
    operands.push_back(nc == 1 ? gathered : b.GetTupleElement(gathered, k));
  }
  operands.insert(operands.end(), inits.begin(), inits.end());
  HloComputation* carries_twice = LocalBody(body, scan, slice, RootForm::kCarriesTwice, ctx);
  ASSIGN_OR_RETURN(HloInstruction * across,
                   AddScan(original, operands, 0, reverse, nc, carries_twice, ctx));
  std::vector<int64_t> index(ctx.num_devices(), 0);
  for (int64_t device = 0; device < ctx.num_devices(); ++device) {
    if (auto tile = array.tile_assignment().TileIndexOf(device)) index[device] = (*tile)[d];
  }
  HloInstruction* at = ctx.PerDeviceScalar(index);
  std::vector<HloInstruction*> starts, finals;
  for (int64_t k = 0; k < nc; ++k) {
    HloInstruction* after = b.GetTupleElement(across, k);  // [n, slice]: after each block.
    HloInstruction* first = Reshaped(inits[k], one, ctx);
    HloInstruction* before_parts[2] = {first, ctx.builder().SliceAlong(after, 0, 0, n - 1)};
    if (reverse) {
      before_parts[0] = ctx.builder().SliceAlong(after, 0, 1, n);
      before_parts[1] = first;
    }
    std::vector<int64_t> dims = one;
    dims[0] = n;
    HloInstruction* before = ctx.Add(HloOpcode::kConcatenate, WithDims(after->shape(), dims),
                                     {before_parts[0], before_parts[1]});
    before->mutable_attrs()->dimensions = {0};
    starts.push_back(Reshaped(b.SliceDim(before, 0, at, 1), slice, ctx));
    finals.push_back(b.GetTupleElement(across, nc + k));
  }
  std::vector<HloInstruction*> second = blocks;
  second.insert(second.end(), starts.begin(), starts.end());
  ASSIGN_OR_RETURN(HloInstruction * scanned,
                   AddScan(original, second, d, reverse, nc, as_written, ctx));
  std::vector<HloInstruction*> leaves;
  std::vector<Shape> shapes;
  for (int64_t j = 0; j < scan.num_outputs; ++j) leaves.push_back(b.GetTupleElement(scanned, j));
  leaves.insert(leaves.end(), finals.begin(), finals.end());
  for (const HloInstruction* leaf : leaves) shapes.push_back(leaf->shape());
  HloInstruction* out = ctx.Add(HloOpcode::kTuple, Shape::Tuple(shapes), leaves);
  ctx.Set(&original, {out, plan.result, original.shape()});
  return absl::OkStatus();
}

absl::Status HandleScan(const HloInstruction& original, const HloSharding& sharding,
                        PartitionContext& ctx) {
  ASSIGN_OR_RETURN(const ScanParts scan, ReadScan(original));
  if (std::optional<std::string> why = NotSliceParallel(*original.to_apply(), scan)) {
    return FallBackToReplicated(original, sharding, ctx, hlo::StrCat("a scan: ", *why));
  }
  std::vector<ScanPlan> plans;
  std::vector<HloSharding> arrays;  // Each plan's tiling of the inputs' shape.
  for (const auto& [source, array] : CandidateTilings(original, sharding, scan, ctx)) {
    const int64_t d = scan.attrs.dimension;
    absl::StatusOr<HloSharding> whole =
        array.IsTiled() ? hlo::PartiallyReplicate(array, {d}) : array;
    if (whole.ok()) {
      ASSIGN_OR_RETURN(ScanPlan plan, PlanIn(hlo::StrCat("local (", source, ")"), *whole, 1,
                                             original, sharding, scan, ctx));
      plans.push_back(std::move(plan));
      arrays.push_back(*whole);
    }
    if (std::optional<int64_t> n = PrefixBlocks(original, array, scan, ctx.num_devices())) {
      ASSIGN_OR_RETURN(ScanPlan plan, PlanIn(hlo::StrCat("prefix (", source, ")"), array, *n,
                                             original, sharding, scan, ctx));
      plans.push_back(std::move(plan));
      arrays.push_back(array);
    }
  }
  if (plans.empty()) {
    return FallBackToReplicated(original, sharding, ctx, "a scan with no tiling to keep");
  }
  std::vector<double> us;
  std::vector<int64_t> bytes;
  for (const ScanPlan& plan : plans) {
    us.push_back(plan.cost.us);
    bytes.push_back(plan.cost.bytes);
  }
  const size_t best = ChooseNearFastest(us, bytes);
  if (ctx.log().keep_lines) ctx.log().lines.push_back(ExplainLine(original, plans, plans[best]));
  if (plans[best].blocks > 1) return EmitPrefix(original, plans[best], arrays[best], scan, ctx);
  return EmitLocal(original, plans[best], scan, ctx);
}

}  // namespace

void RegisterScanHandler(HandlerTable& table) { table[HloOpcode::kScan] = &HandleScan; }

}  // namespace spmd

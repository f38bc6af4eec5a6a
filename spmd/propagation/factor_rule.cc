// The rule table: one builder per op family, registered by opcode in RuleTable(). Builders
// read only the instruction's attributes and shapes, and return nullopt for forms they do not
// describe (tuple-shaped results, ranks that do not fit), so an unexpected form leaves the
// instruction to the partitioner's default (replicated) instead of mapping it wrongly.
#include "spmd/propagation/factor_rule.h"

#include <algorithm>
#include <array>

#include "hlo/ir/custom_call_config.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/linalg_attributes.h"
#include "hlo/ir/scan_attributes.h"
#include "hlo/sdy/sdy_attributes.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using Kind = Factor::Kind;
using RuleFn = std::optional<FactorRule> (*)(const HloInstruction&);

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool AllArrays(const HloInstruction& instr) {
  if (!instr.shape().IsArray()) return false;
  for (const HloInstruction* op : instr.operands()) {
    if (!op->shape().IsArray()) return false;
  }
  return true;
}

// Operands of the result's rank share each dimension with it; scalar operands share none.
std::optional<FactorRule> Elementwise(const HloInstruction& instr) {
  if (!AllArrays(instr)) return std::nullopt;
  const int64_t n = instr.operand_count();
  const int64_t rank = instr.shape().rank();
  for (const HloInstruction* op : instr.operands()) {
    if (op->shape().rank() != 0 && op->shape().dimensions() != instr.shape().dimensions()) {
      return std::nullopt;
    }
  }
  FactorRuleBuilder b("elementwise", n);
  for (int64_t d = 0; d < rank; ++d) {
    std::vector<int64_t> dims(n + 1, d);
    for (int64_t i = 0; i < n; ++i) {
      if (instr.operand(i)->shape().rank() == 0) dims[i] = -1;
    }
    b.Add(Kind::kPassThrough, std::move(dims));
  }
  return std::move(b).Build();
}

// Ops elementwise in some forms only (hlo::IsElementwise): a bitcast-convert between types of
// one width (between widths it grows or drops a minor dim: no rule, its operands and result
// are not split alike) and a map over every dim.
std::optional<FactorRule> IfElementwise(const HloInstruction& instr) {
  if (!hlo::IsElementwise(instr)) return std::nullopt;
  return Elementwise(instr);
}

std::optional<FactorRule> Broadcast(const HloInstruction& instr) {
  if (!AllArrays(instr)) return std::nullopt;
  const std::vector<int64_t>& dims = instr.dimensions();
  if (static_cast<int64_t>(dims.size()) != instr.operand(0)->shape().rank()) return std::nullopt;
  FactorRuleBuilder b("broadcast", 1);
  for (int64_t r = 0; r < instr.shape().rank(); ++r) {
    auto it = std::find(dims.begin(), dims.end(), r);
    b.Add(Kind::kPassThrough, {it == dims.end() ? -1 : it - dims.begin(), r});
  }
  return std::move(b).Build();
}

std::optional<FactorRule> Transpose(const HloInstruction& instr) {
  if (!AllArrays(instr) || instr.dimensions().size() != instr.shape().dimensions().size()) {
    return std::nullopt;
  }
  FactorRuleBuilder b("transpose", 1);
  for (int64_t r = 0; r < instr.shape().rank(); ++r) {
    b.Add(Kind::kPassThrough, {instr.dimensions()[r], r});
  }
  return std::move(b).Build();
}

std::optional<FactorRule> Reshape(const HloInstruction& instr) {
  if (!AllArrays(instr)) return std::nullopt;
  FactorRule rule;
  rule.name = "reshape";
  rule.num_operands = 1;
  rule.reshape = true;
  return rule;
}

// reduce(x, init), dimensions=D: kept dims of x map to the result in order; D are contracting.
// A reduce of `n` arrays (then n scalar inits) toward one result array: the arrays' reduced
// dims are contracting, the others pass through in order; the inits take no part.
FactorRule ReduceRule(const HloInstruction& instr, int64_t n) {
  FactorRuleBuilder b("reduce", 2 * n);
  int64_t next = 0;
  for (int64_t d = 0; d < instr.operand(0)->shape().rank(); ++d) {
    const bool reduced = Contains(instr.dimensions(), d);
    std::vector<int64_t> dims(2 * n + 1, -1);
    for (int64_t i = 0; i < n; ++i) dims[i] = d;
    dims[2 * n] = reduced ? -1 : next++;
    b.Add(reduced ? Kind::kContracting : Kind::kPassThrough, std::move(dims));
  }
  return std::move(b).Build();
}

std::optional<FactorRule> Reduce(const HloInstruction& instr) {
  if (!AllArrays(instr) || instr.operand_count() != 2) return std::nullopt;
  const int64_t in_rank = instr.operand(0)->shape().rank();
  if (in_rank - static_cast<int64_t>(instr.dimensions().size()) != instr.shape().rank()) {
    return std::nullopt;
  }
  return ReduceRule(instr, 1);
}

// Result dims: batch..., lhs free..., rhs free... (XLA's dot output order).
std::optional<FactorRule> Dot(const HloInstruction& instr) {
  if (!AllArrays(instr) || !instr.attrs().dot_dimension_numbers || instr.operand_count() != 2) {
    return std::nullopt;
  }
  const hlo::DotDimensionNumbers& dn = *instr.attrs().dot_dimension_numbers;
  FactorRuleBuilder b("dot", 2);
  int64_t next = 0;
  for (size_t i = 0; i < dn.lhs_batch_dimensions.size(); ++i) {
    b.Add(Kind::kPassThrough, {dn.lhs_batch_dimensions[i], dn.rhs_batch_dimensions[i], next++});
  }
  for (int64_t side = 0; side < 2; ++side) {
    const HloInstruction* op = instr.operand(side);
    const auto& batch = side == 0 ? dn.lhs_batch_dimensions : dn.rhs_batch_dimensions;
    const auto& contracting =
        side == 0 ? dn.lhs_contracting_dimensions : dn.rhs_contracting_dimensions;
    for (int64_t d = 0; d < op->shape().rank(); ++d) {
      if (Contains(batch, d) || Contains(contracting, d)) continue;
      std::vector<int64_t> dims = {-1, -1, next++};
      dims[side] = d;
      b.Add(Kind::kPassThrough, std::move(dims));
    }
  }
  if (next != instr.shape().rank()) return std::nullopt;
  for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i) {
    b.Add(Kind::kContracting,
          {dn.lhs_contracting_dimensions[i], dn.rhs_contracting_dimensions[i], -1});
  }
  return std::move(b).Build();
}

// convolution(input, kernel): batch and each spatial dim pass from the input to the result
// (a split spatial dim is computed by halo exchange, spatial/halo_exchange.h; base dilation
// keeps it whole), output features from the kernel to the result, input features contract.
// With feature_group_count G > 1 the output features also pass to the input features (a tile
// of whole groups sees only its own groups' inputs); with batch_group_count > 1 batch and
// features stay whole. Kernel spatial dims stay whole, except an einsum dim in disguise
// (hlo::ConvolutionEinsumDimOf): a batch of all three, or the kernel's free dim.
std::optional<FactorRule> Convolution(const HloInstruction& instr) {
  if (!AllArrays(instr) || instr.operand_count() != 2 ||
      !instr.attrs().convolution_dimension_numbers.has_value()) {
    return std::nullopt;
  }
  const hlo::ConvolutionDimensionNumbers& dn = *instr.attrs().convolution_dimension_numbers;
  const size_t spatial = dn.output_spatial_dimensions.size();
  if (dn.input_spatial_dimensions.size() != spatial ||
      dn.kernel_spatial_dimensions.size() != spatial) {
    return std::nullopt;
  }
  const bool batch_grouped = instr.attrs().batch_group_count != 1;
  const bool feature_grouped = instr.attrs().feature_group_count != 1;
  FactorRuleBuilder b("convolution", 2);
  b.Add(batch_grouped ? Kind::kNeedReplication : Kind::kPassThrough,
        {dn.input_batch_dimension, -1, dn.output_batch_dimension});
  if (batch_grouped) {
    b.Add(Kind::kNeedReplication, {dn.input_feature_dimension, dn.kernel_input_feature_dimension,
                                   -1});
    b.Add(Kind::kNeedReplication, {-1, dn.kernel_output_feature_dimension,
                                   dn.output_feature_dimension});
  } else if (feature_grouped) {
    b.Add(Kind::kPassThrough, {dn.input_feature_dimension, dn.kernel_output_feature_dimension,
                               dn.output_feature_dimension});
    b.Add(Kind::kNeedReplication, {-1, dn.kernel_input_feature_dimension, -1});
  } else {
    b.Add(Kind::kPassThrough, {-1, dn.kernel_output_feature_dimension,
                               dn.output_feature_dimension});
    b.Add(Kind::kContracting, {dn.input_feature_dimension, dn.kernel_input_feature_dimension,
                               -1});
  }
  for (size_t k = 0; k < spatial; ++k) {
    const bool windowed =
        instr.attrs().window.has_value() && k < instr.attrs().window->dimensions.size();
    const hlo::ConvolutionEinsumDim einsum =
        windowed ? hlo::ConvolutionEinsumDimOf(
                       instr.attrs().window->dimensions[k],
                       instr.operand(0)->shape().dimensions(dn.input_spatial_dimensions[k]),
                       instr.operand(1)->shape().dimensions(dn.kernel_spatial_dimensions[k]))
                 : hlo::ConvolutionEinsumDim::kWindow;
    if (einsum != hlo::ConvolutionEinsumDim::kWindow) {
      // An einsum dim in disguise: a batch of input, kernel and result, or the kernel's free
      // dim (the input is one element long along it).
      const bool batch = einsum == hlo::ConvolutionEinsumDim::kBatch;
      b.Add(Kind::kPassThrough, {batch ? dn.input_spatial_dimensions[k] : -1,
                                 dn.kernel_spatial_dimensions[k], dn.output_spatial_dimensions[k]});
      if (!batch) b.Add(Kind::kNeedReplication, {dn.input_spatial_dimensions[k], -1, -1});
      continue;
    }
    const bool splittable = windowed && instr.attrs().window->dimensions[k].base_dilation == 1;
    b.Add(splittable ? Kind::kPassThrough : Kind::kNeedReplication,
          {dn.input_spatial_dimensions[k], -1, dn.output_spatial_dimensions[k]});
    b.Add(Kind::kNeedReplication, {-1, dn.kernel_spatial_dimensions[k], -1});
  }
  return std::move(b).Build();
}

// reduce-window(x, init): every dim passes between x and the result (split window dims are
// computed by halo exchange); base dilation keeps a dim whole.
std::optional<FactorRule> ReduceWindow(const HloInstruction& instr) {
  if (!AllArrays(instr) || instr.operand_count() != 2 || !instr.attrs().window.has_value() ||
      static_cast<int64_t>(instr.attrs().window->dimensions.size()) != instr.shape().rank()) {
    return std::nullopt;
  }
  FactorRuleBuilder b("reduce-window", 2);
  for (int64_t d = 0; d < instr.shape().rank(); ++d) {
    const bool splittable = instr.attrs().window->dimensions[d].base_dilation == 1;
    b.Add(splittable ? Kind::kPassThrough : Kind::kNeedReplication, {d, -1, d});
  }
  return std::move(b).Build();
}

// select-and-scatter(x, source, init): a dim whose window is trivial (size 1, stride 1, no
// padding or dilation) passes between x, the source and the result (each device selects and
// scatters within its own shard); any other dim stays whole on all three.
std::optional<FactorRule> SelectAndScatter(const HloInstruction& instr) {
  if (!AllArrays(instr) || instr.operand_count() != 3 || !instr.attrs().window.has_value() ||
      static_cast<int64_t>(instr.attrs().window->dimensions.size()) != instr.shape().rank() ||
      instr.operand(1)->shape().rank() != instr.shape().rank()) {
    return std::nullopt;
  }
  FactorRuleBuilder b("select-and-scatter", 3);
  for (int64_t d = 0; d < instr.shape().rank(); ++d) {
    const hlo::WindowDimension& w = instr.attrs().window->dimensions[d];
    const bool trivial = w.size == 1 && w.stride == 1 && w.padding_low == 0 &&
                         w.padding_high == 0 && w.window_dilation == 1 && w.base_dilation == 1;
    if (trivial) {
      b.Add(Kind::kPassThrough, {d, d, -1, d});
    } else {
      b.Add(Kind::kNeedReplication, {d, -1, -1, d});
      b.Add(Kind::kNeedReplication, {-1, d, -1, -1});
    }
  }
  return std::move(b).Build();
}

// Operand 0 and the result share every dim; `whole[d]` dims must stay unsplit; other operands
// (scalars, indices, pad values, updates) share nothing unless `update_operand` >= 0, which
// shares the dims not `moved` too (dynamic-update-slice's update).
std::optional<FactorRule> SameRankWithWholeDims(const HloInstruction& instr, std::string name,
                                                const std::vector<bool>& whole,
                                                int64_t update_operand,
                                                const std::vector<bool>& moved = {}) {
  const int64_t n = instr.operand_count();
  FactorRuleBuilder b(std::move(name), n);
  for (int64_t d = 0; d < instr.shape().rank(); ++d) {
    std::vector<int64_t> dims(n + 1, -1);
    dims[0] = d;
    dims[n] = d;
    const bool is_moved = d < static_cast<int64_t>(moved.size()) && moved[d];
    if (update_operand >= 0 && !is_moved) dims[update_operand] = d;
    b.Add(whole[d] ? Kind::kNeedReplication : Kind::kPassThrough, std::move(dims));
  }
  return std::move(b).Build();
}

bool SameRank(const HloInstruction& instr) {
  return AllArrays(instr) && instr.operand(0)->shape().rank() == instr.shape().rank();
}

// slice: every dim passes (the partitioner computes a split sliced dim by halo exchange);
// dynamic-slice: the dims whose size changes stay whole.
std::optional<FactorRule> Slice(const HloInstruction& instr) {
  if (!SameRank(instr)) return std::nullopt;
  const hlo::Shape& in = instr.operand(0)->shape();
  std::vector<bool> whole(in.rank());
  for (int64_t d = 0; d < in.rank(); ++d) {
    whole[d] = instr.opcode() == HloOpcode::kDynamicSlice &&
               in.dimensions(d) != instr.shape().dimensions(d);
  }
  return SameRankWithWholeDims(instr, std::string(hlo::HloOpcodeString(instr.opcode())), whole, -1);
}

std::optional<FactorRule> Pad(const HloInstruction& instr) {
  if (!SameRank(instr) || !instr.attrs().padding_config) return std::nullopt;
  const auto& config = instr.attrs().padding_config->dimensions;
  if (static_cast<int64_t>(config.size()) != instr.shape().rank()) return std::nullopt;
  std::vector<bool> whole(config.size());
  // Edge padding passes (halo exchange); interior padding keeps its dim whole.
  for (size_t d = 0; d < config.size(); ++d) whole[d] = config[d].interior_padding != 0;
  return SameRankWithWholeDims(instr, "pad", whole, -1);
}

std::optional<FactorRule> DynamicUpdateSlice(const HloInstruction& instr) {
  if (!SameRank(instr) || instr.operand(1)->shape().rank() != instr.shape().rank()) {
    return std::nullopt;
  }
  // The operand and result share every dim (the update is written into each shard); the
  // update shares only the dims it covers whole.
  const hlo::Shape& update = instr.operand(1)->shape();
  std::vector<bool> moved(update.rank());
  for (int64_t d = 0; d < update.rank(); ++d) {
    moved[d] = update.dimensions(d) != instr.shape().dimensions(d);
  }
  return SameRankWithWholeDims(instr, "dynamic-update-slice",
                               std::vector<bool>(update.rank(), false), 1, moved);
}

// reverse: every dim passes (a split reversed dim swaps mirrored shards).
std::optional<FactorRule> Reverse(const HloInstruction& instr) {
  std::optional<FactorRule> rule = Elementwise(instr);
  if (!rule) return rule;
  rule->name = "reverse";
  for (int64_t d : instr.dimensions()) {
    if (d < 0 || d >= instr.shape().rank()) return std::nullopt;
  }
  rule->mirrored = instr.dimensions();
  return rule;
}

// single-operand sort: the listed dimensions stay whole.
std::optional<FactorRule> WholeAlongDimensions(const HloInstruction& instr) {
  if (!SameRank(instr) || instr.operand_count() != 1) return std::nullopt;
  std::vector<bool> whole(instr.shape().rank(), false);
  for (int64_t d : instr.dimensions()) {
    if (d < 0 || d >= instr.shape().rank()) return std::nullopt;
    whole[d] = true;
  }
  return SameRankWithWholeDims(instr, std::string(hlo::HloOpcodeString(instr.opcode())), whole, -1);
}

// fft: its innermost fft_length.size() dims are transformed (whole); the others pass through.
std::optional<FactorRule> Fft(const HloInstruction& instr) {
  if (!SameRank(instr) || instr.operand_count() != 1) return std::nullopt;
  const int64_t rank = instr.shape().rank();
  const int64_t transformed = static_cast<int64_t>(instr.attrs().fft_length.size());
  if (transformed < 1 || transformed > rank) return std::nullopt;
  std::vector<bool> whole(rank, false);
  for (int64_t d = rank - transformed; d < rank; ++d) whole[d] = true;
  return SameRankWithWholeDims(instr, "fft", whole, -1);
}

// cholesky: the matrices (the minor two dims) stay whole; the batch dims pass through.
std::optional<FactorRule> Cholesky(const HloInstruction& instr) {
  if (!SameRank(instr) || instr.operand_count() != 1 || instr.shape().rank() < 2) {
    return std::nullopt;
  }
  const int64_t rank = instr.shape().rank();
  std::vector<bool> whole(rank, false);
  whole[rank - 2] = whole[rank - 1] = true;
  return SameRankWithWholeDims(instr, "cholesky", whole, -1);
}

// triangular-solve(a, b): the batch dims pass through a, b and the result; a's matrix and the
// dim of b it multiplies stay whole; b's other minor dim (its columns when left_side, else its
// rows: independent systems) passes between b and the result.
std::optional<FactorRule> TriangularSolve(const HloInstruction& instr) {
  if (!AllArrays(instr) || instr.operand_count() != 2) return std::nullopt;
  const int64_t rank = instr.shape().rank();
  if (rank < 2 || instr.operand(0)->shape().rank() != rank ||
      instr.operand(1)->shape().rank() != rank) {
    return std::nullopt;
  }
  absl::StatusOr<hlo::TriangularSolveAttributes> attributes =
      hlo::ReadTriangularSolveAttributes(instr);
  if (!attributes.ok()) return std::nullopt;
  const int64_t shared = attributes->left_side ? rank - 2 : rank - 1;
  const int64_t free = attributes->left_side ? rank - 1 : rank - 2;
  FactorRuleBuilder b("triangular-solve", 2);
  for (int64_t d = 0; d + 2 < rank; ++d) b.Add(Kind::kPassThrough, {d, d, d});
  b.Add(Kind::kNeedReplication, {rank - 2, -1, -1});
  b.Add(Kind::kNeedReplication, {rank - 1, -1, -1});
  b.Add(Kind::kNeedReplication, {-1, shared, shared});
  b.Add(Kind::kPassThrough, {-1, free, free});
  return std::move(b).Build();
}

std::optional<FactorRule> Concatenate(const HloInstruction& instr) {
  if (!AllArrays(instr) || instr.dimensions().size() != 1) return std::nullopt;
  const int64_t n = instr.operand_count();
  FactorRuleBuilder b("concatenate", n);
  for (int64_t d = 0; d < instr.shape().rank(); ++d) {
    std::vector<int64_t> dims(n + 1, d);
    b.Add(Kind::kPassThrough, std::move(dims));
  }
  return std::move(b).Build();
}

// The Sharding custom-call (with_sharding_constraint) and memory-placement annotations
// (MoveToHost, MoveToDevice, PinToDevice) are looked through: identities. Other custom-calls
// are barriers.
// A custom-call with a Shardy sharding rule (jax's custom_partitioning): its splittable
// factors pass through, every other factor stays whole (hlo::sdy::FactorMaySplit).
std::optional<FactorRule> ShardyRule(const HloInstruction& instr) {
  absl::StatusOr<std::optional<hlo::sdy::ShardingRule>> rule = hlo::sdy::ShardingRuleOf(instr);
  if (!rule.ok() || !rule->has_value() || instr.shape().IsTuple()) return std::nullopt;
  FactorRuleBuilder b("sharding-rule", instr.operand_count());
  const std::vector<std::vector<int64_t>> dims = hlo::sdy::SingleFactorDims(**rule);
  for (size_t f = 0; f < dims.size(); ++f) {
    const bool split = hlo::sdy::FactorMaySplit(**rule, f) && dims[f].back() >= 0;
    b.Add(split ? Kind::kPassThrough : Kind::kNeedReplication, dims[f]);
  }
  return std::move(b).Build();
}

// A collective of the input program with one array operand of the result's rank (in manual
// regions: shard_map's psum, all_gather, psum_scatter, ppermute, all_to_all): the dims it
// gathers, scatters or exchanges stay whole; the others pass (the partitioner runs it on each
// device's tile of its manual group's value).
std::optional<FactorRule> Collective(const HloInstruction& instr) {
  if (instr.operand_count() != 1 || !SameRank(instr)) return std::nullopt;
  const hlo::Shape& in = instr.operand(0)->shape();
  std::vector<bool> whole(in.rank());
  for (int64_t d = 0; d < in.rank(); ++d) {
    whole[d] = in.dimensions(d) != instr.shape().dimensions(d) ||
               (instr.opcode() == HloOpcode::kAllToAll && Contains(instr.dimensions(), d));
  }
  return SameRankWithWholeDims(instr, "collective", whole, -1);
}

// SPMDFullToShardShape / SPMDShardToFullShape with unspecified_dims whose local side is
// manual along some mesh axes only (a partly manual shard_map): the free axes may split its
// open dims on both sides, related by the global side's sharding as written (the operand's
// annotation for SPMDFullToShardShape, its own for SPMDShardToFullShape).
std::optional<FactorRule> ManualConversion(const HloInstruction& instr) {
  const std::string& target = instr.attrs().custom_call_target;
  const bool to_shard = target == "SPMDFullToShardShape";
  if ((!to_shard && target != "SPMDShardToFullShape") || instr.operand_count() != 1 ||
      !instr.shape().IsArray() || !instr.operand(0)->shape().IsArray() ||
      !hlo::ParseUnspecifiedDims(instr.attrs().backend_config).has_value()) {
    return std::nullopt;
  }
  const HloInstruction& global = to_shard ? *instr.operand(0) : instr;
  const HloInstruction& local = to_shard ? instr : *instr.operand(0);
  if (!global.has_sharding() || !local.has_sharding()) return std::nullopt;
  const hlo::HloSharding& structure = global.sharding();
  if (!local.sharding().HasManualSubgroup() || structure.HasManualSubgroup() ||
      !(structure.IsTiled() || structure.IsReplicated())) {
    return std::nullopt;
  }
  FactorRule rule;
  rule.name = "manual-conversion";
  rule.num_operands = 1;
  rule.conversion = std::make_shared<const ConversionSides>(
      ConversionSides{structure.WithoutMetadata(), local.sharding().WithoutMetadata(),
                      global.shape(), to_shard ? 0 : 1});
  return rule;
}

std::optional<FactorRule> CustomCall(const HloInstruction& instr) {
  if (std::optional<FactorRule> rule = ShardyRule(instr)) return rule;
  if (std::optional<FactorRule> rule = ManualConversion(instr)) return rule;
  const bool constraint =
      instr.attrs().custom_call_target == "Sharding" && instr.operand_count() == 1;
  if (!constraint && !hlo::IsPlacementCustomCall(instr)) return std::nullopt;
  std::optional<FactorRule> rule = Elementwise(instr);
  if (rule) rule->name = constraint ? "sharding-constraint" : "placement";
  return rule;
}

// The dims of an index array other than its index vector dim, in order: they pair with the
// batch dims of a gather's result (or the scatter dims of a scatter's updates).
std::vector<int64_t> IndexBatchDims(int64_t rank, int64_t index_vector_dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != index_vector_dim) dims.push_back(d);
  }
  return dims;
}

// The dims of `rank` not in `excluded`, in order.
std::vector<int64_t> DimsExcept(int64_t rank, const std::vector<int64_t>& excluded) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(excluded, d)) dims.push_back(d);
  }
  return dims;
}

// gather(operand, indices): an operand dim the slice takes whole passes to its offset dim of
// the result (operand passthrough); each index dim passes to its batch dim of the result
// (index parallel), together with the operand's batching dim it is paired with; sliced and
// collapsed operand dims and the index vector dim stay whole.
std::optional<FactorRule> Gather(const HloInstruction& instr) {
  if (!AllArrays(instr) || instr.operand_count() != 2 ||
      !instr.attrs().gather_dimension_numbers.has_value()) {
    return std::nullopt;
  }
  const hlo::GatherDimensionNumbers& g = *instr.attrs().gather_dimension_numbers;
  const hlo::Shape& operand = instr.operand(0)->shape();
  const hlo::Shape& indices = instr.operand(1)->shape();
  const std::vector<int64_t>& sizes = instr.attrs().gather_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != operand.rank()) return std::nullopt;
  const std::vector<int64_t> batch_result = DimsExcept(instr.shape().rank(), g.offset_dims);
  const std::vector<int64_t> index_batch = IndexBatchDims(indices.rank(), g.index_vector_dim);
  if (batch_result.size() != index_batch.size()) return std::nullopt;
  FactorRuleBuilder b("gather", 2);
  for (size_t k = 0; k < index_batch.size(); ++k) {
    std::vector<int64_t> dims = {-1, index_batch[k], batch_result[k]};
    for (size_t i = 0; i < g.start_indices_batching_dims.size(); ++i) {
      if (g.start_indices_batching_dims[i] == index_batch[k] && i < g.operand_batching_dims.size()) {
        dims[0] = g.operand_batching_dims[i];
      }
    }
    b.Add(Kind::kPassThrough, std::move(dims));
  }
  if (g.index_vector_dim < indices.rank()) {
    b.Add(Kind::kNeedReplication, {-1, g.index_vector_dim, -1});
  }
  std::vector<int64_t> not_window = g.collapsed_slice_dims;
  not_window.insert(not_window.end(), g.operand_batching_dims.begin(), g.operand_batching_dims.end());
  const std::vector<int64_t> window = DimsExcept(operand.rank(), not_window);
  if (window.size() != g.offset_dims.size()) return std::nullopt;
  for (size_t j = 0; j < window.size(); ++j) {
    const int64_t d = window[j];
    b.Add(sizes[d] == operand.dimensions(d) ? Kind::kPassThrough : Kind::kNeedReplication,
          {d, -1, g.offset_dims[j]});
  }
  for (int64_t d : g.collapsed_slice_dims) b.Add(Kind::kNeedReplication, {d, -1, -1});
  return std::move(b).Build();
}

// scatter(operand, indices, updates) with one operand: an operand dim the update window covers
// whole passes between the operand, its update window dim and the result; the batching dims
// pass between operand, indices, updates and result; the other scatter dims pair the indices
// with the updates like a contracting dim (split alike on both, partial results the combiner
// merges; XLA's scatter update-to-index propagation); everything else stays whole.
std::optional<FactorRule> Scatter(const HloInstruction& instr) {
  if (!AllArrays(instr) || instr.operand_count() != 3 ||
      !instr.attrs().scatter_dimension_numbers.has_value()) {
    return std::nullopt;
  }
  const hlo::ScatterDimensionNumbers& sc = *instr.attrs().scatter_dimension_numbers;
  const hlo::Shape& operand = instr.operand(0)->shape();
  const hlo::Shape& indices = instr.operand(1)->shape();
  const hlo::Shape& updates = instr.operand(2)->shape();
  const std::vector<int64_t> scatter_dims = DimsExcept(updates.rank(), sc.update_window_dims);
  const std::vector<int64_t> index_batch = IndexBatchDims(indices.rank(), sc.index_vector_dim);
  if (scatter_dims.size() != index_batch.size()) return std::nullopt;
  FactorRuleBuilder b("scatter", 3);
  for (size_t k = 0; k < index_batch.size(); ++k) {
    std::vector<int64_t> dims = {-1, index_batch[k], scatter_dims[k], -1};
    Kind kind = Kind::kContracting;
    for (size_t i = 0; i < sc.scatter_indices_batching_dims.size(); ++i) {
      if (sc.scatter_indices_batching_dims[i] == index_batch[k] && i < sc.input_batching_dims.size()) {
        dims[0] = dims[3] = sc.input_batching_dims[i];
        kind = Kind::kPassThrough;
      }
    }
    b.Add(kind, std::move(dims));
  }
  if (sc.index_vector_dim < indices.rank()) {
    b.Add(Kind::kNeedReplication, {-1, sc.index_vector_dim, -1, -1});
  }
  std::vector<int64_t> not_window = sc.inserted_window_dims;
  not_window.insert(not_window.end(), sc.input_batching_dims.begin(), sc.input_batching_dims.end());
  const std::vector<int64_t> window = DimsExcept(operand.rank(), not_window);
  if (window.size() != sc.update_window_dims.size()) return std::nullopt;
  // The result is the operand updated: every operand dim reaches the result whole or split (a
  // split scattered dim is partitioned by masking the updates that land outside each shard), as
  // XLA's propagation gives a scatter its operand's sharding. An update window narrower than
  // the operand's dim does not share the operand's split.
  for (size_t j = 0; j < window.size(); ++j) {
    const int64_t d = window[j];
    const int64_t u = sc.update_window_dims[j];
    if (updates.dimensions(u) == operand.dimensions(d)) {
      b.Add(Kind::kPassThrough, {d, -1, u, d});
    } else {
      b.Add(Kind::kPassThrough, {d, -1, -1, d});
      b.Add(Kind::kNeedReplication, {-1, -1, u, -1});
    }
  }
  for (int64_t d : sc.inserted_window_dims) b.Add(Kind::kPassThrough, {d, -1, -1, d});
  return std::move(b).Build();
}

// An opcode's rule builder, and how much of its partitioning the rule is (RuleKind).
struct RuleEntry {
  RuleFn fn = nullptr;
  RuleKind kind = RuleKind::kOwn;
};

using RuleTableArray = std::array<RuleEntry, hlo::kNumHloOpcodes>;

const RuleTableArray& RuleTable() {
  static const RuleTableArray* table = [] {
    auto* t = new RuleTableArray();
    auto set = [t](HloOpcode op, RuleFn fn) { (*t)[static_cast<size_t>(op)].fn = fn; };
    auto set_dimension_map = [t](HloOpcode op, RuleFn fn) {
      (*t)[static_cast<size_t>(op)] = RuleEntry{fn, RuleKind::kDimensionMap};
    };
    auto set_local = [t](HloOpcode op, RuleFn fn) {
      (*t)[static_cast<size_t>(op)] = RuleEntry{fn, RuleKind::kLocal};
    };
    for (int op = 0; op < hlo::kNumHloOpcodes; ++op) {
      const HloOpcode opcode = static_cast<HloOpcode>(op);
      if (hlo::IsElementwiseOpcode(opcode)) set(opcode, &Elementwise);
    }
    set(HloOpcode::kCopy, &Elementwise);
    set(HloOpcode::kBitcastConvert, &IfElementwise);
    set(HloOpcode::kMap, &IfElementwise);
    set_dimension_map(HloOpcode::kBroadcast, &Broadcast);
    set_dimension_map(HloOpcode::kTranspose, &Transpose);
    set(HloOpcode::kReshape, &Reshape);
    set(HloOpcode::kReduce, &Reduce);
    set(HloOpcode::kDot, &Dot);
    set(HloOpcode::kConvolution, &Convolution);
    set(HloOpcode::kReduceWindow, &ReduceWindow);
    set(HloOpcode::kSelectAndScatter, &SelectAndScatter);
    set(HloOpcode::kSlice, &Slice);
    set(HloOpcode::kPad, &Pad);
    set(HloOpcode::kDynamicSlice, &Slice);
    set(HloOpcode::kDynamicUpdateSlice, &DynamicUpdateSlice);
    set(HloOpcode::kReverse, &Reverse);
    set(HloOpcode::kSort, &WholeAlongDimensions);
    set_local(HloOpcode::kFft, &Fft);
    set_local(HloOpcode::kCholesky, &Cholesky);
    set_local(HloOpcode::kTriangularSolve, &TriangularSolve);
    set(HloOpcode::kConcatenate, &Concatenate);
    set(HloOpcode::kCustomCall, &CustomCall);
    set(HloOpcode::kGather, &Gather);
    set(HloOpcode::kScatter, &Scatter);
    for (HloOpcode op : {HloOpcode::kAllReduce, HloOpcode::kAllGather, HloOpcode::kReduceScatter,
                         HloOpcode::kAllToAll, HloOpcode::kCollectivePermute}) {
      set(op, &Collective);
    }
    return t;
  }();
  return *table;
}

}  // namespace

FactorRuleBuilder::FactorRuleBuilder(std::string name, int64_t num_operands) {
  rule_.name = std::move(name);
  rule_.num_operands = num_operands;
}

FactorRuleBuilder& FactorRuleBuilder::Add(Factor::Kind kind, std::vector<int64_t> dims) {
  rule_.factors.push_back(Factor{kind, std::move(dims)});
  return *this;
}

std::optional<FactorRule> FactorRuleFor(const HloInstruction& instr) {
  const RuleFn fn = RuleTable()[static_cast<size_t>(instr.opcode())].fn;
  if (fn == nullptr) return std::nullopt;
  return fn(instr);
}

namespace {

// A reduce of n arrays of one shape with n scalar inits, for one result leaf (ReduceRule).
std::optional<FactorRule> VariadicReduceLeafRule(const HloInstruction& instr) {
  const hlo::Shape& shape = instr.shape();
  const int64_t n = instr.operand_count() / 2;
  if (!shape.IsTuple() || n < 2 || instr.operand_count() != 2 * n ||
      shape.tuple_shapes_size() != n) {
    return std::nullopt;
  }
  const hlo::Shape& in = instr.operand(0)->shape();
  if (!in.IsArray()) return std::nullopt;
  for (int64_t i = 0; i < n; ++i) {
    const hlo::Shape& leaf = shape.tuple_shapes(i);
    if (!instr.operand(i)->shape().IsArray() ||
        instr.operand(i)->shape().dimensions() != in.dimensions() ||
        !instr.operand(n + i)->shape().IsArray() || instr.operand(n + i)->shape().rank() != 0 ||
        !leaf.IsArray() ||
        leaf.rank() != in.rank() - static_cast<int64_t>(instr.dimensions().size())) {
      return std::nullopt;
    }
  }
  return ReduceRule(instr, n);
}

}  // namespace

// top-k (values, indices) of its operand's last dim, for one result leaf: the other dims pass
// through, the top-k dim stays whole (k of N positions).
std::optional<FactorRule> TopKLeafRule(const HloInstruction& instr) {
  const hlo::Shape& shape = instr.shape();
  if (instr.operand_count() != 1 || !instr.operand(0)->shape().IsArray() || !shape.IsTuple() ||
      shape.tuple_shapes_size() != 2) {
    return std::nullopt;
  }
  const hlo::Shape& operand = instr.operand(0)->shape();
  const int64_t rank = operand.rank();
  for (const hlo::Shape& leaf : shape.tuple_shapes()) {
    if (!leaf.IsArray() || leaf.rank() != rank || rank == 0) return std::nullopt;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      if (leaf.dimensions(d) != operand.dimensions(d)) return std::nullopt;
    }
  }
  FactorRuleBuilder b("topk", 1);
  for (int64_t d = 0; d < rank; ++d) {
    b.Add(d + 1 < rank ? Kind::kPassThrough : Kind::kNeedReplication, {d, d});
  }
  return std::move(b).Build();
}

std::optional<FactorRule> VariadicLeafRule(const HloInstruction& instr) {
  if (instr.opcode() == HloOpcode::kReduce) return VariadicReduceLeafRule(instr);
  if (instr.opcode() == HloOpcode::kTopK) return TopKLeafRule(instr);
  const hlo::Shape& shape = instr.shape();
  if (instr.opcode() != HloOpcode::kSort || !shape.IsTuple() ||
      shape.tuple_shapes_size() != instr.operand_count() || instr.operand_count() < 2) {
    return std::nullopt;
  }
  const hlo::Shape& leaf = shape.tuple_shapes(0);
  if (!leaf.IsArray()) return std::nullopt;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    if (!shape.tuple_shapes(i).IsArray() || !instr.operand(i)->shape().IsArray() ||
        shape.tuple_shapes(i).dimensions() != leaf.dimensions() ||
        instr.operand(i)->shape().dimensions() != leaf.dimensions()) {
      return std::nullopt;
    }
  }
  const int64_t n = instr.operand_count();
  FactorRuleBuilder b("sort", n);
  for (int64_t d = 0; d < leaf.rank(); ++d) {
    const bool sorted = Contains(instr.dimensions(), d);
    b.Add(sorted ? Kind::kNeedReplication : Kind::kPassThrough, std::vector<int64_t>(n + 1, d));
  }
  return std::move(b).Build();
}

namespace {

// A rule between an array of `rank` dims with the scan dim `d` and its slices (d removed):
// the other dims pass through; d is the array's alone (contracting: its tiling reaches no
// slice). `array_first`: the array is the operand side, else the result side.
FactorRule SliceRule(int64_t rank, int64_t d, bool array_first) {
  FactorRuleBuilder rule("scan slice", 1);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t slice = i == d ? -1 : i - (i > d ? 1 : 0);
    if (i == d) {
      rule.Add(array_first ? Factor::Kind::kContracting : Factor::Kind::kPassThrough,
               array_first ? std::vector<int64_t>{d, -1} : std::vector<int64_t>{-1, d});
    } else {
      rule.Add(Factor::Kind::kPassThrough,
               array_first ? std::vector<int64_t>{i, slice} : std::vector<int64_t>{slice, i});
    }
  }
  return std::move(rule).Build();
}

}  // namespace

std::vector<LinkedRule> CalleeRules(const HloInstruction& scan) {
  std::vector<LinkedRule> rules;
  if (scan.opcode() != HloOpcode::kScan) return rules;
  absl::StatusOr<hlo::ScanAttributes> attrs = hlo::ReadScanAttributes(scan);
  if (!attrs.ok() || scan.called_computations().size() != 1) return rules;
  const hlo::HloComputation& body = *scan.to_apply();
  const HloInstruction* root = body.root_instruction();
  const int64_t d = attrs->dimension;
  const int64_t inputs = scan.operand_count() - attrs->num_carries;
  const int64_t outputs = scan.shape().leaf_count() - attrs->num_carries;
  if (body.num_parameters() != scan.operand_count() ||
      root->shape().leaf_count() != scan.shape().leaf_count()) {
    return rules;
  }
  const bool root_tuple = root->shape().IsTuple();
  const bool scan_tuple = scan.shape().IsTuple();
  auto output = [&](int64_t j) -> const hlo::Shape& {
    return scan_tuple ? scan.shape().tuple_shapes(j) : scan.shape();
  };
  for (int64_t i = 0; i < inputs; ++i) {
    const HloInstruction* input = scan.operand(i);
    if (!input->shape().IsArray() || d >= input->shape().rank()) continue;
    rules.push_back({SliceRule(input->shape().rank(), d, true),
                     {input, -1},
                     {body.parameter_instruction(i), -1}});
    for (int64_t j = 0; j < outputs; ++j) {
      if (output(j).dimensions() != input->shape().dimensions()) continue;
      FactorRuleBuilder blocks("scan blocks", 1);
      blocks.Add(Factor::Kind::kPassThrough, {d, d});
      rules.push_back({std::move(blocks).Build(), {input, -1}, {&scan, scan_tuple ? j : -1}});
    }
  }
  for (int64_t k = inputs; k < scan.operand_count(); ++k) {
    const HloInstruction* init = scan.operand(k);
    if (!init->shape().IsArray()) continue;
    FactorRuleBuilder same("scan init", 1);
    for (int64_t i = 0; i < init->shape().rank(); ++i) same.Add(Factor::Kind::kPassThrough, {i, i});
    rules.push_back({std::move(same).Build(), {init, -1}, {body.parameter_instruction(k), -1}});
  }
  for (int64_t j = 0; j < outputs; ++j) {
    if (!output(j).IsArray() || d >= output(j).rank()) continue;
    rules.push_back({SliceRule(output(j).rank(), d, false),
                     {root, root_tuple ? j : -1},
                     {&scan, scan_tuple ? j : -1}});
  }
  return rules;
}

RuleKind RuleKindOf(HloOpcode opcode) { return RuleTable()[static_cast<size_t>(opcode)].kind; }

std::vector<HloOpcode> OpcodesOfRuleKind(RuleKind kind) {
  std::vector<HloOpcode> opcodes;
  for (int op = 0; op < hlo::kNumHloOpcodes; ++op) {
    if (RuleKindOf(static_cast<HloOpcode>(op)) == kind)
      opcodes.push_back(static_cast<HloOpcode>(op));
  }
  return opcodes;
}

bool RebuiltInAnyTiling(const HloInstruction& value) {
  return value.opcode() == HloOpcode::kBroadcast && value.shape().IsArray() &&
         value.operand(0)->shape().IsArray() && value.operand(0)->shape().rank() == 0;
}

}  // namespace spmd

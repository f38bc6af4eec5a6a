#include "spmd/partitioner/conv_as_dot.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir/hlo_module.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/preprocess_util.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

// What a window dim is as an einsum dim (file comment).
enum class Role { kBatch, kKernelFree, kInputFree, kContracting };

std::optional<Role> RoleOf(const hlo::WindowDimension& w, int64_t input, int64_t kernel) {
  switch (hlo::ConvolutionEinsumDimOf(w, input, kernel)) {
    case hlo::ConvolutionEinsumDim::kBatch:
      return Role::kBatch;
    case hlo::ConvolutionEinsumDim::kKernelFree:
      return Role::kKernelFree;
    case hlo::ConvolutionEinsumDim::kWindow:
      break;
  }
  const bool plain = w.padding_low == 0 && w.padding_high == 0 && w.base_dilation == 1 &&
                     w.window_dilation == 1 && w.size == kernel;
  if (!plain) return std::nullopt;
  if (kernel == 1 && w.stride == 1) return Role::kInputFree;
  if (input == kernel && !w.window_reversal) return Role::kContracting;
  return std::nullopt;
}

// The dot a convolution is, on its operands with `input_dropped` / `kernel_dropped` (size-1
// dims) removed: dimension numbers and, for each dot result dim, the convolution's output dim.
struct DotForm {
  std::vector<int64_t> input_dropped, kernel_dropped;
  hlo::DotDimensionNumbers numbers;
  std::vector<int64_t> output_dim_of;
  std::vector<int64_t> contracted_outputs;  // The convolution's size-1 output dims.
};

// Index of `dim` once the dims in `dropped` are removed.
int64_t Kept(int64_t dim, const std::vector<int64_t>& dropped) {
  return dim - std::count_if(dropped.begin(), dropped.end(), [&](int64_t d) { return d < dim; });
}

std::optional<DotForm> FormOf(const HloInstruction& conv) {
  const hlo::InstructionAttributes& a = conv.attrs();
  if (a.feature_group_count != 1 || a.batch_group_count != 1 ||
      !a.convolution_dimension_numbers.has_value()) {
    return std::nullopt;
  }
  const hlo::ConvolutionDimensionNumbers& dn = *a.convolution_dimension_numbers;
  const size_t spatial = dn.input_spatial_dimensions.size();
  if (spatial > 0 && (!a.window.has_value() || a.window->dimensions.size() != spatial)) {
    return std::nullopt;
  }
  const Shape& input = conv.operand(0)->shape();
  const Shape& kernel = conv.operand(1)->shape();
  DotForm form;
  // Each operand dim's partner (batch, contracting) or output dim (free); -1: dropped.
  std::vector<int64_t> input_out(input.rank(), -1), kernel_out(kernel.rank(), -1);
  std::vector<std::pair<int64_t, int64_t>> batch, contracting;
  input_out[dn.input_batch_dimension] = dn.output_batch_dimension;
  kernel_out[dn.kernel_output_feature_dimension] = dn.output_feature_dimension;
  contracting.push_back({dn.input_feature_dimension, dn.kernel_input_feature_dimension});
  std::vector<int64_t> batch_outputs;
  for (size_t k = 0; k < spatial; ++k) {
    const int64_t i = dn.input_spatial_dimensions[k], j = dn.kernel_spatial_dimensions[k];
    const int64_t o = dn.output_spatial_dimensions[k];
    const std::optional<Role> role =
        RoleOf(a.window->dimensions[k], input.dimensions(i), kernel.dimensions(j));
    if (!role.has_value()) return std::nullopt;
    switch (*role) {
      case Role::kBatch:
        batch.push_back({i, j});
        batch_outputs.push_back(o);
        break;
      case Role::kKernelFree:
        form.input_dropped.push_back(i);
        kernel_out[j] = o;
        break;
      case Role::kInputFree:
        input_out[i] = o;
        form.kernel_dropped.push_back(j);
        break;
      case Role::kContracting:
        contracting.push_back({i, j});
        form.contracted_outputs.push_back(o);
        break;
    }
  }
  for (const auto& [i, j] : batch) input_out[i] = kernel_out[j] = -2;
  for (const auto& [i, j] : contracting) input_out[i] = kernel_out[j] = -2;
  for (const auto& [i, j] : batch) {
    form.numbers.lhs_batch_dimensions.push_back(Kept(i, form.input_dropped));
    form.numbers.rhs_batch_dimensions.push_back(Kept(j, form.kernel_dropped));
  }
  for (const auto& [i, j] : contracting) {
    form.numbers.lhs_contracting_dimensions.push_back(Kept(i, form.input_dropped));
    form.numbers.rhs_contracting_dimensions.push_back(Kept(j, form.kernel_dropped));
  }
  form.output_dim_of = batch_outputs;
  for (int64_t o : input_out) {
    if (o >= 0) form.output_dim_of.push_back(o);
  }
  for (int64_t o : kernel_out) {
    if (o >= 0) form.output_dim_of.push_back(o);
  }
  std::sort(form.contracted_outputs.begin(), form.contracted_outputs.end());
  return form;
}

Shape Without(const Shape& shape, const std::vector<int64_t>& dropped) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(dropped.begin(), dropped.end(), d) == dropped.end()) {
      dims.push_back(shape.dimensions(d));
    }
  }
  return Shape::Array(shape.element_type(), dims);
}

// A sharding every new instruction can carry: none, replicated or tiled.
bool Mappable(const HloInstruction& instr) {
  return !instr.has_sharding() || instr.sharding().IsReplicated() || instr.sharding().IsTiled();
}

// `instr`'s sharding for `to`, a reshape of its shape; nullopt when `instr` has none.
absl::StatusOr<std::optional<HloSharding>> ReshapedSharding(const HloInstruction& instr,
                                                            const Shape& from, const Shape& to) {
  if (!instr.has_sharding()) return std::optional<HloSharding>();
  ASSIGN_OR_RETURN(HloSharding s, hlo::ReshapeSharding(instr.sharding(), from, to));
  return std::optional<HloSharding>(std::move(s));
}

std::vector<int64_t> Inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return inverse;
}

// Rewrites `conv` (file comment); false when its shardings do not map.
absl::StatusOr<bool> RewriteOne(HloInstruction& conv, const DotForm& form, FreshNames& namer,
                                absl::flat_hash_set<const HloInstruction*>& added) {
  HloInstruction* input = conv.operand(0);
  HloInstruction* kernel = conv.operand(1);
  // Only the operands reshaped here need a sharding the reshape can carry.
  if (!Mappable(conv) || (!form.input_dropped.empty() && !Mappable(*input)) ||
      (!form.kernel_dropped.empty() && !Mappable(*kernel))) {
    return false;
  }
  const Shape& shape = conv.shape();
  const Shape input_shape = Without(input->shape(), form.input_dropped);
  const Shape kernel_shape = Without(kernel->shape(), form.kernel_dropped);
  std::vector<int64_t> kept;  // The convolution's output dims the dot makes, in order.
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (!std::binary_search(form.contracted_outputs.begin(), form.contracted_outputs.end(), d)) {
      kept.push_back(d);
    }
  }
  std::vector<int64_t> perm;  // transpose(dot): result dim j is the dot's dim perm[j].
  for (int64_t d : kept) {
    perm.push_back(std::find(form.output_dim_of.begin(), form.output_dim_of.end(), d) -
                   form.output_dim_of.begin());
  }
  const Shape kept_shape = Without(shape, form.contracted_outputs);
  std::vector<int64_t> dot_dims;
  for (int64_t d : form.output_dim_of) dot_dims.push_back(shape.dimensions(d));
  const Shape dot_shape = Shape::Array(shape.element_type(), dot_dims);
  // Shardings first: nothing is added unless every one maps.
  absl::StatusOr<std::optional<HloSharding>> input_sharding =
      ReshapedSharding(*input, input->shape(), input_shape);
  absl::StatusOr<std::optional<HloSharding>> kernel_sharding =
      ReshapedSharding(*kernel, kernel->shape(), kernel_shape);
  absl::StatusOr<std::optional<HloSharding>> kept_sharding =
      ReshapedSharding(conv, shape, kept_shape);
  if (!input_sharding.ok() || !kernel_sharding.ok() || !kept_sharding.ok()) return false;
  std::optional<HloSharding> dot_sharding;
  if (kept_sharding->has_value()) {
    absl::StatusOr<HloSharding> s = hlo::TransposeSharding(**kept_sharding, Inverse(perm));
    if (!s.ok()) return false;
    dot_sharding = *std::move(s);
  }
  hlo::HloComputation& computation = *conv.parent();
  std::vector<HloInstruction*> made;
  const std::string name = conv.name();  // A copy: `conv` is removed below.
  if (!form.input_dropped.empty()) {
    input = AddLike(computation, HloOpcode::kReshape, input_shape, {input}, conv, *input_sharding,
                    namer.Fresh(name + ".input"));
    made.push_back(input);
  }
  if (!form.kernel_dropped.empty()) {
    kernel = AddLike(computation, HloOpcode::kReshape, kernel_shape, {kernel}, conv,
                     *kernel_sharding, namer.Fresh(name + ".kernel"));
    made.push_back(kernel);
  }
  HloInstruction* value = AddLike(computation, HloOpcode::kDot, dot_shape, {input, kernel}, conv,
                                  dot_sharding, namer.Fresh(name + ".dot"));
  value->mutable_attrs()->dot_dimension_numbers = form.numbers;
  value->mutable_attrs()->operand_precision = conv.attrs().operand_precision;
  made.push_back(value);
  bool identity = true;
  for (size_t j = 0; j < perm.size(); ++j)
    identity = identity && perm[j] == static_cast<int64_t>(j);
  if (!identity) {
    value = AddLike(computation, HloOpcode::kTranspose, kept_shape, {value}, conv, *kept_sharding,
                    namer.Fresh(name + ".transpose"));
    value->mutable_attrs()->dimensions = perm;
    made.push_back(value);
  }
  if (!form.contracted_outputs.empty()) {
    value = AddLike(computation, HloOpcode::kReshape, shape, {value}, conv, std::nullopt,
                    namer.Fresh(name + ".reshape"));
    made.push_back(value);
  }
  *value->mutable_shape() = shape;
  if (conv.has_sharding()) value->set_sharding(conv.sharding());
  conv.ReplaceAllUsesWith(value);
  if (computation.root_instruction() == &conv) computation.set_root_instruction(value);
  RETURN_IF_ERROR(computation.RemoveInstruction(&conv));
  value->set_name(name);
  made.pop_back();
  added.insert(made.begin(), made.end());
  return true;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ConvolutionsAsDots(
    hlo::HloComputation& computation, absl::flat_hash_set<const HloInstruction*>& added) {
  const absl::flat_hash_set<const HloInstruction*> ordering = OrderingInstructions(computation);
  std::vector<std::pair<HloInstruction*, DotForm>> convs;
  for (const std::unique_ptr<HloInstruction>& instr : computation.instructions()) {
    if (instr->opcode() != HloOpcode::kConvolution || !instr->shape().IsArray() ||
        !instr->control_predecessors().empty() || ordering.contains(instr.get())) {
      continue;
    }
    if (std::optional<DotForm> form = FormOf(*instr)) convs.push_back({instr.get(), *form});
  }
  if (convs.empty() || computation.parent() == nullptr) return std::vector<std::string>();
  FreshNames namer(*computation.parent());
  std::vector<std::string> names;
  for (auto& [conv, form] : convs) {
    const std::string name = conv->name();
    ASSIGN_OR_RETURN(bool rewritten, RewriteOne(*conv, form, namer, added));
    if (rewritten) names.push_back(name);
  }
  return names;
}

}  // namespace spmd

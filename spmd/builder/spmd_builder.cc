// SpmdBuilder: see the header.
#include "spmd/builder/spmd_builder.h"

#include <algorithm>
#include <memory>

#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace spmd {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

ChannelIdAllocator ChannelIdAllocator::ForModule(const hlo::HloModule& module) {
  int64_t max_id = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->attrs().channel_id) max_id = std::max(max_id, *instr->attrs().channel_id);
    }
  }
  return ChannelIdAllocator(max_id + 1);
}

bool IsUniform(const std::vector<int64_t>& table) {
  return std::all_of(table.begin(), table.end(), [&](int64_t v) { return v == table[0]; });
}

Shape WithDims(const Shape& like, const std::vector<int64_t>& dims) {
  return like.has_layout() ? Shape::ArrayWithLayout(like.element_type(), dims)
                           : Shape::Array(like.element_type(), dims);
}

std::string SpmdBuilder::UniqueName(std::string_view base) {
  return hlo::StrCat(base, names_.suffix, sequence()++);
}

HloInstruction* SpmdBuilder::Add(HloOpcode opcode, Shape shape,
                                 std::vector<HloInstruction*> operands) {
  HloInstruction* instr =
      computation_->AddInstruction(HloInstruction::Create(opcode, std::move(shape), operands));
  if (names_.by_unique_id && instr->unique_id() >= 0) {
    instr->set_name(hlo::StrCat(hlo::HloOpcodeString(opcode), names_.suffix, instr->unique_id()));
  } else if (!names_.fixed_base.empty()) {
    instr->set_name(UniqueName(names_.fixed_base));
  } else {
    instr->set_name(UniqueName(hlo::HloOpcodeString(opcode)));
  }
  if (added_ != nullptr) added_->push_back(instr);
  return instr;
}

HloInstruction* SpmdBuilder::AddClone(const HloInstruction& original, Shape shape,
                                      std::vector<HloInstruction*> operands) {
  auto instr = HloInstruction::Create(original.opcode(), std::move(shape), operands);
  instr->ShareAttributes(original);
  for (hlo::HloComputation* called : original.called_computations()) {
    instr->AppendCalledComputation(called);
  }
  instr->set_name(UniqueName(original.name()));
  HloInstruction* added = computation_->AddInstruction(std::move(instr));
  if (added_ != nullptr) added_->push_back(added);
  return added;
}

HloInstruction* SpmdBuilder::ScalarConstant(PrimitiveType type, double value) {
  hlo::Literal literal(Shape::Array(type, {}));
  literal.SetDouble(0, value);
  HloInstruction* constant = Add(HloOpcode::kConstant, literal.shape(), {});
  constant->mutable_attrs()->literal = std::move(literal);
  return constant;
}

HloInstruction* SpmdBuilder::Zeros(const Shape& shape) {
  return Add(HloOpcode::kBroadcast, shape, {ScalarConstant(shape.element_type(), 0)});
}

HloInstruction* SpmdBuilder::GetTupleElement(HloInstruction* tuple, int64_t index) {
  HloInstruction* element =
      Add(HloOpcode::kGetTupleElement, tuple->shape().tuple_shapes()[index], {tuple});
  element->mutable_attrs()->tuple_index = index;
  return element;
}

HloInstruction* SpmdBuilder::PartitionId() {
  if (partition_id_ == nullptr) {
    partition_id_ = Add(HloOpcode::kPartitionId, Shape::Array(PrimitiveType::kU32, {}), {});
  }
  return partition_id_;
}

HloInstruction* SpmdBuilder::TableLookup(const std::vector<int64_t>& table, PrimitiveType type) {
  const int64_t n = static_cast<int64_t>(table.size());
  hlo::Literal literal(Shape::Array(type, {n}));
  for (int64_t i = 0; i < n; ++i) literal.SetInt(i, table[i]);
  HloInstruction* constant = Add(HloOpcode::kConstant, literal.shape(), {});
  constant->mutable_attrs()->literal = std::move(literal);
  HloInstruction* entry =
      Add(HloOpcode::kDynamicSlice, Shape::Array(type, {1}), {constant, PartitionId()});
  entry->mutable_attrs()->dynamic_slice_sizes = {1};
  return Add(HloOpcode::kReshape, Shape::Array(type, {}), {entry});
}

HloInstruction* SpmdBuilder::PerDeviceScalar(const std::vector<int64_t>& table) {
  if (IsUniform(table)) return ScalarConstant(PrimitiveType::kS32, static_cast<double>(table[0]));
  return TableLookup(table, PrimitiveType::kS32);
}

HloInstruction* SpmdBuilder::PerDeviceFlag(const std::vector<int64_t>& table) {
  HloInstruction* entry = PerDeviceScalar(table);
  HloInstruction* flag = Add(HloOpcode::kCompare, Shape::Array(PrimitiveType::kPred, {}),
                             {entry, ScalarConstant(PrimitiveType::kS32, 1)});
  flag->mutable_attrs()->comparison_direction = hlo::ComparisonDirection::kEq;
  return flag;
}

HloInstruction* SpmdBuilder::KeepOnDevices(HloInstruction* value, const std::vector<int64_t>& keeps,
                                           HloInstruction* fill) {
  const Shape& shape = value->shape();
  HloInstruction* mask =
      Add(HloOpcode::kBroadcast, Shape::Array(PrimitiveType::kPred, shape.dimensions()),
          {PerDeviceFlag(keeps)});
  HloInstruction* filler =
      fill == nullptr ? Zeros(shape) : Add(HloOpcode::kBroadcast, shape, {fill});
  return Add(HloOpcode::kSelect, shape, {mask, value, filler});
}

HloInstruction* SpmdBuilder::PadHigh(HloInstruction* value, const std::vector<int64_t>& dims) {
  const std::vector<int64_t>& current = value->shape().dimensions();
  if (current == dims) return value;
  hlo::PaddingConfig config;
  for (size_t d = 0; d < dims.size(); ++d) {
    config.dimensions.push_back({0, dims[d] - current[d], 0});
  }
  HloInstruction* zero = ScalarConstant(value->shape().element_type(), 0);
  HloInstruction* pad = Add(HloOpcode::kPad, WithDims(value->shape(), dims), {value, zero});
  pad->mutable_attrs()->padding_config = std::move(config);
  return pad;
}

HloInstruction* SpmdBuilder::SliceTo(HloInstruction* value, const std::vector<int64_t>& dims) {
  if (value->shape().dimensions() == dims) return value;
  HloInstruction* slice = Add(HloOpcode::kSlice, WithDims(value->shape(), dims), {value});
  for (int64_t size : dims) slice->mutable_attrs()->slice_dimensions.push_back({0, size, 1});
  return slice;
}

HloInstruction* SpmdBuilder::SliceAlong(HloInstruction* value, int64_t dim, int64_t start,
                                        int64_t limit) {
  std::vector<int64_t> dims = value->shape().dimensions();
  dims[dim] = limit - start;
  HloInstruction* slice = Add(HloOpcode::kSlice, WithDims(value->shape(), dims), {value});
  for (int64_t d = 0; d < value->shape().rank(); ++d) {
    slice->mutable_attrs()->slice_dimensions.push_back(
        d == dim ? hlo::SliceDimension{start, limit, 1}
                 : hlo::SliceDimension{0, value->shape().dimensions(d), 1});
  }
  return slice;
}

std::vector<HloInstruction*> SpmdBuilder::StartsAt(int64_t rank, int64_t dim,
                                                   HloInstruction* start) {
  std::vector<HloInstruction*> starts;
  HloInstruction* zero = nullptr;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != dim && zero == nullptr) zero = S32(0);
    starts.push_back(d == dim ? start : zero);
  }
  return starts;
}

HloInstruction* SpmdBuilder::SliceDim(HloInstruction* value, int64_t dim, HloInstruction* start,
                                      int64_t size) {
  std::vector<int64_t> dims = value->shape().dimensions();
  dims[dim] = size;
  std::vector<HloInstruction*> operands = {value};
  for (HloInstruction* s : StartsAt(value->shape().rank(), dim, start)) operands.push_back(s);
  HloInstruction* slice =
      Add(HloOpcode::kDynamicSlice, Shape::Array(value->shape().element_type(), dims), operands);
  slice->mutable_attrs()->dynamic_slice_sizes = dims;
  return slice;
}

HloInstruction* SpmdBuilder::UpdateDim(HloInstruction* base, HloInstruction* update, int64_t dim,
                                       HloInstruction* start) {
  std::vector<HloInstruction*> operands = {base, update};
  for (HloInstruction* s : StartsAt(base->shape().rank(), dim, start)) operands.push_back(s);
  return Add(HloOpcode::kDynamicUpdateSlice, base->shape(), operands);
}

absl::StatusOr<hlo::HloComputation*> SpmdBuilder::AddReducer(PrimitiveType type,
                                                             hlo::ReductionOp op) {
  auto it = reducers_.find({type, op});
  if (it != reducers_.end()) return it->second;
  hlo::HloModule* module = computation_->parent();
  RET_CHECK(module != nullptr);
  const bool sum_op = op == hlo::ReductionOp::kSum;
  const std::string name = hlo::StrCat("reshard.", sum_op ? "add" : hlo::ReductionOpName(op), ".",
                                       hlo::PrimitiveTypeName(type));
  hlo::HloComputation* add = module->GetComputation(name);
  if (add == nullptr) {
    auto computation = std::make_unique<hlo::HloComputation>(name);
    const Shape scalar = Shape::Array(type, {});
    // Parameters are registered by number when added, so number them first.
    auto x_param = HloInstruction::Create(HloOpcode::kParameter, scalar, {});
    auto y_param = HloInstruction::Create(HloOpcode::kParameter, scalar, {});
    y_param->mutable_attrs()->parameter_number = 1;
    HloInstruction* x = computation->AddInstruction(std::move(x_param));
    HloInstruction* y = computation->AddInstruction(std::move(y_param));
    x->set_name("x");
    y->set_name("y");
    const HloOpcode combine = sum_op                         ? HloOpcode::kAdd
                              : op == hlo::ReductionOp::kMax ? HloOpcode::kMaximum
                                                             : HloOpcode::kMinimum;
    HloInstruction* sum =
        computation->AddInstruction(HloInstruction::Create(combine, scalar, {x, y}));
    sum->set_name(std::string(sum_op ? "sum" : hlo::ReductionOpName(op)));
    computation->set_root_instruction(sum);
    add = module->AddComputation(std::move(computation));
    // Named as the reshard emitter first named them, whichever builder adds the computation.
    for (const auto& instr : add->instructions()) {
      instr->set_name(hlo::StrCat(instr->name(), ".rs", instr->unique_id()));
    }
  }
  reducers_[{type, op}] = add;
  return add;
}

absl::StatusOr<HloInstruction*> SpmdBuilder::AllReduceSum(HloInstruction* value,
                                                          hlo::ReplicaGroups groups,
                                                          hlo::ReductionOp op) {
  ASSIGN_OR_RETURN(hlo::HloComputation * add, AddReducer(value->shape().element_type(), op));
  return ReducingCollective(HloOpcode::kAllReduce, value->shape(), value, std::move(groups), add);
}

absl::StatusOr<HloInstruction*> SpmdBuilder::ReduceScatterSum(HloInstruction* value,
                                                              hlo::ReplicaGroups groups,
                                                              int64_t group_size, int64_t dim) {
  ASSIGN_OR_RETURN(hlo::HloComputation * add, AddReducer(value->shape().element_type()));
  std::vector<int64_t> dims = value->shape().dimensions();
  dims[dim] = (dims[dim] + group_size - 1) / group_size * group_size;
  value = PadHigh(value, dims);
  dims[dim] /= group_size;
  HloInstruction* scattered = ReducingCollective(HloOpcode::kReduceScatter,
                                                 WithDims(value->shape(), dims), value,
                                                 std::move(groups), add);
  scattered->mutable_attrs()->dimensions = {dim};
  return scattered;
}

HloInstruction* SpmdBuilder::ReducingCollective(HloOpcode opcode, Shape shape,
                                                HloInstruction* value, hlo::ReplicaGroups groups,
                                                hlo::HloComputation* reducer) {
  HloInstruction* collective = Add(opcode, std::move(shape), {value});
  collective->mutable_attrs()->replica_groups = std::move(groups);
  collective->mutable_attrs()->channel_id = channel_ids_->Next();
  collective->mutable_attrs()->use_global_device_ids = true;
  collective->AppendCalledComputation(reducer);
  return collective;
}

HloInstruction* SpmdBuilder::AllGather(std::vector<HloInstruction*> operands, int64_t dim,
                                       hlo::ReplicaGroups groups, int64_t group_size) {
  std::vector<Shape> shapes;
  for (const HloInstruction* operand : operands) {
    shapes.push_back(operand->shape());
    shapes.back().set_dimension(dim, operand->shape().dimensions(dim) * group_size);
  }
  Shape shape = shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
  HloInstruction* gather = Add(HloOpcode::kAllGather, std::move(shape), std::move(operands));
  gather->mutable_attrs()->dimensions = {dim};
  gather->mutable_attrs()->replica_groups = std::move(groups);
  gather->mutable_attrs()->channel_id = channel_ids_->Next();
  gather->mutable_attrs()->use_global_device_ids = true;
  return gather;
}

HloInstruction* SpmdBuilder::CollectivePermute(HloInstruction* value,
                                               std::vector<std::pair<int64_t, int64_t>> pairs) {
  HloInstruction* permute = Add(HloOpcode::kCollectivePermute, value->shape(), {value});
  permute->mutable_attrs()->source_target_pairs = std::move(pairs);
  permute->mutable_attrs()->channel_id = channel_ids_->Next();
  return permute;
}

}  // namespace spmd

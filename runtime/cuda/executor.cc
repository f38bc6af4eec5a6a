// Instruction-order execution over the buffer plan, and the control-flow opcodes.
//
// For each instruction, the plan says where each result leaf lives: in the computation's arena
// (cached per computation), in a fresh output allocation (root leaves), in a parameter, or in a
// constant (uploaded once per executor). Renaming instructions compute nothing. Called
// computations return owned outputs, which the caller copies into its own buffers.
#include "runtime/cuda/executor.h"

#include "hlo/ir/hlo_computation.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/opcode_table.h"
#include "runtime/common/tuple_leaves.h"
#include "runtime/cuda/op_registry.h"

namespace runtime {
namespace cuda {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

int64_t LeafBytes(const hlo::Shape& shape) { return shape.IsArray() ? shape.byte_size() : 0; }

absl::Status ErrorAt(const HloInstruction& instr, std::string_view message) {
  return absl::InvalidArgumentError(hlo::StrCat("instruction %", instr.name(), ": ", message));
}

absl::Status Named(const HloInstruction& instr, const absl::Status& s) {
  if (s.ok() || std::string(hlo::ToStd(s.message())).rfind("instruction %", 0) == 0) return s;
  return absl::Status(s.code(), hlo::StrCat("instruction %", instr.name(), ": ", s.message()));
}

}  // namespace

absl::Status CopyValue(DeviceApi& device, const DeviceValue& src, const DeviceValue& dst) {
  if (src.leaves.size() != dst.leaves.size()) return absl::InternalError("leaf count mismatch");
  for (size_t k = 0; k < src.leaves.size(); ++k) {
    if (dst.leaves[k].data == src.leaves[k].data) continue;  // In place (the buffer plan).
    RETURN_IF_ERROR(device.CopyOnDevice(dst.leaves[k].data, src.leaves[k].data,
                                        LeafBytes(dst.leaves[k].shape)));
  }
  return absl::OkStatus();
}

absl::StatusOr<OwnedValue> CudaExecutor::Upload(const hlo::Literal& literal) {
  OwnedValue v;
  v.value.shape = literal.shape();
  for (const hlo::ShapeIndex& index : LeafIndices(literal.shape())) {
    const hlo::Literal& leaf = LeafOf(literal, index);
    ASSIGN_OR_RETURN(DeviceBuffer buf, DeviceBuffer::Allocate(device_, LeafBytes(leaf.shape())));
    if (LeafBytes(leaf.shape()) > 0) {
      RETURN_IF_ERROR(device_.CopyToDevice(buf.data(), leaf.data().data(), LeafBytes(leaf.shape())));
    }
    v.value.leaves.push_back({buf.data(), leaf.shape()});
    v.buffers.push_back(std::move(buf));
  }
  return v;
}

absl::StatusOr<hlo::Literal> CudaExecutor::Download(const DeviceValue& value) {
  hlo::Literal out(value.shape);
  const std::vector<hlo::ShapeIndex> indices = LeafIndices(value.shape);
  if (indices.size() != value.leaves.size()) return absl::InternalError("leaf count mismatch");
  for (size_t k = 0; k < indices.size(); ++k) {
    hlo::Literal& leaf = MutableLeafOf(out, indices[k]);
    const int64_t bytes = LeafBytes(leaf.shape());
    if (bytes > 0) {
      RETURN_IF_ERROR(device_.CopyToHost(leaf.mutable_data()->data(), value.leaves[k].data, bytes));
    }
  }
  return out;
}

absl::StatusOr<hlo::Literal> CudaExecutor::RunEntry(const std::vector<hlo::Literal>& args) {
  std::vector<OwnedValue> owned;
  std::vector<DeviceValue> values;
  for (const hlo::Literal& arg : args) {
    ASSIGN_OR_RETURN(OwnedValue v, Upload(arg));
    values.push_back(v.value);
    owned.push_back(std::move(v));
  }
  ASSIGN_OR_RETURN(OwnedValue result, RunEntryOnDevice(values));
  return Download(result.value);
}

absl::StatusOr<OwnedValue> CudaExecutor::RunEntryOnDevice(absl::Span<const DeviceValue> args) {
  const hlo::HloComputation* entry = module_.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  return Execute(*entry, args);
}

absl::StatusOr<CudaExecutor::ComputationState*> CudaExecutor::StateFor(
    const hlo::HloComputation& computation) {
  auto it = states_.find(&computation);
  if (it != states_.end()) return it->second.get();
  auto state = std::make_unique<ComputationState>();
  ASSIGN_OR_RETURN(state->plan, PlanBuffers(computation));
  if (state->plan.arena_bytes > 0) {
    ASSIGN_OR_RETURN(state->arena, DeviceBuffer::Allocate(device_, state->plan.arena_bytes));
  }
  ComputationState* raw = state.get();
  states_[&computation] = std::move(state);
  return raw;
}

absl::StatusOr<void*> CudaExecutor::ConstantLeaf(const HloInstruction& instr, int64_t leaf) {
  auto it = constants_.find(&instr);
  if (it == constants_.end()) {
    if (!instr.attrs().literal) return ErrorAt(instr, "constant without a value");
    ASSIGN_OR_RETURN(OwnedValue v, Upload(*instr.attrs().literal));
    it = constants_.emplace(&instr, std::move(v)).first;
  }
  return it->second.value.leaves.at(leaf).data;
}

// One run of a computation: where each planned buffer is, the outputs allocated for this run,
// and each instruction's value.
struct CudaExecutor::Frame {
  const BufferPlan& plan;
  char* arena;
  std::vector<void*> where;
  std::vector<DeviceBuffer> outputs;
  std::vector<DeviceValue> values;
};

absl::Status CudaExecutor::PlaceBuffers(Frame& frame, size_t i, const HloInstruction& instr,
                                        absl::Span<const DeviceValue> params) {
  for (int64_t b : frame.plan.leaves[i]) {
    const PlannedBuffer& buf = frame.plan.buffers[b];
    if (buf.instruction != static_cast<int64_t>(i)) continue;  // Defined earlier.
    switch (buf.kind) {
      case BufferKind::kArena:
        frame.where[b] = frame.arena + buf.offset;
        break;
      case BufferKind::kOutput: {
        ASSIGN_OR_RETURN(frame.outputs[b], DeviceBuffer::Allocate(device_, buf.bytes));
        frame.where[b] = frame.outputs[b].data();
        break;
      }
      case BufferKind::kParameter: {
        const DeviceValue& p = params[instr.parameter_number()];
        if (buf.leaf >= static_cast<int64_t>(p.leaves.size())) {
          return ErrorAt(instr, "argument does not match the parameter's shape");
        }
        frame.where[b] = p.leaves[buf.leaf].data;
        break;
      }
      case BufferKind::kConstant: {
        ASSIGN_OR_RETURN(frame.where[b], ConstantLeaf(instr, buf.leaf));
        break;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CudaExecutor::Compute(const HloInstruction& instr,
                                   const std::vector<DeviceValue>& operands,
                                   const DeviceValue& result) {
  if (IsOneOf(instr.opcode(), {HloOpcode::kWhile, HloOpcode::kConditional, HloOpcode::kCall})) {
    return RunControlFlow(instr, operands, result);
  }
  CudaOpHandler handler = FindCudaOpHandler(instr.opcode());
  if (handler == nullptr) {
    const std::string what =
        instr.opcode() == HloOpcode::kCustomCall
            ? hlo::StrCat("custom-call target \"", instr.attrs().custom_call_target, "\"")
            : hlo::StrCat("opcode ", hlo::HloOpcodeString(instr.opcode()));
    return ErrorAt(instr, hlo::StrCat(what, " is not supported by the CUDA executor"));
  }
  OpContext ctx{instr, {}, result.leaves, *this};
  for (const DeviceValue& v : operands) {
    if (v.shape.IsTuple()) return ErrorAt(instr, "tuple operands are not supported here");
    ctx.operands.push_back(v.leaves[0]);
  }
  return handler(ctx);
}

// The result: output buffers move out; anything else (parameters, constants, a buffer named
// twice) is copied into a fresh allocation.
absl::StatusOr<OwnedValue> CudaExecutor::TakeResult(Frame& frame,
                                                    const hlo::HloComputation& computation,
                                                    size_t root, bool forward_state) {
  OwnedValue result;
  result.value = frame.values[root];
  for (size_t k = 0; k < frame.plan.leaves[root].size(); ++k) {
    const int64_t b = frame.plan.leaves[root][k];
    const PlannedBuffer& buf = frame.plan.buffers[b];
    DeviceArray& leaf = result.value.leaves[k];
    if (frame.outputs[b].data() != nullptr) {
      result.buffers.push_back(std::move(frame.outputs[b]));
      continue;
    }
    if (forward_state && buf.kind == BufferKind::kParameter &&
        buf.leaf == static_cast<int64_t>(k) &&
        computation.instructions()[buf.instruction]->parameter_number() == 0) {
      continue;  // The state leaf, unchanged: the caller's buffer already holds it.
    }
    ASSIGN_OR_RETURN(DeviceBuffer copy, DeviceBuffer::Allocate(device_, LeafBytes(leaf.shape)));
    RETURN_IF_ERROR(device_.CopyOnDevice(copy.data(), leaf.data, LeafBytes(leaf.shape)));
    leaf.data = copy.data();
    result.buffers.push_back(std::move(copy));
  }
  return result;
}

absl::StatusOr<OwnedValue> CudaExecutor::Execute(const hlo::HloComputation& computation,
                                                 absl::Span<const DeviceValue> params,
                                                 bool forward_state) {
  if (static_cast<int64_t>(params.size()) != computation.num_parameters()) {
    return absl::InvalidArgumentError(hlo::StrCat("computation ", computation.name(), " takes ",
                                                  computation.num_parameters(),
                                                  " arguments, got ", params.size()));
  }
  ASSIGN_OR_RETURN(ComputationState * state, StateFor(computation));
  const auto& instrs = computation.instructions();
  Frame frame{state->plan, static_cast<char*>(state->arena.data()),
              std::vector<void*>(state->plan.buffers.size(), nullptr),
              std::vector<DeviceBuffer>(state->plan.buffers.size()),
              std::vector<DeviceValue>(instrs.size())};
  absl::flat_hash_map<const HloInstruction*, size_t> position;
  for (size_t i = 0; i < instrs.size(); ++i) position[instrs[i].get()] = i;
  for (size_t i = 0; i < instrs.size(); ++i) {
    const HloInstruction& instr = *instrs[i];
    RETURN_IF_ERROR(PlaceBuffers(frame, i, instr, params));
    DeviceValue& value = frame.values[i];
    value.shape = instr.shape();
    const std::vector<hlo::Shape> shapes = instr.shape().leaf_shapes();
    for (size_t k = 0; k < shapes.size(); ++k) {
      value.leaves.push_back({frame.where[frame.plan.leaves[i][k]], shapes[k]});
    }
    if (IsAliasingInstruction(instr) || instr.opcode() == HloOpcode::kParameter ||
        instr.opcode() == HloOpcode::kConstant || instr.opcode() == HloOpcode::kAfterAll) {
      if (IsOneOf(instr.opcode(), {HloOpcode::kBitcast, HloOpcode::kBitcastConvert}) &&
          LeafBytes(instr.shape()) != LeafBytes(instr.operand(0)->shape())) {
        return ErrorAt(instr,
                       hlo::StrCat(hlo::HloOpcodeString(instr.opcode()), " changes the byte size"));
      }
      continue;  // Nothing to compute: the value names existing buffers.
    }
    std::vector<DeviceValue> operands;
    for (const HloInstruction* op : instr.operands()) {
      operands.push_back(frame.values[position.at(op)]);
    }
    RETURN_IF_ERROR(Named(instr, Compute(instr, operands, value)));
  }
  return TakeResult(frame, computation, position.at(computation.root_instruction()), forward_state);
}

absl::Status CudaExecutor::RunControlFlow(const HloInstruction& instr,
                                          const std::vector<DeviceValue>& operands,
                                          const DeviceValue& result) {
  if (instr.opcode() == HloOpcode::kCall) {
    ASSIGN_OR_RETURN(OwnedValue out, Execute(*instr.to_apply(), operands));
    return CopyValue(device_, out.value, result);
  }
  if (instr.opcode() == HloOpcode::kConditional) {
    const DeviceArray& selector = operands[0].leaves[0];
    int64_t branch = 0;
    if (selector.shape.element_type() == hlo::PrimitiveType::kPred) {
      uint8_t pred = 0;
      RETURN_IF_ERROR(device_.CopyToHost(&pred, selector.data, 1));
      branch = pred ? 0 : 1;
    } else {
      int32_t index = 0;
      RETURN_IF_ERROR(device_.CopyToHost(&index, selector.data, 4));
      branch = index;
    }
    const auto& branches = instr.called_computations();
    if (branch < 0 || branch >= static_cast<int64_t>(branches.size())) {
      branch = static_cast<int64_t>(branches.size()) - 1;  // XLA: out of range -> last.
    }
    ASSIGN_OR_RETURN(OwnedValue out, Execute(*branches[branch], {&operands[branch + 1], 1}));
    return CopyValue(device_, out.value, result);
  }
  // while: the state lives in this instruction's buffers (leaves the body returns unchanged stay
  // in the initial value's, BufferPlan); each body result is copied back, those leaves excepted.
  RETURN_IF_ERROR(CopyValue(device_, operands[0], result));
  while (true) {
    ASSIGN_OR_RETURN(OwnedValue keep_going, Execute(*instr.while_condition(), {&result, 1}));
    uint8_t pred = 0;
    RETURN_IF_ERROR(device_.CopyToHost(&pred, keep_going.value.leaves[0].data, 1));
    if (!pred) return absl::OkStatus();
    ASSIGN_OR_RETURN(OwnedValue next,
                     Execute(*instr.while_body(), {&result, 1}, /*forward_state=*/true));
    RETURN_IF_ERROR(CopyValue(device_, next.value, result));
  }
}

}  // namespace cuda
}  // namespace runtime

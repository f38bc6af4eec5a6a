// Lockstep SPMD simulation: instructions in post order, each evaluated for every device.
// Array operations work on multi-indices (row-major); collectives gather the operands of the
// device's replica group (explicit or iota groups, expanded by the IR) and combine them as XLA
// defines: all-gather concatenates in group order, all-to-all sends chunk q of the split
// dimension to member q and stacks what it receives in member order, collective-permute gives
// zeros to devices that are no pair's target.
#include "spmd/reshard/spmd_simulator.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace spmd {
namespace testing {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// Calls f(index, linear) for every element of `dims`, row-major.
template <typename F>
void ForEachIndex(const std::vector<int64_t>& dims, F f) {
  const int64_t total = Product(dims);
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    f(idx, linear);
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
      if (++idx[i] < dims[i]) break;
      idx[i] = 0;
    }
  }
}

int64_t Ravel(const std::vector<int64_t>& dims, const std::vector<int64_t>& idx) {
  int64_t linear = 0;
  for (size_t i = 0; i < dims.size(); ++i) linear = linear * dims[i] + idx[i];
  return linear;
}

SimArray Make(std::vector<int64_t> dims) {
  SimArray a;
  a.data.assign(Product(dims), 0.0);
  a.dims = std::move(dims);
  return a;
}

// out[idx] = a[idx * stride + start] for the box of `sizes`.
SimArray Window(const SimArray& a, const std::vector<int64_t>& start,
                const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  SimArray out = Make(sizes);
  ForEachIndex(sizes, [&](const std::vector<int64_t>& idx, int64_t linear) {
    std::vector<int64_t> in(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) in[i] = start[i] + idx[i] * strides[i];
    out.data[linear] = a.data[Ravel(a.dims, in)];
  });
  return out;
}

SimArray Concat(const std::vector<const SimArray*>& parts, int64_t dim) {
  std::vector<int64_t> dims = parts[0]->dims;
  dims[dim] *= static_cast<int64_t>(parts.size());
  SimArray out = Make(dims);
  const int64_t chunk = parts[0]->dims[dim];
  ForEachIndex(dims, [&](const std::vector<int64_t>& idx, int64_t linear) {
    std::vector<int64_t> in = idx;
    in[dim] = idx[dim] % chunk;
    const SimArray& part = *parts[idx[dim] / chunk];
    out.data[linear] = part.data[Ravel(part.dims, in)];
  });
  return out;
}

SimArray Transpose(const SimArray& a, const std::vector<int64_t>& perm) {
  std::vector<int64_t> dims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) dims[i] = a.dims[perm[i]];
  SimArray out = Make(dims);
  ForEachIndex(dims, [&](const std::vector<int64_t>& idx, int64_t linear) {
    std::vector<int64_t> in(idx.size());
    for (size_t i = 0; i < perm.size(); ++i) in[perm[i]] = idx[i];
    out.data[linear] = a.data[Ravel(a.dims, in)];
  });
  return out;
}

SimArray Pad(const SimArray& a, double value, const hlo::PaddingConfig& config) {
  std::vector<int64_t> dims(a.dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto& p = config.dimensions[i];
    dims[i] = p.edge_padding_low + p.edge_padding_high + a.dims[i] +
              std::max<int64_t>(a.dims[i] - 1, 0) * p.interior_padding;
  }
  SimArray out = Make(dims);
  std::fill(out.data.begin(), out.data.end(), value);
  ForEachIndex(a.dims, [&](const std::vector<int64_t>& idx, int64_t linear) {
    std::vector<int64_t> at(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) {
      const auto& p = config.dimensions[i];
      at[i] = p.edge_padding_low + idx[i] * (p.interior_padding + 1);
    }
    out.data[Ravel(dims, at)] = a.data[linear];
  });
  return out;
}

SimArray Broadcast(const SimArray& a, const std::vector<int64_t>& dims,
                   const std::vector<int64_t>& mapping) {
  SimArray out = Make(dims);
  ForEachIndex(dims, [&](const std::vector<int64_t>& idx, int64_t linear) {
    std::vector<int64_t> in(mapping.size());
    for (size_t i = 0; i < mapping.size(); ++i) in[i] = idx[mapping[i]];
    out.data[linear] = a.data[Ravel(a.dims, in)];
  });
  return out;
}

SimArray FromLiteral(const hlo::Literal& literal) {
  SimArray a = Make(literal.shape().dimensions());
  const bool integral = hlo::IsIntegralType(literal.shape().element_type()) ||
                        literal.shape().element_type() == hlo::PrimitiveType::kPred;
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    a.data[i] = integral ? static_cast<double>(literal.GetInt(i)) : literal.GetDouble(i);
  }
  return a;
}

// The group of `device` and its position in it.
std::pair<std::vector<int64_t>, int64_t> GroupOf(const HloInstruction& instr, int64_t device,
                                                 int64_t num_devices) {
  std::vector<std::vector<int64_t>> groups;
  if (instr.attrs().replica_groups) groups = instr.attrs().replica_groups->Expanded();
  if (groups.empty()) {
    groups.emplace_back();
    for (int64_t d = 0; d < num_devices; ++d) groups[0].push_back(d);
  }
  for (const auto& group : groups) {
    auto it = std::find(group.begin(), group.end(), device);
    if (it != group.end()) return {group, it - group.begin()};
  }
  return {{}, -1};
}

using Values = absl::flat_hash_map<const HloInstruction*, std::vector<SimArray>>;

absl::StatusOr<SimArray> EvalCollective(const HloInstruction& instr, int64_t device,
                                        int64_t num_devices, const Values& values) {
  const std::vector<SimArray>& in = values.at(instr.operand(0));
  if (instr.opcode() == HloOpcode::kCollectivePermute) {
    SimArray out = Make(in[device].dims);
    for (const auto& [source, target] : instr.attrs().source_target_pairs) {
      if (target == device) out = in[source];
    }
    return out;
  }
  auto [group, position] = GroupOf(instr, device, num_devices);
  RET_CHECK(position >= 0);
  std::vector<const SimArray*> parts;
  std::vector<SimArray> chunks;  // all-to-all: this device's chunk of each member.
  chunks.reserve(group.size());
  const int64_t dim = instr.dimensions().empty() ? 0 : instr.dimensions()[0];
  for (int64_t member : group) {
    if (instr.opcode() != HloOpcode::kAllToAll) {
      parts.push_back(&in[member]);
      continue;
    }
    std::vector<int64_t> start(in[member].dims.size(), 0), sizes = in[member].dims;
    sizes[dim] /= static_cast<int64_t>(group.size());
    start[dim] = position * sizes[dim];
    chunks.push_back(Window(in[member], start, sizes, std::vector<int64_t>(sizes.size(), 1)));
    parts.push_back(&chunks.back());
  }
  SimArray out;
  if (instr.opcode() == HloOpcode::kAllReduce) {
    out = *parts[0];
    for (size_t i = 1; i < parts.size(); ++i) {
      for (size_t k = 0; k < out.data.size(); ++k) out.data[k] += parts[i]->data[k];
    }
  } else {
    out = Concat(parts, dim);
  }
  return out;
}

double Compare(hlo::ComparisonDirection direction, double a, double b) {
  switch (direction) {
    case hlo::ComparisonDirection::kEq:
      return a == b;
    case hlo::ComparisonDirection::kNe:
      return a != b;
    case hlo::ComparisonDirection::kGe:
      return a >= b;
    case hlo::ComparisonDirection::kGt:
      return a > b;
    case hlo::ComparisonDirection::kLe:
      return a <= b;
    case hlo::ComparisonDirection::kLt:
      return a < b;
  }
  return 0;
}

absl::StatusOr<SimArray> EvalLocal(const HloInstruction& instr, int64_t device,
                                   const Values& values) {
  auto operand = [&](int64_t i) -> const SimArray& { return values.at(instr.operand(i))[device]; };
  const std::vector<int64_t>& dims = instr.shape().dimensions();
  const hlo::InstructionAttributes& attrs = instr.attrs();
  switch (instr.opcode()) {
    case HloOpcode::kConstant:
      return FromLiteral(*attrs.literal);
    case HloOpcode::kPartitionId:
      return SimArray{{}, {static_cast<double>(device)}};
    case HloOpcode::kReshape:
      return SimArray{dims, operand(0).data};
    case HloOpcode::kTranspose:
      return Transpose(operand(0), attrs.dimensions);
    case HloOpcode::kBroadcast:
      return Broadcast(operand(0), dims, attrs.dimensions);
    case HloOpcode::kPad:
      return Pad(operand(0), operand(1).data[0], *attrs.padding_config);
    case HloOpcode::kSlice: {
      std::vector<int64_t> start, strides;
      for (const auto& s : attrs.slice_dimensions) {
        start.push_back(s.start);
        strides.push_back(s.stride);
      }
      return Window(operand(0), start, dims, strides);
    }
    case HloOpcode::kDynamicSlice: {
      const SimArray& a = operand(0);
      std::vector<int64_t> start(a.dims.size());
      for (size_t i = 0; i < start.size(); ++i) {
        const int64_t s = static_cast<int64_t>(operand(i + 1).data[0]);
        start[i] = std::clamp<int64_t>(s, 0, a.dims[i] - attrs.dynamic_slice_sizes[i]);
      }
      return Window(a, start, attrs.dynamic_slice_sizes, std::vector<int64_t>(start.size(), 1));
    }
    case HloOpcode::kDynamicUpdateSlice: {
      SimArray out = operand(0);
      const SimArray& update = operand(1);
      const int64_t rank = static_cast<int64_t>(out.dims.size());
      std::vector<int64_t> start(rank);
      for (int64_t i = 0; i < rank; ++i) {
        const int64_t s = static_cast<int64_t>(operand(i + 2).data[0]);
        start[i] = std::clamp<int64_t>(s, 0, out.dims[i] - update.dims[i]);
      }
      std::vector<int64_t> index(rank, 0);
      for (size_t k = 0; k < update.data.size(); ++k) {
        int64_t linear = 0;
        for (int64_t i = 0; i < rank; ++i) linear = linear * out.dims[i] + start[i] + index[i];
        out.data[linear] = update.data[k];
        for (int64_t i = rank - 1; i >= 0; --i) {
          if (++index[i] < update.dims[i]) break;
          index[i] = 0;
        }
      }
      return out;
    }
    case HloOpcode::kCompare:
    case HloOpcode::kAdd: {
      SimArray out = operand(0);
      for (size_t k = 0; k < out.data.size(); ++k) {
        const double b = operand(1).data[k];
        out.data[k] = instr.opcode() == HloOpcode::kAdd
                          ? out.data[k] + b
                          : Compare(attrs.comparison_direction, out.data[k], b);
      }
      return out;
    }
    case HloOpcode::kSelect: {
      SimArray out = operand(1);
      for (size_t k = 0; k < out.data.size(); ++k) {
        if (operand(0).data[k] == 0) out.data[k] = operand(2).data[k];
      }
      return out;
    }
    default:
      return absl::UnimplementedError(hlo::StrCat("simulator: ", instr.ToString()));
  }
}

}  // namespace

absl::StatusOr<std::vector<SimArray>> RunLockstep(const hlo::HloComputation& computation,
                                                  int64_t num_devices,
                                                  const std::vector<std::vector<SimArray>>& args) {
  Values values;
  for (HloInstruction* instr : computation.MakeInstructionPostOrder()) {
    std::vector<SimArray>& out = values[instr];
    out.resize(num_devices);
    for (int64_t device = 0; device < num_devices; ++device) {
      switch (instr->opcode()) {
        case HloOpcode::kParameter:
          out[device] = args[device][instr->parameter_number()];
          break;
        case HloOpcode::kAllGather:
        case HloOpcode::kAllToAll:
        case HloOpcode::kAllReduce:
        case HloOpcode::kCollectivePermute: {
          ASSIGN_OR_RETURN(out[device], EvalCollective(*instr, device, num_devices, values));
          break;
        }
        default: {
          ASSIGN_OR_RETURN(out[device], EvalLocal(*instr, device, values));
        }
      }
      if (out[device].dims != instr->shape().dimensions()) {
        return absl::InternalError(hlo::StrCat("simulator: ", instr->name(), " made shape of ",
                                               out[device].data.size(), " elements"));
      }
    }
  }
  return values.at(computation.root_instruction());
}

}  // namespace testing
}  // namespace spmd

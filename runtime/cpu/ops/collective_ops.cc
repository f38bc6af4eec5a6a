// Collective opcode handlers: partition-id, replica-id, all-reduce, all-gather, reduce-scatter,
// all-to-all, collective-permute and collective-broadcast.
//
// Every collective follows one pattern. The device resolves its group (collective_groups.h;
// for collective-permute, the devices its pairs join it to), then meets the group's other
// devices in the CollectiveHub under the key {instruction id, how many times this device ran
// it}, publishing its operand (several operands travel as one tuple). Groups meet apart, as in
// XLA's runtimes: devices of another group may take another branch. Once the group has
// arrived, each device computes only its own output from the published inputs, reading its
// group members in group order; no device leaves before all have read.
// Before computing, every device checks that its group published one shape, so a
// mismatch is an error naming the instruction rather than a bad read.
//
//   all-gather, dimensions={d}:   out = concat_d(member_0.x, ..., member_{g-1}.x)
//   reduce-scatter, dimensions={d}: out = chunk_rank(reduce(member_0.x, ..., member_{g-1}.x))
//   all-to-all, dimensions={d}:   out = concat_d(member_j.x chunk `rank` along d, j = 0..g-1)
//   all-to-all (tuple form):      out.j = member_j.operand(rank)
//   collective-permute:           out = value of the pair's source, zeros if not a target
//
// Reductions run in group order on every device, so all members get bit-identical results.
// The combiners add, multiply, maximum, minimum, and, or (a root applied to the two
// parameters) run in a typed loop; any other to_apply runs through the evaluator per element.
#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <numeric>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "hlo/analysis/combiner.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/collective_groups.h"
#include "runtime/cpu/box_copy.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/op_registry.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::Shape;
using Inputs = absl::Span<const Literal* const>;

absl::Status ErrorAt(const HloInstruction& instr, std::string_view message) {
  return absl::InvalidArgumentError(hlo::StrCat("instruction %", instr.name(), ": ", message));
}

// ---- Exchange through the hub ---------------------------------------------------------------

// Checks the inputs of the devices that took part (the others are null).
absl::Status CheckSameShapes(const HloInstruction& instr, Inputs inputs) {
  size_t first = 0;
  while (first < inputs.size() && inputs[first] == nullptr) ++first;
  for (size_t d = first + 1; d < inputs.size(); ++d) {
    if (inputs[d] != nullptr && !inputs[d]->shape().Compatible(inputs[first]->shape())) {
      return ErrorAt(instr,
                     hlo::StrCat("devices disagree on the operand shape: device ", first, " has ",
                                 inputs[first]->shape().ToString(false), ", device ", d, " has ",
                                 inputs[d]->shape().ToString(false)));
    }
  }
  return absl::OkStatus();
}

// Publishes `input` to the devices of `group` (global ids, the device's own included) and runs
// `compute` with their inputs (indexed by global id, null for the others). Groups meet apart:
// devices of another group may be running another branch.
absl::Status Exchange(const HloInstruction& instr, Evaluator& evaluator, const Literal* input,
                      absl::Span<const int64_t> group,
                      const std::function<absl::Status(Inputs)>& compute) {
  const DeviceContext& device = evaluator.device();
  const CollectiveKey key{instr.unique_id(), evaluator.NextSequence(instr)};
  auto checked = [&](Inputs inputs) -> absl::Status {
    RETURN_IF_ERROR(CheckSameShapes(instr, inputs));
    return compute(inputs);
  };
  if (device.hub == nullptr) {
    if (device.num_partitions * device.num_replicas != 1) {
      return ErrorAt(instr, "a collective on several devices needs a CollectiveHub");
    }
    return checked(absl::MakeConstSpan(&input, 1));
  }
  return device.hub->Rendezvous(key, GlobalDeviceId(device), hlo::StrCat("%", instr.name()), input,
                                checked, group);
}

// The operands of one device as published: the operand itself, or a tuple of several.
class Published {
 public:
  explicit Published(Inputs operands) : count_(static_cast<int64_t>(operands.size())) {
    if (count_ == 1) {
      single_ = operands[0];
      return;
    }
    std::vector<Shape> shapes;
    for (const Literal* op : operands) shapes.push_back(op->shape());
    packed_.emplace(Shape::Tuple(std::move(shapes)));
    for (int64_t k = 0; k < count_; ++k) (*packed_->mutable_tuple_elements())[k] = *operands[k];
  }
  const Literal* literal() const { return packed_ ? &*packed_ : single_; }
  // Operand `k` within a device's published literal.
  const Literal& Operand(const Literal* published, int64_t k) const {
    return packed_ ? published->tuple_elements()[k] : *published;
  }
  int64_t count() const { return count_; }

 private:
  int64_t count_;
  const Literal* single_ = nullptr;
  std::optional<Literal> packed_;
};

// Checks that the result of `instr` holds one array per operand: the array itself for one
// operand, else a tuple with `operand_count` elements (what OutputLeaf indexes). Forms that
// carry extra operands, such as collective-broadcast with has_dynamic_root, fail here.
absl::Status CheckOneOutputPerOperand(const HloInstruction& instr, int64_t operand_count) {
  const Shape& shape = instr.shape();
  if (shape.IsTuple() ? shape.tuple_shapes_size() == operand_count : operand_count == 1) {
    return absl::OkStatus();
  }
  return ErrorAt(instr, hlo::StrCat("expected one output per operand (", operand_count,
                                    "), but the result is ", shape.ToString(false),
                                    "; this form is not supported"));
}

// Output leaf `k` of an instruction whose result is one array per operand.
// REQUIRES: CheckOneOutputPerOperand(instr, operand_count) passed.
Literal& OutputLeaf(Literal& result, int64_t k, int64_t operand_count) {
  return operand_count == 1 && !result.shape().IsTuple() ? result
                                                         : (*result.mutable_tuple_elements())[k];
}

absl::StatusOr<int64_t> SingleDimension(const HloInstruction& instr, const Shape& shape) {
  if (instr.dimensions().size() != 1) return ErrorAt(instr, "expected dimensions={d}");
  const int64_t dim = instr.dimensions()[0];
  if (!shape.IsArray() || dim < 0 || dim >= shape.rank()) {
    return ErrorAt(instr,
                   hlo::StrCat("dimension ", dim, " is out of range for ", shape.ToString(false)));
  }
  return dim;
}

// ---- Reductions -----------------------------------------------------------------------------

enum class Combiner { kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr, kGeneric };

Combiner ClassifyCombiner(const hlo::HloComputation& fn) {
  static constexpr std::pair<HloOpcode, Combiner> kCombiners[] = {
      {HloOpcode::kAdd, Combiner::kAdd},         {HloOpcode::kMultiply, Combiner::kMultiply},
      {HloOpcode::kMaximum, Combiner::kMaximum}, {HloOpcode::kMinimum, Combiner::kMinimum},
      {HloOpcode::kAnd, Combiner::kAnd},         {HloOpcode::kOr, Combiner::kOr}};
  const std::optional<HloOpcode> op = hlo::MatchCombiner(fn);
  for (const auto& [opcode, combiner] : kCombiners) {
    if (op == opcode) return combiner;
  }
  return Combiner::kGeneric;
}

template <typename T, typename Op>
void ReduceLoop(const std::vector<const T*>& srcs, T* dst, int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i) {
    ComputeType<T> acc = LoadElement(srcs[0], i);
    for (size_t m = 1; m < srcs.size(); ++m) acc = op(acc, LoadElement(srcs[m], i));
    StoreElement(dst, i, acc);
  }
}

template <typename C>
constexpr bool kIsComplex = !std::is_arithmetic_v<C>;

// Integer arithmetic in uint64_t wraps like XLA's and avoids signed-overflow UB.
template <typename C>
C WrapAdd(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <typename C>
C WrapMul(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Floating max/min propagate NaN, as XLA's do.
template <typename C>
C Max(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a > b ? a : b;
}
template <typename C>
C Min(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a < b ? a : b;
}

// Reduces `srcs` element-wise into `dst` with a fast-path combiner. `pred` selects logical
// semantics for the uint8_t storage that pred shares with u8.
template <typename T>
absl::Status TypedReduce(Combiner combiner, bool pred, const std::vector<const T*>& srcs, T* dst,
                         int64_t n) {
  using C = ComputeType<T>;
  if constexpr (std::is_same_v<T, uint8_t>) {
    if (pred) {
      const bool any =
          combiner == Combiner::kAdd || combiner == Combiner::kOr || combiner == Combiner::kMaximum;
      if (any) ReduceLoop(srcs, dst, n, [](C a, C b) { return static_cast<C>(a || b); });
      if (!any) ReduceLoop(srcs, dst, n, [](C a, C b) { return static_cast<C>(a && b); });
      return absl::OkStatus();
    }
  }
  if constexpr (std::is_integral_v<C>) {
    switch (combiner) {
      case Combiner::kAdd:
        ReduceLoop(srcs, dst, n, WrapAdd<C>);
        return absl::OkStatus();
      case Combiner::kMultiply:
        ReduceLoop(srcs, dst, n, WrapMul<C>);
        return absl::OkStatus();
      case Combiner::kAnd:
        ReduceLoop(srcs, dst, n, [](C a, C b) { return static_cast<C>(a & b); });
        return absl::OkStatus();
      case Combiner::kOr:
        ReduceLoop(srcs, dst, n, [](C a, C b) { return static_cast<C>(a | b); });
        return absl::OkStatus();
      default:
        break;
    }
  } else {
    switch (combiner) {
      case Combiner::kAdd:
        ReduceLoop(srcs, dst, n, std::plus<C>());
        return absl::OkStatus();
      case Combiner::kMultiply:
        ReduceLoop(srcs, dst, n, std::multiplies<C>());
        return absl::OkStatus();
      default:
        break;
    }
  }
  if constexpr (!kIsComplex<C>) {
    if (combiner == Combiner::kMaximum) {
      ReduceLoop(srcs, dst, n, Max<C>);
      return absl::OkStatus();
    }
    if (combiner == Combiner::kMinimum) {
      ReduceLoop(srcs, dst, n, Min<C>);
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError("the combiner does not apply to this element type");
}

// Reduces `srcs` element-wise with `fn` run by the evaluator on scalars, in order.
absl::Status GenericReduce(Evaluator& evaluator, const hlo::HloComputation& fn,
                           const std::vector<const Literal*>& srcs, Literal& dst) {
  const hlo::PrimitiveType type = dst.shape().element_type();
  const int64_t width = hlo::ByteWidth(type);
  const Shape scalar = Shape::Array(type, {});
  Literal acc(scalar);
  Literal value(scalar);
  for (int64_t i = 0; i < dst.element_count(); ++i) {
    std::copy_n(srcs[0]->data().data() + i * width, width, acc.mutable_data()->data());
    for (size_t m = 1; m < srcs.size(); ++m) {
      std::copy_n(srcs[m]->data().data() + i * width, width, value.mutable_data()->data());
      const Literal* args[] = {&acc, &value};
      ASSIGN_OR_RETURN(Literal next, evaluator.Call(fn, args));
      if (!next.shape().Compatible(scalar)) {
        return absl::InvalidArgumentError(hlo::StrCat("to_apply returned ",
                                                      next.shape().ToString(false), ", expected ",
                                                      scalar.ToString(false)));
      }
      acc = std::move(next);
    }
    std::copy_n(acc.data().data(), width, dst.mutable_data()->data() + i * width);
  }
  return absl::OkStatus();
}

// dst = fold of `srcs` (same shape as dst) with the instruction's to_apply.
absl::Status Reduce(const HloInstruction& instr, Evaluator& evaluator,
                    const std::vector<const Literal*>& srcs, Literal& dst) {
  for (const Literal* src : srcs) {
    if (!src->shape().Compatible(dst.shape())) {
      return ErrorAt(instr, hlo::StrCat("cannot reduce ", src->shape().ToString(false), " into ",
                                        dst.shape().ToString(false)));
    }
  }
  const Combiner combiner = ClassifyCombiner(*instr.to_apply());
  const hlo::PrimitiveType type = dst.shape().element_type();
  if (combiner == Combiner::kGeneric) return GenericReduce(evaluator, *instr.to_apply(), srcs, dst);
  absl::Status status = DispatchArrayType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    std::vector<const T*> typed;
    for (const Literal* src : srcs) typed.push_back(Data<T>(*src));
    return TypedReduce<T>(combiner, type == hlo::PrimitiveType::kPred, typed, MutableData<T>(dst),
                          dst.element_count());
  });
  if (!status.ok()) {
    return ErrorAt(
        instr, hlo::StrCat(hlo::ToStd(status.message()), " (", hlo::PrimitiveTypeName(type), ")"));
  }
  return absl::OkStatus();
}

// ---- Handlers -------------------------------------------------------------------------------

absl::StatusOr<Literal> DeviceIdScalar(const HloInstruction& instr, int64_t id) {
  if (!instr.shape().IsArray() || instr.shape().rank() != 0) {
    return ErrorAt(instr, "expected a scalar result");
  }
  Literal result(instr.shape());
  result.SetUint(0, static_cast<uint64_t>(id));
  return result;
}

absl::StatusOr<Literal> PartitionId(const HloInstruction& instr, Inputs, Evaluator& evaluator) {
  return DeviceIdScalar(instr, evaluator.device().partition_id);
}

absl::StatusOr<Literal> ReplicaId(const HloInstruction& instr, Inputs, Evaluator& evaluator) {
  return DeviceIdScalar(instr, evaluator.device().replica_id);
}

absl::StatusOr<Literal> AllReduce(const HloInstruction& instr, Inputs operands,
                                  Evaluator& evaluator) {
  ASSIGN_OR_RETURN(DeviceGroup group, DeviceGroupOf(instr, evaluator.device()));
  Published published(operands);
  RETURN_IF_ERROR(CheckOneOutputPerOperand(instr, published.count()));
  Literal result(instr.shape());
  RETURN_IF_ERROR(
      Exchange(instr, evaluator, published.literal(), group.devices, [&](Inputs inputs) {
        for (int64_t k = 0; k < published.count(); ++k) {
          std::vector<const Literal*> srcs;
          for (int64_t member : group.devices)
            srcs.push_back(&published.Operand(inputs[member], k));
          RETURN_IF_ERROR(Reduce(instr, evaluator, srcs, OutputLeaf(result, k, published.count())));
        }
        return absl::OkStatus();
      }));
  return result;
}

absl::StatusOr<Literal> AllGather(const HloInstruction& instr, Inputs operands,
                                  Evaluator& evaluator) {
  ASSIGN_OR_RETURN(DeviceGroup group, DeviceGroupOf(instr, evaluator.device()));
  ASSIGN_OR_RETURN(int64_t dim, SingleDimension(instr, operands[0]->shape()));
  Published published(operands);
  RETURN_IF_ERROR(CheckOneOutputPerOperand(instr, published.count()));
  Literal result(instr.shape());
  RETURN_IF_ERROR(
      Exchange(instr, evaluator, published.literal(), group.devices, [&](Inputs inputs) {
        for (int64_t k = 0; k < published.count(); ++k) {
          Literal& out = OutputLeaf(result, k, published.count());
          for (size_t i = 0; i < group.devices.size(); ++i) {
            const Literal& in = published.Operand(inputs[group.devices[i]], k);
            const std::vector<int64_t>& sizes = in.shape().dimensions();
            std::vector<int64_t> zeros(sizes.size(), 0);
            std::vector<int64_t> at = zeros;
            at[dim] = static_cast<int64_t>(i) * sizes[dim];
            if (out.shape().rank() != in.shape().rank() ||
                out.shape().dimensions(dim) !=
                    sizes[dim] * static_cast<int64_t>(group.devices.size())) {
              return ErrorAt(instr, hlo::StrCat("gathering ", group.devices.size(), " x ",
                                                in.shape().ToString(false), " does not give ",
                                                out.shape().ToString(false)));
            }
            RETURN_IF_ERROR(CopyBox(in, zeros, out, at, sizes));
          }
        }
        return absl::OkStatus();
      }));
  return result;
}

absl::StatusOr<Literal> ReduceScatter(const HloInstruction& instr, Inputs operands,
                                      Evaluator& evaluator) {
  ASSIGN_OR_RETURN(DeviceGroup group, DeviceGroupOf(instr, evaluator.device()));
  ASSIGN_OR_RETURN(int64_t dim, SingleDimension(instr, operands[0]->shape()));
  Published published(operands);
  RETURN_IF_ERROR(CheckOneOutputPerOperand(instr, published.count()));
  Literal result(instr.shape());
  const int64_t g = static_cast<int64_t>(group.devices.size());
  RETURN_IF_ERROR(
      Exchange(instr, evaluator, published.literal(), group.devices, [&](Inputs inputs) {
        for (int64_t k = 0; k < published.count(); ++k) {
          Literal& out = OutputLeaf(result, k, published.count());
          const std::vector<int64_t>& sizes = out.shape().dimensions();
          std::vector<int64_t> at(sizes.size(), 0);
          at[dim] = group.rank * sizes[dim];
          // Each member's chunk `rank`, then their element-wise reduction.
          std::vector<Literal> chunks;
          std::vector<const Literal*> srcs;
          chunks.reserve(g);
          for (int64_t member : group.devices) {
            const Literal& in = published.Operand(inputs[member], k);
            if (in.shape().rank() != out.shape().rank() ||
                in.shape().dimensions(dim) != sizes[dim] * g) {
              return ErrorAt(instr,
                             hlo::StrCat("scattering ", in.shape().ToString(false), " over ", g,
                                         " devices does not give ", out.shape().ToString(false)));
            }
            chunks.emplace_back(out.shape());
            RETURN_IF_ERROR(
                CopyBox(in, at, chunks.back(), std::vector<int64_t>(sizes.size(), 0), sizes));
            srcs.push_back(&chunks.back());
          }
          RETURN_IF_ERROR(Reduce(instr, evaluator, srcs, out));
        }
        return absl::OkStatus();
      }));
  return result;
}

// Array form: split along `dim` into g chunks; chunk j goes to member j; received chunks are
// concatenated along `dim` in group order.
absl::Status AllToAllArray(const HloInstruction& instr, const DeviceGroup& group, int64_t dim,
                           Inputs inputs, Literal& out) {
  const int64_t g = static_cast<int64_t>(group.devices.size());
  const Shape& in_shape = inputs[group.devices[0]]->shape();
  if (in_shape.dimensions(dim) % g != 0 || !in_shape.Compatible(out.shape())) {
    return ErrorAt(instr, hlo::StrCat("dimension ", dim, " of ", in_shape.ToString(false),
                                      " does not split into ", g, " equal chunks"));
  }
  std::vector<int64_t> sizes = in_shape.dimensions();
  const int64_t chunk = sizes[dim] / g;
  sizes[dim] = chunk;
  std::vector<int64_t> from(sizes.size(), 0);
  std::vector<int64_t> to(sizes.size(), 0);
  from[dim] = group.rank * chunk;
  for (int64_t j = 0; j < g; ++j) {
    to[dim] = j * chunk;
    RETURN_IF_ERROR(CopyBox(*inputs[group.devices[j]], from, out, to, sizes));
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> AllToAll(const HloInstruction& instr, Inputs operands,
                                 Evaluator& evaluator) {
  ASSIGN_OR_RETURN(DeviceGroup group, DeviceGroupOf(instr, evaluator.device()));
  const int64_t g = static_cast<int64_t>(group.devices.size());
  const bool array_form = !instr.dimensions().empty();
  int64_t dim = 0;
  if (array_form) {
    if (operands.size() != 1) return ErrorAt(instr, "the array form takes one operand");
    ASSIGN_OR_RETURN(dim, SingleDimension(instr, operands[0]->shape()));
  } else if (static_cast<int64_t>(operands.size()) != g) {
    return ErrorAt(instr, hlo::StrCat("the tuple form needs one operand per group member (", g,
                                      "), got ", operands.size()));
  } else {
    RETURN_IF_ERROR(CheckOneOutputPerOperand(instr, g));
  }
  Published published(operands);
  Literal result(instr.shape());
  RETURN_IF_ERROR(
      Exchange(instr, evaluator, published.literal(), group.devices, [&](Inputs inputs) {
        if (array_form) return AllToAllArray(instr, group, dim, inputs, result);
        for (int64_t j = 0; j < g; ++j) {
          const Literal& in = published.Operand(inputs[group.devices[j]], group.rank);
          Literal& out = OutputLeaf(result, j, g);
          if (!in.shape().Compatible(out.shape())) {
            return ErrorAt(instr,
                           hlo::StrCat("operand ", group.rank, " is ", in.shape().ToString(false),
                                       " but output ", j, " is ", out.shape().ToString(false)));
          }
          out = in;
        }
        return absl::OkStatus();
      }));
  return result;
}

absl::StatusOr<Literal> CollectivePermute(const HloInstruction& instr, Inputs operands,
                                          Evaluator& evaluator) {
  const Shape& shape = instr.shape();
  const bool combined = operands.size() > 1;
  if (combined &&
      (!shape.IsTuple() || shape.tuple_shapes_size() != static_cast<int64_t>(operands.size()))) {
    return ErrorAt(instr, "the in-place form of collective-permute is not supported");
  }
  ASSIGN_OR_RETURN(int64_t source, PermuteSourceOf(instr, evaluator.device()));
  const std::vector<int64_t> group = PermuteGroup(instr, evaluator.device());
  Published published(operands);
  Literal result(shape);
  RETURN_IF_ERROR(Exchange(instr, evaluator, published.literal(), group, [&](Inputs inputs) {
    if (source < 0) return absl::OkStatus();  // Not a target: zeros.
    for (int64_t k = 0; k < published.count(); ++k) {
      const Literal& in = published.Operand(inputs[source], k);
      Literal& out = OutputLeaf(result, k, published.count());
      if (!in.shape().Compatible(out.shape())) {
        return ErrorAt(instr, hlo::StrCat("received ", in.shape().ToString(false),
                                          " for an output of ", out.shape().ToString(false)));
      }
      out = in;
    }
    return absl::OkStatus();
  }));
  return result;
}

// Every member receives the value of the first member of its group.
absl::StatusOr<Literal> CollectiveBroadcast(const HloInstruction& instr, Inputs operands,
                                            Evaluator& evaluator) {
  ASSIGN_OR_RETURN(DeviceGroup group, DeviceGroupOf(instr, evaluator.device()));
  Published published(operands);
  RETURN_IF_ERROR(CheckOneOutputPerOperand(instr, published.count()));
  Literal result(instr.shape());
  RETURN_IF_ERROR(
      Exchange(instr, evaluator, published.literal(), group.devices, [&](Inputs inputs) {
        for (int64_t k = 0; k < published.count(); ++k) {
          const Literal& in = published.Operand(inputs[group.devices[0]], k);
          Literal& out = OutputLeaf(result, k, published.count());
          if (!in.shape().Compatible(out.shape())) {
            return ErrorAt(instr, hlo::StrCat("received ", in.shape().ToString(false),
                                              " for an output of ", out.shape().ToString(false)));
          }
          out = in;
        }
        return absl::OkStatus();
      }));
  return result;
}

}  // namespace

void RegisterCollectiveOps(OpTable& table) {
  table[HloOpcode::kPartitionId] = &PartitionId;
  table[HloOpcode::kReplicaId] = &ReplicaId;
  table[HloOpcode::kAllReduce] = &AllReduce;
  table[HloOpcode::kAllGather] = &AllGather;
  table[HloOpcode::kReduceScatter] = &ReduceScatter;
  table[HloOpcode::kAllToAll] = &AllToAll;
  table[HloOpcode::kCollectivePermute] = &CollectivePermute;
  table[HloOpcode::kCollectiveBroadcast] = &CollectiveBroadcast;
}

}  // namespace runtime

// The reduction family: reduce and map here; reduce-window and select-and-scatter in
// window_ops.cc; sort in sort_ops.cc. RegisterReduceOps adds all five.
//
// reduce(inputs..., inits...), dimensions={d...}: each output element folds the input elements
// that share its kept coordinates, starting from the init values, in row-major order of the
// reduced coordinates. When there is one input and the body is a single combiner of its two
// parameters (see scalar_computation.h), one pass over the input accumulates into a typed
// buffer (narrow floats accumulate in f32 and round once at the end). Otherwise the body is
// called per element on scalar Literals, which supports any body and any number of inputs.
//
// map(operands...), dimensions={all}: applies the body element-wise; a combiner body runs as a
// typed loop, any other body per element.
#include <cstdint>
#include <vector>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/strided_index.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/op_registry.h"
#include "runtime/cpu/ops/reduce_handlers.h"
#include "runtime/cpu/ops/scalar_computation.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

absl::Status InvalidArgument(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

// Dimension bookkeeping of one reduce: which input dimensions are reduced.
struct ReduceGeometry {
  std::vector<int64_t> input_dims;
  std::vector<bool> reduced;           // Per input dimension.
  std::vector<int64_t> output_dims;    // Kept input dimensions, in order.
  std::vector<int64_t> input_strides;  // Row-major strides of the input.
};

absl::StatusOr<ReduceGeometry> MakeReduceGeometry(const HloInstruction& instr, const Shape& input) {
  ReduceGeometry g;
  g.input_dims = input.dimensions();
  g.reduced.assign(input.rank(), false);
  for (int64_t d : instr.dimensions()) {
    if (d < 0 || d >= input.rank() || g.reduced[d]) {
      return InvalidArgument(hlo::StrCat("reduce dimension ", d, " is out of range or repeated"));
    }
    g.reduced[d] = true;
  }
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (!g.reduced[d]) g.output_dims.push_back(g.input_dims[d]);
  }
  g.input_strides = RowMajorStrides(g.input_dims);
  return g;
}

// Checks reduce's operands: n inputs of equal dimensions, then n scalar inits of their types.
absl::Status CheckReduceOperands(absl::Span<const Literal* const> operands,
                                 absl::Span<const Shape> result_shapes, const ReduceGeometry& g) {
  const size_t n = operands.size() / 2;
  for (size_t k = 0; k < n; ++k) {
    const Shape& in = operands[k]->shape();
    const Shape& init = operands[n + k]->shape();
    if (!in.IsArray() || in.dimensions() != g.input_dims) {
      return InvalidArgument("reduce inputs must be arrays of the same dimensions");
    }
    if (!init.IsArray() || init.rank() != 0 || init.element_type() != in.element_type()) {
      return InvalidArgument("each reduce init must be a scalar of its input's element type");
    }
    if (result_shapes[k].element_type() != in.element_type() ||
        result_shapes[k].dimensions() != g.output_dims) {
      return InvalidArgument(hlo::StrCat("reduce result ", result_shapes[k].ToString(),
                                         " does not match its input with the reduced dimensions "
                                         "removed"));
    }
  }
  return absl::OkStatus();
}

// One pass over the input: acc[out(i)] = op(acc[out(i)], input[i]).
template <typename T, typename Op>
void ReduceTyped(const ReduceGeometry& g, const Literal& input, const Literal& init, Op op,
                 Literal& out) {
  using C = ComputeType<T>;
  const T* in = Data<T>(input);
  std::vector<C> acc(ElementCount(g.output_dims), LoadElement(Data<T>(init), 0));
  // Output strides seen from the input's dimensions (0 for reduced ones).
  std::vector<int64_t> out_strides(g.input_dims.size(), 0);
  std::vector<int64_t> dense = RowMajorStrides(g.output_dims);
  for (size_t d = 0, k = 0; d < g.input_dims.size(); ++d) {
    if (!g.reduced[d]) out_strides[d] = dense[k++];
  }
  const int64_t rank = static_cast<int64_t>(g.input_dims.size());
  const int64_t inner = rank == 0 ? 1 : g.input_dims.back();
  const int64_t inner_out_stride = rank == 0 ? 0 : out_strides.back();
  std::vector<int64_t> outer(g.input_dims.begin(), g.input_dims.end() - (rank == 0 ? 0 : 1));
  std::vector<int64_t> outer_in(g.input_strides.begin(), g.input_strides.begin() + outer.size());
  std::vector<int64_t> outer_out(out_strides.begin(), out_strides.begin() + outer.size());
  for (StridedCounter c(outer, {outer_out, outer_in}); !c.done() && inner > 0; c.Next()) {
    C* a = acc.data() + c.offset(0);
    const int64_t base = c.offset(1);
    if (inner_out_stride == 0) {
      C v = *a;
      for (int64_t j = 0; j < inner; ++j) v = op(v, LoadElement(in, base + j));
      *a = v;
    } else {
      for (int64_t j = 0; j < inner; ++j) a[j] = op(a[j], LoadElement(in, base + j));
    }
  }
  T* dst = MutableData<T>(out);
  for (size_t i = 0; i < acc.size(); ++i) StoreElement(dst, static_cast<int64_t>(i), acc[i]);
}

absl::Status ReduceWithCombiner(hlo::HloOpcode opcode, const ReduceGeometry& g,
                                const Literal& input, const Literal& init, Literal& out) {
  const PrimitiveType type = input.shape().element_type();
  return DispatchArrayType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    return WithBinaryOp<ComputeType<T>>(opcode, type == PrimitiveType::kPred, [&](auto op) {
      ReduceTyped<T>(g, input, init, op, out);
      return absl::OkStatus();
    });
  });
}

// Calls the body per element: acc = body(acc..., input_k[i]...).
absl::Status ReduceWithCalls(const HloInstruction& instr, const ReduceGeometry& g,
                             absl::Span<const Literal* const> operands, Evaluator& evaluator,
                             std::vector<Literal>& outs) {
  const size_t n = operands.size() / 2;
  std::vector<int64_t> kept_strides, reduced_bounds, reduced_strides;
  for (size_t d = 0; d < g.input_dims.size(); ++d) {
    if (g.reduced[d]) {
      reduced_bounds.push_back(g.input_dims[d]);
      reduced_strides.push_back(g.input_strides[d]);
    } else {
      kept_strides.push_back(g.input_strides[d]);
    }
  }
  std::vector<PrimitiveType> types;
  std::vector<Literal> elements;
  for (size_t k = 0; k < n; ++k) {
    types.push_back(operands[k]->shape().element_type());
    elements.emplace_back(Shape::Array(types.back(), {}));
  }
  std::vector<const Literal*> args(2 * n);
  int64_t out_index = 0;
  for (StridedCounter o(g.output_dims, {kept_strides}); !o.done(); o.Next(), ++out_index) {
    std::vector<Literal> acc;
    for (size_t k = 0; k < n; ++k) acc.push_back(*operands[n + k]);
    for (StridedCounter r(reduced_bounds, {reduced_strides}); !r.done(); r.Next()) {
      for (size_t k = 0; k < n; ++k) {
        CopyElement(*operands[k], o.offset(0) + r.offset(0), elements[k], 0);
        args[k] = &acc[k];
        args[n + k] = &elements[k];
      }
      ASSIGN_OR_RETURN(acc, CallScalarComputation(evaluator, *instr.to_apply(), args, types));
    }
    for (size_t k = 0; k < n; ++k) CopyElement(acc[k], 0, outs[k], out_index);
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> HandleReduce(const HloInstruction& instr,
                                     absl::Span<const Literal* const> operands,
                                     Evaluator& evaluator) {
  if (operands.empty() || operands.size() % 2 != 0 || instr.called_computations().empty()) {
    return InvalidArgument("reduce takes n inputs, n init values and a to_apply computation");
  }
  const int64_t n = static_cast<int64_t>(operands.size() / 2);
  ASSIGN_OR_RETURN(ReduceGeometry g, MakeReduceGeometry(instr, operands[0]->shape()));
  ASSIGN_OR_RETURN(std::vector<Shape> shapes, VariadicResultShapes(instr.shape(), n));
  RETURN_IF_ERROR(CheckReduceOperands(operands, shapes, g));
  std::vector<Literal> outs;
  for (const Shape& s : shapes) outs.emplace_back(s);
  const PrimitiveType type = operands[0]->shape().element_type();
  std::optional<hlo::HloOpcode> combiner = MatchScalarCombiner(*instr.to_apply(), type);
  if (n == 1 && combiner.has_value()) {
    RETURN_IF_ERROR(ReduceWithCombiner(*combiner, g, *operands[0], *operands[1], outs[0]));
  } else {
    RETURN_IF_ERROR(ReduceWithCalls(instr, g, operands, evaluator, outs));
  }
  return PackVariadic(std::move(outs), instr.shape());
}

template <typename T, typename Op>
void MapTyped(const Literal& a, const Literal& b, Op op, Literal& out) {
  const T* x = Data<T>(a);
  const T* y = Data<T>(b);
  T* z = MutableData<T>(out);
  for (int64_t i = 0; i < out.element_count(); ++i) {
    StoreElement(z, i, op(LoadElement(x, i), LoadElement(y, i)));
  }
}

absl::Status MapWithCalls(const HloInstruction& instr, absl::Span<const Literal* const> operands,
                          Evaluator& evaluator, Literal& out) {
  std::vector<Literal> elements;
  for (const Literal* op : operands) {
    elements.emplace_back(Shape::Array(op->shape().element_type(), {}));
  }
  std::vector<const Literal*> args;
  for (const Literal& e : elements) args.push_back(&e);
  const PrimitiveType out_type = out.shape().element_type();
  for (int64_t i = 0; i < out.element_count(); ++i) {
    for (size_t k = 0; k < operands.size(); ++k) CopyElement(*operands[k], i, elements[k], 0);
    ASSIGN_OR_RETURN(std::vector<Literal> r,
                     CallScalarComputation(evaluator, *instr.to_apply(), args, {&out_type, 1}));
    CopyElement(r[0], 0, out, i);
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> HandleMap(const HloInstruction& instr,
                                  absl::Span<const Literal* const> operands, Evaluator& evaluator) {
  const Shape& shape = instr.shape();
  if (!shape.IsArray() || instr.called_computations().empty()) {
    return InvalidArgument("map must produce an array and have a to_apply computation");
  }
  for (const Literal* op : operands) {
    if (!op->shape().IsArray() || op->shape().dimensions() != shape.dimensions()) {
      return InvalidArgument("map operands must be arrays of the result's dimensions");
    }
  }
  const std::vector<int64_t>& dims = instr.dimensions();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims.size() != static_cast<size_t>(shape.rank()) || dims[i] != static_cast<int64_t>(i)) {
      return absl::UnimplementedError("map over a subset of the dimensions is not supported");
    }
  }
  Literal out(shape);
  const PrimitiveType type = shape.element_type();
  std::optional<hlo::HloOpcode> combiner = MatchScalarCombiner(*instr.to_apply(), type);
  if (operands.size() == 2 && combiner.has_value() && operands[0]->shape().element_type() == type &&
      operands[1]->shape().element_type() == type) {
    RETURN_IF_ERROR(DispatchArrayType(type, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      return WithBinaryOp<ComputeType<T>>(*combiner, type == PrimitiveType::kPred, [&](auto op) {
        MapTyped<T>(*operands[0], *operands[1], op, out);
        return absl::OkStatus();
      });
    }));
  } else {
    RETURN_IF_ERROR(MapWithCalls(instr, operands, evaluator, out));
  }
  return out;
}

}  // namespace

void RegisterReduceOps(OpTable& table) {
  table[hlo::HloOpcode::kReduce] = &HandleReduce;
  table[hlo::HloOpcode::kMap] = &HandleMap;
  table[hlo::HloOpcode::kReduceWindow] = &HandleReduceWindow;
  table[hlo::HloOpcode::kSelectAndScatter] = &HandleSelectAndScatter;
  table[hlo::HloOpcode::kSort] = &HandleSort;
  table[hlo::HloOpcode::kTopK] = &HandleTopKOpcode;
  table[hlo::HloOpcode::kScan] = &HandleScan;
}

}  // namespace runtime

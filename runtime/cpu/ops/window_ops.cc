// reduce-window and select-and-scatter: operations over sliding windows of an input.
//
// For output position o and window position w in one dimension, the window element lies at
// coordinate o*stride + w*window_dilation - padding_low of the padded, base-dilated input. It
// reads input element c when that coordinate equals c*base_dilation for some 0 <= c < size;
// padding and dilation holes are skipped (XLA's backends skip them rather than folding in the
// init value). `WindowMap` tabulates those coordinates per dimension once, so visiting a window
// costs one table lookup per dimension and element.
//
// reduce-window folds each window, starting from the init values, in row-major window order.
// select-and-scatter starts from an output filled with `init`; for each source element (one per
// window) it selects the window element for which `select(selected, candidate)` keeps holding
// (the first element, replaced whenever select returns false), then folds the source value into
// the output there with `scatter`. Both run typed loops for recognised bodies (scalar_
// computation.h) and call the bodies per element otherwise.
#include <cstdint>
#include <vector>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/strided_index.h"
#include "runtime/common/window_geometry.h"
#include "runtime/cpu/element_types.h"
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

// The instruction's window; an absent one is the empty window of a rank-0 operand.
hlo::Window WindowOf(const HloInstruction& instr) {
  return instr.attrs().window.value_or(hlo::Window{});
}

class WindowMap {
 public:
  static absl::StatusOr<WindowMap> Create(const hlo::Window& window, const Shape& input,
                                          const Shape& output) {
    const int64_t rank = input.rank();
    if (static_cast<int64_t>(window.dimensions.size()) != rank || output.rank() != rank) {
      return InvalidArgument(hlo::StrCat("window has ", window.dimensions.size(),
                                         " dimensions; input and output have rank ", rank, " and ",
                                         output.rank()));
    }
    WindowMap map;
    map.in_strides_ = RowMajorStrides(input.dimensions());
    for (int64_t d = 0; d < rank; ++d) {
      const hlo::WindowDimension& w = window.dimensions[d];
      if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
        return InvalidArgument(hlo::StrCat("window dimension ", d, " has a non-positive size, ",
                                           "stride or dilation"));
      }
      const int64_t out = output.dimensions(d);
      if (out != WindowedOutputSize(w, input.dimensions(d))) {
        return InvalidArgument(hlo::StrCat("output dimension ", d, " is ", out,
                                           ", the window gives ",
                                           WindowedOutputSize(w, input.dimensions(d))));
      }
      map.sizes_.push_back(w.size);
      map.coords_.push_back(WindowCoordinates(w, input.dimensions(d), out));
    }
    return map;
  }

  // The input offsets of output position `out`'s window elements inside the input, in
  // row-major window order.
  void Offsets(const std::vector<int64_t>& out, std::vector<int64_t>& offsets) const {
    offsets.clear();
    for (StridedCounter w(sizes_, {}); !w.done(); w.Next()) {
      int64_t offset = 0;
      bool inside = true;
      for (size_t d = 0; d < sizes_.size() && inside; ++d) {
        const int64_t c = coords_[d][out[d] * sizes_[d] + w.index()[d]];
        inside = c >= 0;
        offset += c * in_strides_[d];
      }
      if (inside) offsets.push_back(offset);
    }
  }

 private:
  std::vector<int64_t> sizes_;
  std::vector<int64_t> in_strides_;
  std::vector<std::vector<int64_t>> coords_;  // Per dimension: [out][window] -> coord or -1.
};

absl::Status CheckWindowOperands(absl::Span<const Literal* const> operands,
                                 absl::Span<const Shape> shapes) {
  const size_t n = operands.size() / 2;
  for (size_t k = 0; k < n; ++k) {
    const Shape& in = operands[k]->shape();
    const Shape& init = operands[n + k]->shape();
    if (!in.IsArray() || in.dimensions() != operands[0]->shape().dimensions()) {
      return InvalidArgument("reduce-window inputs must be arrays of the same dimensions");
    }
    if (!init.IsArray() || init.rank() != 0 || init.element_type() != in.element_type() ||
        shapes[k].element_type() != in.element_type() ||
        shapes[k].dimensions() != shapes[0].dimensions()) {
      return InvalidArgument("each reduce-window init and result must have its input's type");
    }
  }
  return absl::OkStatus();
}

template <typename T, typename Op>
void ReduceWindowTyped(const WindowMap& map, const Literal& input, const Literal& init, Op op,
                       Literal& out) {
  using C = ComputeType<T>;
  const T* in = Data<T>(input);
  T* dst = MutableData<T>(out);
  const C start = LoadElement(Data<T>(init), 0);
  std::vector<int64_t> offsets;
  int64_t i = 0;
  for (StridedCounter o(out.shape().dimensions(), {}); !o.done(); o.Next(), ++i) {
    map.Offsets(o.index(), offsets);
    C acc = start;
    for (int64_t off : offsets) acc = op(acc, LoadElement(in, off));
    StoreElement(dst, i, acc);
  }
}

absl::Status ReduceWindowWithCalls(const HloInstruction& instr, const WindowMap& map,
                                   absl::Span<const Literal* const> operands, Evaluator& evaluator,
                                   std::vector<Literal>& outs) {
  const size_t n = operands.size() / 2;
  std::vector<PrimitiveType> types;
  std::vector<Literal> elements;
  for (size_t k = 0; k < n; ++k) {
    types.push_back(operands[k]->shape().element_type());
    elements.emplace_back(Shape::Array(types.back(), {}));
  }
  std::vector<const Literal*> args(2 * n);
  std::vector<int64_t> offsets;
  int64_t i = 0;
  for (StridedCounter o(outs[0].shape().dimensions(), {}); !o.done(); o.Next(), ++i) {
    map.Offsets(o.index(), offsets);
    std::vector<Literal> acc;
    for (size_t k = 0; k < n; ++k) acc.push_back(*operands[n + k]);
    for (int64_t off : offsets) {
      for (size_t k = 0; k < n; ++k) {
        CopyElement(*operands[k], off, elements[k], 0);
        args[k] = &acc[k];
        args[n + k] = &elements[k];
      }
      ASSIGN_OR_RETURN(acc, CallScalarComputation(evaluator, *instr.to_apply(), args, types));
    }
    for (size_t k = 0; k < n; ++k) CopyElement(acc[k], 0, outs[k], i);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> HandleReduceWindow(const HloInstruction& instr,
                                           absl::Span<const Literal* const> operands,
                                           Evaluator& evaluator) {
  if (operands.empty() || operands.size() % 2 != 0 || instr.called_computations().empty()) {
    return InvalidArgument("reduce-window takes n inputs, n inits and to_apply");
  }
  const int64_t n = static_cast<int64_t>(operands.size() / 2);
  ASSIGN_OR_RETURN(std::vector<Shape> shapes, VariadicResultShapes(instr.shape(), n));
  RETURN_IF_ERROR(CheckWindowOperands(operands, shapes));
  ASSIGN_OR_RETURN(WindowMap map,
                   WindowMap::Create(WindowOf(instr), operands[0]->shape(), shapes[0]));
  std::vector<Literal> outs;
  for (const Shape& s : shapes) outs.emplace_back(s);
  const PrimitiveType type = operands[0]->shape().element_type();
  std::optional<hlo::HloOpcode> combiner = MatchScalarCombiner(*instr.to_apply(), type);
  if (n == 1 && combiner.has_value()) {
    RETURN_IF_ERROR(DispatchArrayType(type, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      return WithBinaryOp<ComputeType<T>>(*combiner, type == PrimitiveType::kPred, [&](auto op) {
        ReduceWindowTyped<T>(map, *operands[0], *operands[1], op, outs[0]);
        return absl::OkStatus();
      });
    }));
  } else {
    RETURN_IF_ERROR(ReduceWindowWithCalls(instr, map, operands, evaluator, outs));
  }
  return PackVariadic(std::move(outs), instr.shape());
}

namespace {

// Typed select-and-scatter for a compare `select` and a combiner `scatter`.
template <typename T, typename Op>
void SelectAndScatterTyped(const WindowMap& map, const ParameterComparison& select, Op scatter,
                           absl::Span<const Literal* const> operands, Literal& out) {
  using C = ComputeType<T>;
  const T* in = Data<T>(*operands[0]);
  const T* source = Data<T>(*operands[1]);
  const bool total = select.type == hlo::ComparisonType::kTotalOrder;
  std::vector<C> acc(out.element_count(), LoadElement(Data<T>(*operands[2]), 0));
  std::vector<int64_t> offsets;
  int64_t s = 0;
  for (StridedCounter o(operands[1]->shape().dimensions(), {}); !o.done(); o.Next(), ++s) {
    map.Offsets(o.index(), offsets);
    if (offsets.empty()) continue;
    int64_t best = offsets[0];
    C best_value = LoadElement(in, best);
    for (size_t k = 1; k < offsets.size(); ++k) {
      C v = LoadElement(in, offsets[k]);
      if (!CompareValues(select.direction, total, best_value, v)) {
        best = offsets[k];
        best_value = v;
      }
    }
    acc[best] = scatter(acc[best], LoadElement(source, s));
  }
  T* dst = MutableData<T>(out);
  for (size_t i = 0; i < acc.size(); ++i) StoreElement(dst, static_cast<int64_t>(i), acc[i]);
}

absl::Status SelectAndScatterWithCalls(const HloInstruction& instr, const WindowMap& map,
                                       absl::Span<const Literal* const> operands,
                                       Evaluator& evaluator, Literal& out) {
  const hlo::HloComputation& select = *instr.called_computations()[0];
  const hlo::HloComputation& scatter = *instr.called_computations()[1];
  const PrimitiveType type = out.shape().element_type();
  const PrimitiveType pred = PrimitiveType::kPred;
  for (int64_t i = 0; i < out.element_count(); ++i) CopyElement(*operands[2], 0, out, i);
  Literal current(Shape::Array(type, {})), candidate(Shape::Array(type, {}));
  Literal value(Shape::Array(type, {})), update(Shape::Array(type, {}));
  std::vector<int64_t> offsets;
  int64_t s = 0;
  for (StridedCounter o(operands[1]->shape().dimensions(), {}); !o.done(); o.Next(), ++s) {
    map.Offsets(o.index(), offsets);
    if (offsets.empty()) continue;
    int64_t best = offsets[0];
    CopyElement(*operands[0], best, current, 0);
    for (size_t k = 1; k < offsets.size(); ++k) {
      CopyElement(*operands[0], offsets[k], candidate, 0);
      const Literal* args[] = {&current, &candidate};
      ASSIGN_OR_RETURN(std::vector<Literal> keep,
                       CallScalarComputation(evaluator, select, args, {&pred, 1}));
      if (keep[0].GetInt(0) == 0) {
        best = offsets[k];
        std::swap(current, candidate);
      }
    }
    CopyElement(out, best, value, 0);
    CopyElement(*operands[1], s, update, 0);
    const Literal* args[] = {&value, &update};
    ASSIGN_OR_RETURN(std::vector<Literal> r,
                     CallScalarComputation(evaluator, scatter, args, {&type, 1}));
    CopyElement(r[0], 0, out, best);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> HandleSelectAndScatter(const HloInstruction& instr,
                                               absl::Span<const Literal* const> operands,
                                               Evaluator& evaluator) {
  if (operands.size() != 3 || instr.called_computations().size() != 2) {
    return InvalidArgument("select-and-scatter takes operand, source, init, select and scatter");
  }
  const Shape& operand = operands[0]->shape();
  const Shape& source = operands[1]->shape();
  const PrimitiveType type = operand.element_type();
  if (!operand.IsArray() || !source.IsArray() || source.element_type() != type ||
      operands[2]->shape().rank() != 0 || operands[2]->shape().element_type() != type ||
      !instr.shape().Compatible(operand)) {
    return InvalidArgument(
        "select-and-scatter: operand, source, init and result must share "
        "the element type, and the result the operand's shape");
  }
  ASSIGN_OR_RETURN(WindowMap map, WindowMap::Create(WindowOf(instr), operand, source));
  Literal out(instr.shape());
  std::optional<ParameterComparison> select =
      MatchParameterComparison(*instr.called_computations()[0], 0, 1, type);
  std::optional<hlo::HloOpcode> scatter =
      MatchScalarCombiner(*instr.called_computations()[1], type);
  if (select.has_value() && scatter.has_value()) {
    RETURN_IF_ERROR(DispatchArrayType(type, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      return WithBinaryOp<ComputeType<T>>(*scatter, type == PrimitiveType::kPred, [&](auto op) {
        SelectAndScatterTyped<T>(map, *select, op, operands, out);
        return absl::OkStatus();
      });
    }));
  } else {
    RETURN_IF_ERROR(SelectAndScatterWithCalls(instr, map, operands, evaluator, out));
  }
  return out;
}

}  // namespace runtime

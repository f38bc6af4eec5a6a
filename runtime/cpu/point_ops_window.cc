// Window ops in the point evaluator (point_evaluator.h).
//
// convolution: like a dot, each asked element gathers its im2col row and its kernel column (the
// executor's plan: ops/convolution_plan.h; zeros for padding and dilation holes) and a batched
// dot of [n, K*I] by [n, K*I] gives the n results.
// reduce-window and select-and-scatter: each asked element becomes a small instance of the same
// op over the box of the input its windows read, with the padding shifted so that the box's
// windows are exactly the original ones (padding and dilation holes included), run by the
// executor's own handler. A reduce-window element needs its one window; a select-and-scatter
// element needs every window that contains it (the box of those windows' positions in the
// source, and the input they read), since any of them may select it. Asked elements with the
// same box sizes and padding are stacked along a new leading dimension with a window of 1.
#include <algorithm>
#include <limits>
#include <map>

#include "hlo/ir/primitive_type.h"
#include "hlo/status_macros.h"
#include "runtime/common/convolution_plan.h"
#include "runtime/common/strided_index.h"
#include "runtime/common/window_geometry.h"
#include "runtime/cpu/point_elements.h"
#include "runtime/cpu/point_ops.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::Shape;
using points::Frame;
using points::Source;

// One dimension of an asked element's sub-problem: window positions [out_lo, out_lo+out_size)
// read input coordinates within [in_lo, in_lo+in_size); `w` is the window over that box.
struct SubDim {
  int64_t in_lo = 0, in_size = 0, out_lo = 0, out_size = 0;
  hlo::WindowDimension w;
};

// The sub-problem of window positions [out_lo, out_hi] of `w` over an input of `input`
// elements; false when those windows read no input element.
bool SubWindow(const hlo::WindowDimension& w, int64_t input, int64_t out_lo, int64_t out_hi,
               SubDim& sub) {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;
  for (int64_t o = out_lo; o <= out_hi; ++o) {
    for (int64_t k = 0; k < w.size; ++k) {
      const int64_t c = WindowCoordinate(w, input, o, k);
      if (c >= 0) lo = std::min(lo, c), hi = std::max(hi, c);
    }
  }
  if (hi < 0) return false;
  sub = SubDim{lo, hi - lo + 1, out_lo, out_hi - out_lo + 1, w};
  // Box element c' sits at c'*base_dilation in the box's dilated space, i.e. at
  // (c' + lo)*base_dilation in the original's: shift the padding by the box and window offsets.
  sub.w.padding_low = w.padding_low - out_lo * w.stride + lo * w.base_dilation;
  const int64_t dilated_window = (w.size - 1) * w.window_dilation + 1;
  const int64_t dilated_input = (sub.in_size - 1) * w.base_dilation + 1;
  sub.w.padding_high =
      (sub.out_size - 1) * w.stride + dilated_window - dilated_input - sub.w.padding_low;
  return true;
}

// The window positions of `w` (over `input` elements, `output` positions) whose windows read
// input coordinate `p`, as [lo, hi]; false when none does.
bool WindowsReading(const hlo::WindowDimension& w, int64_t input, int64_t output, int64_t p,
                    int64_t& lo, int64_t& hi) {
  lo = std::numeric_limits<int64_t>::max();
  hi = -1;
  for (int64_t k = 0; k < w.size; ++k) {
    const int64_t t = p * w.base_dilation + w.padding_low - k * w.window_dilation;
    if (t >= 0 && t % w.stride == 0 && t / w.stride < output &&
        WindowCoordinate(w, input, t / w.stride, k) == p) {
      lo = std::min(lo, t / w.stride);
      hi = std::max(hi, t / w.stride);
    }
  }
  return hi >= 0;
}

Shape Stacked(hlo::PrimitiveType type, int64_t m, const std::vector<SubDim>& dims, bool input) {
  std::vector<int64_t> sizes = {m};
  for (const SubDim& d : dims) sizes.push_back(input ? d.in_size : d.out_size);
  return Shape::Array(type, sizes);
}

Literal Reshaped(Literal flat, const Shape& shape) {
  Literal out(shape);
  *out.mutable_data() = std::move(*flat.mutable_data());
  return out;
}

}  // namespace

namespace points {

// Asked elements sharing a sub-problem's sizes and padding.
struct WindowStack {
  std::vector<SubDim> dims;                // The first member's (sizes and windows are shared).
  std::vector<int64_t> members;            // Positions in the asked list.
  std::vector<std::vector<SubDim>> boxes;  // Each member's.
};

}  // namespace points

namespace {

// The indices into `shape` of the stack's boxes (from .in_lo, or .out_lo), stacked: [m, sizes...].
std::vector<int64_t> BoxIndices(const Shape& shape, const points::WindowStack& stack, bool input) {
  std::vector<int64_t> sizes;
  for (const SubDim& d : stack.dims) sizes.push_back(input ? d.in_size : d.out_size);
  std::vector<int64_t> out;
  std::vector<int64_t> at(shape.rank());
  for (const std::vector<SubDim>& box : stack.boxes) {
    for (StridedCounter c(sizes, {}); !c.done(); c.Next()) {
      for (int64_t d = 0; d < shape.rank(); ++d) {
        at[d] = c.index()[d] + (input ? box[d].in_lo : box[d].out_lo);
      }
      out.push_back(points::Ravel(at.data(), shape.dimensions()));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<Literal> PointOps::StackedWindowOp(PointEvaluator& ev, const HloInstruction& instr,
                                                  int64_t leaf, const Frame* frame,
                                                  const points::WindowStack& stack) {
  const bool reduce = instr.opcode() == HloOpcode::kReduceWindow;
  const int64_t inputs = reduce ? instr.operand_count() / 2 : 1;
  const int64_t m = static_cast<int64_t>(stack.members.size());
  const std::vector<int64_t> box_in = BoxIndices(instr.operand(0)->shape(), stack, true);
  std::vector<Literal> operands;
  for (int64_t j = 0; j < inputs; ++j) {
    ASSIGN_OR_RETURN(Literal values, ev.Get(*instr.operand(j), 0, frame, box_in));
    operands.push_back(
        Reshaped(std::move(values), Stacked(values.shape().element_type(), m, stack.dims, true)));
  }
  if (!reduce) {
    const HloInstruction& source = *instr.operand(1);
    ASSIGN_OR_RETURN(Literal values,
                     ev.Get(source, 0, frame, BoxIndices(source.shape(), stack, false)));
    operands.push_back(
        Reshaped(std::move(values), Stacked(values.shape().element_type(), m, stack.dims, false)));
  }
  for (int64_t j = reduce ? inputs : 2; j < instr.operand_count(); ++j) {
    ASSIGN_OR_RETURN(Literal init, ev.Get(*instr.operand(j), 0, frame, {0}));
    operands.push_back(points::AsScalar(init));
  }
  std::vector<const Literal*> pointers;
  for (const Literal& l : operands) pointers.push_back(&l);
  hlo::Window window;
  window.dimensions.push_back(hlo::WindowDimension{});
  for (const SubDim& d : stack.dims) window.dimensions.push_back(d.w);
  std::vector<Shape> results;
  for (int64_t j = 0; j < inputs; ++j) {
    const hlo::PrimitiveType type = points::LeafAt(instr.shape(), j)->element_type();
    results.push_back(Stacked(type, m, stack.dims, !reduce));
  }
  points::Synthetic synthetic;
  HloInstruction* made =
      synthetic.Like(instr, inputs == 1 ? results[0] : Shape::Tuple(results), pointers);
  made->mutable_attrs()->window = window;
  ASSIGN_OR_RETURN(Literal value, RunHandler(ev, *made, pointers));
  if (inputs == 1) return value;
  return std::move((*value.mutable_tuple_elements())[leaf]);
}

absl::StatusOr<Literal> PointOps::Convolution(PointEvaluator& ev, const HloInstruction& instr,
                                              const Frame* frame,
                                              absl::Span<const int64_t> indices) {
  const HloInstruction* lhs = instr.operand(0);
  const HloInstruction* rhs = instr.operand(1);
  ASSIGN_OR_RETURN(ConvPlan plan, PlanConvolution(instr, lhs->shape(), rhs->shape()));
  const hlo::ConvolutionDimensionNumbers& dn = plan.dn;
  const int64_t cols = plan.columns();
  const int64_t n = static_cast<int64_t>(indices.size());
  RETURN_IF_ERROR(ev.Reserve(2 * n * cols, instr));
  std::vector<Source> lhs_src(n * cols), rhs_src(n * cols);
  std::vector<int64_t> o(instr.shape().rank()), li(lhs->shape().rank()), ri(rhs->shape().rank());
  for (int64_t e = 0; e < n; ++e) {
    points::Unravel(indices[e], instr.shape().dimensions(), o.data());
    const int64_t f = o[dn.output_feature_dimension];
    const int64_t g = f / plan.out_features;
    const int64_t b = o[dn.output_batch_dimension];
    li[dn.input_batch_dimension] = plan.batch_grouped ? g * plan.out_batch + b : b;
    const int64_t feature0 = plan.batch_grouped ? 0 : g * plan.in_features;
    ri[dn.kernel_output_feature_dimension] = f;
    int64_t col = e * cols;
    for (StridedCounter k(plan.kernel_sizes, {}); !k.done(); k.Next()) {
      bool inside = true;
      for (size_t d = 0; d < plan.kernel_sizes.size(); ++d) {
        const int64_t kd = k.index()[d];
        const int64_t c =
            plan.coords[d][o[dn.output_spatial_dimensions[d]] * plan.kernel_sizes[d] + kd];
        inside = inside && c >= 0;
        li[dn.input_spatial_dimensions[d]] = c;
        ri[dn.kernel_spatial_dimensions[d]] = plan.reversed[d] ? plan.kernel_sizes[d] - 1 - kd : kd;
      }
      for (int64_t i = 0; i < plan.in_features; ++i, ++col) {
        li[dn.input_feature_dimension] = feature0 + i;
        ri[dn.kernel_input_feature_dimension] = i;
        if (inside) {
          lhs_src[col] = Source{lhs, 0, frame, points::Ravel(li.data(), lhs->shape().dimensions())};
        }
        rhs_src[col] = Source{rhs, 0, frame, points::Ravel(ri.data(), rhs->shape().dimensions())};
      }
    }
  }
  ASSIGN_OR_RETURN(Literal l, Fetch(ev, lhs->shape().element_type(), lhs_src));
  ASSIGN_OR_RETURN(Literal r, Fetch(ev, rhs->shape().element_type(), rhs_src));
  const Literal lm = points::AsMatrix(std::move(l), n, cols);
  const Literal rm = points::AsMatrix(std::move(r), n, cols);
  const Literal* operands[] = {&lm, &rm};
  points::Synthetic synthetic;
  HloInstruction* dot =
      synthetic.Make(HloOpcode::kDot, Shape::Array(instr.shape().element_type(), {n}), operands);
  dot->mutable_attrs()->dot_dimension_numbers = hlo::DotDimensionNumbers{{1}, {1}, {0}, {0}};
  dot->set_name(instr.name());
  return RunHandler(ev, *dot, operands);
}

absl::StatusOr<Literal> PointOps::WindowOp(PointEvaluator& ev, const HloInstruction& instr,
                                           int64_t leaf, const Frame* frame,
                                           absl::Span<const int64_t> indices) {
  const bool reduce = instr.opcode() == HloOpcode::kReduceWindow;
  const int64_t inputs = reduce ? instr.operand_count() / 2 : 1;
  const Shape& in_shape = instr.operand(0)->shape();
  const hlo::Window window = instr.attrs().window.value_or(hlo::Window{});
  const int64_t rank = in_shape.rank();
  ASSIGN_OR_RETURN(const Shape* leaf_shape, points::FlatLeafShape(instr, leaf));
  const Shape& positions = reduce ? *leaf_shape : instr.operand(1)->shape();
  if (static_cast<int64_t>(window.dimensions.size()) != rank || positions.rank() != rank) {
    return points::Unsupported(instr, "with a window of another rank");
  }
  // Asked elements whose value is the init value (no window reads them) and the stacks.
  std::vector<int64_t> untouched;
  std::map<std::vector<int64_t>, points::WindowStack> stacks;
  std::vector<int64_t> at(rank);
  for (size_t e = 0; e < indices.size(); ++e) {
    points::Unravel(indices[e], reduce ? positions.dimensions() : in_shape.dimensions(), at.data());
    std::vector<SubDim> box(rank);
    std::vector<int64_t> key;
    bool any = true;
    for (int64_t d = 0; d < rank && any; ++d) {
      const hlo::WindowDimension& w = window.dimensions[d];
      int64_t lo = at[d], hi = at[d];
      if (!reduce) {
        any = WindowsReading(w, in_shape.dimensions(d), positions.dimensions(d), at[d], lo, hi);
      }
      any = any && SubWindow(w, in_shape.dimensions(d), lo, hi, box[d]);
      key.insert(key.end(),
                 {box[d].in_size, box[d].out_size, box[d].w.padding_low, box[d].w.padding_high});
    }
    if (!any) {
      untouched.push_back(static_cast<int64_t>(e));
      continue;
    }
    points::WindowStack& stack = stacks[key];
    if (stack.members.empty()) stack.dims = box;
    stack.members.push_back(static_cast<int64_t>(e));
    stack.boxes.push_back(std::move(box));
  }
  const hlo::PrimitiveType type = leaf_shape->element_type();
  const int width = hlo::ByteWidth(type);
  Literal out(Shape::Array(type, {static_cast<int64_t>(indices.size())}));
  if (!untouched.empty()) {
    const HloInstruction& init = *instr.operand(reduce ? inputs + leaf : 2);
    ASSIGN_OR_RETURN(Literal value, ev.Get(init, 0, frame, {0}));
    for (int64_t e : untouched) points::SetBits(out, e, width, points::BitsAt(value, 0, width));
  }
  for (const auto& [key, stack] : stacks) {
    ASSIGN_OR_RETURN(Literal values, StackedWindowOp(ev, instr, leaf, frame, stack));
    // The asked element's place in the stacked result.
    for (size_t j = 0; j < stack.members.size(); ++j) {
      const int64_t e = stack.members[j];
      int64_t place = static_cast<int64_t>(j);
      if (!reduce) {
        points::Unravel(indices[e], in_shape.dimensions(), at.data());
        for (int64_t d = 0; d < rank; ++d) {
          place = place * stack.dims[d].in_size + at[d] - stack.boxes[j][d].in_lo;
        }
      }
      points::SetBits(out, e, width, points::BitsAt(values, place, width));
    }
  }
  return out;
}

}  // namespace runtime

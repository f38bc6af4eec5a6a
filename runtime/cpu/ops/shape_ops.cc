// Data-movement opcodes that keep every element: every op with a strided view (transpose,
// broadcast, slice, reverse, reshape: one generic handler), bitcast, concatenate, plus iota
// and get-dimension-size.
//
// All of them except iota are byte moves, so they work for every element type. Each one is a
// StridedCopy (strided_copy.h) through the index map of runtime/common/strided_view.h (shared
// with the point evaluator and the CUDA executor): the ops with a `SourceViewOf` view copy
// through it (attributes checked by shape inference), bitcast between row-major layouts copies
// the bytes unchanged (under other layouts it reorders through the physical order), and
// concatenate copies each operand into its band of the result (whole rows merge into memcpys).
// The sub-families dynamic-slice/dynamic-update-slice/pad live in slice_ops.cc.
#include <cstring>
#include <vector>

#include "hlo/ir/shape_inference.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/strided_index.h"
#include "runtime/common/strided_view.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/op_registry.h"
#include "runtime/cpu/ops/elementwise_kernels.h"
#include "runtime/cpu/ops/family_registration.h"
#include "runtime/cpu/ops/strided_copy.h"

namespace runtime {
namespace {

using elementwise::CheckArrayOperands;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(message); }

// Checks that the result is an array of the operand's element type.
absl::Status CheckSameElementType(const HloInstruction& instr, const Literal& operand) {
  if (!instr.shape().IsArray() || instr.shape().element_type() != operand.shape().element_type()) {
    return Invalid(hlo::StrCat("result shape ", instr.shape().ToString(),
                               " must have the element type of operand ",
                               operand.shape().ToString()));
  }
  return absl::OkStatus();
}

// Transposes the row-major array `src` with `dims` so that result dimension i is source
// dimension perm[i], writing the row-major result to `dst`.
void PermutedCopy(const uint8_t* src, absl::Span<const int64_t> dims,
                  absl::Span<const int64_t> perm, uint8_t* dst, int64_t element_bytes) {
  const StridedView view = TransposeView(dims, perm);
  CopyView(src, view, dst, StridedView{0, RowMajorStrides(view.sizes), view.sizes}, element_bytes);
}

// bitcast between row-major layouts: the same bytes under a new shape.
absl::StatusOr<Literal> HandleReshape(const HloInstruction& instr,
                                      absl::Span<const Literal* const> operands, Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  const Literal& in = *operands[0];
  if (!instr.shape().IsArray() ||
      instr.shape().byte_size() != static_cast<int64_t>(in.data().size())) {
    return Invalid(hlo::StrCat("cannot reshape ", in.shape().ToString(), " to ",
                               instr.shape().ToString(), ": the sizes differ"));
  }
  Literal out(instr.shape());
  *out.mutable_data() = in.data();
  return out;
}

// The dimensions of `shape` from most to least major in memory (row-major without a layout).
std::vector<int64_t> MajorToMinor(const Shape& shape) {
  if (!shape.has_layout() || shape.layout().minor_to_major.empty()) {
    std::vector<int64_t> order(shape.rank());
    for (int64_t d = 0; d < shape.rank(); ++d) order[d] = d;
    return order;
  }
  const auto& minor_to_major = shape.layout().minor_to_major;
  return std::vector<int64_t>(minor_to_major.rbegin(), minor_to_major.rend());
}

// bitcast reinterprets the physical buffer, so with non-row-major layouts it is a reshape of
// the arrays in memory order: operand -> its physical order -> result's physical order ->
// result's logical order. Example: f32[2,3]{0,1} bitcast to f32[3,2]{1,0} is a transpose.
absl::StatusOr<Literal> HandleBitcast(const HloInstruction& instr,
                                      absl::Span<const Literal* const> operands,
                                      Evaluator& evaluator) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  const Shape& in_shape = instr.operand(0)->shape();
  const Shape& out_shape = instr.shape();
  const std::vector<int64_t> in_order = MajorToMinor(in_shape);
  const std::vector<int64_t> out_order = MajorToMinor(out_shape);
  auto is_identity = [](const std::vector<int64_t>& order) {
    for (size_t i = 0; i < order.size(); ++i) {
      if (order[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  };
  const bool tiled = (in_shape.has_layout() && !in_shape.layout().tiles.empty()) ||
                     (out_shape.has_layout() && !out_shape.layout().tiles.empty());
  if (!tiled && is_identity(in_order) && is_identity(out_order)) {
    return HandleReshape(instr, operands, evaluator);
  }
  const Literal& in = *operands[0];
  if (tiled || !out_shape.IsArray() || in.shape().rank() != in_shape.rank() ||
      static_cast<int64_t>(in_order.size()) != in_shape.rank() ||
      static_cast<int64_t>(out_order.size()) != out_shape.rank() ||
      hlo::ByteWidth(in_shape.element_type()) != hlo::ByteWidth(out_shape.element_type()) ||
      out_shape.byte_size() != static_cast<int64_t>(in.data().size())) {
    return absl::UnimplementedError(hlo::StrCat("bitcast from ", in_shape.ToString(), " to ",
                                                out_shape.ToString(),
                                                " is not supported (tiled layouts, or a size or "
                                                "element-width change under a layout)"));
  }
  const int64_t element_bytes = hlo::ByteWidth(out_shape.element_type());
  std::vector<uint8_t> physical(in.data().size());
  PermutedCopy(in.data().data(), in_shape.dimensions(), in_order, physical.data(), element_bytes);
  // The result's physical array has dimensions out_dims[out_order[k]]; undo that permutation.
  std::vector<int64_t> physical_dims(out_order.size()), inverse(out_order.size());
  for (size_t k = 0; k < out_order.size(); ++k) {
    physical_dims[k] = out_shape.dimensions(out_order[k]);
    inverse[out_order[k]] = static_cast<int64_t>(k);
  }
  Literal out(out_shape);
  PermutedCopy(physical.data(), physical_dims, inverse, out.mutable_data()->data(), element_bytes);
  return out;
}

// Every op with a strided view (runtime/common/strided_view.h: transpose, broadcast, slice,
// reverse, reshape): the attributes are checked against the shapes by shape inference, then the
// result is one copy through the view. Registered for each opcode HasSourceView accepts.
absl::StatusOr<Literal> HandleSourceView(const HloInstruction& instr,
                                         absl::Span<const Literal* const> operands, Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  const Literal& in = *operands[0];
  RETURN_IF_ERROR(CheckSameElementType(instr, in));
  if (!in.shape().Compatible(instr.operand(0)->shape())) {
    return Invalid(hlo::StrCat("operand ", in.shape().ToString(), " is not the declared ",
                               instr.operand(0)->shape().ToString()));
  }
  ASSIGN_OR_RETURN(const Shape inferred, hlo::InferShape(instr));
  if (!inferred.Compatible(instr.shape())) {
    return Invalid(hlo::StrCat("result ", instr.shape().ToString(), " is not the inferred ",
                               inferred.ToString()));
  }
  Literal out(instr.shape());
  if (out.data().empty()) return out;
  CopyView(in.data().data(), *SourceViewOf(instr), out.mutable_data()->data(),
           ReshapeView(instr.shape()), hlo::ByteWidth(instr.shape().element_type()));
  return out;
}

absl::StatusOr<Literal> HandleConcatenate(const HloInstruction& instr,
                                          absl::Span<const Literal* const> operands, Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, operands.size()));
  const Shape& out_shape = instr.shape();
  if (operands.empty() || instr.dimensions().size() != 1 || !out_shape.IsArray()) {
    return Invalid("concatenate needs operands and one dimension");
  }
  const int64_t dim = instr.dimensions()[0];
  if (dim < 0 || dim >= out_shape.rank()) {
    return Invalid(hlo::StrCat("concatenate dimension ", dim, " is out of range"));
  }
  int64_t filled = 0;  // Result positions along `dim` taken by the operands so far.
  std::vector<const Shape*> shapes;
  for (const Literal* operand : operands) {
    RETURN_IF_ERROR(CheckSameElementType(instr, *operand));
    const Shape& in_shape = operand->shape();
    bool fits = in_shape.rank() == out_shape.rank();
    for (int64_t d = 0; fits && d < out_shape.rank(); ++d) {
      fits = d == dim || in_shape.dimensions(d) == out_shape.dimensions(d);
    }
    if (!fits || filled + in_shape.dimensions(dim) > out_shape.dimensions(dim)) {
      return Invalid(hlo::StrCat("operand ", operand->shape().ToString(), " does not fit result ",
                                 out_shape.ToString(), " along dimension ", dim));
    }
    filled += in_shape.dimensions(dim);
    shapes.push_back(&in_shape);
  }
  if (filled != out_shape.dimensions(dim)) {
    return Invalid(hlo::StrCat("operands do not fill result ", out_shape.ToString(),
                               " along dimension ", dim));
  }
  Literal out(out_shape);
  const std::vector<Placement> placements = ConcatenatePlacements(shapes, dim);
  for (size_t k = 0; k < operands.size(); ++k) {
    if (placements[k].empty()) continue;
    CopyView(operands[k]->data().data(), placements[k].OperandView(*shapes[k]),
             out.mutable_data()->data(), placements[k].ResultView(out_shape),
             hlo::ByteWidth(out_shape.element_type()));
  }
  return out;
}

// Writes each element's index along `dim` into `out` (for pred, whether the index is nonzero).
template <typename T>
void FillIota(Literal& out, int64_t dim, bool is_pred) {
  const Shape& shape = out.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape.dimensions(d);
  for (int64_t d = dim + 1; d < shape.rank(); ++d) inner *= shape.dimensions(d);
  const int64_t size = shape.dimensions(dim);
  T* data = MutableData<T>(out);
  using C = ComputeType<T>;
  int64_t i = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < size; ++k) {
      C value;
      if constexpr (elementwise::kIsComplex<C>) {
        value = C(static_cast<typename C::value_type>(k), 0);
      } else {
        value = static_cast<C>(is_pred ? k != 0 : k);
      }
      for (int64_t j = 0; j < inner; ++j) elementwise::StoreValue(data, i++, value);
    }
  }
}

absl::StatusOr<Literal> HandleIota(const HloInstruction& instr, absl::Span<const Literal* const>,
                                   Evaluator&) {
  const Shape& shape = instr.shape();
  const int64_t dim = instr.attrs().iota_dimension;
  if (!shape.IsArray() || dim < 0 || dim >= shape.rank()) {
    return Invalid(hlo::StrCat("iota_dimension ", dim, " is out of range for ", shape.ToString()));
  }
  Literal out(shape);
  const bool is_pred = shape.element_type() == PrimitiveType::kPred;
  RETURN_IF_ERROR(DispatchArrayType(shape.element_type(), [&](auto tag) -> absl::Status {
    FillIota<typename decltype(tag)::type>(out, dim, is_pred);
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<Literal> HandleGetDimensionSize(const HloInstruction& instr,
                                               absl::Span<const Literal* const> operands,
                                               Evaluator&) {
  RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  const Shape& shape = operands[0]->shape();
  if (instr.dimensions().size() != 1 || instr.dimensions()[0] < 0 ||
      instr.dimensions()[0] >= shape.rank()) {
    return Invalid(hlo::StrCat("get-dimension-size needs one dimension of ", shape.ToString()));
  }
  if (!instr.shape().Compatible(Shape::Array(PrimitiveType::kS32, {}))) {
    return Invalid(
        hlo::StrCat("get-dimension-size must return s32[], not ", instr.shape().ToString()));
  }
  Literal out(instr.shape());
  const auto size = static_cast<int32_t>(shape.dimensions(instr.dimensions()[0]));
  std::memcpy(out.mutable_data()->data(), &size, sizeof(size));
  return out;
}

}  // namespace

void RegisterShapeOps(OpTable& table) {
  for (HloOpcode opcode : SourceViewOpcodes()) table[opcode] = &HandleSourceView;
  table[HloOpcode::kBitcast] = &HandleBitcast;
  table[HloOpcode::kConcatenate] = &HandleConcatenate;
  table[HloOpcode::kIota] = &HandleIota;
  table[HloOpcode::kGetDimensionSize] = &HandleGetDimensionSize;
  RegisterSliceOps(table);
}

}  // namespace runtime

// Shape <-> ShapeProto and ProgramShape <-> ProgramShapeProto.
//
// PrimitiveType values are XLA's, so element types convert by value. Layout presence is the
// proto's submessage presence (a rank-0 array may carry the empty layout `{}`). Reading checks
// the element type against the types the IR knows, dimension sizes, the dynamic-dimension
// list and the layout permutation, so no later pass can index out of range.
#include <algorithm>

#include "hlo/proto/hlo_proto_util.h"
#include "hlo/proto/proto_internal.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {

using proto_internal::AssignRepeated;
using proto_internal::ToInt64Vector;

xla::ShapeProto ShapeToProto(const Shape& shape) {
  xla::ShapeProto proto;
  proto.set_element_type(static_cast<xla::PrimitiveType>(shape.element_type()));
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      *proto.add_tuple_shapes() = ShapeToProto(element);
    }
    return proto;
  }
  if (!shape.IsArray()) return proto;
  AssignRepeated(shape.dimensions(), proto.mutable_dimensions());
  for (bool dynamic : shape.dynamic_dimensions()) proto.add_is_dynamic_dimension(dynamic);
  if (shape.has_layout()) {
    const Layout& layout = shape.layout();
    xla::LayoutProto* out = proto.mutable_layout();
    AssignRepeated(layout.minor_to_major, out->mutable_minor_to_major());
    for (const Tile& tile : layout.tiles) {
      AssignRepeated(tile.dimensions, out->add_tiles()->mutable_dimensions());
    }
    out->set_element_size_in_bits(layout.element_size_in_bits);
    out->set_memory_space(layout.memory_space);
  }
  return proto;
}

namespace {

absl::Status CheckPermutation(const std::vector<int64_t>& minor_to_major, int64_t rank) {
  if (static_cast<int64_t>(minor_to_major.size()) != rank) {
    return absl::InvalidArgumentError(hlo::StrCat("layout minor_to_major has ",
                                                  minor_to_major.size(),
                                                  " entries for a shape of rank ", rank));
  }
  std::vector<bool> seen(rank, false);
  for (int64_t d : minor_to_major) {
    if (d < 0 || d >= rank || seen[d]) {
      return absl::InvalidArgumentError(
          hlo::StrCat("layout minor_to_major is not a permutation of 0..", rank - 1));
    }
    seen[d] = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<Layout> LayoutFromProto(const xla::LayoutProto& proto, int64_t rank) {
  Layout layout;
  layout.minor_to_major = ToInt64Vector(proto.minor_to_major());
  RETURN_IF_ERROR(CheckPermutation(layout.minor_to_major, rank));
  for (const xla::TileProto& tile : proto.tiles()) {
    layout.tiles.push_back(Tile{ToInt64Vector(tile.dimensions())});
  }
  if (proto.element_size_in_bits() < 0) {
    return absl::InvalidArgumentError("layout element_size_in_bits is negative");
  }
  layout.element_size_in_bits = proto.element_size_in_bits();
  layout.memory_space = proto.memory_space();
  return layout;
}

std::string_view TypeLabel(int value) {
  return IsValidPrimitiveType(value) ? PrimitiveTypeName(static_cast<PrimitiveType>(value))
                                     : std::string_view("?");
}

}  // namespace

absl::StatusOr<Shape> ShapeFromProto(const xla::ShapeProto& proto) {
  const int type_value = static_cast<int>(proto.element_type());
  if (!IsValidPrimitiveType(type_value)) {
    return absl::InvalidArgumentError(
        hlo::StrCat("unsupported element type ", type_value, " in shape"));
  }
  const PrimitiveType type = static_cast<PrimitiveType>(type_value);
  if (type != PrimitiveType::kTuple && proto.tuple_shapes_size() > 0) {
    return absl::InvalidArgumentError(
        hlo::StrCat("a ", TypeLabel(type_value), " shape has tuple_shapes"));
  }
  if (!IsArrayType(type) &&
      (proto.dimensions_size() > 0 || proto.is_dynamic_dimension_size() > 0)) {
    return absl::InvalidArgumentError(
        hlo::StrCat("a ", TypeLabel(type_value), " shape has dimensions"));
  }
  if (type == PrimitiveType::kTuple) {
    std::vector<Shape> elements;
    elements.reserve(proto.tuple_shapes_size());
    for (const xla::ShapeProto& element : proto.tuple_shapes()) {
      ASSIGN_OR_RETURN(Shape shape, ShapeFromProto(element));
      elements.push_back(std::move(shape));
    }
    return Shape::Tuple(std::move(elements));
  }
  if (type == PrimitiveType::kToken) return Shape::Token();
  if (type == PrimitiveType::kOpaque) return Shape::Opaque();
  std::vector<int64_t> dims = ToInt64Vector(proto.dimensions());
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError(hlo::StrCat("negative dimension size ", d));
  }
  Shape shape = Shape::Array(type, dims);
  if (proto.is_dynamic_dimension_size() > 0) {
    if (proto.is_dynamic_dimension_size() != static_cast<int>(dims.size())) {
      return absl::InvalidArgumentError(hlo::StrCat("is_dynamic_dimension has ",
                                                    proto.is_dynamic_dimension_size(),
                                                    " entries for a shape of rank ", dims.size()));
    }
    for (int i = 0; i < proto.is_dynamic_dimension_size(); ++i) {
      shape.set_dynamic_dimension(i, proto.is_dynamic_dimension(i));
    }
  }
  if (proto.has_layout()) {
    ASSIGN_OR_RETURN(Layout layout, LayoutFromProto(proto.layout(), shape.rank()));
    shape.set_layout(std::move(layout));
  }
  return shape;
}

xla::ProgramShapeProto ProgramShapeToProto(const ProgramShape& shape) {
  xla::ProgramShapeProto proto;
  for (const Shape& parameter : shape.parameters) *proto.add_parameters() = ShapeToProto(parameter);
  for (const std::string& name : shape.parameter_names) proto.add_parameter_names(name);
  *proto.mutable_result() = ShapeToProto(shape.result);
  return proto;
}

absl::StatusOr<ProgramShape> ProgramShapeFromProto(const xla::ProgramShapeProto& proto) {
  ProgramShape shape;
  for (int i = 0; i < proto.parameters_size(); ++i) {
    absl::StatusOr<Shape> parameter = ShapeFromProto(proto.parameters(i));
    if (!parameter.ok()) {
      return absl::InvalidArgumentError(
          hlo::StrCat("program shape parameter ", i, ": ", parameter.status().message()));
    }
    shape.parameters.push_back(*std::move(parameter));
  }
  shape.parameter_names.assign(proto.parameter_names().begin(), proto.parameter_names().end());
  absl::StatusOr<Shape> result = ShapeFromProto(proto.result());
  if (!result.ok()) {
    return absl::InvalidArgumentError(
        hlo::StrCat("program shape result: ", result.status().message()));
  }
  shape.result = *std::move(result);
  return shape;
}

}  // namespace hlo

// Shapes of HLO values: arrays (element type, dimensions, optional layout) and tuples.
//
// A Shape is a plain value type. Arrays carry their dimension sizes, which dimensions are
// dynamic (bounded, printed `<=N`), and an optional Layout (minor-to-major order, tiles, memory
// space). Tuples hold their element shapes. Token and opaque shapes have neither.
#ifndef HLO_IR_SHAPE_H_
#define HLO_IR_SHAPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/primitive_type.h"

namespace hlo {

// One tile of a tiled layout, e.g. the `T(8,128)` of `{1,0:T(8,128)}`.
struct Tile {
  std::vector<int64_t> dimensions;
  bool operator==(const Tile& o) const { return dimensions == o.dimensions; }
};

// Physical layout of an array: `{minor_to_major:T(tile)...E(bits)S(space)}`.
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<Tile> tiles;
  int64_t element_size_in_bits = 0;
  int64_t memory_space = 0;

  bool operator==(const Layout& o) const {
    return minor_to_major == o.minor_to_major && tiles == o.tiles &&
           element_size_in_bits == o.element_size_in_bits && memory_space == o.memory_space;
  }
  bool operator!=(const Layout& o) const { return !(*this == o); }
  // The descending layout {rank-1, ..., 0} (row-major).
  static Layout Default(int64_t rank);
};

class Shape {
 public:
  Shape() = default;
  // An array shape with static dimensions and no layout. REQUIRES: IsArrayType(type).
  static Shape Array(PrimitiveType type, absl::Span<const int64_t> dims);
  // An array shape with the default (row-major) layout.
  static Shape ArrayWithLayout(PrimitiveType type, absl::Span<const int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  static Shape Opaque();

  PrimitiveType element_type() const { return element_type_; }
  bool IsArray() const { return IsArrayType(element_type_); }
  bool IsTuple() const { return element_type_ == PrimitiveType::kTuple; }
  bool IsToken() const { return element_type_ == PrimitiveType::kToken; }
  bool IsOpaque() const { return element_type_ == PrimitiveType::kOpaque; }

  // Array accessors.
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<int64_t>& dimensions() const { return dims_; }
  int64_t dimensions(int64_t i) const { return dims_[i]; }
  void set_dimension(int64_t i, int64_t size) { dims_[i] = size; }
  const std::vector<bool>& dynamic_dimensions() const { return dynamic_; }
  bool is_dynamic_dimension(int64_t i) const { return dynamic_[i]; }
  void set_dynamic_dimension(int64_t i, bool dynamic) { dynamic_[i] = dynamic; }
  bool has_layout() const { return layout_.has_value(); }
  const Layout& layout() const { return *layout_; }
  Layout* mutable_layout() { return layout_ ? &*layout_ : nullptr; }
  void set_layout(Layout layout) { layout_ = std::move(layout); }
  void clear_layout() { layout_.reset(); }
  // Number of elements of an array (product of the dimensions).
  int64_t num_elements() const;
  // Bytes of an array's dense buffer; for a tuple, the sum over its leaves.
  int64_t byte_size() const;

  // Tuple accessors.
  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  std::vector<Shape>* mutable_tuple_shapes() { return &tuple_shapes_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_shapes_[i]; }
  int64_t tuple_shapes_size() const { return static_cast<int64_t>(tuple_shapes_.size()); }

  // Number of array/token leaves, flattened in order (a tuple of tuples counts leaves).
  int64_t leaf_count() const;
  // The leaves themselves, in the same order.
  std::vector<Shape> leaf_shapes() const;
  // The leaves as pointers into this shape, in the same order (valid while it lives).
  std::vector<const Shape*> leaves() const;

  // HLO text: `f32[2,3]{1,0}`, `(f32[], s32[4])`, `token[]`. Layouts are printed when present.
  std::string ToString(bool print_layout = true) const;
  void AppendTo(std::string* out, bool print_layout = true) const;

  // Equality including layouts and dynamic dimensions.
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  // Equality ignoring layouts (types, dimensions and tuple structure).
  bool Compatible(const Shape& o) const;

 private:
  PrimitiveType element_type_ = PrimitiveType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_shapes_;
};

// Row-major strides (in elements) of an array with dimensions `dims`: the last dim is the
// minor one.
inline std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

}  // namespace hlo

#endif  // HLO_IR_SHAPE_H_

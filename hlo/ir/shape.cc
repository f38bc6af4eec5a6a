// Shape construction, comparison and printing.
#include "hlo/ir/shape.h"

#include "hlo/strings.h"

namespace hlo {

Layout Layout::Default(int64_t rank) {
  Layout layout;
  for (int64_t i = rank - 1; i >= 0; --i) layout.minor_to_major.push_back(i);
  return layout;
}

Shape Shape::Array(PrimitiveType type, absl::Span<const int64_t> dims) {
  Shape s;
  s.element_type_ = type;
  s.dims_.assign(dims.begin(), dims.end());
  s.dynamic_.assign(dims.size(), false);
  return s;
}

Shape Shape::ArrayWithLayout(PrimitiveType type, absl::Span<const int64_t> dims) {
  Shape s = Array(type, dims);
  s.layout_ = Layout::Default(static_cast<int64_t>(dims.size()));
  return s;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.element_type_ = PrimitiveType::kTuple;
  s.tuple_shapes_ = std::move(elements);
  return s;
}

Shape Shape::Token() {
  Shape s;
  s.element_type_ = PrimitiveType::kToken;
  return s;
}

Shape Shape::Opaque() {
  Shape s;
  s.element_type_ = PrimitiveType::kOpaque;
  return s;
}

int64_t Shape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

int64_t Shape::byte_size() const {
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : tuple_shapes_) total += s.byte_size();
    return total;
  }
  if (!IsArray()) return 0;
  return num_elements() * ByteWidth(element_type_);
}

int64_t Shape::leaf_count() const {
  if (!IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& s : tuple_shapes_) n += s.leaf_count();
  return n;
}

std::vector<Shape> Shape::leaf_shapes() const {
  std::vector<Shape> shapes;
  for (const Shape* leaf : leaves()) shapes.push_back(*leaf);
  return shapes;
}

std::vector<const Shape*> Shape::leaves() const {
  std::vector<const Shape*> out;
  std::vector<const Shape*> stack = {this};
  while (!stack.empty()) {
    const Shape* s = stack.back();
    stack.pop_back();
    if (!s->IsTuple()) {
      out.push_back(s);
      continue;
    }
    for (auto it = s->tuple_shapes_.rbegin(); it != s->tuple_shapes_.rend(); ++it) {
      stack.push_back(&*it);
    }
  }
  return out;
}

namespace {

void AppendInts(std::string* out, const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out->push_back(',');
    StrAppend(out, v[i]);
  }
}

void AppendLayout(const Layout& layout, std::string* out) {
  out->push_back('{');
  AppendInts(out, layout.minor_to_major);
  bool colon = false;
  auto start_suffix = [&] {
    if (!colon) out->push_back(':');
    colon = true;
  };
  for (const Tile& tile : layout.tiles) {
    start_suffix();
    out->append("T(");
    AppendInts(out, tile.dimensions);
    out->push_back(')');
  }
  if (layout.element_size_in_bits != 0) {
    start_suffix();
    StrAppend(out, "E(", layout.element_size_in_bits, ")");
  }
  if (layout.memory_space != 0) {
    start_suffix();
    StrAppend(out, "S(", layout.memory_space, ")");
  }
  out->push_back('}');
}

}  // namespace

void Shape::AppendTo(std::string* out, bool print_layout) const {
  if (IsTuple()) {
    out->push_back('(');
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (i) out->append(", ");
      tuple_shapes_[i].AppendTo(out, print_layout);
    }
    out->push_back(')');
    return;
  }
  out->append(PrimitiveTypeName(element_type_));
  if (!IsArray()) {
    if (IsToken() || IsOpaque()) out->append("[]");
    return;
  }
  out->push_back('[');
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out->push_back(',');
    if (dynamic_[i]) out->append("<=");
    StrAppend(out, dims_[i]);
  }
  out->push_back(']');
  if (print_layout && layout_) AppendLayout(*layout_, out);
}

std::string Shape::ToString(bool print_layout) const {
  std::string out;
  AppendTo(&out, print_layout);
  return out;
}

bool Shape::operator==(const Shape& o) const {
  return element_type_ == o.element_type_ && dims_ == o.dims_ && dynamic_ == o.dynamic_ &&
         layout_ == o.layout_ && tuple_shapes_ == o.tuple_shapes_;
}

bool Shape::Compatible(const Shape& o) const {
  if (element_type_ != o.element_type_ || dims_ != o.dims_) return false;
  if (tuple_shapes_.size() != o.tuple_shapes_.size()) return false;
  for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
    if (!tuple_shapes_[i].Compatible(o.tuple_shapes_[i])) return false;
  }
  return true;
}

}  // namespace hlo

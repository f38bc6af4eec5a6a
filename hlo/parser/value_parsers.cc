// Shape, literal and compact-attribute parsing (see value_parsers.h for the grammar of each).
#include "hlo/parser/value_parsers.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "absl/container/inlined_vector.h"
#include "hlo/strings.h"
#include "hlo/status_macros.h"

namespace hlo {
namespace {

absl::Status ParseLayoutInto(TextCursor& c, Shape* shape) {
  Layout layout;
  layout.minor_to_major.reserve(shape->rank());
  RETURN_IF_ERROR(c.Expect('{', "to start a layout"));
  if (c.Peek() != ':' && c.Peek() != '}') {
    do {
      ASSIGN_OR_RETURN(int64_t d, c.ParseInt("layout dimension"));
      layout.minor_to_major.push_back(d);
    } while (c.TryConsume(','));
  }
  if (c.TryConsume(':')) {
    while (c.Peek() != '}' && !c.AtEnd()) {
      size_t at = c.pos();
      std::string_view key = c.ParseWord();
      RETURN_IF_ERROR(c.Expect('(', "after a layout attribute"));
      if (key == "T") {
        Tile tile;
        do {
          ASSIGN_OR_RETURN(int64_t d, c.ParseInt("tile dimension"));
          tile.dimensions.push_back(d);
        } while (c.TryConsume(','));
        layout.tiles.push_back(std::move(tile));
      } else if (key == "E") {
        ASSIGN_OR_RETURN(layout.element_size_in_bits, c.ParseInt("element size"));
      } else if (key == "S") {
        ASSIGN_OR_RETURN(layout.memory_space, c.ParseInt("memory space"));
      } else {
        return c.ErrorAt(at, StrCat("unsupported layout attribute '", key, "'"));
      }
      RETURN_IF_ERROR(c.Expect(')', "to close a layout attribute"));
    }
  }
  RETURN_IF_ERROR(c.Expect('}', "to close a layout"));
  if (static_cast<int64_t>(layout.minor_to_major.size()) != shape->rank() &&
      !layout.minor_to_major.empty()) {
    return c.Error(StrCat("layout has ", layout.minor_to_major.size(),
                                " dimensions but the shape has rank ", shape->rank()));
  }
  shape->set_layout(std::move(layout));
  return absl::OkStatus();
}

}  // namespace

bool LooksLikeShape(TextCursor& c) {
  char first = c.Peek();
  if (first == '(') return true;
  size_t start = c.pos();
  std::string_view word = c.ParseWord();
  bool is_shape = !word.empty() && c.RawPeek() == '[' && PrimitiveTypeFromName(word).has_value();
  c.set_pos(start);
  return is_shape;
}

namespace {

// How deeply tuple shapes and array literals may nest. Deeper text is an error rather than a
// recursion that overflows the stack; real HLO nests a few levels.
constexpr int kMaxNesting = 256;

// ParseShape for a shape inside `depth` enclosing tuples.
absl::StatusOr<Shape> ParseShapeNested(TextCursor& c, int depth) {
  if (c.TryConsume('(')) {
    if (depth >= kMaxNesting) {
      return c.Error(StrCat("tuple shapes nest more than ", kMaxNesting, " levels deep"));
    }
    std::vector<Shape> elements;
    if (!c.TryConsume(')')) {
      do {
        ASSIGN_OR_RETURN(Shape s, ParseShapeNested(c, depth + 1));
        elements.push_back(std::move(s));
      } while (c.TryConsume(','));
      RETURN_IF_ERROR(c.Expect(')', "to close a tuple shape"));
    }
    return Shape::Tuple(std::move(elements));
  }
  size_t at = c.pos();
  std::string_view word = c.ParseWord();
  std::optional<PrimitiveType> type = PrimitiveTypeFromName(word);
  if (!type || *type == PrimitiveType::kTuple) {
    return c.ErrorAt(at, StrCat("expected a shape, found '", word, "'"));
  }
  if (c.RawPeek() != '[') return c.Error("expected '[' after the element type of a shape");
  c.set_pos(c.pos() + 1);
  if (*type == PrimitiveType::kToken || *type == PrimitiveType::kOpaque) {
    RETURN_IF_ERROR(c.Expect(']', "after token/opaque"));
    return *type == PrimitiveType::kToken ? Shape::Token() : Shape::Opaque();
  }
  // Inline storage: most shapes have few dimensions, and this runs for every instruction.
  absl::InlinedVector<int64_t, 8> dims;
  absl::InlinedVector<bool, 8> dynamic;
  if (!c.TryConsume(']')) {
    do {
      bool is_dynamic = false;
      if (c.Peek() == '<' && c.RawPeek(1) == '=') {
        c.set_pos(c.pos() + 2);
        is_dynamic = true;
      } else if (c.Peek() == '?') {
        return c.Error("unbounded dynamic dimensions ('?') are not supported");
      }
      ASSIGN_OR_RETURN(int64_t d, c.ParseInt("dimension size"));
      if (d < 0) return c.Error("dimension sizes must be non-negative");
      dims.push_back(d);
      dynamic.push_back(is_dynamic);
    } while (c.TryConsume(','));
    RETURN_IF_ERROR(c.Expect(']', "to close the dimensions of a shape"));
  }
  Shape shape = Shape::Array(*type, dims);
  for (size_t i = 0; i < dynamic.size(); ++i) shape.set_dynamic_dimension(i, dynamic[i]);
  if (c.RawPeek() == '{') RETURN_IF_ERROR(ParseLayoutInto(c, &shape));
  return shape;
}

}  // namespace

absl::StatusOr<Shape> ParseShape(TextCursor& c) { return ParseShapeNested(c, 0); }

namespace {

absl::Status ParseScalarInto(TextCursor& c, Literal* literal, int64_t index) {
  PrimitiveType t = literal->shape().element_type();
  if (t == PrimitiveType::kPred) {
    if (c.TryConsumeWord("true")) return literal->SetInt(index, 1), absl::OkStatus();
    if (c.TryConsumeWord("false")) return literal->SetInt(index, 0), absl::OkStatus();
    ASSIGN_OR_RETURN(int64_t v, c.ParseInt("pred value"));
    if (v != 0 && v != 1) return c.Error("a pred value must be 0, 1, true or false");
    literal->SetInt(index, v);
    return absl::OkStatus();
  }
  if (IsComplexType(t)) {
    RETURN_IF_ERROR(c.Expect('(', "to start a complex value"));
    ASSIGN_OR_RETURN(double re, c.ParseDouble("real part"));
    RETURN_IF_ERROR(c.Expect(',', "between real and imaginary parts"));
    ASSIGN_OR_RETURN(double im, c.ParseDouble("imaginary part"));
    RETURN_IF_ERROR(c.Expect(')', "to close a complex value"));
    literal->SetComplex(index, {re, im});
    return absl::OkStatus();
  }
  if (IsFloatingPointType(t)) {
    ASSIGN_OR_RETURN(double v, c.ParseDouble("floating-point value"));
    literal->SetDouble(index, v);
    return absl::OkStatus();
  }
  size_t at = c.pos();
  if (t == PrimitiveType::kU64) {
    c.SkipSpace();
    uint64_t v = 0;
    const char* begin = c.text().data() + c.pos();
    auto r = std::from_chars(begin, c.text().data() + c.text().size(), v);
    if (r.ec != std::errc()) return c.Error(StrCat("expected a u64 value, found ", c.Describe()));
    c.set_pos(c.pos() + (r.ptr - begin));
    literal->SetUint(index, v);
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(int64_t v, c.ParseInt("integer value"));
  const int bits = BitWidth(t);
  if (bits < 64) {
    const bool is_signed = IsSignedIntegralType(t);
    const int64_t lo = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
    const int64_t hi = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
    if (v < lo || v > hi) {
      return c.ErrorAt(at, StrCat("value ", v, " is out of range for ",
                                        PrimitiveTypeName(t)));
    }
  }
  literal->SetInt(index, v);
  return absl::OkStatus();
}

// Reads nested braces, storing scalars in row-major order.
absl::Status ParseArrayElements(TextCursor& c, Literal* literal, int64_t depth, int64_t* count) {
  if (c.Peek() != '{') {
    if (*count >= literal->element_count()) {
      return c.Error(StrCat("too many elements for a literal of shape ",
                                  literal->shape().ToString(false)));
    }
    return ParseScalarInto(c, literal, (*count)++);
  }
  if (depth >= literal->shape().rank()) return c.Error("literal nesting is deeper than its rank");
  if (depth >= kMaxNesting) {
    return c.Error(StrCat("array literals nest more than ", kMaxNesting, " levels deep"));
  }
  c.TryConsume('{');
  if (c.TryConsume('}')) return absl::OkStatus();
  do {
    RETURN_IF_ERROR(ParseArrayElements(c, literal, depth + 1, count));
  } while (c.TryConsume(','));
  return c.Expect('}', "to close a literal array");
}

// The most bytes one constant may hold. Text asking for more is rejected rather than allocated:
// a typo such as `f32[100000000000]` must not take the process down.
constexpr int64_t kMaxLiteralBytes = int64_t{1} << 30;

// The bytes a literal of `shape` holds (its arrays, tuples summed), or an error at the cursor if
// that overflows 64 bits or exceeds kMaxLiteralBytes.
absl::StatusOr<int64_t> LiteralBytes(TextCursor& c, const Shape& shape) {
  auto too_big = [&] {
    return c.Error(StrCat("a constant of shape ", shape.ToString(false), " exceeds the ",
                          kMaxLiteralBytes, "-byte limit for literals"));
  };
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : shape.tuple_shapes()) {
      ASSIGN_OR_RETURN(int64_t bytes, LiteralBytes(c, element));
      total += bytes;  // Each term is at most kMaxLiteralBytes: no overflow before the check.
      if (total > kMaxLiteralBytes) return too_big();
    }
    return total;
  }
  if (!shape.IsArray()) return 0;
  for (int64_t d : shape.dimensions()) {
    if (d == 0) return 0;
  }
  int64_t bytes = ByteWidth(shape.element_type());
  for (int64_t d : shape.dimensions()) {
    if (bytes > kMaxLiteralBytes / d) return too_big();
    bytes *= d;
  }
  return bytes;
}

}  // namespace

absl::StatusOr<Literal> ParseLiteral(TextCursor& c, const Shape& shape) {
  // Literal(shape) allocates every array of `shape` at once, so check the size first.
  RETURN_IF_ERROR(LiteralBytes(c, shape).status());
  if (shape.IsTuple()) {
    Literal literal(shape);
    RETURN_IF_ERROR(c.Expect('(', "to start a tuple literal"));
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i) RETURN_IF_ERROR(c.Expect(',', "between tuple literal elements"));
      if (LooksLikeShape(c)) RETURN_IF_ERROR(ParseShape(c).status());  // Optional element type.
      ASSIGN_OR_RETURN((*literal.mutable_tuple_elements())[i],
                       ParseLiteral(c, shape.tuple_shapes(i)));
    }
    RETURN_IF_ERROR(c.Expect(')', "to close a tuple literal"));
    return literal;
  }
  if (!shape.IsArray()) return c.Error("constants must have an array or tuple shape");
  Shape plain = shape;
  plain.clear_layout();
  if (c.Peek() == '{' && c.text().substr(c.pos(), 5) == "{...}") {
    c.set_pos(c.pos() + 5);  // An elided constant (XLA's dumps): zeros stand in.
    return Literal(shape);
  }
  const bool splat = c.Peek() != '{';
  // Each element of the braced form takes at least one character of the text.
  if (!splat && plain.num_elements() > static_cast<int64_t>(c.text().size() - c.pos())) {
    return c.Error(StrCat("a constant of shape ", shape.ToString(false), " has ",
                          plain.num_elements(), " elements, more than the rest of the text"));
  }
  Literal literal(plain);
  size_t at = c.pos();
  int64_t count = 0;
  if (splat) {
    // A scalar for an array shape fills every element (XLA's splat form).
    if (literal.element_count() == 0) return c.Error("a scalar cannot fill an empty array");
    RETURN_IF_ERROR(ParseScalarInto(c, &literal, 0));
    // Copy the filled prefix onto the rest, doubling it each time.
    std::vector<uint8_t>& data = *literal.mutable_data();
    for (size_t filled = ByteWidth(plain.element_type()); filled < data.size(); filled *= 2) {
      std::memcpy(data.data() + filled, data.data(), std::min(filled, data.size() - filled));
    }
    return literal;
  }
  RETURN_IF_ERROR(ParseArrayElements(c, &literal, 0, &count));
  if (count != literal.element_count()) {
    return c.ErrorAt(at, StrCat("literal has ", count, " elements but shape ",
                                      shape.ToString(false), " has ", literal.element_count()));
  }
  return literal;
}

absl::StatusOr<Window> ParseWindow(TextCursor& c) {
  Window window;
  RETURN_IF_ERROR(c.Expect('{', "to start a window"));
  auto dim = [&](size_t i) -> WindowDimension& {
    if (window.dimensions.size() <= i) window.dimensions.resize(i + 1);
    return window.dimensions[i];
  };
  while (c.Peek() != '}') {
    size_t at = c.pos();
    std::string_view key = c.ParseWord();
    RETURN_IF_ERROR(c.Expect('=', "after a window field"));
    size_t i = 0;
    do {
      if (key == "pad") {
        ASSIGN_OR_RETURN(dim(i).padding_low, c.ParseInt("window padding"));
        if (c.RawPeek() != '_') return c.Error("expected '_' in window padding low_high");
        c.set_pos(c.pos() + 1);
        ASSIGN_OR_RETURN(dim(i).padding_high, c.ParseInt("window padding"));
      } else {
        ASSIGN_OR_RETURN(int64_t v, c.ParseInt("window field"));
        if (key == "size") dim(i).size = v;
        else if (key == "stride") dim(i).stride = v;
        else if (key == "lhs_dilate") dim(i).base_dilation = v;
        else if (key == "rhs_dilate") dim(i).window_dilation = v;
        else if (key == "rhs_reversal") dim(i).window_reversal = v != 0;
        else return c.ErrorAt(at, StrCat("unknown window field '", key, "'"));
      }
      ++i;
    } while (c.RawPeek() == 'x' && (c.set_pos(c.pos() + 1), true));
    if (c.AtEnd()) break;
  }
  RETURN_IF_ERROR(c.Expect('}', "to close a window"));
  return window;
}

absl::StatusOr<PaddingConfig> ParsePadding(TextCursor& c) {
  PaddingConfig config;
  do {
    PaddingDimension d;
    ASSIGN_OR_RETURN(d.edge_padding_low, c.ParseInt("padding low"));
    if (c.RawPeek() != '_') return c.Error("expected '_' in padding low_high[_interior]");
    c.set_pos(c.pos() + 1);
    ASSIGN_OR_RETURN(d.edge_padding_high, c.ParseInt("padding high"));
    if (c.RawPeek() == '_') {
      c.set_pos(c.pos() + 1);
      ASSIGN_OR_RETURN(d.interior_padding, c.ParseInt("interior padding"));
    }
    config.dimensions.push_back(d);
  } while (c.RawPeek() == 'x' && (c.set_pos(c.pos() + 1), true));
  return config;
}

absl::StatusOr<std::vector<SliceDimension>> ParseSliceRanges(TextCursor& c) {
  std::vector<SliceDimension> dims;
  RETURN_IF_ERROR(c.Expect('{', "to start slice ranges"));
  if (c.TryConsume('}')) return dims;
  do {
    SliceDimension d;
    RETURN_IF_ERROR(c.Expect('[', "to start a slice range"));
    ASSIGN_OR_RETURN(d.start, c.ParseInt("slice start"));
    RETURN_IF_ERROR(c.Expect(':', "in a slice range"));
    ASSIGN_OR_RETURN(d.limit, c.ParseInt("slice limit"));
    if (c.TryConsume(':')) {
      ASSIGN_OR_RETURN(d.stride, c.ParseInt("slice stride"));
    }
    RETURN_IF_ERROR(c.Expect(']', "to close a slice range"));
    dims.push_back(d);
  } while (c.TryConsume(','));
  RETURN_IF_ERROR(c.Expect('}', "to close slice ranges"));
  return dims;
}

namespace {

// Reads one dim_labels group such as `b01f` (text `word` starting at byte `at`): the positions
// of the two letters and of each spatial digit.
absl::Status ParseLabelGroup(TextCursor& c, std::string_view word, size_t at, char a, char b,
                             int64_t* a_dim, int64_t* b_dim, std::vector<int64_t>* spatial) {
  *a_dim = *b_dim = -1;
  std::vector<int64_t> by_digit(word.size(), -1);
  for (size_t i = 0; i < word.size(); ++i) {
    char ch = word[i];
    if (ch == a && *a_dim < 0) {
      *a_dim = static_cast<int64_t>(i);
    } else if (ch == b && *b_dim < 0) {
      *b_dim = static_cast<int64_t>(i);
    } else if (ch >= '0' && ch <= '9' && static_cast<size_t>(ch - '0') < word.size() &&
               by_digit[ch - '0'] < 0) {
      by_digit[ch - '0'] = static_cast<int64_t>(i);
    } else {
      return c.ErrorAt(at + i, StrCat("unexpected character '", std::string(1, ch),
                                            "' in dim_labels"));
    }
  }
  if (*a_dim < 0 || *b_dim < 0) {
    return c.ErrorAt(at, StrCat("dim_labels group '", word, "' must contain '",
                                      std::string(1, a), "' and '", std::string(1, b), "'"));
  }
  for (size_t i = 0; i + 2 < word.size(); ++i) {
    if (by_digit[i] < 0) return c.ErrorAt(at, "dim_labels spatial digits must be 0..n-1");
    spatial->push_back(by_digit[i]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConvolutionDimensionNumbers> ParseDimLabels(TextCursor& c) {
  ConvolutionDimensionNumbers d;
  // '_' is a name character, so `b01f_01io` arrives as one word; split it here.
  c.SkipSpace();
  const size_t start = c.pos();
  std::string_view lhs_rhs = c.ParseWord();
  size_t underscore = lhs_rhs.find('_');
  if (underscore == std::string_view::npos) {
    return c.ErrorAt(start, "dim_labels must look like b01f_01io->b01f");
  }
  RETURN_IF_ERROR(ParseLabelGroup(c, lhs_rhs.substr(0, underscore), start, 'b', 'f',
                                  &d.input_batch_dimension, &d.input_feature_dimension,
                                  &d.input_spatial_dimensions));
  RETURN_IF_ERROR(ParseLabelGroup(c, lhs_rhs.substr(underscore + 1), start + underscore + 1, 'i',
                                  'o', &d.kernel_input_feature_dimension,
                                  &d.kernel_output_feature_dimension,
                                  &d.kernel_spatial_dimensions));
  if (c.RawPeek() != '-' || c.RawPeek(1) != '>') return c.Error("expected '->' in dim_labels");
  c.set_pos(c.pos() + 2);
  const size_t out_at = c.pos();
  std::string_view out = c.ParseWord();
  RETURN_IF_ERROR(ParseLabelGroup(c, out, out_at, 'b', 'f', &d.output_batch_dimension,
                                  &d.output_feature_dimension, &d.output_spatial_dimensions));
  return d;
}

absl::StatusOr<ReplicaGroups> ParseReplicaGroups(TextCursor& c) {
  ReplicaGroups groups;
  if (c.Peek() == '[') {
    IotaReplicaGroupList iota;
    c.TryConsume('[');
    ASSIGN_OR_RETURN(iota.num_replica_groups, c.ParseInt("number of replica groups"));
    RETURN_IF_ERROR(c.Expect(',', "in iota replica groups"));
    ASSIGN_OR_RETURN(iota.num_devices_per_group, c.ParseInt("replica group size"));
    RETURN_IF_ERROR(c.Expect(']', "in iota replica groups"));
    if (!(c.TryConsume('<') && c.RawPeek() == '=')) return c.Error("expected '<=' in iota replica groups");
    c.set_pos(c.pos() + 1);
    RETURN_IF_ERROR(c.Expect('[', "in iota replica groups"));
    do {
      ASSIGN_OR_RETURN(int64_t d, c.ParseInt("iota reshape dimension"));
      iota.iota_reshape_dims.push_back(d);
    } while (c.TryConsume(','));
    RETURN_IF_ERROR(c.Expect(']', "in iota replica groups"));
    if (c.RawPeek() == 'T') {
      c.set_pos(c.pos() + 1);
      RETURN_IF_ERROR(c.Expect('(', "after T in iota replica groups"));
      do {
        ASSIGN_OR_RETURN(int64_t p, c.ParseInt("iota transpose permutation"));
        iota.iota_transpose_perm.push_back(p);
      } while (c.TryConsume(','));
      RETURN_IF_ERROR(c.Expect(')', "in iota replica groups"));
    }
    // Device counts are bounded well below overflow (2^31 devices).
    constexpr int64_t kMaxDevices = int64_t{1} << 31;
    int64_t product = 1;
    for (int64_t d : iota.iota_reshape_dims) {
      if (d <= 0 || product > kMaxDevices / d) {
        return c.Error("iota replica groups: reshape dimensions must be positive and name at "
                       "most 2^31 devices");
      }
      product *= d;
    }
    if (iota.num_replica_groups <= 0 || iota.num_devices_per_group <= 0 ||
        iota.num_replica_groups > kMaxDevices / iota.num_devices_per_group ||
        product != iota.num_replica_groups * iota.num_devices_per_group) {
      return c.Error("iota replica groups: the reshape dimensions must multiply to "
                     "groups x group size");
    }
    std::vector<bool> seen(iota.iota_reshape_dims.size(), false);
    if (!iota.iota_transpose_perm.empty()) {
      if (iota.iota_transpose_perm.size() != iota.iota_reshape_dims.size()) {
        return c.Error("iota replica groups: the transpose must name every reshape dimension");
      }
      for (int64_t p : iota.iota_transpose_perm) {
        if (p < 0 || p >= static_cast<int64_t>(seen.size()) || seen[p]) {
          return c.Error("iota replica groups: the transpose is not a permutation");
        }
        seen[p] = true;
      }
    }
    groups.iota = std::move(iota);
    return groups;
  }
  RETURN_IF_ERROR(c.Expect('{', "to start replica groups"));
  if (c.TryConsume('}')) return groups;
  do {
    ASSIGN_OR_RETURN(std::vector<int64_t> g, c.ParseBracedInts("a replica group"));
    groups.groups.push_back(std::move(g));
  } while (c.TryConsume(','));
  RETURN_IF_ERROR(c.Expect('}', "to close replica groups"));
  return groups;
}

absl::StatusOr<ProgramShape> ParseProgramShape(TextCursor& c) {
  ProgramShape ps;
  RETURN_IF_ERROR(c.Expect('(', "to start a program shape"));
  if (!c.TryConsume(')')) {
    do {
      ASSIGN_OR_RETURN(Shape s, ParseShape(c));
      ps.parameters.push_back(std::move(s));
    } while (c.TryConsume(','));
    RETURN_IF_ERROR(c.Expect(')', "to close program shape parameters"));
  }
  if (!(c.TryConsume('-') && c.RawPeek() == '>')) return c.Error("expected '->' in a program shape");
  c.set_pos(c.pos() + 1);
  ASSIGN_OR_RETURN(ps.result, ParseShape(c));
  return ps;
}

absl::StatusOr<std::vector<int64_t>> ParseShapeIndex(TextCursor& c) {
  return c.ParseBracedInts("a shape index");
}

}  // namespace hlo

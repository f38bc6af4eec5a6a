// Literal <-> LiteralProto using XLA's per-element-type fields.
//
// Reading is two passes so that a hostile proto cannot make us allocate more than it carries:
// CheckPiece walks the proto against the shape and checks every data field's size (one value
// per element, overflow-checked), then the Literal is allocated once from the shape and
// FillPiece copies the data in. 16-bit values are little-endian on the wire whatever the host.
#include <algorithm>
#include <cstring>

#include "hlo/proto/hlo_proto_util.h"
#include "hlo/proto/proto_internal.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

// How one element type is stored in LiteralProto.
enum class Storage {
  kNone,
  kPreds,
  kBytes1,
  kBytes2,
  kS32,
  kS64,
  kU32,
  kU64,
  kF32,
  kF64,
  kC64,
  kC128
};

Storage StorageOf(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred:
      return Storage::kPreds;
    case PrimitiveType::kS16:
    case PrimitiveType::kU16:
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
      return Storage::kBytes2;
    case PrimitiveType::kS32:
      return Storage::kS32;
    case PrimitiveType::kS64:
      return Storage::kS64;
    case PrimitiveType::kU32:
      return Storage::kU32;
    case PrimitiveType::kU64:
      return Storage::kU64;
    case PrimitiveType::kF32:
      return Storage::kF32;
    case PrimitiveType::kF64:
      return Storage::kF64;
    case PrimitiveType::kC64:
      return Storage::kC64;
    case PrimitiveType::kC128:
      return Storage::kC128;
    default:
      return IsArrayType(type) ? Storage::kBytes1 : Storage::kNone;
  }
}

// The `bytes` field of a one- or two-byte element type; nullptr for other types.
const std::string* BytesField(const xla::LiteralProto& p, PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kS1:
      return &p.s1s();
    case PrimitiveType::kS2:
      return &p.s2s();
    case PrimitiveType::kS4:
      return &p.s4s();
    case PrimitiveType::kS8:
      return &p.s8s();
    case PrimitiveType::kU1:
      return &p.u1s();
    case PrimitiveType::kU2:
      return &p.u2s();
    case PrimitiveType::kU4:
      return &p.u4s();
    case PrimitiveType::kU8:
      return &p.u8s();
    case PrimitiveType::kS16:
      return &p.s16s();
    case PrimitiveType::kU16:
      return &p.u16s();
    case PrimitiveType::kF16:
      return &p.f16s();
    case PrimitiveType::kBF16:
      return &p.bf16s();
    case PrimitiveType::kF8E5M2:
      return &p.f8e5m2s();
    case PrimitiveType::kF8E4M3FN:
      return &p.f8e4m3fns();
    case PrimitiveType::kF8E4M3B11FNUZ:
      return &p.f8e4m3b11fnuzs();
    case PrimitiveType::kF8E5M2FNUZ:
      return &p.f8e5m2fnuzs();
    case PrimitiveType::kF8E4M3FNUZ:
      return &p.f8e4m3fnuzs();
    case PrimitiveType::kF8E4M3:
      return &p.f8e4m3s();
    case PrimitiveType::kF8E3M4:
      return &p.f8e3m4s();
    case PrimitiveType::kF4E2M1FN:
      return &p.f4e2m1fns();
    case PrimitiveType::kF8E8M0FNU:
      return &p.f8e8m0fnus();
    default:
      return nullptr;
  }
}

std::string* MutableBytesField(xla::LiteralProto* p, PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kS1:
      return p->mutable_s1s();
    case PrimitiveType::kS2:
      return p->mutable_s2s();
    case PrimitiveType::kS4:
      return p->mutable_s4s();
    case PrimitiveType::kS8:
      return p->mutable_s8s();
    case PrimitiveType::kU1:
      return p->mutable_u1s();
    case PrimitiveType::kU2:
      return p->mutable_u2s();
    case PrimitiveType::kU4:
      return p->mutable_u4s();
    case PrimitiveType::kU8:
      return p->mutable_u8s();
    case PrimitiveType::kS16:
      return p->mutable_s16s();
    case PrimitiveType::kU16:
      return p->mutable_u16s();
    case PrimitiveType::kF16:
      return p->mutable_f16s();
    case PrimitiveType::kBF16:
      return p->mutable_bf16s();
    case PrimitiveType::kF8E5M2:
      return p->mutable_f8e5m2s();
    case PrimitiveType::kF8E4M3FN:
      return p->mutable_f8e4m3fns();
    case PrimitiveType::kF8E4M3B11FNUZ:
      return p->mutable_f8e4m3b11fnuzs();
    case PrimitiveType::kF8E5M2FNUZ:
      return p->mutable_f8e5m2fnuzs();
    case PrimitiveType::kF8E4M3FNUZ:
      return p->mutable_f8e4m3fnuzs();
    case PrimitiveType::kF8E4M3:
      return p->mutable_f8e4m3s();
    case PrimitiveType::kF8E3M4:
      return p->mutable_f8e3m4s();
    case PrimitiveType::kF4E2M1FN:
      return p->mutable_f4e2m1fns();
    case PrimitiveType::kF8E8M0FNU:
      return p->mutable_f8e8m0fnus();
    default:
      return nullptr;
  }
}

template <typename T>
T LoadAt(const std::vector<uint8_t>& data, int64_t i) {
  T v;
  std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void StoreAt(std::vector<uint8_t>* data, int64_t i, T v) {
  std::memcpy(data->data() + i * sizeof(T), &v, sizeof(T));
}

template <typename T, typename Field>
void AppendAll(const std::vector<uint8_t>& data, int64_t count, Field* field) {
  field->Reserve(static_cast<int>(count));
  for (int64_t i = 0; i < count; ++i) field->Add(LoadAt<T>(data, i));
}

template <typename T, typename Field>
void CopyAll(const Field& field, std::vector<uint8_t>* data) {
  for (int i = 0; i < field.size(); ++i) StoreAt<T>(data, i, static_cast<T>(field.Get(i)));
}

void WriteArray(const Literal& literal, xla::LiteralProto* proto) {
  const PrimitiveType type = literal.shape().element_type();
  const std::vector<uint8_t>& data = literal.data();
  // A well-formed literal holds element_count() values; never read past a short buffer.
  const int64_t width = ByteWidth(type);
  const int64_t n = width == 0 ? 0
                               : std::min<int64_t>(literal.element_count(),
                                                   static_cast<int64_t>(data.size()) / width);
  switch (StorageOf(type)) {
    case Storage::kNone:
      return;
    case Storage::kPreds:
      for (int64_t i = 0; i < n; ++i) proto->add_preds(data[i] != 0);
      return;
    case Storage::kBytes1:
      MutableBytesField(proto, type)->assign(data.begin(), data.begin() + n);
      return;
    case Storage::kBytes2: {
      std::string* out = MutableBytesField(proto, type);
      out->resize(2 * n);
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t v = LoadAt<uint16_t>(data, i);
        (*out)[2 * i] = static_cast<char>(v & 0xFF);
        (*out)[2 * i + 1] = static_cast<char>(v >> 8);
      }
      return;
    }
    case Storage::kS32:
      return AppendAll<int32_t>(data, n, proto->mutable_s32s());
    case Storage::kS64:
      return AppendAll<int64_t>(data, n, proto->mutable_s64s());
    case Storage::kU32:
      return AppendAll<uint32_t>(data, n, proto->mutable_u32s());
    case Storage::kU64:
      return AppendAll<uint64_t>(data, n, proto->mutable_u64s());
    case Storage::kF32:
      return AppendAll<float>(data, n, proto->mutable_f32s());
    case Storage::kF64:
      return AppendAll<double>(data, n, proto->mutable_f64s());
    case Storage::kC64:
      return AppendAll<float>(data, 2 * n, proto->mutable_c64s());
    case Storage::kC128:
      return AppendAll<double>(data, 2 * n, proto->mutable_c128s());
  }
}

// The number of values the data field of `type` holds in `p`, and how many an array of
// `elements` elements needs there.
std::pair<int64_t, int64_t> StoredAndNeeded(const xla::LiteralProto& p, PrimitiveType type,
                                            int64_t elements) {
  switch (StorageOf(type)) {
    case Storage::kNone:
      return {0, 0};
    case Storage::kPreds:
      return {p.preds_size(), elements};
    case Storage::kBytes1:
      return {static_cast<int64_t>(BytesField(p, type)->size()), elements};
    case Storage::kBytes2: {
      const int64_t bytes = static_cast<int64_t>(BytesField(p, type)->size());
      // An odd byte count can never match; report it in values, rounded up.
      return {bytes % 2 ? -1 : bytes / 2, elements};
    }
    case Storage::kS32:
      return {p.s32s_size(), elements};
    case Storage::kS64:
      return {p.s64s_size(), elements};
    case Storage::kU32:
      return {p.u32s_size(), elements};
    case Storage::kU64:
      return {p.u64s_size(), elements};
    case Storage::kF32:
      return {p.f32s_size(), elements};
    case Storage::kF64:
      return {p.f64s_size(), elements};
    case Storage::kC64:
      return {p.c64s_size() % 2 ? -1 : p.c64s_size() / 2, elements};
    case Storage::kC128:
      return {p.c128s_size() % 2 ? -1 : p.c128s_size() / 2, elements};
  }
  return {0, 0};
}

absl::Status CheckPiece(const xla::LiteralProto& p, const Shape& shape, const std::string& where) {
  if (p.has_shape()) {
    absl::StatusOr<Shape> own = ShapeFromProto(p.shape());
    if (!own.ok()) return absl::InvalidArgumentError(hlo::StrCat(where, own.status().message()));
    if (!own->Compatible(shape)) {
      return absl::InvalidArgumentError(
          hlo::StrCat(where, "shape ", own->ToString(), " does not match ", shape.ToString()));
    }
  }
  if (shape.IsTuple()) {
    if (p.tuple_literals_size() != shape.tuple_shapes_size()) {
      return absl::InvalidArgumentError(
          hlo::StrCat(where, "tuple literal has ", p.tuple_literals_size(), " elements, its shape ",
                      shape.tuple_shapes_size()));
    }
    for (int i = 0; i < p.tuple_literals_size(); ++i) {
      RETURN_IF_ERROR(CheckPiece(p.tuple_literals(i), shape.tuple_shapes(i),
                                 hlo::StrCat(where, "element ", i, ": ")));
    }
    return absl::OkStatus();
  }
  if (p.tuple_literals_size() > 0) {
    return absl::InvalidArgumentError(hlo::StrCat(where, "non-tuple literal has tuple_literals"));
  }
  if (!shape.IsArray()) return absl::OkStatus();
  std::optional<int64_t> elements = proto_internal::CheckedProduct(shape.dimensions());
  if (!elements) {
    return absl::InvalidArgumentError(
        hlo::StrCat(where, "element count of ", shape.ToString(), " overflows"));
  }
  auto [stored, needed] = StoredAndNeeded(p, shape.element_type(), *elements);
  if (stored != needed) {
    return absl::InvalidArgumentError(
        hlo::StrCat(where, "literal of shape ", shape.ToString(/*print_layout=*/false), " needs ",
                    needed, " values but its data field holds ",
                    stored < 0 ? std::string("a partial value") : hlo::StrCat(stored)));
  }
  return absl::OkStatus();
}

void FillPiece(const xla::LiteralProto& p, Literal* literal) {
  if (literal->shape().IsTuple()) {
    for (int i = 0; i < p.tuple_literals_size(); ++i) {
      FillPiece(p.tuple_literals(i), &(*literal->mutable_tuple_elements())[i]);
    }
    return;
  }
  const PrimitiveType type = literal->shape().element_type();
  std::vector<uint8_t>* data = literal->mutable_data();
  switch (StorageOf(type)) {
    case Storage::kNone:
      return;
    case Storage::kPreds:
      for (int i = 0; i < p.preds_size(); ++i) (*data)[i] = p.preds(i) ? 1 : 0;
      return;
    case Storage::kBytes1: {
      const std::string& bytes = *BytesField(p, type);
      std::memcpy(data->data(), bytes.data(), bytes.size());
      return;
    }
    case Storage::kBytes2: {
      const std::string& bytes = *BytesField(p, type);
      for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
        const uint16_t v = static_cast<uint16_t>(static_cast<uint8_t>(bytes[i]) |
                                                 (static_cast<uint8_t>(bytes[i + 1]) << 8));
        StoreAt<uint16_t>(data, i / 2, v);
      }
      return;
    }
    case Storage::kS32:
      return CopyAll<int32_t>(p.s32s(), data);
    case Storage::kS64:
      return CopyAll<int64_t>(p.s64s(), data);
    case Storage::kU32:
      return CopyAll<uint32_t>(p.u32s(), data);
    case Storage::kU64:
      return CopyAll<uint64_t>(p.u64s(), data);
    case Storage::kF32:
      return CopyAll<float>(p.f32s(), data);
    case Storage::kF64:
      return CopyAll<double>(p.f64s(), data);
    case Storage::kC64:
      return CopyAll<float>(p.c64s(), data);
    case Storage::kC128:
      return CopyAll<double>(p.c128s(), data);
  }
}

void WritePiece(const Literal& literal, xla::LiteralProto* proto) {
  *proto->mutable_shape() = ShapeToProto(literal.shape());
  if (literal.shape().IsTuple()) {
    for (const Literal& element : literal.tuple_elements()) {
      WritePiece(element, proto->add_tuple_literals());
    }
    return;
  }
  if (literal.shape().IsArray()) WriteArray(literal, proto);
}

}  // namespace

xla::LiteralProto LiteralToProto(const Literal& literal) {
  xla::LiteralProto proto;
  WritePiece(literal, &proto);
  return proto;
}

absl::StatusOr<Literal> LiteralFromProto(const xla::LiteralProto& proto) {
  if (!proto.has_shape()) return absl::InvalidArgumentError("literal has no shape");
  absl::StatusOr<Shape> shape = ShapeFromProto(proto.shape());
  if (!shape.ok()) {
    return absl::InvalidArgumentError(hlo::StrCat("literal: ", shape.status().message()));
  }
  RETURN_IF_ERROR(CheckPiece(proto, *shape, "literal: "));
  Literal literal(*shape);
  FillPiece(proto, &literal);
  return literal;
}

}  // namespace hlo

// .npy encoding and decoding. The header is a Python dict literal,
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline so that the data starts at a multiple of 64 bytes. Decoding
// reads the three keys with a small scanner (no general Python-literal parser), checks the
// byte count, and byte-swaps big-endian data.
#include "runtime/cpu/npy.h"

#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "hlo/io/module_io.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace runtime {
namespace {

using hlo::PrimitiveType;

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct Descr {
  PrimitiveType type;
  char kind;  // b, i, u, f, c
  int size;   // Bytes per element.
};

constexpr Descr kDescrs[] = {
    {PrimitiveType::kPred, 'b', 1}, {PrimitiveType::kS8, 'i', 1},    {PrimitiveType::kS16, 'i', 2},
    {PrimitiveType::kS32, 'i', 4},  {PrimitiveType::kS64, 'i', 8},   {PrimitiveType::kU8, 'u', 1},
    {PrimitiveType::kU16, 'u', 2},  {PrimitiveType::kU32, 'u', 4},   {PrimitiveType::kU64, 'u', 8},
    {PrimitiveType::kF16, 'f', 2},  {PrimitiveType::kF32, 'f', 4},   {PrimitiveType::kF64, 'f', 8},
    {PrimitiveType::kC64, 'c', 8},  {PrimitiveType::kC128, 'c', 16},
};

// Types numpy lacks, stored as raw bits in the unsigned type of the same width.
std::optional<PrimitiveType> RawBitsType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kBF16:
      return PrimitiveType::kU16;
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E3M4:
    case PrimitiveType::kF8E8M0FNU:
      return PrimitiveType::kU8;
    default:
      return std::nullopt;
  }
}

std::optional<Descr> DescrFor(PrimitiveType type) {
  if (std::optional<PrimitiveType> raw = RawBitsType(type)) type = *raw;
  for (const Descr& d : kDescrs) {
    if (d.type == type) return d;
  }
  return std::nullopt;
}

absl::Status Malformed(std::string_view name, std::string_view what) {
  return absl::InvalidArgumentError(hlo::StrCat(name, ": error: not a valid .npy file: ", what));
}

std::string ShapeTuple(const std::vector<int64_t>& dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) hlo::StrAppend(&out, i ? ", " : "", dims[i]);
  if (dims.size() == 1) out += ",";
  return out + ")";
}

// ---- Header scanning ----------------------------------------------------------------------

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// The text right after `'key':` (leading spaces skipped), or nullopt.
std::optional<std::string_view> ValueOf(std::string_view header, std::string_view key) {
  for (char quote : {'\'', '"'}) {
    std::string quoted = hlo::StrCat(std::string(1, quote), key, std::string(1, quote));
    size_t at = header.find(quoted);
    if (at == std::string_view::npos) continue;
    at = header.find(':', at + quoted.size());
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = header.substr(at + 1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    return rest;
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<int64_t>> ParseShape(std::string_view text, std::string_view name) {
  if (text.empty() || text.front() != '(') return Malformed(name, "bad 'shape'");
  size_t close = text.find(')');
  if (close == std::string_view::npos) return Malformed(name, "bad 'shape'");
  std::vector<int64_t> dims;
  std::string_view body = text.substr(1, close - 1);
  size_t i = 0;
  while (i < body.size()) {
    if (body[i] == ' ' || body[i] == ',') {
      ++i;
      continue;
    }
    if (body[i] < '0' || body[i] > '9') return Malformed(name, "bad 'shape'");
    int64_t v = 0;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
      const int digit = body[i++] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        return Malformed(name, "a 'shape' dimension does not fit in 64 bits");
      }
      v = v * 10 + digit;
    }
    if (i < body.size() && body[i] == 'L') ++i;  // Python 2 long suffix.
    dims.push_back(v);
  }
  return dims;
}

absl::StatusOr<Header> ParseHeader(std::string_view text, std::string_view name) {
  Header header;
  std::optional<std::string_view> descr = ValueOf(text, "descr");
  std::optional<std::string_view> fortran = ValueOf(text, "fortran_order");
  std::optional<std::string_view> shape = ValueOf(text, "shape");
  if (!descr || !fortran || !shape)
    return Malformed(name, "header lacks descr/fortran_order/shape");
  if (descr->empty() || (descr->front() != '\'' && descr->front() != '"')) {
    return Malformed(name, "unsupported 'descr' (structured dtypes are not supported)");
  }
  size_t end = descr->find(descr->front(), 1);
  if (end == std::string_view::npos) return Malformed(name, "bad 'descr'");
  header.descr = std::string(descr->substr(1, end - 1));
  header.fortran_order = fortran->substr(0, 4) == "True";
  ASSIGN_OR_RETURN(header.shape, ParseShape(*shape, name));
  return header;
}

// The element type and byte order of a descr such as `<f4`; `V` (void) of width 1 or 2 maps
// to u8/u16 raw bits.
absl::StatusOr<std::pair<Descr, bool>> ResolveDescr(const std::string& descr,
                                                    std::string_view name) {
  if (descr.size() < 3) return Malformed(name, hlo::StrCat("unsupported descr '", descr, "'"));
  const char order = descr[0];
  const char kind = descr[1];
  int size = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9') {
      return Malformed(name, hlo::StrCat("unsupported descr '", descr, "'"));
    }
    size = size * 10 + (descr[i] - '0');
  }
  const bool big_endian = order == '>';
  const char effective = kind == 'V' ? 'u' : kind;
  for (const Descr& d : kDescrs) {
    if (d.kind == effective && d.size == size) return std::make_pair(d, big_endian && size > 1);
  }
  return absl::InvalidArgumentError(
      hlo::StrCat(name, ": error: unsupported .npy element type '", descr, "'"));
}

void ByteSwap(std::vector<uint8_t>& data, const Descr& d) {
  const int unit = d.kind == 'c' ? d.size / 2 : d.size;
  for (size_t i = 0; i + unit <= data.size(); i += unit) {
    std::reverse(data.begin() + i, data.begin() + i + unit);
  }
}

}  // namespace

absl::StatusOr<std::string> EncodeNpy(const hlo::Literal& literal) {
  const hlo::Shape& shape = literal.shape();
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        hlo::StrCat("cannot write ", shape.ToString(false), " to .npy: not an array"));
  }
  std::optional<Descr> d = DescrFor(shape.element_type());
  if (!d) {
    return absl::InvalidArgumentError(
        hlo::StrCat("cannot write ", hlo::PrimitiveTypeName(shape.element_type()), " to .npy"));
  }
  const char order = d->size == 1 ? '|' : '<';
  std::string dict =
      hlo::StrCat("{'descr': '", std::string(1, order), std::string(1, d->kind), d->size,
                  "', 'fortran_order': False, 'shape': ", ShapeTuple(shape.dimensions()), ", }");
  // Version 1.0 has a 2-byte header length, 2.0 a 4-byte one; both prefixes are 8 bytes long
  // before the length. Pad so the data starts at a multiple of 64.
  const bool v2 = dict.size() + 1 + 10 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  const size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicSize);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back(0);
  const uint32_t len = static_cast<uint32_t>(dict.size());
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i)
    out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  out += dict;
  out.append(reinterpret_cast<const char*>(literal.data().data()), literal.data().size());
  return out;
}

absl::StatusOr<hlo::Literal> DecodeNpy(std::string_view bytes, std::string_view name) {
  if (bytes.size() < 10 || bytes.substr(0, kMagicSize) != std::string_view(kMagic, kMagicSize)) {
    return Malformed(name, "missing the \\x93NUMPY magic");
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  if (major < 1 || major > 3) return Malformed(name, hlo::StrCat("unknown version ", major));
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_bytes) return Malformed(name, "truncated header");
  size_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i) {
    header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
  }
  const size_t data_start = 8 + len_bytes + header_len;
  if (bytes.size() < data_start) return Malformed(name, "truncated header");
  ASSIGN_OR_RETURN(Header header, ParseHeader(bytes.substr(8 + len_bytes, header_len), name));
  if (header.fortran_order) {
    return absl::InvalidArgumentError(
        hlo::StrCat(name, ": error: Fortran-order .npy files are not supported"));
  }
  ASSIGN_OR_RETURN(auto resolved, ResolveDescr(header.descr, name));
  const auto& [descr, swap] = resolved;
  const std::string_view data = bytes.substr(data_start);
  // The data must be exactly the shape's bytes; checked before allocating (a header may name
  // any size), with products that cannot overflow.
  uint64_t needed = static_cast<uint64_t>(hlo::ByteWidth(descr.type));
  bool overflow = false;
  for (int64_t d : header.shape) {
    overflow = overflow || __builtin_mul_overflow(needed, static_cast<uint64_t>(d), &needed);
  }
  if (overflow) {
    return Malformed(name, hlo::StrCat("shape ", ShapeTuple(header.shape), " of '", header.descr,
                                       "' has more bytes than 64 bits count"));
  }
  if (needed != data.size()) {
    return Malformed(name, hlo::StrCat("shape ", ShapeTuple(header.shape), " of '", header.descr,
                                       "' needs ", needed, " data bytes, found ", data.size()));
  }
  hlo::Literal literal(hlo::Shape::Array(descr.type, header.shape));
  std::memcpy(literal.mutable_data()->data(), data.data(), data.size());
  if (swap) ByteSwap(*literal.mutable_data(), descr);
  return literal;
}

absl::StatusOr<hlo::Literal> DecodeNpyAs(std::string_view bytes, std::string_view name,
                                         const hlo::Shape& expected) {
  ASSIGN_OR_RETURN(hlo::Literal literal, DecodeNpy(bytes, name));
  const PrimitiveType want = expected.element_type();
  const PrimitiveType got = literal.shape().element_type();
  const bool type_ok = got == want || RawBitsType(want) == got;
  if (!type_ok || literal.shape().dimensions() != expected.dimensions()) {
    std::string holds =
        hlo::StrCat(hlo::PrimitiveTypeName(got), ShapeTuple(literal.shape().dimensions()));
    return absl::InvalidArgumentError(hlo::StrCat(
        name, ": error: expected ", expected.ToString(false), ", the file holds ", holds));
  }
  if (got == want) return literal;
  hlo::Literal typed(hlo::Shape::Array(want, expected.dimensions()));
  *typed.mutable_data() = std::move(*literal.mutable_data());
  return typed;
}

absl::Status WriteNpy(const std::string& path, const hlo::Literal& literal) {
  absl::StatusOr<std::string> bytes = EncodeNpy(literal);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        hlo::StrCat(path, ": error: ", hlo::ToStd(bytes.status().message())));
  }
  return hlo::WriteFileAtomically(path, *bytes);
}

absl::StatusOr<hlo::Literal> ReadNpy(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, hlo::ReadInput(path));
  return DecodeNpy(bytes, path);
}

absl::StatusOr<hlo::Literal> ReadNpyAs(const std::string& path, const hlo::Shape& expected) {
  ASSIGN_OR_RETURN(std::string bytes, hlo::ReadInput(path));
  return DecodeNpyAs(bytes, path, expected);
}

}  // namespace runtime

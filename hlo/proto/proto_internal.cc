// Shared helpers of the proto conversion: UTF-8 checks, a length-prefixed string-list encoding
// for markers, OpMetadata in its proto, text and encoded forms, and frontend attributes.
//
// Metadata text is the printer's `metadata={...}` body: `key=value` tokens separated by single
// spaces, strings quoted with the printer's escapes, integers in decimal and profile types as
// `profile_type={a,b}`. ParseMetadataText reads exactly that and nothing else.
#include "hlo/proto/proto_internal.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "hlo/ir/hlo_printer.h"
#include "hlo/parser/instruction_attributes.h"
#include "hlo/parser/text_cursor.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {
namespace proto_internal {

bool IsMarker(std::string_view name) {
  return name.substr(0, kMarkerPrefix.size()) == kMarkerPrefix;
}

absl::Status CheckUtf8(std::string_view text, std::string_view what) {
  static constexpr uint32_t kMinByLength[] = {0, 0x80, 0x800, 0x10000};
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int extra = 0;
    uint32_t code = 0;
    if ((c & 0xE0) == 0xC0) {
      extra = 1;
      code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      code = c & 0x07;
    }
    bool ok = extra > 0 && i + extra < n;
    for (int k = 1; ok && k <= extra; ++k) {
      const unsigned char cc = static_cast<unsigned char>(text[i + k]);
      ok = (cc & 0xC0) == 0x80;
      code = (code << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid too.
    ok = ok && code >= kMinByLength[extra] && !(code >= 0xD800 && code <= 0xDFFF) &&
         code <= 0x10FFFF;
    if (!ok) {
      return absl::InvalidArgumentError(
          hlo::StrCat(what, " is not valid UTF-8 (byte ", i, "), which a proto string requires"));
    }
    i += extra + 1;
  }
  return absl::OkStatus();
}

std::string EncodeStrings(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) hlo::StrAppend(&out, v.size(), ":", v);
  return out;
}

std::optional<std::vector<std::string>> DecodeStrings(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t colon = text.find(':', pos);
    if (colon == std::string_view::npos || colon == pos) return std::nullopt;
    uint64_t length = 0;
    auto [ptr, ec] = std::from_chars(text.data() + pos, text.data() + colon, length);
    if (ec != std::errc() || ptr != text.data() + colon) return std::nullopt;
    if (length > text.size() - colon - 1) return std::nullopt;
    out.emplace_back(text.substr(colon + 1, length));
    pos = colon + 1 + length;
  }
  return out;
}

std::vector<std::string_view> SplitString(std::string_view text, char sep) {
  std::vector<std::string_view> pieces;
  while (true) {
    const size_t at = text.find(sep);
    pieces.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return pieces;
    text.remove_prefix(at + 1);
  }
}

std::optional<int64_t> ParseInt64(std::string_view text) {
  int64_t value = 0;
  if (text.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<int64_t> CheckedProduct(const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d != 0 && product > std::numeric_limits<int64_t>::max() / d) return std::nullopt;
    product *= d;
  }
  return product;
}

// ---- OpMetadata ----------------------------------------------------------------------------

namespace {

bool FitsInt32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

int32_t ToInt32(int64_t v, bool* lossy) {
  if (!FitsInt32(v)) {
    *lossy = true;
    return 0;
  }
  return static_cast<int32_t>(v);
}

}  // namespace

// OpMetadata.profile_type is deprecated in XLA (superseded by profile_info) but is the field
// XLA's text `profile_type={...}` comes from.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
xla::OpMetadata MetadataToProto(const OpMetadata& m, bool* lossy) {
  xla::OpMetadata proto;
  proto.set_op_type(m.op_type);
  proto.set_op_name(m.op_name);
  proto.set_source_file(m.source_file);
  proto.set_source_line(ToInt32(m.source_line, lossy));
  proto.set_source_end_line(ToInt32(m.source_end_line, lossy));
  proto.set_source_column(ToInt32(m.source_column, lossy));
  proto.set_source_end_column(ToInt32(m.source_end_column, lossy));
  proto.set_deduplicated_name(m.deduplicated_name);
  proto.set_stack_frame_id(ToInt32(m.stack_frame_id, lossy));
  proto.set_scheduling_name(m.scheduling_name);
  for (const std::string& type : m.profile_type) {
    std::optional<int64_t> value = ParseInt64(type);
    if (!value || !FitsInt32(*value) || hlo::StrCat(*value) != type) {
      *lossy = true;
      continue;
    }
    proto.add_profile_type(static_cast<xla::ProfileType>(*value));
  }
  return proto;
}

OpMetadata MetadataFromProto(const xla::OpMetadata& proto) {
  OpMetadata m;
  m.op_type = proto.op_type();
  m.op_name = proto.op_name();
  m.source_file = proto.source_file();
  m.source_line = proto.source_line();
  m.source_end_line = proto.source_end_line();
  m.source_column = proto.source_column();
  m.source_end_column = proto.source_end_column();
  m.deduplicated_name = proto.deduplicated_name();
  m.stack_frame_id = proto.stack_frame_id();
  m.scheduling_name = proto.scheduling_name();
  m.scheduling_name_set = !m.scheduling_name.empty();
  for (int type : proto.profile_type()) m.profile_type.push_back(hlo::StrCat(type));
  return m;
}
#pragma GCC diagnostic pop

std::string EncodeMetadata(const OpMetadata& m) {
  std::vector<std::string> fields = {
      m.op_type,
      m.op_name,
      m.source_file,
      hlo::StrCat(m.source_line),
      hlo::StrCat(m.source_end_line),
      hlo::StrCat(m.source_column),
      hlo::StrCat(m.source_end_column),
      m.deduplicated_name,
      hlo::StrCat(m.stack_frame_id),
      m.scheduling_name,
      m.scheduling_name_set ? "1" : "0",
  };
  fields.insert(fields.end(), m.profile_type.begin(), m.profile_type.end());
  return EncodeStrings(fields);
}

std::optional<OpMetadata> DecodeMetadata(std::string_view text) {
  std::optional<std::vector<std::string>> f = DecodeStrings(text);
  if (!f || f->size() < 11) return std::nullopt;
  OpMetadata m;
  m.op_type = (*f)[0];
  m.op_name = (*f)[1];
  m.source_file = (*f)[2];
  std::optional<int64_t> ints[5] = {ParseInt64((*f)[3]), ParseInt64((*f)[4]), ParseInt64((*f)[5]),
                                    ParseInt64((*f)[6]), ParseInt64((*f)[8])};
  for (const auto& v : ints) {
    if (!v) return std::nullopt;
  }
  m.source_line = *ints[0];
  m.source_end_line = *ints[1];
  m.source_column = *ints[2];
  m.source_end_column = *ints[3];
  m.deduplicated_name = (*f)[7];
  m.stack_frame_id = *ints[4];
  m.scheduling_name = (*f)[9];
  m.scheduling_name_set = (*f)[10] == "1";
  m.profile_type.assign(f->begin() + 11, f->end());
  return m;
}

std::string MetadataText(const OpMetadata& m) {
  std::string braced;
  AppendOpMetadata(m, &braced);
  return braced.substr(1, braced.size() - 2);  // Without the surrounding braces.
}

std::optional<OpMetadata> ParseMetadataText(std::string_view text) {
  const std::string braced = hlo::StrCat("{", text, "}");
  TextCursor cursor(braced, "metadata");
  OpMetadata m;
  if (!ParseMetadata(cursor, &m).ok() || !cursor.AtEnd()) return std::nullopt;
  return m;
}

// ---- Frontend attributes -------------------------------------------------------------------

absl::Status FrontendAttributesToProto(const FrontendAttributes& attrs,
                                       xla::FrontendAttributes* out,
                                       std::optional<std::string>* order_marker) {
  bool sorted_unique = true;
  for (size_t i = 0; i < attrs.size(); ++i) {
    RETURN_IF_ERROR(CheckUtf8(attrs[i].first, "frontend attribute key"));
    RETURN_IF_ERROR(CheckUtf8(attrs[i].second, "frontend attribute value"));
    if (i > 0 && !(attrs[i - 1].first < attrs[i].first)) sorted_unique = false;
    (*out->mutable_map())[attrs[i].first] = attrs[i].second;
  }
  order_marker->reset();
  if (!sorted_unique) {
    std::vector<std::string> flat;
    for (const auto& [key, value] : attrs) {
      flat.push_back(key);
      flat.push_back(value);
    }
    *order_marker = EncodeStrings(flat);
  }
  return absl::OkStatus();
}

absl::StatusOr<FrontendAttributes> FrontendAttributesFromProto(const xla::FrontendAttributes& proto,
                                                               const std::string* order_marker) {
  FrontendAttributes attrs;
  if (order_marker != nullptr) {
    std::optional<std::vector<std::string>> flat = DecodeStrings(*order_marker);
    if (!flat || flat->size() % 2 != 0) {
      return absl::InvalidArgumentError("malformed spmdp::frontend_attributes marker");
    }
    for (size_t i = 0; i < flat->size(); i += 2) attrs.emplace_back((*flat)[i], (*flat)[i + 1]);
    return attrs;
  }
  for (const auto& [key, value] : proto.map()) attrs.emplace_back(key, value);
  std::sort(attrs.begin(), attrs.end());
  return attrs;
}

}  // namespace proto_internal
}  // namespace hlo

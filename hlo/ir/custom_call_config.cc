// Splits the config at the commas outside brackets, then each pair at its '='.
#include "hlo/ir/custom_call_config.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "hlo/strings.h"

namespace hlo {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The comma-separated parts of `text` outside brackets.
std::vector<std::string_view> SplitTopLevel(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      parts.push_back(Trim(text.substr(begin, i - begin)));
      begin = i + 1;
    } else if (text[i] == '[') {
      ++depth;
    } else if (text[i] == ']') {
      --depth;
    }
  }
  return parts;
}

bool ParseInt(std::string_view s, int64_t& out) {
  s = Trim(s);
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end && !s.empty();
}

}  // namespace

absl::StatusOr<CustomCallConfig> CustomCallConfig::Parse(
    std::string_view target, std::string_view text,
    absl::Span<const std::string_view> known_keys) {
  CustomCallConfig config;
  config.target_ = std::string(target);
  auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(hlo::StrCat("custom-call \"", target, "\": backend_config \"",
                                                  text, "\": ", what));
  };
  if (Trim(text).empty()) return config;
  for (std::string_view part : SplitTopLevel(text)) {
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) return bad(hlo::StrCat("\"", part, "\" is not key=value"));
    const std::string_view key = Trim(part.substr(0, eq));
    std::string_view value = Trim(part.substr(eq + 1));
    if (std::find(known_keys.begin(), known_keys.end(), key) == known_keys.end()) {
      return bad(hlo::StrCat("unsupported key \"", key, "\""));
    }
    Value parsed;
    if (!value.empty() && value.front() == '[') {
      if (value.back() != ']') return bad(hlo::StrCat("unterminated list for \"", key, "\""));
      parsed.is_list = true;
      const std::string_view inner = Trim(value.substr(1, value.size() - 2));
      if (!inner.empty()) {
        for (std::string_view item : SplitTopLevel(inner)) {
          int64_t v = 0;
          if (!ParseInt(item, v)) return bad(hlo::StrCat("\"", item, "\" is not an integer"));
          parsed.numbers.push_back(v);
        }
      }
    } else {
      int64_t v = 0;
      if (!ParseInt(value, v)) return bad(hlo::StrCat("\"", value, "\" is not an integer"));
      parsed.numbers.push_back(v);
    }
    if (!config.values_.emplace(std::string(key), std::move(parsed)).second) {
      return bad(hlo::StrCat("key \"", key, "\" is given twice"));
    }
  }
  return config;
}

absl::StatusOr<const CustomCallConfig::Value*> CustomCallConfig::Find(std::string_view key) const {
  auto it = values_.find(key);
  if (it == values_.end()) {
    return absl::InvalidArgumentError(
        hlo::StrCat("custom-call \"", target_, "\": backend_config lacks \"", key, "\""));
  }
  return &it->second;
}

absl::StatusOr<int64_t> CustomCallConfig::Int(std::string_view key) const {
  absl::StatusOr<const Value*> value = Find(key);
  if (!value.ok()) return value.status();
  if ((*value)->is_list) {
    return absl::InvalidArgumentError(
        hlo::StrCat("custom-call \"", target_, "\": \"", key, "\" must be an integer"));
  }
  return (*value)->numbers[0];
}

absl::StatusOr<std::vector<int64_t>> CustomCallConfig::List(std::string_view key) const {
  absl::StatusOr<const Value*> value = Find(key);
  if (!value.ok()) return value.status();
  if (!(*value)->is_list) {
    return absl::InvalidArgumentError(
        hlo::StrCat("custom-call \"", target_, "\": \"", key, "\" must be a [list]"));
  }
  return (*value)->numbers;
}

std::string UnspecifiedDimsConfig(absl::Span<const int64_t> dims) {
  if (dims.empty()) return "";
  std::string config = "unspecified_dims=[";
  for (size_t i = 0; i < dims.size(); ++i) hlo::StrAppend(&config, i == 0 ? "" : ",", dims[i]);
  return config + "]";
}

std::optional<std::vector<int64_t>> ParseUnspecifiedDims(const std::string& backend_config) {
  const std::string key = "unspecified_dims=[";
  const size_t at = backend_config.find(key);
  if (at == std::string::npos) return std::nullopt;
  std::vector<int64_t> dims;
  const char* p = backend_config.c_str() + at + key.size();
  while (*p != '\0' && *p != ']') {
    char* end = nullptr;
    const long long value = std::strtoll(p, &end, 10);
    if (end == p) return std::nullopt;
    dims.push_back(value);
    p = end;
    while (*p == ',' || *p == ' ') ++p;
  }
  if (*p != ']') return std::nullopt;
  return dims;
}

}  // namespace hlo

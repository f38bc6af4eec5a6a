// Recursive-descent JSON reader; depth is bounded so hostile input cannot overflow the stack.
#include "spmd/cost/json_value.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "hlo/analysis/module_stats.h"
#include "hlo/strings.h"

namespace spmd {
namespace {

constexpr int kMaxDepth = 64;

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> Document() {
    JsonValue value;
    if (absl::Status s = Value(value, 0); !s.ok()) return s;
    SkipSpace();
    if (pos_ != text_.size()) return Error("trailing characters after the JSON value");
    return value;
  }

 private:
  absl::Status Error(std::string_view what) const {
    int64_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return absl::InvalidArgumentError(hlo::StrCat(line, ":", col, ": ", what));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  absl::Status Value(JsonValue& out, int depth) {
    if (depth > kMaxDepth) return Error("JSON nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end of JSON");
    const char c = text_[pos_];
    if (c == '{') return Object(out, depth);
    if (c == '[') return Array(out, depth);
    if (c == '"') {
      out.type = JsonValue::Type::kString;
      return String(out.string);
    }
    if (Consume("true") || Consume("false")) {
      out.type = JsonValue::Type::kBool;
      out.boolean = text_.substr(pos_ - 4, 4) == "true";
      return absl::OkStatus();
    }
    if (Consume("null")) return absl::OkStatus();
    return Number(out);
  }

  absl::Status Number(JsonValue& out) {
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) ||
                                   std::string_view("+-.eE").find(text_[pos_]) !=
                                       std::string_view::npos)) {
      ++pos_;
    }
    std::string token(text_.substr(start, pos_ - start));
    char* end = nullptr;
    out.number = std::strtod(token.c_str(), &end);
    if (token.empty() || end != token.c_str() + token.size()) {
      pos_ = start;
      return Error("expected a JSON value");
    }
    out.type = JsonValue::Type::kNumber;
    return absl::OkStatus();
  }

  absl::Status String(std::string& out) {
    ++pos_;  // Opening quote.
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'u': {
          if (pos_ + 4 > text_.size()) return Error("truncated \\u escape");
          const unsigned long code = std::strtoul(std::string(text_.substr(pos_, 4)).c_str(),
                                                  nullptr, 16);
          pos_ += 4;
          if (code < 0x80) {
            out.push_back(static_cast<char>(code));
          } else if (code < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (code >> 6)));
            out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
          } else {
            out.push_back(static_cast<char>(0xE0 | (code >> 12)));
            out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
          }
          break;
        }
        default: out.push_back(e);
      }
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    ++pos_;
    return absl::OkStatus();
  }

  absl::Status Array(JsonValue& out, int depth) {
    out.type = JsonValue::Type::kArray;
    ++pos_;
    SkipSpace();
    if (Consume("]")) return absl::OkStatus();
    while (true) {
      out.array.emplace_back();
      if (absl::Status s = Value(out.array.back(), depth + 1); !s.ok()) return s;
      SkipSpace();
      if (Consume("]")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or ']'");
    }
  }

  absl::Status Object(JsonValue& out, int depth) {
    out.type = JsonValue::Type::kObject;
    ++pos_;
    SkipSpace();
    if (Consume("}")) return absl::OkStatus();
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Error("expected a string key");
      std::string key;
      if (absl::Status s = String(key); !s.ok()) return s;
      SkipSpace();
      if (!Consume(":")) return Error("expected ':'");
      out.object.emplace_back(std::move(key), JsonValue());
      if (absl::Status s = Value(out.object.back().second, depth + 1); !s.ok()) return s;
      SkipSpace();
      if (Consume("}")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or '}'");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const JsonValue* JsonValue::Find(std::string_view key) const {
  for (const auto& [k, v] : object) {
    if (k == key) return &v;
  }
  return nullptr;
}

absl::StatusOr<JsonValue> ParseJson(std::string_view text) { return JsonReader(text).Document(); }

JsonValue JsonValue::Object() {
  JsonValue v;
  v.type = Type::kObject;
  return v;
}

JsonValue JsonValue::Array() {
  JsonValue v;
  v.type = Type::kArray;
  return v;
}

JsonValue& JsonValue::Add(std::string key, JsonValue value) {
  object.emplace_back(std::move(key), std::move(value));
  return *this;
}

JsonValue& JsonValue::Push(JsonValue value) {
  array.push_back(std::move(value));
  return *this;
}

namespace {

// Strings are quoted as the statistics quote them.
void AppendQuoted(std::string_view s, std::string& out) { out += hlo::JsonQuoted(s); }

void AppendNumber(double v, std::string& out) {
  char buf[32];
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  if (v == std::floor(v) && std::fabs(v) < 9.2e18) {
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(buf, sizeof(buf), "%.17g", v);
  }
  out += buf;
}

void Append(const JsonValue& v, std::string& out) {
  switch (v.type) {
    case JsonValue::Type::kNull:
      out += "null";
      return;
    case JsonValue::Type::kBool:
      out += v.boolean ? "true" : "false";
      return;
    case JsonValue::Type::kNumber:
      AppendNumber(v.number, out);
      return;
    case JsonValue::Type::kString:
      AppendQuoted(v.string, out);
      return;
    case JsonValue::Type::kArray:
      out += '[';
      for (size_t i = 0; i < v.array.size(); ++i) {
        if (i) out += ", ";
        Append(v.array[i], out);
      }
      out += ']';
      return;
    case JsonValue::Type::kObject:
      out += '{';
      for (size_t i = 0; i < v.object.size(); ++i) {
        if (i) out += ", ";
        AppendQuoted(v.object[i].first, out);
        out += ": ";
        Append(v.object[i].second, out);
      }
      out += '}';
      return;
  }
}

}  // namespace

std::string ToJson(const JsonValue& value) {
  std::string out;
  Append(value, out);
  return out;
}

}  // namespace spmd

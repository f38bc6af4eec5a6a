// Lexical scanning for the HLO text parser. Line and column are computed only on request (for
// errors and for the parser's instruction locations), resuming from the previous request, so the
// hot path is a plain pointer walk.
#include "hlo/parser/text_cursor.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "hlo/strings.h"

namespace hlo {

void TextCursor::SkipSpace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == '/' && RawPeek(1) == '*') {
      size_t end = text_.find("*/", pos_ + 2);
      pos_ = end == std::string_view::npos ? text_.size() : end + 2;
    } else if (c == '/' && RawPeek(1) == '/') {
      size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    } else {
      return;
    }
  }
}

bool TextCursor::TryConsume(char c) {
  if (Peek() != c) return false;
  ++pos_;
  return true;
}

bool TextCursor::TryConsumeWord(std::string_view word) {
  SkipSpace();
  if (text_.substr(pos_, word.size()) != word) return false;
  if (pos_ + word.size() < text_.size() && IsNameChar(text_[pos_ + word.size()])) return false;
  pos_ += word.size();
  return true;
}

absl::Status TextCursor::Expect(char c, std::string_view context) {
  if (TryConsume(c)) return absl::OkStatus();
  return Error(StrCat("expected '", std::string(1, c), "' ", context, ", found ",
                            Describe()));
}

std::string_view TextCursor::ParseWord() {
  SkipSpace();
  size_t start = pos_;
  while (pos_ < text_.size() && IsNameChar(text_[pos_])) {
    if (text_[pos_] == '-' && RawPeek(1) == '>') break;
    ++pos_;
  }
  return text_.substr(start, pos_ - start);
}

absl::StatusOr<std::string_view> TextCursor::ParseName(std::string_view what) {
  SkipSpace();
  size_t start = pos_;
  if (RawPeek() == '%') ++pos_;
  std::string_view word = ParseWord();
  if (word.empty()) {
    pos_ = start;
    return Error(StrCat("expected ", what, ", found ", Describe()));
  }
  return word;
}

absl::StatusOr<int64_t> TextCursor::ParseInt(std::string_view what) {
  SkipSpace();
  const char* begin = text_.data() + pos_;
  const char* end = text_.data() + text_.size();
  int64_t value = 0;
  auto r = std::from_chars(begin, end, value);
  if (r.ec != std::errc() || (r.ptr < end && (*r.ptr == '.' || *r.ptr == 'e'))) {
    if (r.ec == std::errc::result_out_of_range) {
      return Error(StrCat(what, " is out of the 64-bit integer range"));
    }
    return Error(StrCat("expected an integer for ", what, ", found ", Describe()));
  }
  pos_ += r.ptr - begin;
  return value;
}

absl::StatusOr<double> TextCursor::ParseDouble(std::string_view what) {
  SkipSpace();
  bool negative = RawPeek() == '-';
  size_t start = pos_;
  if (negative || RawPeek() == '+') ++pos_;
  if (TryConsumeWord("nan")) {
    if (RawPeek() == '(') {  // nan(0x...) payloads are accepted and dropped.
      size_t close = text_.find(')', pos_);
      if (close != std::string_view::npos) pos_ = close + 1;
    }
    double nan = std::numeric_limits<double>::quiet_NaN();
    return negative ? -nan : nan;
  }
  if (TryConsumeWord("inf")) {
    double inf = std::numeric_limits<double>::infinity();
    return negative ? -inf : inf;
  }
  pos_ = start;
  const char* begin = text_.data() + pos_;
  double value = 0;
  auto r = std::from_chars(begin, text_.data() + text_.size(), value);
  if (r.ec == std::errc::result_out_of_range) {
    return Error(StrCat(what, " is out of the floating-point range"));
  }
  if (r.ec != std::errc()) {
    return Error(StrCat("expected a number for ", what, ", found ", Describe()));
  }
  pos_ += r.ptr - begin;
  return value;
}

absl::StatusOr<bool> TextCursor::ParseBool(std::string_view what) {
  if (TryConsumeWord("true")) return true;
  if (TryConsumeWord("false")) return false;
  return Error(StrCat("expected true or false for ", what, ", found ", Describe()));
}

absl::StatusOr<std::string> TextCursor::ParseQuoted(std::string_view what) {
  if (Peek() != '"') {
    return Error(StrCat("expected a quoted string for ", what, ", found ", Describe()));
  }
  size_t start = pos_++;
  std::string out;
  while (pos_ < text_.size()) {
    // Copy the run up to the next quote or backslash in one piece.
    size_t run_end = pos_;
    while (run_end < text_.size() && text_[run_end] != '"' && text_[run_end] != '\\') ++run_end;
    out.append(text_.data() + pos_, run_end - pos_);
    pos_ = run_end;
    if (pos_ >= text_.size() || text_[pos_] == '"') break;
    if (++pos_ >= text_.size()) break;  // A backslash at the very end.
    char e = text_[pos_++];
    if (e >= '0' && e <= '7') {
      // Octal, as absl::CEscape writes bytes >= 0x80 (XLA's file and function names).
      int v = e - '0';
      for (int digits = 1;
           digits < 3 && pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '7';
           ++digits) {
        v = v * 8 + (text_[pos_++] - '0');
      }
      out.push_back(static_cast<char>(v));
      continue;
    }
    switch (e) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'r': out.push_back('\r'); break;
      case 'x': {
        int v = 0, digits = 0;
        while (digits < 2 && pos_ < text_.size() &&
               std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
          unsigned char h = static_cast<unsigned char>(text_[pos_++]);
          v = v * 16 + (std::isdigit(h) ? h - '0' : (std::tolower(h) - 'a' + 10));
          ++digits;
        }
        out.push_back(static_cast<char>(v));
        break;
      }
      default: out.push_back(e);
    }
  }
  if (pos_ >= text_.size()) return ErrorAt(start, "unterminated string");
  ++pos_;
  return out;
}

absl::StatusOr<std::vector<int64_t>> TextCursor::ParseBracedInts(std::string_view what) {
  std::vector<int64_t> out;
  if (!TryConsume('{')) {
    return Error(StrCat("expected '{' to start ", what, ", found ", Describe()));
  }
  if (TryConsume('}')) return out;
  do {
    absl::StatusOr<int64_t> v = ParseInt(what);
    if (!v.ok()) return v.status();
    out.push_back(*v);
  } while (TryConsume(','));
  if (!TryConsume('}')) {
    return Error(StrCat("expected ',' or '}' in ", what, ", found ", Describe()));
  }
  return out;
}

absl::StatusOr<std::string_view> TextCursor::CaptureValue(std::string_view what) {
  SkipSpace();
  size_t start = pos_;
  int depth = 0;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '"') {
      absl::StatusOr<std::string> s = ParseQuoted(what);
      if (!s.ok()) return s.status();
      continue;
    }
    if (depth == 0 && (c == ',' || c == '\n')) break;
    if (c == '{' || c == '[' || c == '(') ++depth;
    if (c == '}' || c == ']' || c == ')') {
      if (depth == 0) break;
      --depth;
    }
    ++pos_;
  }
  if (depth != 0) return ErrorAt(start, StrCat("unbalanced brackets in ", what));
  size_t end = pos_;
  while (end > start && (text_[end - 1] == ' ' || text_[end - 1] == '\r')) --end;
  if (end == start) return ErrorAt(start, StrCat("expected a value for ", what));
  return text_.substr(start, end - start);
}

void TextCursor::LineCol(size_t offset, int64_t* line, int64_t* col) const {
  offset = std::min(offset, text_.size());
  if (offset < line_cache_offset_) {  // Rare: the walk restarts from the top.
    line_cache_offset_ = 0;
    line_cache_line_ = 1;
    line_cache_start_ = 0;
  }
  const char* data = text_.data();
  const char* end = data + offset;
  for (const char* p = data + line_cache_offset_; p < end;) {
    const void* newline = std::memchr(p, '\n', end - p);
    if (newline == nullptr) break;
    ++line_cache_line_;
    p = static_cast<const char*>(newline) + 1;
    line_cache_start_ = p - data;
  }
  line_cache_offset_ = offset;
  *line = line_cache_line_;
  *col = static_cast<int64_t>(offset - line_cache_start_) + 1;
}

absl::Status TextCursor::ErrorAt(size_t offset, std::string_view message) const {
  int64_t line, col;
  LineCol(offset, &line, &col);
  return absl::InvalidArgumentError(
      StrCat(filename_, ":", line, ":", col, ": error: ", message));
}

std::string TextCursor::Describe() {
  SkipSpace();
  if (pos_ >= text_.size()) return "end of input";
  size_t end = pos_;
  while (end < text_.size() && IsNameChar(text_[end]) && end - pos_ < 40) ++end;
  if (end == pos_) end = pos_ + 1;
  return StrCat("'", text_.substr(pos_, end - pos_), "'");
}

}  // namespace hlo

// A hand-written scanner over the sharding text: one pass, one character of lookahead, no
// allocation (tokens are views into the input).
#include "hlo/sharding/sharding_lexer.h"

#include <cctype>

#include "absl/strings/str_cat.h"

namespace hlo {
namespace sharding_internal {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

}  // namespace

const Token& ShardingLexer::Peek() {
  if (!has_peeked_) {
    peeked_ = Scan();
    has_peeked_ = true;
  }
  return peeked_;
}

Token ShardingLexer::Next() {
  Token token = Peek();
  has_peeked_ = false;
  consumed_ = token.offset + token.text.size();
  return token;
}

void ShardingLexer::SkipSpaceAndComments() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++pos_;
    } else if (text_.substr(pos_, 2) == "/*") {
      const size_t end = text_.find("*/", pos_ + 2);
      pos_ = end == absl::string_view::npos ? text_.size() : end + 2;
    } else if (text_.substr(pos_, 2) == "//") {
      const size_t end = text_.find('\n', pos_);
      pos_ = end == absl::string_view::npos ? text_.size() : end + 1;
    } else {
      return;
    }
  }
}

Token ShardingLexer::ScanNumber(size_t start) {
  Token token;
  token.kind = TokenKind::kInt;
  token.offset = start;
  size_t end = start + (text_[start] == '-' ? 1 : 0);
  while (end < text_.size() && IsDigit(text_[end])) ++end;
  token.text = text_.substr(start, end - start);
  if (token.text == "-") {
    token.kind = TokenKind::kInvalid;
    pos_ = end;
    return token;
  }
  const bool negative = text_[start] == '-';
  int64_t value = 0;
  for (size_t i = start + (negative ? 1 : 0); i < end; ++i) {
    const int digit = text_[i] - '0';
    if (value > (INT64_MAX - digit) / 10) {
      token.int_overflow = true;
      break;
    }
    value = value * 10 + digit;
  }
  token.int_value = negative ? -value : value;
  pos_ = end;
  return token;
}

Token ShardingLexer::ScanString(size_t start) {
  Token token;
  token.kind = TokenKind::kString;
  token.offset = start;
  size_t end = start + 1;
  while (end < text_.size() && text_[end] != '"') {
    end += text_[end] == '\\' ? 2 : 1;
  }
  if (end >= text_.size()) {
    token.kind = TokenKind::kInvalid;
    token.text = text_.substr(start, 1);
    pos_ = text_.size();
    return token;
  }
  token.text = text_.substr(start, end + 1 - start);
  pos_ = end + 1;
  return token;
}

Token ShardingLexer::ScanQuotedName(size_t start) {
  Token token;
  token.kind = TokenKind::kQuotedName;
  token.offset = start;
  const size_t end = text_.find('\'', start + 1);
  if (end == absl::string_view::npos) {
    token.kind = TokenKind::kInvalid;
    token.text = text_.substr(start, 1);
    pos_ = text_.size();
    return token;
  }
  token.text = text_.substr(start, end + 1 - start);
  pos_ = end + 1;
  return token;
}

Token ShardingLexer::Scan() {
  SkipSpaceAndComments();
  Token token;
  token.offset = pos_;
  if (pos_ >= text_.size()) {
    token.kind = TokenKind::kEnd;
    return token;
  }
  const char c = text_[pos_];
  auto single = [&](TokenKind kind, size_t length) {
    token.kind = kind;
    token.text = text_.substr(pos_, length);
    pos_ += length;
    return token;
  };
  switch (c) {
    case '{':
      return single(TokenKind::kLBrace, 1);
    case '}':
      return single(TokenKind::kRBrace, 1);
    case '[':
      return single(TokenKind::kLBracket, 1);
    case ']':
      return single(TokenKind::kRBracket, 1);
    case '(':
      return single(TokenKind::kLParen, 1);
    case ')':
      return single(TokenKind::kRParen, 1);
    case ',':
      return single(TokenKind::kComma, 1);
    case '=':
      return single(TokenKind::kEqual, 1);
    case ':':
      return single(TokenKind::kColon, 1);
    case '?':
      return single(TokenKind::kQuestion, 1);
    case '"':
      return ScanString(pos_);
    case '\'':
      return ScanQuotedName(pos_);
    default:
      break;
  }
  if (text_.substr(pos_, 2) == "<=") return single(TokenKind::kLessEqual, 2);
  if (IsDigit(c) || c == '-') return ScanNumber(pos_);
  if (IsIdentStart(c)) {
    size_t end = pos_ + 1;
    while (end < text_.size() && IsIdentChar(text_[end])) ++end;
    return single(TokenKind::kIdent, end - pos_);
  }
  return single(TokenKind::kInvalid, 1);
}

std::string ShardingLexer::Describe(const Token& token) {
  if (token.kind == TokenKind::kEnd) return "end of input";
  absl::string_view text = token.text;
  if (token.kind == TokenKind::kQuotedName && text.size() <= 24) return std::string(text);
  if (text.size() > 24) return absl::StrCat("'", text.substr(0, 21), "...'");
  return absl::StrCat("'", text, "'");
}

}  // namespace sharding_internal
}  // namespace hlo

// Tokens of the HLO sharding text form, for HloSharding::Parse.
//
// Recognizes `{ } [ ] ( ) , = <= : ?`, identifiers, decimal integers (optionally negative),
// double-quoted strings with backslash escapes and single-quoted names (`'x'`, no escapes; the
// named-mesh form's axis names); skips whitespace and `/*...*/` and `//...` comments. Every
// token records its byte offset into the text.
#ifndef HLO_SHARDING_SHARDING_LEXER_H_
#define HLO_SHARDING_SHARDING_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace hlo {
namespace sharding_internal {

enum class TokenKind {
  kLBrace,
  kRBrace,
  kLBracket,
  kRBracket,
  kLParen,
  kRParen,
  kComma,
  kEqual,
  kLessEqual,
  kColon,
  kQuestion,
  kIdent,
  kInt,
  kString,
  kQuotedName,  // `'x'`; `text` keeps the quotes.
  kEnd,
  kInvalid,  // A character or literal that starts no token; `text` says which.
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  size_t offset = 0;
  absl::string_view text;  // The token's source text (strings keep their quotes).
  int64_t int_value = 0;   // For kInt.
  bool int_overflow = false;
};

class ShardingLexer {
 public:
  explicit ShardingLexer(std::string_view text) : text_(text.data(), text.size()) {}

  // The next token, without consuming it.
  const Token& Peek();
  // Consumes and returns the next token.
  Token Next();
  // The offset just past the last consumed token.
  size_t consumed() const { return consumed_; }

  // How a token is named in messages: `'foo'`, or `end of input`.
  static std::string Describe(const Token& token);

 private:
  Token Scan();
  void SkipSpaceAndComments();
  Token ScanNumber(size_t start);
  Token ScanString(size_t start);
  Token ScanQuotedName(size_t start);

  absl::string_view text_;
  size_t pos_ = 0;
  size_t consumed_ = 0;
  bool has_peeked_ = false;
  Token peeked_;
};

}  // namespace sharding_internal
}  // namespace hlo

#endif  // HLO_SHARDING_SHARDING_LEXER_H_

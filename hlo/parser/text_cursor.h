// A character cursor over HLO text with the lexical rules of the format: whitespace and
// /*...*/ or // comments are skipped between tokens; names are [A-Za-z0-9_.%-]+ (a `-` is not
// part of a name when followed by `>`); errors carry FILE:LINE:COL of a byte offset.
#ifndef HLO_PARSER_TEXT_CURSOR_H_
#define HLO_PARSER_TEXT_CURSOR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hlo {

class TextCursor {
 public:
  TextCursor(std::string_view text, std::string_view filename)
      : text_(text), filename_(filename) {}

  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }
  std::string_view text() const { return text_; }
  bool AtEnd() { SkipSpace(); return pos_ >= text_.size(); }

  // Skips whitespace and comments.
  void SkipSpace();
  // The next non-space character, or '\0' at the end.
  char Peek() { SkipSpace(); return pos_ < text_.size() ? text_[pos_] : '\0'; }
  // Character at `pos()+k` without skipping space.
  char RawPeek(size_t k = 0) const {
    return pos_ + k < text_.size() ? text_[pos_ + k] : '\0';
  }
  // Consumes `c` (after space) and returns true, or leaves the cursor and returns false.
  bool TryConsume(char c);
  // Consumes the literal `word` if it is next and not followed by a name character.
  bool TryConsumeWord(std::string_view word);
  absl::Status Expect(char c, std::string_view context);

  // A name: optional leading `%`, stripped from the result.
  absl::StatusOr<std::string_view> ParseName(std::string_view what);
  // A name-shaped token without stripping (e.g. an opcode or enum value); may be empty.
  std::string_view ParseWord();
  absl::StatusOr<int64_t> ParseInt(std::string_view what);
  absl::StatusOr<double> ParseDouble(std::string_view what);
  absl::StatusOr<bool> ParseBool(std::string_view what);
  // A double-quoted string with C escapes, unescaped.
  absl::StatusOr<std::string> ParseQuoted(std::string_view what);
  // `{a,b,c}` of integers (possibly empty).
  absl::StatusOr<std::vector<int64_t>> ParseBracedInts(std::string_view what);
  // The raw text of one attribute value: everything up to a `,` or newline at bracket depth 0,
  // or an unbalanced closing bracket, with quoted strings kept whole.
  absl::StatusOr<std::string_view> CaptureValue(std::string_view what);

  // InvalidArgument "FILE:LINE:COL: error: MESSAGE" for the byte `offset`.
  absl::Status ErrorAt(size_t offset, std::string_view message) const;
  absl::Status Error(std::string_view message) const { return ErrorAt(pos_, message); }
  // A short description of the token at the cursor, for messages: `'foo'` or `end of input`.
  std::string Describe();
  void LineCol(size_t offset, int64_t* line, int64_t* col) const;

 private:
  std::string_view text_;
  std::string_view filename_;
  size_t pos_ = 0;
  // LineCol's last position (offset, its line, and where that line starts): a parse asks for
  // increasing offsets, so resuming from here makes all its calls together O(text) instead of
  // O(text) each.
  mutable size_t line_cache_offset_ = 0;
  mutable int64_t line_cache_line_ = 1;
  mutable size_t line_cache_start_ = 0;
};

inline bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

}  // namespace hlo

#endif  // HLO_PARSER_TEXT_CURSOR_H_

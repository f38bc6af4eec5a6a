// Looks at the first token after blank space and `//` comments (MLIR's comment syntax too):
// MLIR text starts with an operation (`module`, `func.func`, a quoted generic op name) or with
// attribute and type alias definitions (`#name = ...`, `!name = ...`), none of which can start
// HLO text; MLIR bytecode starts with the magic bytes "ML\xefR".
#include "hlo/parser/foreign_input.h"

#include <cctype>

#include "hlo/strings.h"

namespace hlo {
namespace {

constexpr std::string_view kBytecodeMagic =
    "ML\xef"
    "R";
constexpr std::string_view kHowToExport =
    "; export HLO from JAX with jax.jit(f).lower(...).as_text(dialect=\"hlo\") or "
    ".compiler_ir(\"hlo\").as_hlo_text() (a proto: "
    ".compiler_ir(\"hlo\").as_serialized_hlo_module_proto())";

// The offset of the first character that is neither blank space nor in a `//` comment.
size_t SkipSpaceAndComments(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
    } else if (text.substr(i, 2) == "//") {
      const size_t eol = text.find('\n', i);
      i = eol == std::string_view::npos ? text.size() : eol + 1;
    } else {
      break;
    }
  }
  return i;
}

bool StartsWithWord(std::string_view text, std::string_view word) {
  if (text.substr(0, word.size()) != word) return false;
  const char next = text.size() > word.size() ? text[word.size()] : ' ';
  return !std::isalnum(static_cast<unsigned char>(next)) && next != '_' && next != '.';
}

// `#name = ` or `!name = `: an MLIR attribute or type alias.
bool IsAliasDefinition(std::string_view text) {
  if (text.empty() || (text[0] != '#' && text[0] != '!')) return false;
  size_t i = 1;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' ||
                             text[i] == '.' || text[i] == '$')) {
    ++i;
  }
  while (i < text.size() && text[i] == ' ') ++i;
  return i > 1 && i < text.size() && text[i] == '=';
}

bool LooksLikeMlirText(std::string_view text) {
  return StartsWithWord(text, "module") || StartsWithWord(text, "func.func") ||
         text.substr(0, 16) == "\"builtin.module\"" || IsAliasDefinition(text);
}

// The first line of `text`; past 50 characters, cut at a space and ended with " ...".
std::string FirstLine(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
    line.remove_suffix(1);
  }
  constexpr size_t kMax = 50;
  if (line.size() <= kMax) return std::string(line);
  const size_t space = line.rfind(' ', kMax);
  return StrCat(line.substr(0, space == std::string_view::npos ? kMax : space), " ...");
}

}  // namespace

std::optional<NonHloInput> DescribeNonHloInput(std::string_view input) {
  if (input.substr(0, kBytecodeMagic.size()) == kBytecodeMagic) {
    return NonHloInput{
        0, StrCat("this is MLIR bytecode (serialized StableHLO), not HLO", kHowToExport)};
  }
  const size_t start = SkipSpaceAndComments(input);
  const std::string_view text = input.substr(start);
  if (!LooksLikeMlirText(text)) return std::nullopt;
  return NonHloInput{start, StrCat("this is StableHLO/MLIR text (it starts with '", FirstLine(text),
                                   "'), not HLO", kHowToExport)};
}

}  // namespace hlo

// Pieces shared by the HTML pages of spmd-inspect (the report, --html, and the diff,
// --diff A B --html): escaping, table cells, the page's frame and its one style sheet.
#ifndef TOOLS_INSPECT_HTML_UTIL_H_
#define TOOLS_INSPECT_HTML_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "hlo/ir/hlo_instruction.h"

namespace tools {

std::string Escape(std::string_view s);

std::string Cell(std::string_view s);
std::string NumCell(int64_t v);
// A right-aligned cell in human units ("2.0 MiB") with the exact count as its tooltip.
std::string BytesCell(int64_t bytes);

// `s`, cut to `n` characters with a trailing "~" when longer.
std::string Truncated(const std::string& s, size_t n);

// The id of an instruction's graph node ("n42"), which tables link to.
std::string NodeId(const hlo::HloInstruction& instr);

// `<!DOCTYPE html>` to `<body>`, with the style sheet; and `</body></html>` after `script`.
// The script must end by setting body[data-ready], which tests use to tell that it ran.
std::string PageStart(std::string_view title);
std::string PageEnd(std::string_view script);

}  // namespace tools

#endif  // TOOLS_INSPECT_HTML_UTIL_H_

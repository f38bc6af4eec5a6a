// Plain-text tables with aligned columns, for the reports of spmd-inspect.
#ifndef TOOLS_INSPECT_TEXT_TABLE_H_
#define TOOLS_INSPECT_TEXT_TABLE_H_

#include <string>
#include <vector>

namespace tools {

// Rows of cells; the first row is the header. Every column is padded to its widest cell and
// columns are separated by two spaces; each line starts with `indent` and ends in '\n'
// (trailing spaces removed).
std::string FormatTextTable(const std::vector<std::vector<std::string>>& rows,
                            const std::string& indent);

}  // namespace tools

#endif  // TOOLS_INSPECT_TEXT_TABLE_H_

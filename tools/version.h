// The version the three programs print for --version (`spmd-partition 0.21.0`): the number of
// the last issue whose command-line changes they include, as 0.ISSUE.PATCH.
#ifndef TOOLS_VERSION_H_
#define TOOLS_VERSION_H_

#include <string>

namespace tools {

inline constexpr char kVersion[] = "0.21.0";

inline std::string VersionLine(const std::string& program) { return program + " " + kVersion; }

}  // namespace tools

#endif  // TOOLS_VERSION_H_

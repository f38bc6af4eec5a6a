// String concatenation for the project. Debian's Abseil is built with its own absl::string_view
// (ABSL_OPTION_USE_STD_STRING_VIEW is 0), so absl::StrCat does not accept std::string_view.
// These replacements take std::string_view, absl::string_view, strings, C strings, integers,
// floating-point numbers and bools, and are what project code uses instead of absl::StrCat.
#ifndef HLO_STRINGS_H_
#define HLO_STRINGS_H_

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace hlo {
namespace strings_internal {

inline void AppendPiece(std::string* out, std::string_view s) { out->append(s); }
inline void AppendPiece(std::string* out, const char* s) { out->append(s); }
inline void AppendPiece(std::string* out, const std::string& s) { out->append(s); }
inline void AppendPiece(std::string* out, absl::string_view s) { out->append(s.data(), s.size()); }
inline void AppendPiece(std::string* out, char c) { out->push_back(c); }
inline void AppendPiece(std::string* out, bool b) { out->append(b ? "true" : "false"); }
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
void AppendPiece(std::string* out, T v) {
  absl::StrAppend(out, v);
}

}  // namespace strings_internal

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  (strings_internal::AppendPiece(out, args), ...);
}

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  StrAppend(&out, args...);
  return out;
}

// Converts Abseil's string_view (e.g. absl::Status::message()) to std::string_view.
inline std::string_view ToStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace hlo

#endif  // HLO_STRINGS_H_

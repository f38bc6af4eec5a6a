// Option checks whose refusals a user can act on. CLI11's PositiveNumber and NonNegativeNumber
// refuse "abc" as "Value abc not in range 0.000000 to 1797693...", which names no rule; these
// say what the option takes and what they were given.
#ifndef TOOLS_CLI_CHECKS_H_
#define TOOLS_CLI_CHECKS_H_

#include <string>

#include "CLI/CLI.hpp"

namespace tools {

// A number > 0 (or >= 0 when `zero_allowed`), integral or not as the option's type says.
inline CLI::Validator NumberAtLeast(bool zero_allowed) {
  const std::string what = zero_allowed ? "a number >= 0" : "a number > 0";
  return CLI::Validator(
      [zero_allowed, what](std::string& value) -> std::string {
        double number = 0;
        if (!CLI::detail::lexical_cast(value, number) || number < 0 ||
            (!zero_allowed && number == 0)) {
          return "expected " + what + ", got '" + value + "'";
        }
        return std::string();
      },
      zero_allowed ? "NONNEGATIVE" : "POSITIVE");
}

inline const CLI::Validator kPositive = NumberAtLeast(false);
inline const CLI::Validator kNonNegative = NumberAtLeast(true);

}  // namespace tools

#endif  // TOOLS_CLI_CHECKS_H_

// The `backend_config` of XLA's internal SPMD custom-calls: comma-separated `key=value` pairs
// whose values are integers or bracketed integer lists, e.g.
//   "dimension=0,amount=2,start_indices=[6, 0],limit_indices=[1526, 4],strides=[1, 1]".
#ifndef HLO_IR_CUSTOM_CALL_CONFIG_H_
#define HLO_IR_CUSTOM_CALL_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace hlo {

class CustomCallConfig {
 public:
  // Parses `text`. Errors name `target` and reject malformed pairs, repeated keys and keys not
  // in `known_keys`.
  static absl::StatusOr<CustomCallConfig> Parse(std::string_view target, std::string_view text,
                                                absl::Span<const std::string_view> known_keys);

  // The integer value of `key`; an error when it is missing or a list.
  absl::StatusOr<int64_t> Int(std::string_view key) const;
  // The list value of `key`; an error when it is missing or not a list.
  absl::StatusOr<std::vector<int64_t>> List(std::string_view key) const;

 private:
  struct Value {
    bool is_list = false;
    std::vector<int64_t> numbers;
  };

  absl::StatusOr<const Value*> Find(std::string_view key) const;

  std::string target_;
  std::map<std::string, Value, std::less<>> values_;
};

// The dims listed as `unspecified_dims=[a,b]` in a custom-call's backend_config (a Sharding
// constraint's or a manual conversion's dims left open to sharding propagation), or nullopt
// when the config does not list any.
std::optional<std::vector<int64_t>> ParseUnspecifiedDims(const std::string& backend_config);
// The backend_config `unspecified_dims=[a,b]` that ParseUnspecifiedDims reads back; empty for
// no dims.
std::string UnspecifiedDimsConfig(absl::Span<const int64_t> dims);

}  // namespace hlo

#endif  // HLO_IR_CUSTOM_CALL_CONFIG_H_

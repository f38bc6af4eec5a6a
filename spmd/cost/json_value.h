// A small JSON reader for configuration files (device models). Numbers are doubles; objects
// keep their keys' order of appearance. Errors name the line and column.
#ifndef SPMD_COST_JSON_VALUE_H_
#define SPMD_COST_JSON_VALUE_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace spmd {

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<std::pair<std::string, JsonValue>> object;

  // The member named `key` of an object, or nullptr.
  const JsonValue* Find(std::string_view key) const;
};

// Parses one JSON document (RFC 8259; \u escapes outside ASCII are kept as UTF-8).
absl::StatusOr<JsonValue> ParseJson(std::string_view text);

}  // namespace spmd

#endif  // SPMD_COST_JSON_VALUE_H_

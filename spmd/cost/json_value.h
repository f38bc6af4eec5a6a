// A small JSON library: a reader for configuration files (device models) and spmd-partition's
// baselines, and a one-line writer for the records tools emit. Numbers are doubles; objects
// keep their keys' order of appearance. Errors name the line and column.
#ifndef SPMD_COST_JSON_VALUE_H_
#define SPMD_COST_JSON_VALUE_H_

#include <cstddef>
#include <cstdint>
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

  // Builders: JsonValue::Object().Add("n", 1).Add("s", "x").
  static JsonValue Object();
  static JsonValue Array();
  JsonValue(std::nullptr_t = nullptr) {}
  JsonValue(bool b) : type(Type::kBool), boolean(b) {}
  JsonValue(double v) : type(Type::kNumber), number(v) {}
  JsonValue(int64_t v) : JsonValue(static_cast<double>(v)) {}
  JsonValue(int v) : JsonValue(static_cast<double>(v)) {}
  JsonValue(size_t v) : JsonValue(static_cast<double>(v)) {}
  JsonValue(std::string s) : type(Type::kString), string(std::move(s)) {}
  JsonValue(const char* s) : JsonValue(std::string(s)) {}
  JsonValue(std::string_view s) : JsonValue(std::string(s)) {}
  JsonValue& Add(std::string key, JsonValue value);  // An object member, in order.
  JsonValue& Push(JsonValue value);                  // An array element.
};

// Parses one JSON document (RFC 8259; \u escapes outside ASCII are kept as UTF-8).
absl::StatusOr<JsonValue> ParseJson(std::string_view text);

// `value` on one line, members separated by ", " and keys by ": " (the statistics' style);
// integral numbers below 2^63 without a fraction, others with up to 17 significant digits,
// non-finite numbers as null.
std::string ToJson(const JsonValue& value);

}  // namespace spmd

#endif  // SPMD_COST_JSON_VALUE_H_

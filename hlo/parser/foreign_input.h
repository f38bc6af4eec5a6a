// Recognition of inputs that are not HLO but are what JAX gives by default: StableHLO/MLIR text
// (`module @jit_f ...`, `func.func`, `"builtin.module"`, `#loc1 = ...` aliases) and MLIR
// bytecode. The parser and the module reader refuse them with a message that names the format
// and the JAX calls that export HLO instead.
#ifndef HLO_PARSER_FOREIGN_INPUT_H_
#define HLO_PARSER_FOREIGN_INPUT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace hlo {

struct NonHloInput {
  size_t offset = 0;    // Where the telltale token starts in the input.
  std::string message;  // "this is ..., not HLO; export HLO from JAX with ...".
};

// The description of `input` when it is one of the formats above; nullopt for anything else
// (HLO text, a serialized proto, other text).
std::optional<NonHloInput> DescribeNonHloInput(std::string_view input);

}  // namespace hlo

#endif  // HLO_PARSER_FOREIGN_INPUT_H_

// A literal's values as one flat byte string (its leaves' row-major bytes in leaf order), and
// back into a literal of a known shape: what a multi-process run sends between processes
// (collective inputs, arguments, results). The shape travels separately: both sides know it.
#ifndef RUNTIME_CPU_LITERAL_BYTES_H_
#define RUNTIME_CPU_LITERAL_BYTES_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/literal.h"

namespace runtime {

// Appends `value`'s leaves' bytes to `out`: `value.shape().byte_size()` of them.
void AppendLiteralBytes(const hlo::Literal& value, std::vector<uint8_t>* out);

// A literal of `shape` read from the front of `*bytes`, which then starts after it. Fails when
// `*bytes` is shorter than the shape needs.
absl::StatusOr<hlo::Literal> TakeLiteral(const hlo::Shape& shape, absl::Span<const uint8_t>* bytes);

}  // namespace runtime

#endif  // RUNTIME_CPU_LITERAL_BYTES_H_

#include "runtime/cpu/literal_bytes.h"

#include <cstring>

#include "hlo/ir/primitive_type.h"
#include "hlo/strings.h"
#include "runtime/common/tuple_leaves.h"

namespace runtime {

void AppendLiteralBytes(const hlo::Literal& value, std::vector<uint8_t>* out) {
  for (const hlo::ShapeIndex& index : LeafIndices(value.shape())) {
    const std::vector<uint8_t>& data = LeafOf(value, index).data();
    out->insert(out->end(), data.begin(), data.end());
  }
}

absl::StatusOr<hlo::Literal> TakeLiteral(const hlo::Shape& shape,
                                         absl::Span<const uint8_t>* bytes) {
  const size_t needed = static_cast<size_t>(shape.byte_size());
  if (bytes->size() < needed) {
    return absl::InvalidArgumentError(hlo::StrCat("expected ", needed, " bytes for ",
                                                  shape.ToString(false), ", got ", bytes->size()));
  }
  hlo::Literal value(shape);
  for (const hlo::ShapeIndex& index : LeafIndices(shape)) {
    std::vector<uint8_t>& data = *MutableLeafOf(value, index).mutable_data();
    if (!data.empty()) std::memcpy(data.data(), bytes->data(), data.size());
    bytes->remove_prefix(data.size());
  }
  return value;
}

}  // namespace runtime

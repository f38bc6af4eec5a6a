#include "hlo/analysis/iota_pieces.h"

#include "hlo/ir/primitive_type.h"

namespace hlo {

namespace {

// Constants larger than this are not read element by element.
constexpr int64_t kMaxConstantElements = int64_t{1} << 16;

// Whether the integer constant `value` holds each element's coordinate along `dim` (of size
// more than 1; a size-1 dim's zeros say nothing).
bool ConstantIsIotaAlong(const HloInstruction& value, int64_t dim) {
  const Shape& shape = value.shape();
  if (!value.attrs().literal.has_value() || dim < 0 || dim >= shape.rank() ||
      shape.dimensions(dim) < 2 || shape.num_elements() > kMaxConstantElements) {
    return false;
  }
  const Literal& literal = *value.attrs().literal;
  int64_t stride = 1;
  for (int64_t d = dim + 1; d < shape.rank(); ++d) stride *= shape.dimensions(d);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (literal.GetInt(i) != (i / stride) % shape.dimensions(dim)) return false;
  }
  return true;
}

}  // namespace

bool IsIotaAlong(const HloInstruction& value, int64_t dim) {
  if (!value.shape().IsArray() || !IsIntegralType(value.shape().element_type())) return false;
  if (value.opcode() == HloOpcode::kIota) return value.attrs().iota_dimension == dim;
  if (value.opcode() == HloOpcode::kConstant) return ConstantIsIotaAlong(value, dim);
  if (value.opcode() != HloOpcode::kBroadcast || value.dimensions() != std::vector<int64_t>{dim}) {
    return false;
  }
  const HloInstruction& source = *value.operand(0);
  return source.shape().IsArray() && source.shape().rank() == 1 &&
         IsIntegralType(source.shape().element_type()) &&
         (source.opcode() == HloOpcode::kIota || ConstantIsIotaAlong(source, 0));
}

namespace {

// The dim along which `value` is an iota, or -1 (`skip` is never chosen).
int64_t IotaDim(const HloInstruction& value, int64_t skip) {
  if (!value.shape().IsArray()) return -1;
  for (int64_t d = 0; d < value.shape().rank(); ++d) {
    if (d != skip && IsIotaAlong(value, d)) return d;
  }
  return -1;
}

}  // namespace

std::vector<IotaPiece> IotaPieces(const HloInstruction& value) {
  if (const int64_t d = IotaDim(value, -1); d >= 0) return {IotaPiece{-1, 0, 0, d}};
  if (value.opcode() != HloOpcode::kConcatenate || value.dimensions().size() != 1 ||
      !value.shape().IsArray() || !IsIntegralType(value.shape().element_type())) {
    return {};
  }
  const int64_t c = value.dimensions()[0];
  std::vector<IotaPiece> pieces;
  int64_t begin = 0;
  for (const HloInstruction* operand : value.operands()) {
    const int64_t end = begin + operand->shape().dimensions(c);
    if (const int64_t d = IotaDim(*operand, c); d >= 0) pieces.push_back({c, begin, end, d});
    begin = end;
  }
  return pieces;
}

std::optional<int64_t> IotaValueAt(const std::vector<IotaPiece>& pieces,
                                   const std::vector<int64_t>& coordinates) {
  for (const IotaPiece& p : pieces) {
    if (p.concat_dim >= 0 &&
        (coordinates[p.concat_dim] < p.begin || coordinates[p.concat_dim] >= p.end)) {
      continue;
    }
    return coordinates[p.dim];
  }
  return std::nullopt;
}

}  // namespace hlo

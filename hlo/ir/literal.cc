// Literal storage and its HLO text form. Narrow floats are converted through float_codec.
#include "hlo/ir/literal.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <utility>

#include "hlo/ir/float_codec.h"
#include "hlo/strings.h"

namespace hlo {

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) elements_.emplace_back(s);
  } else if (shape.IsArray()) {
    data_.assign(shape.num_elements() * ByteWidth(shape.element_type()), 0);
  }
}

Literal Literal::Tuple(const Shape& shape, std::vector<Literal> elements) {
  Literal tuple;
  tuple.shape_ = shape;
  tuple.elements_ = std::move(elements);
  return tuple;
}

namespace {

template <typename T>
T Load(const std::vector<uint8_t>& data, int64_t i) {
  T v;
  std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void Store(std::vector<uint8_t>* data, int64_t i, T v) {
  std::memcpy(data->data() + i * sizeof(T), &v, sizeof(T));
}

}  // namespace

double Literal::GetDouble(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  switch (t) {
    case PrimitiveType::kF32: return Load<float>(data_, i);
    case PrimitiveType::kF64: return Load<double>(data_, i);
    case PrimitiveType::kC64: return Load<float>(data_, 2 * i);
    case PrimitiveType::kC128: return Load<double>(data_, 2 * i);
    default: break;
  }
  if (IsFloatingPointType(t)) {
    uint16_t bits = ByteWidth(t) == 2 ? Load<uint16_t>(data_, i) : data_[i];
    return DecodeNarrowFloat(t, bits);
  }
  if (IsUnsignedIntegralType(t)) return static_cast<double>(GetUint(i));
  return static_cast<double>(GetInt(i));
}

void Literal::SetDouble(int64_t i, double value) {
  PrimitiveType t = shape_.element_type();
  switch (t) {
    case PrimitiveType::kF32: return Store<float>(&data_, i, static_cast<float>(value));
    case PrimitiveType::kF64: return Store<double>(&data_, i, value);
    case PrimitiveType::kC64:
    case PrimitiveType::kC128: return SetComplex(i, {value, 0.0});
    default: break;
  }
  if (IsFloatingPointType(t)) {
    uint16_t bits = EncodeNarrowFloat(t, value);
    if (ByteWidth(t) == 2) return Store<uint16_t>(&data_, i, bits);
    data_[i] = static_cast<uint8_t>(bits);
    return;
  }
  if (t == PrimitiveType::kPred) {
    data_[i] = value != 0;
    return;
  }
  if (IsUnsignedIntegralType(t)) return SetUint(i, static_cast<uint64_t>(value));
  SetInt(i, static_cast<int64_t>(value));
}

int64_t Literal::GetInt(int64_t i) const {
  switch (shape_.element_type()) {
    case PrimitiveType::kPred: return data_[i] != 0;
    case PrimitiveType::kS1:
    case PrimitiveType::kS2:
    case PrimitiveType::kS4:
    case PrimitiveType::kS8: return static_cast<int8_t>(data_[i]);
    case PrimitiveType::kS16: return Load<int16_t>(data_, i);
    case PrimitiveType::kS32: return Load<int32_t>(data_, i);
    case PrimitiveType::kS64: return Load<int64_t>(data_, i);
    case PrimitiveType::kU1:
    case PrimitiveType::kU2:
    case PrimitiveType::kU4:
    case PrimitiveType::kU8: return data_[i];
    case PrimitiveType::kU16: return Load<uint16_t>(data_, i);
    case PrimitiveType::kU32: return Load<uint32_t>(data_, i);
    case PrimitiveType::kU64: return static_cast<int64_t>(Load<uint64_t>(data_, i));
    default: return static_cast<int64_t>(GetDouble(i));
  }
}

uint64_t Literal::GetUint(int64_t i) const {
  if (shape_.element_type() == PrimitiveType::kU64) return Load<uint64_t>(data_, i);
  return static_cast<uint64_t>(GetInt(i));
}

void Literal::SetInt(int64_t i, int64_t value) {
  switch (shape_.element_type()) {
    case PrimitiveType::kPred: data_[i] = value != 0; return;
    case PrimitiveType::kS1:
    case PrimitiveType::kS2:
    case PrimitiveType::kS4:
    case PrimitiveType::kS8:
    case PrimitiveType::kU1:
    case PrimitiveType::kU2:
    case PrimitiveType::kU4:
    case PrimitiveType::kU8: data_[i] = static_cast<uint8_t>(value); return;
    case PrimitiveType::kS16:
    case PrimitiveType::kU16: return Store<uint16_t>(&data_, i, static_cast<uint16_t>(value));
    case PrimitiveType::kS32:
    case PrimitiveType::kU32: return Store<uint32_t>(&data_, i, static_cast<uint32_t>(value));
    case PrimitiveType::kS64:
    case PrimitiveType::kU64: return Store<int64_t>(&data_, i, value);
    default: SetDouble(i, static_cast<double>(value));
  }
}

void Literal::SetUint(int64_t i, uint64_t value) {
  if (shape_.element_type() == PrimitiveType::kU64) return Store<uint64_t>(&data_, i, value);
  SetInt(i, static_cast<int64_t>(value));
}

std::complex<double> Literal::GetComplex(int64_t i) const {
  if (shape_.element_type() == PrimitiveType::kC64) {
    return {Load<float>(data_, 2 * i), Load<float>(data_, 2 * i + 1)};
  }
  if (shape_.element_type() == PrimitiveType::kC128) {
    return {Load<double>(data_, 2 * i), Load<double>(data_, 2 * i + 1)};
  }
  return {GetDouble(i), 0.0};
}

void Literal::SetComplex(int64_t i, std::complex<double> value) {
  if (shape_.element_type() == PrimitiveType::kC64) {
    Store<float>(&data_, 2 * i, static_cast<float>(value.real()));
    Store<float>(&data_, 2 * i + 1, static_cast<float>(value.imag()));
  } else if (shape_.element_type() == PrimitiveType::kC128) {
    Store<double>(&data_, 2 * i, value.real());
    Store<double>(&data_, 2 * i + 1, value.imag());
  } else {
    SetDouble(i, value.real());
  }
}

void AppendFloatingPoint(double value, PrimitiveType type, std::string* out) {
  if (std::isnan(value)) {
    out->append(std::signbit(value) ? "-nan" : "nan");
    return;
  }
  if (std::isinf(value)) {
    out->append(value < 0 ? "-inf" : "inf");
    return;
  }
  char buf[64];
  std::to_chars_result r;
  if (type == PrimitiveType::kF64 || type == PrimitiveType::kC128) {
    r = std::to_chars(buf, buf + sizeof(buf), value);
  } else {
    r = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(value));
  }
  out->append(buf, r.ptr);
}

void Literal::AppendElement(int64_t i, std::string* out) const {
  PrimitiveType t = shape_.element_type();
  if (t == PrimitiveType::kPred) {
    out->append(data_[i] ? "true" : "false");
  } else if (IsComplexType(t)) {
    std::complex<double> c = GetComplex(i);
    out->push_back('(');
    AppendFloatingPoint(c.real(), t, out);
    out->append(", ");
    AppendFloatingPoint(c.imag(), t, out);
    out->push_back(')');
  } else if (IsFloatingPointType(t)) {
    AppendFloatingPoint(GetDouble(i), t, out);
  } else if (IsUnsignedIntegralType(t)) {
    StrAppend(out, GetUint(i));
  } else {
    StrAppend(out, GetInt(i));
  }
}

void Literal::AppendArray(std::string* out, int64_t dim, int64_t* index) const {
  const int64_t rank = shape_.rank();
  if (dim == rank) {
    AppendElement((*index)++, out);
    return;
  }
  const int64_t n = shape_.dimensions(dim);
  out->push_back('{');
  if (dim + 1 < rank) out->push_back(' ');
  for (int64_t k = 0; k < n; ++k) {
    if (k) out->append(", ");
    AppendArray(out, dim + 1, index);
  }
  if (dim + 1 < rank) out->push_back(' ');
  out->push_back('}');
}

void Literal::AppendTo(std::string* out) const {
  if (shape_.IsTuple()) {
    out->append("( ");
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i) out->append(", ");
      elements_[i].AppendTo(out);
    }
    out->append(" )");
    return;
  }
  if (!shape_.IsArray()) return;
  if (IsSplat()) {  // Every element equal: the scalar form, which XLA also reads.
    AppendElement(0, out);
    return;
  }
  int64_t index = 0;
  AppendArray(out, 0, &index);
}

bool Literal::IsSplat() const {
  const int64_t n = element_count();
  if (n < 2 || shape_.rank() == 0) return false;
  const size_t width = data_.size() / n;
  for (int64_t i = 1; i < n; ++i) {
    if (std::memcmp(data_.data(), data_.data() + i * width, width) != 0) return false;
  }
  return true;
}

std::string Literal::ToString() const {
  std::string out;
  AppendTo(&out);
  return out;
}

}  // namespace hlo

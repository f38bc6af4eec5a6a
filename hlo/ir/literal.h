// A Literal is a value of some Shape held in host memory: dense row-major bytes for an array
// (each element at its ByteWidth, complex numbers as (real, imag) pairs, pred as one byte), or
// one Literal per element for a tuple. Constants in the IR hold Literals; the executors read and
// write them.
#ifndef HLO_IR_LITERAL_H_
#define HLO_IR_LITERAL_H_

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "hlo/ir/shape.h"

namespace hlo {

class Literal {
 public:
  Literal() = default;
  // A zero-filled literal of `shape` (tuples recursively). Layouts are ignored: data is
  // row-major (dimension 0 most major).
  explicit Literal(const Shape& shape);
  // A tuple literal of `shape` holding `elements` (moved in, not zero-filled first).
  // REQUIRES: shape.IsTuple() with one tuple shape per element.
  static Literal Tuple(const Shape& shape, std::vector<Literal> elements);

  const Shape& shape() const { return shape_; }
  int64_t element_count() const { return shape_.IsArray() ? shape_.num_elements() : 0; }

  // Raw dense storage of an array literal.
  const std::vector<uint8_t>& data() const { return data_; }
  std::vector<uint8_t>* mutable_data() { return &data_; }

  // Tuple elements.
  const std::vector<Literal>& tuple_elements() const { return elements_; }
  std::vector<Literal>* mutable_tuple_elements() { return &elements_; }

  // Element access by linear (row-major) index, converting to/from a wide type. Floating and
  // complex types read their real part through GetDouble; integers and pred through GetInt.
  double GetDouble(int64_t i) const;
  void SetDouble(int64_t i, double value);
  int64_t GetInt(int64_t i) const;     // Exact for all integer types except u64 > INT64_MAX.
  uint64_t GetUint(int64_t i) const;   // Exact for unsigned types.
  void SetInt(int64_t i, int64_t value);
  void SetUint(int64_t i, uint64_t value);
  std::complex<double> GetComplex(int64_t i) const;
  void SetComplex(int64_t i, std::complex<double> value);

  // HLO constant text: `3.5`, `{ {1, 2}, {3, 4} }`, `(1, 2)` for complex, `( 1, {2} )` for
  // tuples; an array whose elements are all equal prints as that one scalar. Floats print in their shortest round-tripping form; nan, -nan, inf, -inf.
  std::string ToString() const;
  void AppendTo(std::string* out) const;

  // Whether an array of two or more elements holds one value everywhere (printed as a scalar).
  bool IsSplat() const;

  bool operator==(const Literal& o) const {
    return shape_.Compatible(o.shape_) && data_ == o.data_ && elements_ == o.elements_;
  }

 private:
  void AppendElement(int64_t i, std::string* out) const;
  void AppendArray(std::string* out, int64_t dim, int64_t* index) const;

  Shape shape_;
  std::vector<uint8_t> data_;
  std::vector<Literal> elements_;
};

// Appends the shortest text that parses back to the same double (`nan`, `inf` and `-inf`
// spelled out). `type` picks float vs double precision for the shortest form.
void AppendFloatingPoint(double value, PrimitiveType type, std::string* out);

}  // namespace hlo

#endif  // HLO_IR_LITERAL_H_

// Element-wise comparison: one pass to find the scale (largest |expected|), one pass to
// measure errors; integers compare exactly through their 64-bit values.
#include "runtime/cpu/compare.h"

#include <cmath>
#include <complex>
#include <cstring>

#include "hlo/strings.h"

namespace runtime {
namespace {

using hlo::PrimitiveType;

std::vector<int64_t> Unravel(int64_t linear, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    if (dims[i] == 0) break;
    index[i] = linear % dims[i];
    linear /= dims[i];
  }
  return index;
}

std::string ElementText(const hlo::Literal& literal, int64_t i) {
  const PrimitiveType type = literal.shape().element_type();
  std::string out;
  if (hlo::IsComplexType(type)) {
    std::complex<double> v = literal.GetComplex(i);
    out += "(";
    hlo::AppendFloatingPoint(v.real(), type, &out);
    out += ", ";
    hlo::AppendFloatingPoint(v.imag(), type, &out);
    return out + ")";
  }
  if (hlo::IsFloatingPointType(type)) {
    hlo::AppendFloatingPoint(literal.GetDouble(i), type, &out);
    return out;
  }
  if (type == PrimitiveType::kPred) return literal.GetInt(i) ? "true" : "false";
  if (hlo::IsUnsignedIntegralType(type)) return hlo::StrCat(literal.GetUint(i));
  return hlo::StrCat(literal.GetInt(i));
}

// Absolute error of one element, +inf when exactly one side is non-finite or they differ in
// a non-finite way; 0 for matching NaNs and infinities.
double FloatError(std::complex<double> e, std::complex<double> a) {
  const bool e_nan = std::isnan(e.real()) || std::isnan(e.imag());
  const bool a_nan = std::isnan(a.real()) || std::isnan(a.imag());
  if (e_nan || a_nan) return e_nan && a_nan ? 0.0 : INFINITY;
  if (e == a) return 0.0;
  const double err = std::abs(a - e);
  return std::isfinite(err) ? err : INFINITY;
}

// Element i of a real floating-point literal as a double: read straight from the buffer for
// f32, f64 and bf16 (the verifier's hot loop over arrays of up to billions of elements),
// through Literal::GetDouble for the other types.
class RealReader {
 public:
  explicit RealReader(const hlo::Literal& literal)
      : literal_(literal), type_(literal.shape().element_type()), bytes_(literal.data().data()) {}
  double operator()(int64_t i) const {
    switch (type_) {
      case PrimitiveType::kF32: {
        float f;
        std::memcpy(&f, bytes_ + 4 * i, 4);
        return f;
      }
      case PrimitiveType::kF64: {
        double d;
        std::memcpy(&d, bytes_ + 8 * i, 8);
        return d;
      }
      case PrimitiveType::kBF16: {
        uint16_t half;
        std::memcpy(&half, bytes_ + 2 * i, 2);
        const uint32_t bits = static_cast<uint32_t>(half) << 16;
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
      }
      default:
        return literal_.GetDouble(i);
    }
  }

 private:
  const hlo::Literal& literal_;
  PrimitiveType type_;
  const uint8_t* bytes_;
};

// FloatError for real values.
double RealError(double e, double a) {
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a) ? 0.0 : INFINITY;
  if (e == a) return 0.0;
  const double err = std::abs(a - e);
  return std::isfinite(err) ? err : INFINITY;
}

}  // namespace

Tolerance DefaultTolerance(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF32:
    case PrimitiveType::kC64:
      return {1e-4, 1e-5};
    case PrimitiveType::kF64:
    case PrimitiveType::kC128:
      return {1e-9, 1e-12};
    case PrimitiveType::kF16:
      return {1e-3, 1e-3};
    case PrimitiveType::kBF16:
      return {1e-2, 1e-2};
    default:
      if (hlo::IsFloatingPointType(type)) return {1.25e-1, 1.25e-1};
      return {0, 0};
  }
}

std::string FormatIndex(const std::vector<int64_t>& index) {
  std::string out = "[";
  for (size_t i = 0; i < index.size(); ++i) hlo::StrAppend(&out, i ? "," : "", index[i]);
  return out + "]";
}

ArrayComparison CompareArrays(const hlo::Literal& expected, const hlo::Literal& actual,
                              const Tolerance& tolerance) {
  ArrayComparison result;
  if (expected.shape().IsToken() && actual.shape().IsToken()) return result;  // No data.
  if (!expected.shape().IsArray() || !expected.shape().Compatible(actual.shape())) {
    result.problem = hlo::StrCat("expected ", expected.shape().ToString(false), ", got ",
                                 actual.shape().ToString(false));
    return result;
  }
  const PrimitiveType type = expected.shape().element_type();
  const bool complex = hlo::IsComplexType(type);
  const bool real = hlo::IsFloatingPointType(type) && !complex;
  const bool floating = real || complex;
  const RealReader read_expected(expected), read_actual(actual);
  const bool is_unsigned = hlo::IsUnsignedIntegralType(type);
  const int64_t n = expected.element_count();
  result.elements = n;
  double scale = 1.0;
  double worst_ratio = 0;
  if (floating) {
    for (int64_t i = 0; i < n; ++i) {
      const double m = real ? std::abs(read_expected(i)) : std::abs(expected.GetComplex(i));
      if (std::isfinite(m)) scale = std::max(scale, m);
    }
  }
  result.scale = scale;
  // Identical bytes: every element's error is 0 (NaNs of equal bits included), so the element
  // loop -- the verifier's hot path on large exact outputs -- has nothing to find.
  if (expected.data() == actual.data()) return result;
  for (int64_t i = 0; i < n; ++i) {
    double err = 0;
    double magnitude = 0;
    if (real) {
      const double e = read_expected(i);
      err = RealError(e, read_actual(i));
      magnitude = std::abs(e);
    } else if (complex) {
      const std::complex<double> e = expected.GetComplex(i);
      err = FloatError(e, actual.GetComplex(i));
      magnitude = std::abs(e);
    } else if (is_unsigned) {
      const uint64_t e = expected.GetUint(i), a = actual.GetUint(i);
      err = e > a ? static_cast<double>(e - a) : static_cast<double>(a - e);
      magnitude = static_cast<double>(e);
    } else {
      const int64_t e = expected.GetInt(i), a = actual.GetInt(i);
      err = std::abs(static_cast<double>(a) - static_cast<double>(e));
      if (err == 0 && a != e) err = 1;
      magnitude = std::abs(static_cast<double>(e));
    }
    result.max_abs_error = std::max(result.max_abs_error, err);
    if (magnitude > 0 && std::isfinite(magnitude)) {
      result.max_rel_error = std::max(result.max_rel_error, err / magnitude);
    }
    // An infinite error (one side non-finite, or infinities of opposite sign) never passes,
    // even where |expected| is infinite and so is the relative allowance.
    const double allowed =
        tolerance.exact() ? 0.0 : tolerance.atol * scale + tolerance.rtol * magnitude;
    const double ratio = err == 0 ? 0.0 : (allowed > 0 && std::isfinite(err) ? err / allowed
                                                                              : INFINITY);
    if (ratio > worst_ratio || (result.worst.empty() && err > 0)) {
      worst_ratio = ratio;
      result.worst = Unravel(i, expected.shape().dimensions());
      result.worst_expected = ElementText(expected, i);
      result.worst_actual = ElementText(actual, i);
      result.worst_error = err;
      result.worst_allowed = allowed;
    }
    const bool pass = err == 0 || (!tolerance.exact() && std::isfinite(err) && err <= allowed);
    if (pass) continue;
    if (result.mismatches++ == 0) {
      result.first_mismatch = Unravel(i, expected.shape().dimensions());
      result.expected_value = ElementText(expected, i);
      result.actual_value = ElementText(actual, i);
    }
  }
  return result;
}

}  // namespace runtime

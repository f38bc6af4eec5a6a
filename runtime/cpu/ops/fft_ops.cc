// fft(operand), fft_type=FFT|IFFT|RFFT|IRFFT, fft_length={...}: discrete Fourier transforms
// over the last len(fft_length) dims, computed as separable 1-D transforms in double
// precision, O(N log N) per line of any length N (radix-2, or Bluestein's chirp-z).
//   FFT   complex -> complex, X[k] = sum_n x[n] e^{-2 pi i kn/N}
//   IFFT  complex -> complex, x[n] = (1/N) sum_k X[k] e^{+2 pi i kn/N}
//   RFFT  real [.., N] -> complex [.., N/2+1] (forward on the last dim, then the others)
//   IRFFT complex [.., N/2+1] -> real [.., N] (inverse on the other dims, then the last dim
//         with Hermitian symmetry X[N-k] = conj(X[k]))
#include <cmath>
#include <complex>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/strings.h"
#include "runtime/cpu/ops/dot_handlers.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using Complex = std::complex<double>;

// A dense complex array with its dims.
struct CArray {
  std::vector<int64_t> dims;
  std::vector<Complex> data;
};

int64_t Stride(const std::vector<int64_t>& dims, int64_t axis) {
  int64_t stride = 1;
  for (size_t d = axis + 1; d < dims.size(); ++d) stride *= dims[d];
  return stride;
}

// In-place iterative radix-2 FFTs of one power-of-two size, e^{sign 2 pi i kn/N}, unscaled.
// The roots of unity are computed once (each from its own angle), not per line or stage.
class Radix2 {
 public:
  explicit Radix2(size_t n) : roots_(n / 2) {
    for (size_t k = 0; k < roots_.size(); ++k) {
      const double angle = -2.0 * M_PI * static_cast<double>(k) / static_cast<double>(n);
      roots_[k] = Complex(std::cos(angle), std::sin(angle));
    }
  }

  void Apply(std::vector<Complex>& a, double sign) const {
    const size_t n = a.size();
    for (size_t i = 1, j = 0; i < n; ++i) {  // Bit-reversal permutation.
      size_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(a[i], a[j]);
    }
    for (size_t len = 2; len <= n; len <<= 1) {
      const size_t stride = n / len;  // Roots of order len are every stride-th root of order n.
      for (size_t i = 0; i < n; i += len) {
        for (size_t k = 0; k < len / 2; ++k) {
          const Complex w = sign < 0 ? roots_[k * stride] : std::conj(roots_[k * stride]);
          const Complex u = a[i + k], v = a[i + k + len / 2] * w;
          a[i + k] = u + v;
          a[i + k + len / 2] = u - v;
        }
      }
    }
  }

 private:
  std::vector<Complex> roots_;  // e^{-2 pi i k/n}, k < n/2.
};

// Length-n transforms, e^{sign 2 pi i kn/N} unscaled, in O(n log n) for any n: radix-2 when n
// is a power of two, else Bluestein's chirp-z (a convolution done by radix-2 FFTs of a power
// of two >= 2n-1). Built once per (n, sign) and applied to every line.
class LineTransform {
 public:
  LineTransform(int64_t n, double sign)
      : n_(n), sign_(sign), radix2_(n <= 1 ? 1 : static_cast<size_t>(Pow2AtLeast(n))) {
    if (n <= 1 || (n & (n - 1)) == 0) return;
    chirp_.resize(n);
    for (int64_t k = 0; k < n; ++k) {
      // k^2 mod 2n keeps the angle exact for large k.
      const int64_t k2 = (k * k) % (2 * n);
      const double angle = sign * M_PI * static_cast<double>(k2) / static_cast<double>(n);
      chirp_[k] = Complex(std::cos(angle), std::sin(angle));
    }
    const size_t m = static_cast<size_t>(Pow2AtLeast(n));
    kernel_.assign(m, Complex(0, 0));
    kernel_[0] = std::conj(chirp_[0]);
    for (int64_t k = 1; k < n; ++k) kernel_[k] = kernel_[m - k] = std::conj(chirp_[k]);
    radix2_.Apply(kernel_, -1.0);
  }

  void Apply(std::vector<Complex>& a) const {
    if (n_ <= 1) return;
    if (chirp_.empty()) return radix2_.Apply(a, sign_);
    const size_t m = kernel_.size();
    std::vector<Complex> b(m, Complex(0, 0));
    for (int64_t k = 0; k < n_; ++k) b[k] = a[k] * chirp_[k];
    radix2_.Apply(b, -1.0);
    for (size_t i = 0; i < m; ++i) b[i] *= kernel_[i];
    radix2_.Apply(b, 1.0);
    const double scale = 1.0 / static_cast<double>(m);
    for (int64_t k = 0; k < n_; ++k) a[k] = b[k] * scale * chirp_[k];
  }

 private:
  // The radix-2 size for length n: n itself when a power of two, else the power of two
  // >= 2n-1 that Bluestein's convolution needs.
  static int64_t Pow2AtLeast(int64_t n) {
    if ((n & (n - 1)) == 0) return n;
    int64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    return m;
  }

  int64_t n_;
  double sign_;
  Radix2 radix2_;
  std::vector<Complex> chirp_;   // e^{sign pi i k^2/n}; empty for radix-2 lengths.
  std::vector<Complex> kernel_;  // FFT of the conjugate chirp, wrapped to length m.
};

// 1-D DFT along `axis`, reading the line's first `in_len` points (zero beyond; for
// `hermitian_input`, X[n-j] = conj(X[j]) beyond) and writing `out_len` of the `n`-point
// transform (the other dims kept). `inverse` uses e^{+...} and divides by `n`.
CArray Dft(const CArray& x, int64_t axis, int64_t n, int64_t out_len, bool inverse,
           bool hermitian_input) {
  CArray y;
  y.dims = x.dims;
  y.dims[axis] = out_len;
  int64_t total = 1;
  for (int64_t d : y.dims) total *= d;
  y.data.assign(total, Complex(0, 0));
  if (total == 0) return y;
  const int64_t in_len = x.dims[axis];
  const int64_t in_stride = Stride(x.dims, axis), out_stride = Stride(y.dims, axis);
  const int64_t outer = total / (out_len * out_stride);
  const LineTransform transform(n, inverse ? 1.0 : -1.0);
  std::vector<Complex> line(n);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t inner = 0; inner < out_stride; ++inner) {
      const Complex* src = x.data.data() + o * in_len * in_stride + inner;
      Complex* dst = y.data.data() + o * out_len * out_stride + inner;
      for (int64_t j = 0; j < n; ++j) {
        Complex v(0, 0);
        if (j < in_len) {
          v = src[j * in_stride];
        } else if (hermitian_input && n - j < in_len) {
          v = std::conj(src[(n - j) * in_stride]);
        }
        line[j] = v;
      }
      transform.Apply(line);
      for (int64_t k = 0; k < out_len; ++k) {
        const Complex value = k < n ? line[k] : Complex(0, 0);
        dst[k * out_stride] = inverse ? value / static_cast<double>(n) : value;
      }
    }
  }
  return y;
}

// Literal::GetComplex reads a real type with a zero imaginary part.
CArray FromLiteral(const Literal& l) {
  CArray a{l.shape().dimensions(), {}};
  for (int64_t i = 0; i < l.element_count(); ++i) a.data.push_back(l.GetComplex(i));
  return a;
}

}  // namespace

absl::StatusOr<Literal> HandleFft(const HloInstruction& instr,
                                  absl::Span<const Literal* const> operands, Evaluator&) {
  const std::vector<int64_t>& lengths = instr.attrs().fft_length;
  for (int64_t n : lengths) {
    if (n < 1 || n > (int64_t{1} << 40)) {
      return absl::InvalidArgumentError(hlo::StrCat("fft_length ", n, " is not a positive length"));
    }
  }
  const int64_t rank = operands.size() == 1 ? operands[0]->shape().rank() : 0;
  const int64_t l = static_cast<int64_t>(lengths.size());
  if (operands.size() != 1 || l < 1 || l > 3 || l > rank) {
    return absl::InvalidArgumentError("fft takes one operand and 1 to 3 fft_length values");
  }
  CArray x = FromLiteral(*operands[0]);
  const int64_t first = rank - l;
  const hlo::FftType type = instr.attrs().fft_type;
  switch (type) {
    case hlo::FftType::kFft:
    case hlo::FftType::kIfft:
      for (int64_t a = first; a < rank; ++a) {
        x = Dft(x, a, lengths[a - first], lengths[a - first], type == hlo::FftType::kIfft, false);
      }
      break;
    case hlo::FftType::kRfft:
      x = Dft(x, rank - 1, lengths.back(), lengths.back() / 2 + 1, false, false);
      for (int64_t a = first; a < rank - 1; ++a) {
        x = Dft(x, a, lengths[a - first], lengths[a - first], false, false);
      }
      break;
    case hlo::FftType::kIrfft:
      for (int64_t a = first; a < rank - 1; ++a) {
        x = Dft(x, a, lengths[a - first], lengths[a - first], true, false);
      }
      x = Dft(x, rank - 1, lengths.back(), lengths.back(), true, true);
      break;
  }
  Literal out(instr.shape());
  if (x.dims != instr.shape().dimensions()) {
    return absl::InvalidArgumentError(hlo::StrCat(
        "fft result ", instr.shape().ToString(false), " does not match fft_length"));
  }
  // SetComplex keeps the real part for a real result (IRFFT).
  for (int64_t i = 0; i < out.element_count(); ++i) out.SetComplex(i, x.data[i]);
  return out;
}

}  // namespace runtime

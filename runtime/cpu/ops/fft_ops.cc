// fft(operand), fft_type=FFT|IFFT|RFFT|IRFFT, fft_length={...}: discrete Fourier transforms
// over the last len(fft_length) dims, computed as separable 1-D DFTs in double precision
// (O(N) work per output element: correct first; the test programs are small).
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

// 1-D DFT along `axis`, reading `in_len` points and writing `out_len` (the other dims kept).
// `inverse` uses e^{+...} and divides by `n`, the transform length.
CArray Dft(const CArray& x, int64_t axis, int64_t n, int64_t out_len, bool inverse,
           bool hermitian_input) {
  CArray y;
  y.dims = x.dims;
  y.dims[axis] = out_len;
  int64_t total = 1;
  for (int64_t d : y.dims) total *= d;
  y.data.assign(total, Complex(0, 0));
  const int64_t in_len = x.dims[axis];
  const int64_t in_stride = Stride(x.dims, axis), out_stride = Stride(y.dims, axis);
  const int64_t outer = total / (out_len * out_stride);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t inner = 0; inner < out_stride; ++inner) {
      const Complex* src = x.data.data() + o * in_len * in_stride + inner;
      Complex* dst = y.data.data() + o * out_len * out_stride + inner;
      for (int64_t k = 0; k < out_len; ++k) {
        Complex sum(0, 0);
        for (int64_t j = 0; j < n; ++j) {
          Complex v;
          if (j < in_len) {
            v = src[j * in_stride];
          } else if (hermitian_input && n - j < in_len) {
            v = std::conj(src[(n - j) * in_stride]);
          }
          const double angle = sign * 2.0 * M_PI * static_cast<double>((k * j) % n) / n;
          sum += v * Complex(std::cos(angle), std::sin(angle));
        }
        dst[k * out_stride] = inverse ? sum / static_cast<double>(n) : sum;
      }
    }
  }
  return y;
}

CArray FromLiteral(const Literal& l) {
  CArray a{l.shape().dimensions(), {}};
  const bool complex = hlo::IsComplexType(l.shape().element_type());
  for (int64_t i = 0; i < l.element_count(); ++i) {
    a.data.push_back(complex ? l.GetComplex(i) : Complex(l.GetDouble(i), 0));
  }
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
  const bool complex = hlo::IsComplexType(instr.shape().element_type());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    if (complex) {
      out.SetComplex(i, x.data[i]);
    } else {
      out.SetDouble(i, x.data[i].real());
    }
  }
  return out;
}

}  // namespace runtime

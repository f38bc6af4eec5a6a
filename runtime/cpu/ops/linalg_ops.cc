// cholesky and triangular-solve (hlo/ir/linalg_attributes.h) on the minor two dims, each batch
// matrix on its own, computed in double precision (complex<double> for complex types) and
// rounded to the result type once.
//   cholesky        a = l . l^H column by column (Cholesky-Banachiewicz), reading only the
//                   attribute's triangle of a; the other triangle of the result is zero. A
//                   matrix that is not positive definite gives NaNs from its first failing
//                   pivot on, as the square root of a negative number does.
//   triangular-solve forward or back substitution, one column of b (left_side) or one row of
//                   b (right side) at a time, with op(a) read through the transpose or adjoint.
#include <complex>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/linalg_attributes.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cpu/ops/dot_handlers.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using Complex = std::complex<double>;
using Transpose = hlo::TriangularSolveAttributes::Transpose;

// The elements of `literal` as complex numbers (Literal::GetComplex reads real types with a
// zero imaginary part), and a literal of `shape` from them (SetComplex keeps the real part).
std::vector<Complex> Elements(const Literal& literal) {
  std::vector<Complex> out(literal.element_count());
  for (int64_t i = 0; i < literal.element_count(); ++i) out[i] = literal.GetComplex(i);
  return out;
}

Literal ToLiteral(const hlo::Shape& shape, const std::vector<Complex>& values) {
  Literal out(shape);
  for (int64_t i = 0; i < out.element_count(); ++i) out.SetComplex(i, values[i]);
  return out;
}

// The minor two dims of `shape` (rows, columns) and how many matrices the others hold.
struct Matrices {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t count = 0;
};
Matrices MatricesOf(const hlo::Shape& shape) {
  const int64_t r = shape.rank();
  Matrices m{shape.dimensions(r - 2), shape.dimensions(r - 1), 1};
  for (int64_t d = 0; d + 2 < r; ++d) m.count *= shape.dimensions(d);
  return m;
}

}  // namespace

absl::StatusOr<Literal> HandleCholesky(const HloInstruction& instr,
                                       absl::Span<const Literal* const> operands, Evaluator&) {
  if (operands.size() != 1 || operands[0]->shape().rank() < 2) {
    return absl::InvalidArgumentError("cholesky takes one operand of rank >= 2");
  }
  ASSIGN_OR_RETURN(hlo::CholeskyAttributes attributes, hlo::ReadCholeskyAttributes(instr));
  const Matrices m = MatricesOf(operands[0]->shape());
  const int64_t n = m.rows;
  const std::vector<Complex> a = Elements(*operands[0]);
  std::vector<Complex> out(a.size(), Complex(0, 0));
  std::vector<Complex> l(n * n);
  for (int64_t b = 0; b < m.count; ++b) {
    const Complex* x = &a[b * n * n];
    // The lower triangle of the Hermitian matrix: read as is, or from the upper one.
    auto at = [&](int64_t i, int64_t j) {
      return attributes.lower ? x[i * n + j] : std::conj(x[j * n + i]);
    };
    for (int64_t j = 0; j < n; ++j) {
      Complex pivot = at(j, j);
      for (int64_t k = 0; k < j; ++k) pivot -= l[j * n + k] * std::conj(l[j * n + k]);
      l[j * n + j] = std::sqrt(pivot.real());
      for (int64_t i = j + 1; i < n; ++i) {
        Complex s = at(i, j);
        for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * std::conj(l[j * n + k]);
        l[i * n + j] = s / l[j * n + j];
      }
    }
    Complex* y = &out[b * n * n];
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j <= i; ++j) {
        if (attributes.lower) {
          y[i * n + j] = l[i * n + j];
        } else {
          y[j * n + i] = std::conj(l[i * n + j]);
        }
      }
    }
  }
  return ToLiteral(instr.shape(), out);
}

absl::StatusOr<Literal> HandleTriangularSolve(const HloInstruction& instr,
                                              absl::Span<const Literal* const> operands,
                                              Evaluator&) {
  if (operands.size() != 2 || operands[0]->shape().rank() < 2 ||
      operands[1]->shape().rank() != operands[0]->shape().rank()) {
    return absl::InvalidArgumentError("triangular-solve takes a and b of one rank >= 2");
  }
  ASSIGN_OR_RETURN(hlo::TriangularSolveAttributes attributes,
                   hlo::ReadTriangularSolveAttributes(instr));
  const int64_t n = MatricesOf(operands[0]->shape()).rows;
  const Matrices bm = MatricesOf(operands[1]->shape());
  if ((attributes.left_side ? bm.rows : bm.cols) != n) {
    return absl::InvalidArgumentError("triangular-solve: b does not fit a");
  }
  const std::vector<Complex> a = Elements(*operands[0]);
  std::vector<Complex> x = Elements(*operands[1]);
  // op(a) is lower-triangular when a is and is not transposed, or is upper and is.
  const bool transposed = attributes.transpose_a != Transpose::kNoTranspose;
  const bool op_lower = attributes.lower != transposed;
  for (int64_t batch = 0; batch < bm.count; ++batch) {
    const Complex* am = &a[batch * n * n];
    Complex* xm = &x[batch * bm.rows * bm.cols];
    auto op = [&](int64_t i, int64_t k) {
      if (!transposed) return am[i * n + k];
      return attributes.transpose_a == Transpose::kAdjoint ? std::conj(am[k * n + i])
                                                           : am[k * n + i];
    };
    auto diagonal = [&](int64_t i) { return attributes.unit_diagonal ? Complex(1, 0) : op(i, i); };
    // One system of n unknowns, the element at position i being at(i): left side, a column
    // (op(a) . x = b: row i pairs op(i, k) with x[k]); right side, a row (x . op(a) = b:
    // column i pairs op(k, i) with x[k]). Substitution runs from the end the triangle starts.
    const bool forward = attributes.left_side ? op_lower : !op_lower;
    const int64_t lines = attributes.left_side ? bm.cols : bm.rows;
    for (int64_t line = 0; line < lines; ++line) {
      auto at = [&](int64_t i) -> Complex& {
        return attributes.left_side ? xm[i * bm.cols + line] : xm[line * bm.cols + i];
      };
      auto coefficient = [&](int64_t i, int64_t k) {
        return attributes.left_side ? op(i, k) : op(k, i);
      };
      for (int64_t step = 0; step < n; ++step) {
        const int64_t i = forward ? step : n - 1 - step;
        Complex s = at(i);
        for (int64_t k = forward ? 0 : i + 1; k < (forward ? i : n); ++k) {
          s -= coefficient(i, k) * at(k);
        }
        at(i) = s / diagonal(i);
      }
    }
  }
  return ToLiteral(instr.shape(), x);
}

}  // namespace runtime

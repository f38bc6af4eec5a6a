// cholesky and triangular-solve on the CPU executor, checked by their defining equations on
// random data (the factor times its adjoint gives the matrix back; op(a) times the solution
// gives b back), never against values the executor produced.
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/primitive_type.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;
using Complex = std::complex<double>;

absl::StatusOr<Literal> RunText(const std::string& text, std::vector<Literal> args) {
  auto module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  return Evaluator(**module, {}).RunEntry(std::move(args));
}

// `batch` random Hermitian positive definite n x n matrices: m . m^H + n . I.
Literal PositiveDefinite(PrimitiveType type, int64_t batch, int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  const bool complex = hlo::IsComplexType(type);
  Literal a(Shape::Array(type, {batch, n, n}));
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Complex> m(n * n);
    for (Complex& v : m) v = Complex(u(rng), complex ? u(rng) : 0);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        Complex s = i == j ? Complex(static_cast<double>(n), 0) : Complex(0, 0);
        for (int64_t k = 0; k < n; ++k) s += m[i * n + k] * std::conj(m[j * n + k]);
        a.SetComplex((b * n + i) * n + j, s);
      }
    }
  }
  return a;
}

std::string TypeName(PrimitiveType type) { return std::string(hlo::PrimitiveTypeName(type)); }

// Both triangles, f32 to c128: l . l^H (lower) and u^H . u (upper) give a back, and the other
// triangle of the result is zero.
TEST(LinalgOpsTest, CholeskyFactorTimesItsAdjointIsTheMatrix) {
  std::mt19937_64 rng(7);
  for (PrimitiveType type :
       {PrimitiveType::kF32, PrimitiveType::kF64, PrimitiveType::kC64, PrimitiveType::kC128}) {
    for (bool lower : {true, false}) {
      SCOPED_TRACE(TypeName(type) + (lower ? " lower" : " upper"));
      const int64_t batch = 3, n = 5;
      const std::string s = TypeName(type) + "[3,5,5]";
      const std::string text = "HloModule m\nENTRY e {\n  a = " + s +
                               " parameter(0)\n  ROOT c = " + s +
                               " cholesky(a), lower=" + (lower ? "true" : "false") + "\n}\n";
      Literal a = PositiveDefinite(type, batch, n, rng);
      std::vector<Literal> args;
      args.push_back(a);
      absl::StatusOr<Literal> out = RunText(text, std::move(args));
      ASSERT_TRUE(out.ok()) << out.status();
      const double tolerance =
          type == PrimitiveType::kF32 || type == PrimitiveType::kC64 ? 1e-4 : 1e-10;
      for (int64_t b = 0; b < batch; ++b) {
        auto f = [&](int64_t i, int64_t j) { return out->GetComplex((b * n + i) * n + j); };
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            Complex s(0, 0);
            for (int64_t k = 0; k < n; ++k) {
              s += lower ? f(i, k) * std::conj(f(j, k)) : std::conj(f(k, i)) * f(k, j);
            }
            EXPECT_NEAR(std::abs(s - a.GetComplex((b * n + i) * n + j)), 0, tolerance * n)
                << i << "," << j;
            if (lower ? j > i : j < i) EXPECT_EQ(f(i, j), Complex(0, 0));
          }
        }
      }
    }
  }
}

// Every combination of side, triangle, transpose and unit diagonal, real and complex: op(a)
// times the solution (or the solution times op(a)) gives b back. The triangle not named is
// filled with NaNs, which the solve must never read.
TEST(LinalgOpsTest, TriangularSolveSolvesEveryForm) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (PrimitiveType type : {PrimitiveType::kF64, PrimitiveType::kC128}) {
    const bool complex = hlo::IsComplexType(type);
    for (bool left : {true, false}) {
      for (bool lower : {true, false}) {
        for (std::string transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
          for (bool unit : {false, true}) {
            SCOPED_TRACE(TypeName(type) + (left ? " left " : " right ") +
                         (lower ? "lower " : "upper ") + transpose + (unit ? " unit" : ""));
            const int64_t batch = 2, n = 4, k = 3;
            const std::string t = TypeName(type);
            const std::string b_dims = left ? "[2,4,3]" : "[2,3,4]";
            const std::string text =
                "HloModule m\nENTRY e {\n  a = " + t + "[2,4,4] parameter(0)\n  b = " + t + b_dims +
                " parameter(1)\n  ROOT x = " + t + b_dims +
                " triangular-solve(a, b), left_side=" + (left ? "true" : "false") +
                ", lower=" + (lower ? "true" : "false") +
                ", unit_diagonal=" + (unit ? "true" : "false") + ", transpose_a=" + transpose +
                "\n}\n";
            Literal a(Shape::Array(type, {batch, n, n}));
            for (int64_t b = 0; b < batch; ++b) {
              for (int64_t i = 0; i < n; ++i) {
                for (int64_t j = 0; j < n; ++j) {
                  const bool stored = i == j || (lower ? j < i : j > i);
                  Complex v(u(rng), complex ? u(rng) : 0);
                  if (i == j) v += Complex(3, 0);  // Well conditioned.
                  if (!stored) v = Complex(std::nan(""), 0);
                  a.SetComplex((b * n + i) * n + j, v);
                }
              }
            }
            Literal rhs(Shape::Array(type, left ? std::vector<int64_t>{batch, n, k}
                                                : std::vector<int64_t>{batch, k, n}));
            for (int64_t i = 0; i < rhs.element_count(); ++i) {
              rhs.SetComplex(i, Complex(u(rng), complex ? u(rng) : 0));
            }
            std::vector<Literal> args;
            args.push_back(a);
            args.push_back(rhs);
            absl::StatusOr<Literal> out = RunText(text, std::move(args));
            ASSERT_TRUE(out.ok()) << out.status();
            for (int64_t b = 0; b < batch; ++b) {
              // op(a)[i][j], the unnamed triangle zero and the diagonal one when unit.
              auto op = [&](int64_t i, int64_t j) {
                const int64_t r = transpose == "NO_TRANSPOSE" ? i : j;
                const int64_t c = transpose == "NO_TRANSPOSE" ? j : i;
                if (r == c && unit) return Complex(1, 0);
                if (r != c && (lower ? c > r : c < r)) return Complex(0, 0);
                const Complex v = a.GetComplex((b * n + r) * n + c);
                return transpose == "ADJOINT" ? std::conj(v) : v;
              };
              const int64_t rows = left ? n : k, cols = left ? k : n;
              auto x = [&](int64_t i, int64_t j) {
                return out->GetComplex((b * rows + i) * cols + j);
              };
              for (int64_t i = 0; i < rows; ++i) {
                for (int64_t j = 0; j < cols; ++j) {
                  Complex s(0, 0);
                  for (int64_t m = 0; m < n; ++m)
                    s += left ? op(i, m) * x(m, j) : x(i, m) * op(m, j);
                  EXPECT_NEAR(std::abs(s - rhs.GetComplex((b * rows + i) * cols + j)), 0, 1e-10)
                      << i << "," << j;
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace runtime

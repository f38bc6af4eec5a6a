#include "runtime/cpu/ops/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace runtime {
namespace {

// A random m x k x n problem with its own buffers. Operands are stored as asked (row- or
// column-major) with `pad` unused elements after each stored row, so leading dimensions are
// larger than the matrix; C gets the same padding, filled with a sentinel that must survive.
template <typename T>
struct RandomProblem {
  RandomProblem(int64_t m, int64_t k, int64_t n, bool a_col_major, bool b_col_major,
                int64_t pad = 0, uint32_t seed = 1) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(-1, 1);
    p = {};
    p.m = m;
    p.k = k;
    p.n = n;
    p.a_col_major = a_col_major;
    p.b_col_major = b_col_major;
    p.lda = (a_col_major ? m : k) + pad;
    p.ldb = (b_col_major ? k : n) + pad;
    p.ldc = n + pad;
    a.resize((a_col_major ? k : m) * p.lda + 1);
    b.resize((b_col_major ? n : k) * p.ldb + 1);
    c.assign(m * p.ldc + 1, kSentinel);
    for (T& x : a) x = static_cast<T>(dist(rng));
    for (T& x : b) x = static_cast<T>(dist(rng));
    p.a = a.data();
    p.b = b.data();
    p.c = c.data();
  }

  T A(int64_t i, int64_t l) const { return p.a_col_major ? a[l * p.lda + i] : a[i * p.lda + l]; }
  T B(int64_t l, int64_t j) const { return p.b_col_major ? b[j * p.ldb + l] : b[l * p.ldb + j]; }
  T C(int64_t i, int64_t j) const { return c[i * p.ldc + j]; }

  // Compares C with a naive triple loop in long double; the allowed error is a few units of
  // rounding of the sum of |products|, times k.
  void ExpectMatchesNaive(const std::string& what) const {
    const double eps = std::is_same_v<T, float> ? 1.2e-7 : 2.3e-16;
    int64_t reported = 0;
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        long double sum = 0, magnitude = 0;
        for (int64_t l = 0; l < p.k; ++l) {
          const long double product = static_cast<long double>(A(i, l)) * B(l, j);
          sum += product;
          magnitude += std::fabs(product);
        }
        const double bound = 4 * eps * static_cast<double>(p.k + 1) * magnitude;
        const double error = std::fabs(static_cast<double>(C(i, j) - sum));
        if (error > bound && reported++ < 5) {
          ADD_FAILURE() << what << ": C(" << i << "," << j << ") = " << C(i, j) << ", naive sum "
                        << static_cast<double>(sum) << ", bound " << bound;
        }
      }
      for (int64_t j = p.n; j < p.ldc; ++j) {
        if (c[i * p.ldc + j] != kSentinel && reported++ < 5) {
          ADD_FAILURE() << what << ": padding of C row " << i << " overwritten";
        }
      }
    }
    if (c.back() != kSentinel) ADD_FAILURE() << what << ": wrote past C";
  }

  static constexpr T kSentinel = T(12345);
  GemmProblem<T> p;
  std::vector<T> a, b, c;
};

struct Shape {
  int64_t m, k, n;
};

const Shape kShapes[] = {
    {1, 1, 1},   {3, 5, 7},   {7, 0, 5},    {0, 4, 6},      {6, 4, 0},    {17, 1, 33},
    {1, 37, 29}, {31, 29, 1}, {65, 63, 67}, {129, 257, 95}, {8, 1024, 9}, {300, 37, 211},
};

std::string Name(const GemmKernels& kernels, const Shape& s, bool a_col, bool b_col) {
  return std::string(kernels.name) + " " + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" +
         std::to_string(s.n) + (a_col ? " A col-major" : " A row-major") +
         (b_col ? ", B col-major" : ", B row-major");
}

template <typename T>
void CheckEveryShapeAndLayout(const GemmKernels& kernels, void (*kernel)(const GemmProblem<T>&)) {
  for (const Shape& s : kShapes) {
    for (bool a_col : {false, true}) {
      for (bool b_col : {false, true}) {
        for (int64_t pad : {0, 3}) {
          RandomProblem<T> direct(s.m, s.k, s.n, a_col, b_col, pad);
          kernel(direct.p);
          direct.ExpectMatchesNaive(Name(kernels, s, a_col, b_col) + " pad " + std::to_string(pad));
        }
      }
    }
  }
}

TEST(GemmTest, EveryBuildMatchesNaiveLoopF32) {
  for (const GemmKernels* kernels : SupportedGemmKernels()) {
    CheckEveryShapeAndLayout<float>(*kernels, kernels->f32);
  }
}

TEST(GemmTest, EveryBuildMatchesNaiveLoopF64) {
  for (const GemmKernels* kernels : SupportedGemmKernels()) {
    CheckEveryShapeAndLayout<double>(*kernels, kernels->f64);
  }
}

TEST(GemmTest, HostBuildIsTheWidestSupported) {
  const std::vector<const GemmKernels*> supported = SupportedGemmKernels();
  ASSERT_FALSE(supported.empty());
  EXPECT_EQ(supported.front(), &kGenericGemmKernels);
  EXPECT_EQ(&HostGemmKernels(), supported.back());
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_NE(&HostGemmKernels(), &kGenericGemmKernels);
  }
#endif
}

// The vector builds agree with the generic one up to rounding (FMA and a different summation
// order), on a product large enough to run Eigen's blocked kernels.
TEST(GemmTest, VectorBuildsAgreeWithGeneric) {
  for (bool a_col : {false, true}) {
    for (bool b_col : {false, true}) {
      RandomProblem<float> generic(150, 700, 190, a_col, b_col);
      kGenericGemmKernels.f32(generic.p);
      for (const GemmKernels* kernels : SupportedGemmKernels()) {
        RandomProblem<float> other(150, 700, 190, a_col, b_col);
        kernels->f32(other.p);
        float max_diff = 0;
        for (size_t i = 0; i < other.c.size(); ++i) {
          max_diff = std::max(max_diff, std::fabs(other.c[i] - generic.c[i]));
        }
        // |C| is about sqrt(700 / 9) ~ 9; f32 rounding over 700 terms stays far below this.
        EXPECT_LT(max_diff, 1e-3f) << kernels->name;
      }
    }
  }
}

TEST(GemmTest, SplitKeepsSmallProductsWhole) {
  EXPECT_EQ(ChooseGemmSplit(64, 64, 64, 8).panels, 1);
  EXPECT_EQ(ChooseGemmSplit(2048, 2048, 2048, 1).panels, 1);
  EXPECT_EQ(ChooseGemmSplit(300, 4096, 511, 8).panels, 1);  // Under two 256-wide panels.
  EXPECT_EQ(ChooseGemmSplit(512, 0, 512, 8).panels, 1);
  EXPECT_EQ(ChooseGemmSplit(0, 1 << 20, 1 << 20, 8).panels, 1);
  EXPECT_EQ(ChooseGemmSplit(512, 128, 512, 8).panels, 1);  // 2^25 multiply-adds.
}

TEST(GemmTest, SplitCutsTheLargerDimensionIntoAlignedPanels) {
  GemmSplit s = ChooseGemmSplit(2048, 2048, 2048, 2);
  EXPECT_EQ(s.panels, 2);
  EXPECT_EQ(s.panel_size, 1024);
  EXPECT_TRUE(s.split_columns);
  s = ChooseGemmSplit(256, 114688, 14336, 16);
  EXPECT_EQ(s.panels, 16);
  EXPECT_EQ(s.panel_size, 896);
  EXPECT_TRUE(s.split_columns);
  s = ChooseGemmSplit(1000, 512, 300, 3);
  EXPECT_FALSE(s.split_columns);
  EXPECT_EQ(s.panel_size, 384);  // ceil(1000 / 3) = 334, rounded up to 64.
  EXPECT_EQ(s.panels, 3);
  s = ChooseGemmSplit(600, 4096, 100, 64);  // At most 600 / 256 = 2 panels.
  EXPECT_EQ(s.panels, 2);
  EXPECT_EQ(s.panel_size, 320);
}

// Largest difference between two problems' C buffers, padding included (it must hold the
// sentinel in both).
template <typename T>
double MaxDifference(const RandomProblem<T>& x, const RandomProblem<T>& y) {
  double diff = 0;
  for (size_t i = 0; i < x.c.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(x.c[i]) - y.c[i]));
  }
  return diff;
}

// Panels cover the product exactly, with every layout, whether they run on one thread or on
// idle cores; the result is the same bits either way, and the unsplit kernel's up to rounding.
TEST(GemmTest, PanelsGiveTheSameBitsOnAnyNumberOfThreads) {
  const Shape shapes[] = {{97, 1100, 777}, {777, 1100, 97}};
  for (const Shape& s : shapes) {
    for (bool a_col : {false, true}) {
      for (bool b_col : {false, true}) {
        RandomProblem<float> whole(s.m, s.k, s.n, a_col, b_col, 5);
        RandomProblem<float> one(s.m, s.k, s.n, a_col, b_col, 5);
        RandomProblem<float> many(s.m, s.k, s.n, a_col, b_col, 5);
        HostGemmKernels().f32(whole.p);
        DenseGemm(HostGemmKernels(), one.p, /*max_threads=*/1);
        DenseGemm(HostGemmKernels(), many.p);
        const std::string name = Name(HostGemmKernels(), s, a_col, b_col);
        // |C| is about sqrt(1100 / 9) ~ 11.
        EXPECT_LT(MaxDifference(whole, one), 1e-3) << name;
        EXPECT_EQ(std::memcmp(one.c.data(), many.c.data(), one.c.size() * sizeof(float)), 0)
            << name;
      }
    }
  }
  RandomProblem<double> one(700, 600, 300, true, true);
  RandomProblem<double> many(700, 600, 300, true, true);
  DenseGemm(HostGemmKernels(), one.p, 1);
  DenseGemm(HostGemmKernels(), many.p);
  one.ExpectMatchesNaive("f64 700x600x300");
  EXPECT_EQ(std::memcmp(one.c.data(), many.c.data(), one.c.size() * sizeof(double)), 0);
}

// The splits other machines would make (DenseGemm uses this machine's core count): aligned
// panels, no more than the cores, covering the extent exactly once.
TEST(GemmTest, SplitPanelsCoverTheExtent) {
  for (int64_t cores : {2, 3, 5, 8, 16}) {
    for (int64_t extent : {512, 513, 1000, 4097}) {
      const GemmSplit s = ChooseGemmSplit(extent, 1 << 16, 64, cores);
      ASSERT_GT(s.panels, 1) << extent << " on " << cores;
      EXPECT_FALSE(s.split_columns);
      EXPECT_EQ(s.panel_size % 64, 0);
      EXPECT_GE(s.panels * s.panel_size, extent);
      EXPECT_LT((s.panels - 1) * s.panel_size, extent);
      EXPECT_LE(s.panels, cores);
    }
  }
}

}  // namespace
}  // namespace runtime

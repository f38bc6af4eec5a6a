// Tests of the elementwise handlers (unary, binary, compare, select, clamp, conversions) against
// hand-computed values, through the text parser and the evaluator.
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/float_codec.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/evaluator.h"
#include "runtime/cpu/ops/elementwise_kernels.h"

namespace runtime {
namespace {

using hlo::Literal;

// Parses `text` and runs its entry computation with no arguments.
absl::StatusOr<Literal> RunText(const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  return Evaluator(**module, {}).RunEntry({});
}

// Runs an entry whose ROOT is `root` after the instructions in `body`.
Literal RunOk(const std::string& body) {
  absl::StatusOr<Literal> result = RunText("HloModule m\nENTRY e {\n" + body + "\n}\n");
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *std::move(result) : Literal();
}

std::vector<double> Doubles(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetDouble(i));
  return v;
}

std::vector<int64_t> Ints(const Literal& l) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetInt(i));
  return v;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Equality that treats NaN == NaN and distinguishes -0 from +0.
void ExpectSameDoubles(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual[i])) << "element " << i << " = " << actual[i];
    } else {
      EXPECT_EQ(actual[i], expected[i]) << "element " << i;
      EXPECT_EQ(std::signbit(actual[i]), std::signbit(expected[i])) << "element " << i;
    }
  }
}

TEST(ElementwiseUnaryTest, RoundingAndSign) {
  const std::string x = "x = f32[6] constant({2.5, -2.5, 3.5, -0.4, -0, nan})\n";
  ExpectSameDoubles(Doubles(RunOk(x + "ROOT r = f32[6] round-nearest-afz(x)")),
                    {3, -3, 4, -0.0, -0.0, kNaN});
  ExpectSameDoubles(Doubles(RunOk(x + "ROOT r = f32[6] round-nearest-even(x)")),
                    {2, -2, 4, -0.0, -0.0, kNaN});
  ExpectSameDoubles(Doubles(RunOk(x + "ROOT r = f32[6] floor(x)")), {2, -3, 3, -1, -0.0, kNaN});
  ExpectSameDoubles(Doubles(RunOk(x + "ROOT r = f32[6] ceil(x)")), {3, -2, 4, -0.0, -0.0, kNaN});
  ExpectSameDoubles(Doubles(RunOk(x + "ROOT r = f32[6] sign(x)")), {1, -1, 1, -1, -0.0, kNaN});
  ExpectSameDoubles(Doubles(RunOk(x + "ROOT r = f32[6] abs(x)")), {2.5, 2.5, 3.5, 0.4f, 0, kNaN});
}

TEST(ElementwiseUnaryTest, Transcendentals) {
  const std::string x = "x = f64[3] constant({0.25, 1, 4})\n";
  auto check = [&](const std::string& op, double (*fn)(double)) {
    std::vector<double> got = Doubles(RunOk(x + "ROOT r = f64[3] " + op + "(x)"));
    ASSERT_EQ(got.size(), 3u);
    const double in[] = {0.25, 1, 4};
    for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(got[i], fn(in[i])) << op << " " << in[i];
  };
  check("exponential", [](double v) { return std::exp(v); });
  check("exponential-minus-one", [](double v) { return std::expm1(v); });
  check("log", [](double v) { return std::log(v); });
  check("log-plus-one", [](double v) { return std::log1p(v); });
  check("logistic", [](double v) { return 1 / (1 + std::exp(-v)); });
  check("sqrt", [](double v) { return std::sqrt(v); });
  check("rsqrt", [](double v) { return 1 / std::sqrt(v); });
  check("cbrt", [](double v) { return std::cbrt(v); });
  check("sine", [](double v) { return std::sin(v); });
  check("cosine", [](double v) { return std::cos(v); });
  check("tan", [](double v) { return std::tan(v); });
  check("tanh", [](double v) { return std::tanh(v); });
  check("erf", [](double v) { return std::erf(v); });
  check("negate", [](double v) { return -v; });
}

TEST(ElementwiseUnaryTest, IntegerBitOps) {
  const std::string x = "x = s32[4] constant({0, 1, -1, 255})\n";
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[4] popcnt(x)")), (std::vector<int64_t>{0, 1, 32, 8}));
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[4] count-leading-zeros(x)")),
            (std::vector<int64_t>{32, 31, 0, 24}));
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[4] not(x)")), (std::vector<int64_t>{-1, -2, 0, -256}));
  EXPECT_EQ(Ints(RunOk("x = u8[2] constant({1, 128})\nROOT r = u8[2] count-leading-zeros(x)")),
            (std::vector<int64_t>{7, 0}));
  EXPECT_EQ(Ints(RunOk("x = pred[2] constant({true, false})\nROOT r = pred[2] not(x)")),
            (std::vector<int64_t>{0, 1}));
}

TEST(ElementwiseUnaryTest, IntegerWrapAround) {
  const std::string x = "x = s32[3] constant({-2147483648, -5, 7})\n";
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[3] abs(x)")), (std::vector<int64_t>{-2147483648LL, 5, 7}));
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[3] negate(x)")),
            (std::vector<int64_t>{-2147483648LL, 5, -7}));
  EXPECT_EQ(Ints(RunOk(x + "ROOT r = s32[3] sign(x)")), (std::vector<int64_t>{-1, -1, 1}));
}

TEST(ElementwiseUnaryTest, IsFiniteRealImagAbs) {
  EXPECT_EQ(Ints(RunOk("x = f32[4] constant({1, inf, -inf, nan})\n"
                       "ROOT r = pred[4] is-finite(x)")),
            (std::vector<int64_t>{1, 0, 0, 0}));
  const std::string z = "z = c64[2] constant({(3, 4), (-1, 0.5)})\n";
  ExpectSameDoubles(Doubles(RunOk(z + "ROOT r = f32[2] real(z)")), {3, -1});
  ExpectSameDoubles(Doubles(RunOk(z + "ROOT r = f32[2] imag(z)")), {4, 0.5});
  std::vector<double> abs = Doubles(RunOk(z + "ROOT r = f32[2] abs(z)"));
  EXPECT_FLOAT_EQ(abs[0], 5);
  EXPECT_FLOAT_EQ(abs[1], std::sqrt(1.25f));
}

TEST(ElementwiseUnaryTest, NarrowFloatsComputeInFloatAndRound) {
  // bf16 has 8 significant bits: sqrt(2) = 1.41421... rounds to 1.4140625.
  ExpectSameDoubles(Doubles(RunOk("x = bf16[2] constant({2, 16})\nROOT r = bf16[2] sqrt(x)")),
                    {1.4140625, 4});
  ExpectSameDoubles(Doubles(RunOk("x = f16[2] constant({-1.5, 0.5})\nROOT r = f16[2] negate(x)")),
                    {1.5, -0.5});
}

TEST(ElementwiseUnaryTest, UnsupportedTypeIsAnError) {
  absl::StatusOr<Literal> r = RunText(
      "HloModule m\nENTRY e {\n x = s32[2] constant({1, 2})\n ROOT r = s32[2] floor(x)\n}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("floor does not support element type s32"),
            std::string::npos)
      << r.status().ToString();
  r = RunText(
      "HloModule m\nENTRY e {\n x = pred[1] constant({true})\n ROOT r = pred[1] negate(x)\n}\n");
  ASSERT_FALSE(r.ok());
}

TEST(ElementwiseBinaryTest, FloatArithmetic) {
  const std::string ab = "a = f32[3] constant({1.5, -2, 9})\nb = f32[3] constant({0.5, 4, -3})\n";
  ExpectSameDoubles(Doubles(RunOk(ab + "ROOT r = f32[3] add(a, b)")), {2, 2, 6});
  ExpectSameDoubles(Doubles(RunOk(ab + "ROOT r = f32[3] subtract(a, b)")), {1, -6, 12});
  ExpectSameDoubles(Doubles(RunOk(ab + "ROOT r = f32[3] multiply(a, b)")), {0.75, -8, -27});
  ExpectSameDoubles(Doubles(RunOk(ab + "ROOT r = f32[3] divide(a, b)")), {3, -0.5, -3});
  ExpectSameDoubles(Doubles(RunOk(ab + "ROOT r = f32[3] remainder(a, b)")), {0, -2, 0});
  std::vector<double> pow = Doubles(RunOk(ab + "ROOT r = f32[3] power(a, b)"));
  ASSERT_EQ(pow.size(), 3u);
  EXPECT_FLOAT_EQ(pow[0], std::sqrt(1.5f));
  EXPECT_FLOAT_EQ(pow[1], 16);
  EXPECT_FLOAT_EQ(pow[2], 1.0f / 729);
  std::vector<double> atan = Doubles(RunOk(ab + "ROOT r = f32[3] atan2(a, b)"));
  ASSERT_EQ(atan.size(), 3u);
  EXPECT_FLOAT_EQ(atan[1], std::atan2(-2.0f, 4.0f));
  EXPECT_FLOAT_EQ(atan[2], std::atan2(9.0f, -3.0f));
}

TEST(ElementwiseBinaryTest, MaximumMinimumPropagateNaN) {
  const std::string ab = "a = f32[3] constant({nan, 1, 2})\nb = f32[3] constant({1, nan, 3})\n";
  ExpectSameDoubles(Doubles(RunOk(ab + "ROOT r = f32[3] maximum(a, b)")), {kNaN, kNaN, 3});
  ExpectSameDoubles(Doubles(RunOk(ab + "ROOT r = f32[3] minimum(a, b)")), {kNaN, kNaN, 2});
  EXPECT_EQ(Ints(RunOk("a = s8[2] constant({-128, 5})\nb = s8[2] constant({127, 3})\n"
                       "ROOT r = s8[2] maximum(a, b)")),
            (std::vector<int64_t>{127, 5}));
}

TEST(ElementwiseBinaryTest, IntegerDivisionEdgeCases) {
  const std::string ab =
      "a = s32[4] constant({7, -7, 5, -2147483648})\n"
      "b = s32[4] constant({2, 2, 0, -1})\n";
  EXPECT_EQ(Ints(RunOk(ab + "ROOT r = s32[4] divide(a, b)")),
            (std::vector<int64_t>{3, -3, -1, -2147483648LL}));
  EXPECT_EQ(Ints(RunOk(ab + "ROOT r = s32[4] remainder(a, b)")),
            (std::vector<int64_t>{1, -1, 5, 0}));
  Literal u = RunOk(
      "a = u32[2] constant({7, 9})\nb = u32[2] constant({0, 2})\n"
      "ROOT r = u32[2] divide(a, b)");
  EXPECT_EQ(u.GetUint(0), 4294967295u);
  EXPECT_EQ(u.GetUint(1), 4u);
}

TEST(ElementwiseBinaryTest, IntegerOverflowWraps) {
  EXPECT_EQ(Ints(RunOk("a = s32[2] constant({2147483647, -2147483648})\n"
                       "b = s32[2] constant({1, 1})\nROOT r = s32[2] add(a, b)")),
            (std::vector<int64_t>{-2147483648LL, -2147483647LL}));
  EXPECT_EQ(Ints(RunOk("a = u16[1] constant({65535})\nb = u16[1] constant({65535})\n"
                       "ROOT r = u16[1] multiply(a, b)")),
            (std::vector<int64_t>{1}));
}

TEST(ElementwiseBinaryTest, ShiftsBeyondTheWidth) {
  const std::string ab =
      "a = s32[5] constant({1, 1, -8, -8, -8})\n"
      "b = s32[5] constant({31, 32, 1, 40, -1})\n";
  EXPECT_EQ(Ints(RunOk(ab + "ROOT r = s32[5] shift-left(a, b)")),
            (std::vector<int64_t>{-2147483648LL, 0, -16, 0, 0}));
  EXPECT_EQ(Ints(RunOk(ab + "ROOT r = s32[5] shift-right-arithmetic(a, b)")),
            (std::vector<int64_t>{0, 0, -4, -1, -1}));
  EXPECT_EQ(Ints(RunOk(ab + "ROOT r = s32[5] shift-right-logical(a, b)")),
            (std::vector<int64_t>{0, 0, 0x7FFFFFFC, 0, 0}));
}

TEST(ElementwiseBinaryTest, IntegerPower) {
  EXPECT_EQ(Ints(RunOk("a = s32[5] constant({2, 2, 1, -2, 0})\n"
                       "b = s32[5] constant({10, -1, -5, 3, 0})\nROOT r = s32[5] power(a, b)")),
            (std::vector<int64_t>{1024, 0, 1, -8, 1}));
}

TEST(ElementwiseBinaryTest, BitwiseAndPredLogic) {
  const std::string ab = "a = u8[2] constant({12, 255})\nb = u8[2] constant({10, 1})\n";
  EXPECT_EQ(Ints(RunOk(ab + "ROOT r = u8[2] and(a, b)")), (std::vector<int64_t>{8, 1}));
  EXPECT_EQ(Ints(RunOk(ab + "ROOT r = u8[2] or(a, b)")), (std::vector<int64_t>{14, 255}));
  EXPECT_EQ(Ints(RunOk(ab + "ROOT r = u8[2] xor(a, b)")), (std::vector<int64_t>{6, 254}));
  const std::string pq =
      "p = pred[4] constant({true, true, false, false})\n"
      "q = pred[4] constant({true, false, true, false})\n";
  EXPECT_EQ(Ints(RunOk(pq + "ROOT r = pred[4] and(p, q)")), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(Ints(RunOk(pq + "ROOT r = pred[4] or(p, q)")), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(Ints(RunOk(pq + "ROOT r = pred[4] xor(p, q)")), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(Ints(RunOk(pq + "ROOT r = pred[4] add(p, q)")), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(Ints(RunOk(pq + "ROOT r = pred[4] multiply(p, q)")),
            (std::vector<int64_t>{1, 0, 0, 0}));
}

TEST(ElementwiseBinaryTest, ComplexArithmetic) {
  Literal z = RunOk(
      "a = f32[2] constant({1, -2})\nb = f32[2] constant({2, 0.5})\n"
      "ROOT r = c64[2] complex(a, b)");
  EXPECT_EQ(z.GetComplex(0), std::complex<double>(1, 2));
  EXPECT_EQ(z.GetComplex(1), std::complex<double>(-2, 0.5));
  Literal m = RunOk(
      "a = c128[1] constant({(1, 2)})\nb = c128[1] constant({(3, -1)})\n"
      "ROOT r = c128[1] multiply(a, b)");
  EXPECT_EQ(m.GetComplex(0), std::complex<double>(5, 5));
}

TEST(ElementwiseBinaryTest, Bf16AddRoundsToNearestEven) {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to the even mantissa, 1.
  ExpectSameDoubles(Doubles(RunOk("a = bf16[2] constant({1, 1})\n"
                                  "b = bf16[2] constant({0.00390625, 0.01171875})\n"
                                  "ROOT r = bf16[2] add(a, b)")),
                    {1, 1.015625});
}

TEST(CompareTest, FloatDirectionsWithNaN) {
  const std::string ab = "a = f32[3] constant({1, nan, -0})\nb = f32[3] constant({2, nan, 0})\n";
  auto cmp = [&](const std::string& dir) {
    return Ints(RunOk(ab + "ROOT r = pred[3] compare(a, b), direction=" + dir));
  };
  EXPECT_EQ(cmp("LT"), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(cmp("LE"), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(cmp("EQ"), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(cmp("NE"), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(cmp("GT"), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(cmp("GE"), (std::vector<int64_t>{0, 0, 1}));
}

TEST(CompareTest, TotalOrder) {
  const std::string ab =
      "a = f32[4] constant({-0, nan, -nan, inf})\n"
      "b = f32[4] constant({0, nan, -inf, nan})\n";
  EXPECT_EQ(Ints(RunOk(ab + "ROOT r = pred[4] compare(a, b), direction=LT, type=TOTALORDER")),
            (std::vector<int64_t>{1, 0, 1, 1}));
  EXPECT_EQ(Ints(RunOk(ab + "ROOT r = pred[4] compare(a, b), direction=EQ, type=TOTALORDER")),
            (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(Ints(RunOk("a = bf16[2] constant({-0, -1})\nb = bf16[2] constant({0, -2})\n"
                       "ROOT r = pred[2] compare(a, b), direction=GT, type=TOTALORDER")),
            (std::vector<int64_t>{0, 1}));
}

TEST(CompareTest, SignedAndUnsignedIntegers) {
  EXPECT_EQ(Ints(RunOk("a = u32[1] constant({4294967295})\nb = u32[1] constant({1})\n"
                       "ROOT r = pred[1] compare(a, b), direction=GT")),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(Ints(RunOk("a = s32[1] constant({-1})\nb = s32[1] constant({1})\n"
                       "ROOT r = pred[1] compare(a, b), direction=GT")),
            (std::vector<int64_t>{0}));
  EXPECT_EQ(Ints(RunOk("a = s32[1] constant({-1})\nb = s32[1] constant({1})\n"
                       "ROOT r = pred[1] compare(a, b), direction=GT, type=UNSIGNED")),
            (std::vector<int64_t>{1}));
}

TEST(CompareTest, ComplexOrderingIsAnError) {
  absl::StatusOr<Literal> r = RunText(
      "HloModule m\nENTRY e {\n a = c64[1] constant({(1, 1)})\n"
      " ROOT r = pred[1] compare(a, a), direction=LT\n}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      Ints(RunOk("a = c64[2] constant({(1, 1), (1, 2)})\nb = c64[2] constant({(1, 1), (1, 3)})\n"
                 "ROOT r = pred[2] compare(a, b), direction=EQ")),
      (std::vector<int64_t>{1, 0}));
}

TEST(SelectTest, ArrayAndScalarPredicate) {
  const std::string tf = "t = s64[3] constant({1, 2, 3})\nf = s64[3] constant({-1, -2, -3})\n";
  EXPECT_EQ(Ints(RunOk(tf + "p = pred[3] constant({true, false, true})\n"
                            "ROOT r = s64[3] select(p, t, f)")),
            (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(Ints(RunOk(tf + "p = pred[] constant(false)\nROOT r = s64[3] select(p, t, f)")),
            (std::vector<int64_t>{-1, -2, -3}));
}

TEST(ClampTest, ScalarBoundsAndNaN) {
  ExpectSameDoubles(Doubles(RunOk("lo = f32[] constant(-1)\nhi = f32[] constant(2)\n"
                                  "x = f32[4] constant({-5, 0.5, 7, nan})\n"
                                  "ROOT r = f32[4] clamp(lo, x, hi)")),
                    {-1, 0.5, 2, kNaN});
  EXPECT_EQ(Ints(RunOk("lo = s32[3] constant({0, 5, -9})\nhi = s32[] constant(6)\n"
                       "x = s32[3] constant({-3, 3, 100})\nROOT r = s32[3] clamp(lo, x, hi)")),
            (std::vector<int64_t>{0, 5, 6}));
}

TEST(ConvertTest, FloatToIntegerSaturates) {
  EXPECT_EQ(Ints(RunOk("x = f32[5] constant({nan, 3e9, -3e9, -2.7, 2.7})\n"
                       "ROOT r = s32[5] convert(x)")),
            (std::vector<int64_t>{0, 2147483647, -2147483648LL, -2, 2}));
  EXPECT_EQ(Ints(RunOk("x = f32[4] constant({-1, 300, 254.9, inf})\nROOT r = u8[4] convert(x)")),
            (std::vector<int64_t>{0, 255, 254, 255}));
  Literal u64 = RunOk("x = f64[2] constant({1e30, -inf})\nROOT r = u64[2] convert(x)");
  EXPECT_EQ(u64.GetUint(0), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(u64.GetUint(1), 0u);
}

TEST(ConvertTest, IntegersWrapAndPredIsNonzero) {
  EXPECT_EQ(Ints(RunOk("x = s32[3] constant({300, -1, 127})\nROOT r = s8[3] convert(x)")),
            (std::vector<int64_t>{44, -1, 127}));
  EXPECT_EQ(Ints(RunOk("x = s32[2] constant({-1, 256})\nROOT r = u8[2] convert(x)")),
            (std::vector<int64_t>{255, 0}));
  EXPECT_EQ(Ints(RunOk("x = f32[4] constant({0, -0, 0.1, nan})\nROOT r = pred[4] convert(x)")),
            (std::vector<int64_t>{0, 0, 1, 1}));
  ExpectSameDoubles(
      Doubles(RunOk("x = pred[2] constant({true, false})\nROOT r = f32[2] convert(x)")), {1, 0});
}

TEST(ConvertTest, NarrowFloatRounding) {
  ExpectSameDoubles(Doubles(RunOk("x = f32[3] constant({1.00390625, 1.01171875, 3.39e38})\n"
                                  "ROOT r = bf16[3] convert(x)")),
                    {1, 1.015625, 3.3895313892515355e38});
  ExpectSameDoubles(Doubles(RunOk("x = f32[3] constant({65519, 65520, 1e-8})\n"
                                  "ROOT r = f16[3] convert(x)")),
                    {65504, kInf, 0});
  ExpectSameDoubles(Doubles(RunOk("x = bf16[1] constant({3})\nROOT r = f8e4m3fn[1] convert(x)")),
                    {3});
  ExpectSameDoubles(Doubles(RunOk("x = f16[2] constant({0.5, -2})\nROOT r = f64[2] convert(x)")),
                    {0.5, -2});
}

TEST(ConvertTest, ComplexConversions) {
  Literal z = RunOk("x = s32[2] constant({3, -4})\nROOT r = c128[2] convert(x)");
  EXPECT_EQ(z.GetComplex(1), std::complex<double>(-4, 0));
  absl::StatusOr<Literal> r = RunText(
      "HloModule m\nENTRY e {\n x = c64[1] constant({(1, 2)})\n ROOT r = f32[1] convert(x)\n}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("complex"), std::string::npos);
}

TEST(BitcastConvertTest, SameAndDifferentWidths) {
  EXPECT_EQ(Ints(RunOk("x = f32[2] constant({1, -2})\nROOT r = s32[2] bitcast-convert(x)")),
            (std::vector<int64_t>{0x3F800000, static_cast<int32_t>(0xC0000000u)}));
  EXPECT_EQ(Ints(RunOk("x = f32[1] constant({1})\nROOT r = u8[1,4] bitcast-convert(x)")),
            (std::vector<int64_t>{0, 0, 0x80, 0x3F}));
  EXPECT_EQ(Ints(RunOk("x = u8[2,2] constant({ {1, 2}, {3, 4} })\n"
                       "ROOT r = u16[2] bitcast-convert(x)")),
            (std::vector<int64_t>{0x0201, 0x0403}));
}

TEST(ReducePrecisionTest, RoundsMantissaAndClampsExponent) {
  ExpectSameDoubles(Doubles(RunOk("x = f32[3] constant({1.00390625, 1.01171875, -1.3})\n"
                                  "ROOT r = f32[3] reduce-precision(x), exponent_bits=8, "
                                  "mantissa_bits=7")),
                    {1, 1.015625, -1.296875});
  ExpectSameDoubles(Doubles(RunOk("x = f32[4] constant({1e5, -1e5, 1e-8, nan})\n"
                                  "ROOT r = f32[4] reduce-precision(x), exponent_bits=5, "
                                  "mantissa_bits=10")),
                    {kInf, -kInf, 0, kNaN});
  ExpectSameDoubles(Doubles(RunOk("x = f32[1] constant({nan})\n"
                                  "ROOT r = f32[1] reduce-precision(x), exponent_bits=5, "
                                  "mantissa_bits=0")),
                    {kInf});
}

TEST(StochasticConvertTest, IsUnimplemented) {
  absl::StatusOr<Literal> r = RunText(
      "HloModule m\nENTRY e {\n x = f32[1] constant({1})\n u = u32[1] constant({7})\n"
      " ROOT r = bf16[1] stochastic-convert(x, u)\n}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
}

// The inline bf16/f16 codecs must agree with hlo/ir/float_codec bit for bit (NaN aside).
TEST(NarrowFloatCodecTest, InlineCodecsMatchTheReference) {
  using hlo::PrimitiveType;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    for (PrimitiveType type : {PrimitiveType::kF16, PrimitiveType::kBF16}) {
      const double reference = hlo::DecodeNarrowFloat(type, bits);
      const float fast = type == PrimitiveType::kF16 ? elementwise::DecodeF16Bits(bits)
                                                     : elementwise::DecodeBf16Bits(bits);
      if (std::isnan(reference)) {
        ASSERT_TRUE(std::isnan(fast)) << h;
        continue;
      }
      ASSERT_EQ(static_cast<double>(fast), reference) << h;
      ASSERT_EQ(std::signbit(fast), std::signbit(reference)) << h;
      // The midpoint to the next code exercises round-half-to-even.
      const double next = hlo::DecodeNarrowFloat(type, static_cast<uint16_t>(h + 1));
      if (!std::isfinite(reference) || !std::isfinite(next) || h == 0x7FFF || h == 0xFFFF) continue;
      const auto mid = static_cast<float>((reference + next) / 2);
      const uint16_t want = hlo::EncodeNarrowFloat(type, mid);
      const uint16_t got = type == PrimitiveType::kF16 ? elementwise::EncodeF16Bits(mid)
                                                       : elementwise::EncodeBf16Bits(mid);
      ASSERT_EQ(got, want) << "type " << static_cast<int>(type) << " midpoint after " << h;
    }
  }
  for (uint64_t u = 0; u < (1ull << 32); u += 65537) {
    float f;
    const auto u32 = static_cast<uint32_t>(u);
    std::memcpy(&f, &u32, sizeof(f));
    if (std::isnan(f)) continue;
    ASSERT_EQ(elementwise::EncodeF16Bits(f), hlo::EncodeNarrowFloat(PrimitiveType::kF16, f)) << u;
    ASSERT_EQ(elementwise::EncodeBf16Bits(f), hlo::EncodeNarrowFloat(PrimitiveType::kBF16, f)) << u;
  }
}

}  // namespace
}  // namespace runtime

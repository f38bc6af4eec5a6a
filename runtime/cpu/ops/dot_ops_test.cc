// Tests of dot and convolution: hand-computed cases, and random operands checked against naive
// reference loops written here from the StableHLO spec's definitions. The reference reads the
// dimension numbers and window from the parsed instruction; the result shape of each random case
// comes from hlo::InferShape, so a case is written as operand shapes plus attributes.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/ir/shape_inference.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;
using V = std::vector<int64_t>;
using Complex = std::complex<double>;

absl::StatusOr<Literal> RunText(const std::string& text, std::vector<Literal> args = {}) {
  auto module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  return Evaluator(**module, {}).RunEntry(std::move(args));
}

std::vector<double> Doubles(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetDouble(i));
  return v;
}

// Row-major linear index of `index` in `dims`.
int64_t Linear(const V& dims, const V& index) {
  int64_t i = 0;
  for (size_t d = 0; d < dims.size(); ++d) i = i * dims[d] + index[d];
  return i;
}

// Advances `index` over `dims` row-major; false after the last position.
bool Next(const V& dims, V& index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

bool Empty(const V& dims) {
  for (int64_t d : dims) {
    if (d == 0) return true;
  }
  return false;
}

Literal Random(const Shape& shape, std::mt19937& rng) {
  Literal l(shape);
  std::uniform_int_distribution<int> small(-4, 4);
  std::uniform_real_distribution<double> real(-1, 1);
  const PrimitiveType t = shape.element_type();
  for (int64_t i = 0; i < l.element_count(); ++i) {
    if (hlo::IsComplexType(t)) {
      l.SetComplex(i, {real(rng), real(rng)});
    } else if (hlo::IsFloatingPointType(t)) {
      // Wide floats get reals; narrow ones small integers, which they hold exactly.
      const bool wide = t == PrimitiveType::kF32 || t == PrimitiveType::kF64;
      l.SetDouble(i, wide ? real(rng) : small(rng));
    } else {
      l.SetInt(i, hlo::IsUnsignedIntegralType(t) ? small(rng) + 4 : small(rng));
    }
  }
  return l;
}

// A parsed single-instruction module whose root's declared shape is replaced by the inferred
// one (the text may declare any placeholder of the right element type).
struct Case {
  std::unique_ptr<hlo::HloModule> module;
  const HloInstruction* root = nullptr;
};

Case ParseCase(const std::string& text) {
  Case c;
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return c;
  c.module = *std::move(module);
  HloInstruction* root = c.module->entry_computation()->root_instruction();
  absl::StatusOr<Shape> shape = hlo::InferShape(*root);
  EXPECT_TRUE(shape.ok()) << shape.status().ToString();
  if (shape.ok()) *root->mutable_shape() = *shape;
  c.root = root;
  return c;
}

// result[out] = sum over contracting indices of lhs * rhs (dot_general in the spec).
std::vector<Complex> ReferenceDot(const HloInstruction& dot, const Literal& lhs,
                                  const Literal& rhs) {
  const hlo::DotDimensionNumbers dn =
      dot.attrs().dot_dimension_numbers.value_or(hlo::DotDimensionNumbers{});
  const V& ld = lhs.shape().dimensions();
  const V& rd = rhs.shape().dimensions();
  V lfree, rfree, kdims;
  for (int64_t d = 0; d < lhs.shape().rank(); ++d) {
    if (std::count(dn.lhs_batch_dimensions.begin(), dn.lhs_batch_dimensions.end(), d) == 0 &&
        std::count(dn.lhs_contracting_dimensions.begin(), dn.lhs_contracting_dimensions.end(), d) ==
            0) {
      lfree.push_back(d);
    }
  }
  for (int64_t d = 0; d < rhs.shape().rank(); ++d) {
    if (std::count(dn.rhs_batch_dimensions.begin(), dn.rhs_batch_dimensions.end(), d) == 0 &&
        std::count(dn.rhs_contracting_dimensions.begin(), dn.rhs_contracting_dimensions.end(), d) ==
            0) {
      rfree.push_back(d);
    }
  }
  for (int64_t d : dn.lhs_contracting_dimensions) kdims.push_back(ld[d]);
  const V& od = dot.shape().dimensions();
  std::vector<Complex> out(dot.shape().num_elements());
  V o(od.size(), 0);
  if (Empty(od)) return out;
  do {
    V li(ld.size()), ri(rd.size());
    size_t p = 0;
    for (size_t b = 0; b < dn.lhs_batch_dimensions.size(); ++b, ++p) {
      li[dn.lhs_batch_dimensions[b]] = o[p];
      ri[dn.rhs_batch_dimensions[b]] = o[p];
    }
    for (int64_t d : lfree) li[d] = o[p++];
    for (int64_t d : rfree) ri[d] = o[p++];
    Complex sum = 0;
    V k(kdims.size(), 0);
    if (!Empty(kdims)) {
      do {
        for (size_t c = 0; c < k.size(); ++c) {
          li[dn.lhs_contracting_dimensions[c]] = k[c];
          ri[dn.rhs_contracting_dimensions[c]] = k[c];
        }
        sum += lhs.GetComplex(Linear(ld, li)) * rhs.GetComplex(Linear(rd, ri));
      } while (Next(kdims, k));
    }
    out[Linear(od, o)] = sum;
  } while (Next(od, o));
  return out;
}

// Runs `text` (parameters lhs, rhs) on random operands and compares with `reference`.
template <typename Reference>
void CheckRandom(const std::string& text, Reference reference, double tolerance, int seed) {
  Case c = ParseCase(text);
  ASSERT_NE(c.root, nullptr);
  std::mt19937 rng(seed);
  Literal lhs = Random(c.root->operand(0)->shape(), rng);
  Literal rhs = Random(c.root->operand(1)->shape(), rng);
  std::vector<Complex> expected = reference(*c.root, lhs, rhs);
  absl::StatusOr<Literal> got = Evaluator(*c.module, {}).RunEntry({lhs, rhs});
  ASSERT_TRUE(got.ok()) << got.status().ToString() << "\n" << text;
  ASSERT_EQ(got->shape().dimensions(), c.root->shape().dimensions()) << text;
  ASSERT_EQ(got->element_count(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < got->element_count(); ++i) {
    const Complex g = got->GetComplex(i);
    ASSERT_LE(std::abs(g - expected[i]), tolerance * (1 + std::abs(expected[i])))
        << "element " << i << ": got " << g << ", expected " << expected[i] << "\n"
        << text;
  }
}

std::string DotText(const std::string& lhs, const std::string& rhs, const std::string& out,
                    const std::string& dims) {
  return "HloModule m\nENTRY e {\n  a = " + lhs + " parameter(0)\n  b = " + rhs +
         " parameter(1)\n  ROOT d = " + out + " dot(a, b)" + (dims.empty() ? "" : ", ") + dims +
         "\n}\n";
}

TEST(DotTest, HandComputedMatmul) {
  absl::StatusOr<Literal> r = RunText(R"(HloModule m
ENTRY e {
  a = f32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })
  b = f32[3,2] constant({ {7, 8}, {9, 10}, {11, 12} })
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{58, 64, 139, 154}));
}

struct DotCase {
  const char* lhs;
  const char* rhs;
  const char* dims;
};

// Operand layouts: plain, transposed (in place for Eigen), batched, permuted batch dims,
// several contracting dims in swapped order, outer and inner products, empty contraction.
const DotCase kDotCases[] = {
    {"[5,7]", "[7,3]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
    {"[7,5]", "[7,3]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
    {"[5,7]", "[3,7]", "lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
    {"[7,5]", "[3,7]", "lhs_contracting_dims={0}, rhs_contracting_dims={1}"},
    {"[4,5,7]", "[4,7,3]",
     "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"},
    {"[4,5,7]", "[4,3,7]",
     "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}"},
    {"[7,4,5]", "[3,7,4]",
     "lhs_batch_dims={1}, lhs_contracting_dims={0}, rhs_batch_dims={2}, rhs_contracting_dims={1}"},
    {"[2,3,5,4]", "[3,4,2,6]",
     "lhs_batch_dims={1,0}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
     "rhs_contracting_dims={1}"},
    {"[2,5,3]", "[3,4,2]", "lhs_contracting_dims={0,2}, rhs_contracting_dims={2,0}"},
    {"[2,3,4]", "[4,5,2]", "lhs_contracting_dims={2}, rhs_contracting_dims={0}"},
    {"[3]", "[4]", ""},
    {"[6]", "[6]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
    {"[2,0]", "[0,3]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
};

TEST(DotTest, RandomAgainstReferenceForEveryType) {
  struct Types {
    const char *lhs, *rhs, *out;
    double tolerance;
  };
  const Types types[] = {
      {"f32", "f32", "f32", 1e-5},     {"f64", "f64", "f64", 1e-12}, {"c64", "c64", "c64", 1e-5},
      {"c128", "c128", "c128", 1e-12}, {"s32", "s32", "s32", 0},     {"s8", "s8", "s32", 0},
      {"u8", "u8", "u32", 0},          {"s16", "s16", "s64", 0},     {"bf16", "bf16", "f32", 1e-6},
      {"bf16", "bf16", "bf16", 1e-2},  {"f16", "f32", "f32", 1e-6},  {"s8", "s8", "f32", 0},
  };
  int seed = 0;
  for (const Types& t : types) {
    for (const DotCase& c : kDotCases) {
      std::string out = std::string(t.out) + "[]";
      std::string text =
          DotText(std::string(t.lhs) + c.lhs, std::string(t.rhs) + c.rhs, out, c.dims);
      CheckRandom(text, ReferenceDot, t.tolerance, ++seed);
    }
  }
}

TEST(DotTest, IntegerResultsWrapAndPredIsAnyProduct) {
  absl::StatusOr<Literal> wrap = RunText(R"(HloModule m
ENTRY e {
  a = s8[1,2] constant({ {100, 100} })
  b = s8[2,1] constant({ {1}, {1} })
  ROOT d = s8[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_TRUE(wrap.ok()) << wrap.status().ToString();
  EXPECT_EQ(wrap->GetInt(0), -56);
  absl::StatusOr<Literal> any = RunText(R"(HloModule m
ENTRY e {
  a = pred[2,2] constant({ {true, false}, {false, false} })
  b = pred[2,2] constant({ {true, true}, {true, true} })
  ROOT d = pred[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_TRUE(any.ok()) << any.status().ToString();
  EXPECT_EQ(any->data(), (std::vector<uint8_t>{1, 1, 0, 0}));
}

TEST(DotTest, InvalidOrUnsupportedIsAnError) {
  EXPECT_FALSE(RunText(DotText("f32[2,3]", "f32[4,2]", "f32[2,2]",
                               "lhs_contracting_dims={1}, rhs_contracting_dims={0}"))
                   .ok());
  absl::StatusOr<Literal> r = RunText(R"(HloModule m
ENTRY e {
  a = f32[2,2] constant({ {1, 2}, {3, 4} })
  ROOT d = s32[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
}

// The spec's convolution, literally: for each output element, the dot product of the
// (reversed) lhs window with the kernel, per feature or batch group.
std::vector<Complex> ReferenceConvolution(const HloInstruction& conv, const Literal& lhs,
                                          const Literal& rhs) {
  const hlo::ConvolutionDimensionNumbers& dn = *conv.attrs().convolution_dimension_numbers;
  const std::vector<hlo::WindowDimension> window =
      conv.attrs().window ? conv.attrs().window->dimensions : std::vector<hlo::WindowDimension>{};
  const V& ld = lhs.shape().dimensions();
  const V& rd = rhs.shape().dimensions();
  const V& od = conv.shape().dimensions();
  const int64_t fgc = conv.attrs().feature_group_count, bgc = conv.attrs().batch_group_count;
  const int64_t out_features = od[dn.output_feature_dimension];
  const int64_t group_size = out_features / (fgc * bgc);
  const int64_t in_features = rd[dn.kernel_input_feature_dimension];
  const size_t spatial = dn.input_spatial_dimensions.size();
  V ksizes;
  for (int64_t d : dn.kernel_spatial_dimensions) ksizes.push_back(rd[d]);
  std::vector<Complex> out(conv.shape().num_elements());
  if (Empty(od)) return out;
  V o(od.size(), 0);
  do {
    const int64_t f = o[dn.output_feature_dimension];
    const int64_t group = f / group_size;
    const int64_t batch =
        o[dn.output_batch_dimension] + (bgc > 1 ? group * od[dn.output_batch_dimension] : 0);
    const int64_t feature0 = fgc > 1 ? group * in_features : 0;
    Complex sum = 0;
    V k(spatial, 0);
    if (!Empty(ksizes) && in_features > 0) {
      do {
        V li(ld.size()), ri(rd.size());
        bool inside = true;
        for (size_t s = 0; s < spatial; ++s) {
          const hlo::WindowDimension& w = window[s];
          const int64_t kw = w.window_reversal ? ksizes[s] - 1 - k[s] : k[s];
          const int64_t pos = o[dn.output_spatial_dimensions[s]] * w.stride +
                              kw * w.window_dilation - w.padding_low;
          inside = inside && pos >= 0 && pos % w.base_dilation == 0 &&
                   pos / w.base_dilation < ld[dn.input_spatial_dimensions[s]];
          li[dn.input_spatial_dimensions[s]] = inside ? pos / w.base_dilation : 0;
          ri[dn.kernel_spatial_dimensions[s]] = k[s];
        }
        if (!inside) continue;
        li[dn.input_batch_dimension] = batch;
        ri[dn.kernel_output_feature_dimension] = f;
        for (int64_t i = 0; i < in_features; ++i) {
          li[dn.input_feature_dimension] = feature0 + i;
          ri[dn.kernel_input_feature_dimension] = i;
          sum += lhs.GetComplex(Linear(ld, li)) * rhs.GetComplex(Linear(rd, ri));
        }
      } while (Next(ksizes, k));
    }
    out[Linear(od, o)] = sum;
  } while (Next(od, o));
  return out;
}

std::string ConvText(const std::string& lhs, const std::string& rhs, const std::string& attrs) {
  return "HloModule m\nENTRY e {\n  a = " + lhs + " parameter(0)\n  b = " + rhs +
         " parameter(1)\n  ROOT c = f32[] convolution(a, b), " + attrs + "\n}\n";
}

TEST(ConvolutionTest, SpecExampleWithLhsDilationAndStride) {
  absl::StatusOr<Literal> r = RunText(R"(HloModule m
ENTRY e {
  a = s32[1,4,4,1] constant({ { {{1}, {2}, {5}, {6}}, {{3}, {4}, {7}, {8}},
                                {{10}, {11}, {14}, {15}}, {{12}, {13}, {16}, {17}} } })
  b = s32[3,3,1,1] constant({ { {{1}}, {{1}}, {{1}} }, { {{1}}, {{1}}, {{1}} },
                              { {{1}}, {{1}}, {{1}} } })
  ROOT c = s32[1,2,2,1] convolution(a, b), window={size=3x3 stride=4x4 lhs_dilate=2x2},
      dim_labels=b01f_01io->b01f
})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{10, 26, 46, 62}));
}

TEST(ConvolutionTest, RandomAgainstReference) {
  struct ConvCase {
    const char *lhs, *rhs, *attrs;
  };
  const ConvCase cases[] = {
      {"f32[2,6,5,3]", "f32[3,2,3,4]",
       "window={size=3x2 stride=2x1 pad=1_1x0_1}, "
       "dim_labels=b01f_01io->b01f"},
      {"f32[2,3,7,6]", "f32[4,3,3,2]",
       "window={size=3x2 pad=2_0x1_1 lhs_dilate=2x1 "
       "rhs_dilate=1x2}, dim_labels=bf01_oi01->bf01"},
      {"f32[5,2,4,6]", "f32[4,2,3,3]",
       "window={size=2x3 stride=1x2 pad=-1_1x0_0 "
       "rhs_reversal=1x0}, dim_labels=0bf1_i01o->f01b"},
      {"f32[4,8,9]", "f32[2,3,6]",
       "window={size=3 stride=2 pad=1_2 rhs_dilate=2}, "
       "dim_labels=f0b_i0o->0bf, feature_group_count=2"},
      {"f32[4,6,5]", "f32[2,5,4]",
       "window={size=2 pad=0_1 lhs_dilate=3}, "
       "dim_labels=b0f_0io->b0f, batch_group_count=2"},
      {"f32[4,5,6]", "f32[3,1,6]",
       "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, "
       "feature_group_count=6"},
      {"f32[3,4]", "f32[4,5]", "dim_labels=bf_io->bf"},
      {"f32[2,3,3,4]", "f32[3,3,4,2]",
       "window={size=3x3 rhs_reversal=1x1}, "
       "dim_labels=b01f_01io->b01f"},
  };
  int seed = 100;
  for (const ConvCase& c : cases) {
    CheckRandom(ConvText(c.lhs, c.rhs, c.attrs), ReferenceConvolution, 1e-5, ++seed);
  }
}

TEST(ConvolutionTest, MixedTypesAndWrongShapesAreChecked) {
  CheckRandom(
      "HloModule m\nENTRY e {\n  a = s8[2,5,3] parameter(0)\n  b = s8[3,3,4] "
      "parameter(1)\n  ROOT c = s32[] convolution(a, b), window={size=3 pad=1_1}, "
      "dim_labels=b0f_0io->b0f\n}\n",
      ReferenceConvolution, 0, 7);
  CheckRandom(
      "HloModule m\nENTRY e {\n  a = bf16[2,5,3] parameter(0)\n  b = bf16[3,3,4] "
      "parameter(1)\n  ROOT c = bf16[] convolution(a, b), window={size=3 pad=1_1}, "
      "dim_labels=b0f_0io->b0f\n}\n",
      ReferenceConvolution, 1e-2, 8);
  EXPECT_FALSE(RunText(R"(HloModule m
ENTRY e {
  a = f32[1,5,1] constant({ {{1}, {2}, {3}, {4}, {5}} })
  b = f32[3,1,1] constant({ {{1}}, {{1}}, {{1}} })
  ROOT c = f32[1,5,1] convolution(a, b), window={size=3}, dim_labels=b0f_0io->b0f
})")
                   .ok());
}

}  // namespace
}  // namespace runtime

namespace runtime {
namespace {

// __op$block_scaled_dot: lhs f32[2,4] with one scale per 2 elements of a row, rhs f32[3,4]
// with one scale per row; out[m,n] = sum_k lhs[m,k]*ls[m,k/2] * rhs[n,k]*rs[n,0].
TEST(BlockScaledDotTest, DequantizesByBlocksAndContractsTheLastDims) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  lhs = f32[2,4] parameter(0)
  rhs = f32[3,4] parameter(1)
  ls = f32[2,2] parameter(2)
  rs = f32[3,1] parameter(3)
  ROOT d = f32[2,3] custom-call(lhs, rhs, ls, rs), custom_call_target="__op$block_scaled_dot"
})";
  const std::vector<double> lhs = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<double> rhs = {1, 0, 0, 1, 0, 1, 1, 0, 2, 2, 2, 2};
  const std::vector<double> ls = {1, 10, 2, 0.5};
  const std::vector<double> rs = {1, 3, 0.5};
  auto make = [](const std::vector<double>& v, std::vector<int64_t> dims) {
    Literal l(Shape::Array(PrimitiveType::kF32, dims));
    for (size_t i = 0; i < v.size(); ++i) l.SetDouble(i, v[i]);
    return l;
  };
  std::vector<Literal> args;
  args.push_back(make(lhs, {2, 4}));
  args.push_back(make(rhs, {3, 4}));
  args.push_back(make(ls, {2, 2}));
  args.push_back(make(rs, {3, 1}));
  absl::StatusOr<Literal> out = RunText(kText, std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> expected;
  for (int m = 0; m < 2; ++m) {
    for (int n = 0; n < 3; ++n) {
      double sum = 0;
      for (int k = 0; k < 4; ++k) sum += lhs[m * 4 + k] * ls[m * 2 + k / 2] * rhs[n * 4 + k] * rs[n];
      expected.push_back(sum);
    }
  }
  EXPECT_EQ(Doubles(*out), expected);
  // Row 0, col 0 by hand: 1*1*1 + 4*10*1 = 41.
  EXPECT_EQ(expected[0], 41);
}

TEST(BlockScaledDotTest, RejectsScalesThatDoNotDivide) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  lhs = f32[2,4] parameter(0)
  rhs = f32[3,4] parameter(1)
  ls = f32[2,3] parameter(2)
  rs = f32[3,1] parameter(3)
  ROOT d = f32[2,3] custom-call(lhs, rhs, ls, rs), custom_call_target="__op$block_scaled_dot"
})";
  std::vector<Literal> args;
  for (std::vector<int64_t> dims : {std::vector<int64_t>{2, 4}, {3, 4}, {2, 3}, {3, 1}}) {
    args.emplace_back(Shape::Array(PrimitiveType::kF32, dims));
  }
  absl::StatusOr<Literal> out = RunText(kText, std::move(args));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(std::string(out.status().message()).find("does not divide"), std::string::npos);
}

}  // namespace
}  // namespace runtime

namespace runtime {
namespace {

TEST(TopKTest, LargestFirstTiesByLowerIndex) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  x = f32[2,5] parameter(0)
  ROOT t = (f32[2,2], s32[2,2]) custom-call(x), custom_call_target="TopK"
})";
  Literal x(Shape::Array(PrimitiveType::kF32, {2, 5}));
  const double data[] = {3, 9, 1, 9, 4, -1, -5, -0.5, -2, -0.5};
  for (int i = 0; i < 10; ++i) x.SetDouble(i, data[i]);
  std::vector<Literal> args;
  args.push_back(std::move(x));
  absl::StatusOr<Literal> out = RunText(kText, std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->tuple_elements()[0]), (std::vector<double>{9, 9, -0.5, -0.5}));
  EXPECT_EQ(Doubles(out->tuple_elements()[1]), (std::vector<double>{1, 3, 2, 4}));
}

}  // namespace
}  // namespace runtime

namespace runtime {
namespace {

// DFT of [1, 2, 3, 4] by hand: [10, -2+2i, -2, -2-2i]; RFFT keeps the first 3; the inverses
// give the input back.
TEST(FftTest, AllFourTypesOnAHandComputedSignal) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  x = f32[1,4] parameter(0)
  c = c64[1,4] convert(x)
  f = c64[1,4] fft(c), fft_type=FFT, fft_length={4}
  i = c64[1,4] fft(f), fft_type=IFFT, fft_length={4}
  r = c64[1,3] fft(x), fft_type=RFFT, fft_length={4}
  ir = f32[1,4] fft(r), fft_type=IRFFT, fft_length={4}
  ROOT t = (c64[1,4], c64[1,4], c64[1,3], f32[1,4]) tuple(f, i, r, ir)
})";
  Literal x(Shape::Array(PrimitiveType::kF32, {1, 4}));
  for (int i = 0; i < 4; ++i) x.SetDouble(i, i + 1);
  std::vector<Literal> args;
  args.push_back(std::move(x));
  absl::StatusOr<Literal> out = RunText(kText, std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<Complex> dft = {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}};
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(std::abs(out->tuple_elements()[0].GetComplex(k) - dft[k]), 0, 1e-5) << k;
    EXPECT_NEAR(std::abs(out->tuple_elements()[1].GetComplex(k) - Complex(k + 1, 0)), 0, 1e-5);
    EXPECT_NEAR(out->tuple_elements()[3].GetDouble(k), k + 1, 1e-5);
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(std::abs(out->tuple_elements()[2].GetComplex(k) - dft[k]), 0, 1e-5) << k;
  }
}

// Lengths that are not powers of two (Bluestein), against a direct sum in the test, for all
// four types on random data; two dims transformed, so lines run along both.
TEST(FftTest, AnyLengthMatchesTheDirectSum) {
  for (int64_t n : {3, 5, 6, 7, 12, 16, 30}) {
    SCOPED_TRACE(n);
    const int64_t rows = 3;
    const std::string dims = "[" + std::to_string(rows) + "," + std::to_string(n) + "]";
    const std::string half = "[" + std::to_string(rows) + "," + std::to_string(n / 2 + 1) + "]";
    const std::string lengths = "{" + std::to_string(rows) + "," + std::to_string(n) + "}";
    const std::string text = "HloModule m\nENTRY e {\n  x = f64" + dims +
                             " parameter(0)\n  c = c128" + dims + " convert(x)\n  f = c128" +
                             dims + " fft(c), fft_type=FFT, fft_length=" + lengths +
                             "\n  i = c128" + dims + " fft(f), fft_type=IFFT, fft_length=" +
                             lengths + "\n  r = c128" + half +
                             " fft(x), fft_type=RFFT, fft_length=" + lengths + "\n  ir = f64" +
                             dims + " fft(r), fft_type=IRFFT, fft_length=" + lengths +
                             "\n  ROOT t = (c128" + dims + ", c128" + dims + ", c128" + half +
                             ", f64" + dims + ") tuple(f, i, r, ir)\n}\n";
    std::mt19937_64 rng(static_cast<uint64_t>(n));
    std::uniform_real_distribution<double> uniform(-1, 1);
    Literal x(Shape::Array(PrimitiveType::kF64, {rows, n}));
    std::vector<double> values(rows * n);
    for (int64_t i = 0; i < rows * n; ++i) x.SetDouble(i, values[i] = uniform(rng));
    std::vector<Literal> args;
    args.push_back(std::move(x));
    absl::StatusOr<Literal> out = RunText(text, std::move(args));
    ASSERT_TRUE(out.ok()) << out.status();
    // The 2-D DFT by its definition.
    auto dft = [&](int64_t p, int64_t q) {
      Complex sum(0, 0);
      for (int64_t a = 0; a < rows; ++a) {
        for (int64_t b = 0; b < n; ++b) {
          const double angle = -2 * M_PI * (static_cast<double>(p * a) / rows +
                                             static_cast<double>(q * b) / n);
          sum += values[a * n + b] * Complex(std::cos(angle), std::sin(angle));
        }
      }
      return sum;
    };
    for (int64_t p = 0; p < rows; ++p) {
      for (int64_t q = 0; q < n; ++q) {
        const Complex want = dft(p, q);
        EXPECT_NEAR(std::abs(out->tuple_elements()[0].GetComplex(p * n + q) - want), 0, 1e-9);
        EXPECT_NEAR(std::abs(out->tuple_elements()[1].GetComplex(p * n + q) -
                             Complex(values[p * n + q], 0)),
                    0, 1e-9);
        EXPECT_NEAR(out->tuple_elements()[3].GetDouble(p * n + q), values[p * n + q], 1e-9);
        if (q <= n / 2) {
          EXPECT_NEAR(
              std::abs(out->tuple_elements()[2].GetComplex(p * (n / 2 + 1) + q) - want), 0,
              1e-9);
        }
      }
    }
  }
}

}  // namespace
}  // namespace runtime

// Tests of the topk opcode (`topk(x), k=K, largest=...`): results checked against two
// references built independently of topk_ops.cc -- XLA's own definition of the op
// (TopkDecomposer: a stable sort of (x, iota) along the last dim by a total-order GT or LT
// comparator, sliced to k), run as HLO in the same module, and a std::stable_sort written here.
// Data has ties, NaNs of both signs, signed zeros and infinities.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/literal.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/strings.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

absl::StatusOr<Literal> RunText(const std::string& text, std::vector<Literal> args) {
  auto module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  return Evaluator(**module, {}).RunEntry(std::move(args));
}

// Values with many ties and every special float; integers where `integral`.
Literal RandomInput(PrimitiveType type, const std::vector<int64_t>& dims, unsigned seed) {
  Literal x(Shape::Array(type, dims));
  std::mt19937 rng(seed);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                             -std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             0.0,
                             -0.0};
  const bool integral = !hlo::IsFloatingPointType(type);
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const int pick = static_cast<int>(rng() % 10);
    if (integral) {
      x.SetInt(i, static_cast<int64_t>(rng() % 7) - (type == PrimitiveType::kU8 ? 0 : 3));
    } else if (pick < 3) {
      x.SetDouble(i, specials[rng() % 6]);
    } else {
      x.SetDouble(i, static_cast<double>(static_cast<int>(rng() % 9) - 4) / 2);
    }
  }
  return x;
}

// A module computing topk of x both ways: (topk values, topk indices, sorted values, sorted
// indices), the last two sliced to k as XLA's TopkDecomposer does.
std::string TopKAndDecomposition(const std::string& type, int64_t rows, int64_t n, int64_t k,
                                 bool largest) {
  const bool is_float = type[0] == 'f' || type == "bf16";
  const std::string x = hlo::StrCat(type, "[", rows, ",", n, "]");
  const std::string r = hlo::StrCat(type, "[", rows, ",", k, "]");
  const std::string ri = hlo::StrCat("s32[", rows, ",", k, "]");
  const std::string xi = hlo::StrCat("s32[", rows, ",", n, "]");
  const std::string slice = hlo::StrCat("slice={[0:", rows, "], [0:", k, "]}");
  std::string text = "HloModule m\n";
  hlo::StrAppend(&text, "cmp {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                 "[] parameter(1)\n  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n");
  hlo::StrAppend(&text, "  ROOT c = pred[] compare(a, b), direction=", largest ? "GT" : "LT",
                 is_float ? ", type=TOTALORDER" : "", "\n}\n");
  hlo::StrAppend(&text, "ENTRY e {\n  x = ", x, " parameter(0)\n");
  hlo::StrAppend(&text, "  t = (", r, ", ", ri, ") topk(x), k=", k,
                 largest ? "" : ", largest=false", "\n");
  hlo::StrAppend(&text, "  tv = ", r, " get-tuple-element(t), index=0\n");
  hlo::StrAppend(&text, "  ti = ", ri, " get-tuple-element(t), index=1\n");
  hlo::StrAppend(&text, "  io = ", xi, " iota(), iota_dimension=1\n");
  hlo::StrAppend(&text, "  s = (", x, ", ", xi,
                 ") sort(x, io), dimensions={1}, is_stable=true, to_apply=cmp\n");
  hlo::StrAppend(&text, "  s0 = ", x, " get-tuple-element(s), index=0\n");
  hlo::StrAppend(&text, "  s1 = ", xi, " get-tuple-element(s), index=1\n");
  hlo::StrAppend(&text, "  sv = ", r, " slice(s0), ", slice, "\n");
  hlo::StrAppend(&text, "  si = ", ri, " slice(s1), ", slice, "\n");
  hlo::StrAppend(&text, "  ROOT out = (", r, ", ", ri, ", ", r, ", ", ri,
                 ") tuple(tv, ti, sv, si)\n}\n");
  return text;
}

TEST(TopKOpcodeTest, MatchesXlasSortDecomposition) {
  const struct {
    const char* type;
    PrimitiveType element_type;
  } kTypes[] = {{"f32", PrimitiveType::kF32},
                {"f64", PrimitiveType::kF64},
                {"bf16", PrimitiveType::kBF16},
                {"s32", PrimitiveType::kS32},
                {"u8", PrimitiveType::kU8}};
  const int64_t kRows = 3, kLength = 17;
  unsigned seed = 1;
  for (const auto& t : kTypes) {
    for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{5}, kLength}) {
      for (bool largest : {true, false}) {
        const std::string text = TopKAndDecomposition(t.type, kRows, kLength, k, largest);
        std::vector<Literal> args;
        args.push_back(RandomInput(t.element_type, {kRows, kLength}, seed++));
        absl::StatusOr<Literal> out = RunText(text, std::move(args));
        ASSERT_TRUE(out.ok()) << out.status() << "\n" << text;
        const std::vector<Literal>& results = out->tuple_elements();
        // Bitwise: NaN payloads and signed zeros must be the ones the sort picks.
        EXPECT_EQ(results[0].data(), results[2].data()) << text;
        EXPECT_EQ(results[1].data(), results[3].data()) << text;
      }
    }
  }
}

// IEEE totalOrder of a double as a signed integer: negative values order backwards, so their
// magnitude bits are flipped (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN).
int64_t ReferenceKey(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits < 0 ? bits ^ std::numeric_limits<int64_t>::max() : bits;
}

TEST(TopKOpcodeTest, MatchesAStableSortWrittenHere) {
  const int64_t kRows = 4, kLength = 33, kK = 9;
  Literal x = RandomInput(PrimitiveType::kF32, {kRows, kLength}, 99);
  std::vector<double> data(x.element_count());
  for (int64_t i = 0; i < x.element_count(); ++i) data[i] = x.GetDouble(i);
  std::vector<Literal> args;
  args.push_back(std::move(x));
  absl::StatusOr<Literal> out =
      RunText(hlo::StrCat("HloModule m\nENTRY e {\n  x = f32[", kRows, ",", kLength,
                          "] parameter(0)\n  ROOT t = (f32[", kRows, ",", kK, "], s32[", kRows, ",",
                          kK, "]) topk(x), k=", kK, "\n}\n"),
              std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t row = 0; row < kRows; ++row) {
    std::vector<int64_t> order(kLength);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return ReferenceKey(data[row * kLength + a]) > ReferenceKey(data[row * kLength + b]);
    });
    for (int64_t j = 0; j < kK; ++j) {
      const double want = data[row * kLength + order[j]];
      const double got = out->tuple_elements()[0].GetDouble(row * kK + j);
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << row << "," << j;
      EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << got << " vs " << want;
      EXPECT_EQ(out->tuple_elements()[1].GetInt(row * kK + j), order[j]) << row << "," << j;
    }
  }
}

TEST(TopKOpcodeTest, HandComputedRowsAndErrors) {
  Literal x(Shape::Array(PrimitiveType::kS32, {1, 6}));
  const int64_t values[] = {4, -2, 7, 4, -2, 0};
  for (int i = 0; i < 6; ++i) x.SetInt(i, values[i]);
  std::vector<Literal> args;
  args.push_back(std::move(x));
  absl::StatusOr<Literal> out = RunText(R"(HloModule m
ENTRY e {
  x = s32[1,6] parameter(0)
  ROOT t = (s32[1,3], s32[1,3]) topk(x), k=3, largest=false
})",
                                        std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  const Literal& v = out->tuple_elements()[0];
  const Literal& i = out->tuple_elements()[1];
  EXPECT_EQ((std::vector<int64_t>{v.GetInt(0), v.GetInt(1), v.GetInt(2)}),
            (std::vector<int64_t>{-2, -2, 0}));
  EXPECT_EQ((std::vector<int64_t>{i.GetInt(0), i.GetInt(1), i.GetInt(2)}),
            (std::vector<int64_t>{1, 4, 5}));
}

}  // namespace
}  // namespace runtime

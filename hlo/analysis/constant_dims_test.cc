// ConstantAlongDims on hand-worked values: which dims each op keeps constant, and the reshapes
// whose digit steps would carry into a varying dim (none of their dims may be claimed).
#include "hlo/analysis/constant_dims.h"

#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/testing/hlo_matchers.h"

namespace hlo {
namespace {

using Dims = std::vector<int64_t>;

constexpr char kModule[] = R"(HloModule constant_dims

ENTRY e {
  p = f32[2] parameter(0)
  q = f32[20,2] parameter(1)
  s = f32[] parameter(2)
  b = f32[20,2,20] broadcast(p), dimensions={1}
  bq = f32[20,2,20] broadcast(q), dimensions={0,1}
  a = f32[20,2,20] add(b, bq)
  bs = f32[20,2,20] broadcast(s), dimensions={}
  m = f32[20,2,20] multiply(b, bs)
  t = f32[2,20,20] transpose(a), dimensions={1,2,0}
  r = f32[10,4,20] reshape(b)
  sl = f32[5,2,3] slice(b), slice={[0:5], [0:2], [1:4]}
  i = s32[3,4,5] iota(), iota_dimension=1
  c = f32[20,2,20] cosine(a)
  p64 = f32[6,4] parameter(3)
  b64 = f32[6,4] broadcast(p64), dimensions={0,1}
  w = f32[6,4,2] broadcast(p), dimensions={2}
  rw = f32[4,6,2] reshape(w)
  v = f32[6,4] parameter(4)
  bv = f32[6,4,3] broadcast(v), dimensions={0,1}
  bs3 = f32[6,4,3] broadcast(s), dimensions={}
  x = f32[6,4,3] add(bv, bs3)
  rx = f32[4,6,3] reshape(x)
  y = f32[4,6] parameter(5)
  by = f32[4,6,2] broadcast(y), dimensions={0,1}
  ry = f32[6,4,2] reshape(by)
  mixed = f32[2,3] parameter(6)
  bm = f32[3,2,3] broadcast(mixed), dimensions={1,2}
  rm = f32[3,6] reshape(bm)
  tm = f32[3,3,2] transpose(bm), dimensions={0,2,1}
  rm2 = f32[9,2] reshape(tm)
  ROOT out = (f32[20,2,20]) tuple(c)
}
)";

class ConstantAlongDimsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kModule);
    ASSERT_TRUE(module.ok()) << module.status();
    module_ = *std::move(module);
  }
  Dims Of(std::string_view name) {
    const HloInstruction* instr = testing::FindInstruction(*module_->entry_computation(), name);
    EXPECT_NE(instr, nullptr) << name;
    return instr == nullptr ? Dims{-1} : ConstantAlongDims(*instr);
  }
  std::unique_ptr<HloModule> module_;
};

TEST_F(ConstantAlongDimsTest, BroadcastsIotasAndElementwiseOps) {
  EXPECT_EQ(Of("b"), (Dims{0, 2}));
  EXPECT_EQ(Of("bq"), (Dims{2}));
  EXPECT_EQ(Of("a"), (Dims{2}));     // The dims both operands keep.
  EXPECT_EQ(Of("m"), (Dims{0, 2}));  // A scalar's broadcast keeps every dim.
  EXPECT_EQ(Of("c"), (Dims{2}));
  EXPECT_EQ(Of("i"), (Dims{0, 2}));
  EXPECT_EQ(Of("p"), Dims{});
  EXPECT_EQ(Of("b64"), Dims{});
}

TEST_F(ConstantAlongDimsTest, TransposesAndSlicesCarryTheirOperandsDims) {
  EXPECT_EQ(Of("t"), (Dims{1}));  // t's dim 1 is a's dim 2.
  EXPECT_EQ(Of("sl"), (Dims{0, 2}));
}

TEST_F(ConstantAlongDimsTest, ReshapesKeepDimsWhoseStepsStayInConstantDigits) {
  // r's dim 0 steps b's dim 0 by two; r's dim 1 moves b's dim 1 (and the low digit of dim 0).
  EXPECT_EQ(Of("r"), (Dims{0, 2}));
  // w = broadcast over [6,4]: [6,4] -> [4,6] stays inside the constant digits.
  EXPECT_EQ(Of("rw"), (Dims{0, 1}));
  // x varies along its first two dims; [6,4,3] -> [4,6,3] keeps only the constant dim 2.
  EXPECT_EQ(Of("rx"), (Dims{2}));
  // by is constant along dim 2 only; ry's dim 2 is the same digit.
  EXPECT_EQ(Of("ry"), (Dims{2}));
  // bm is constant along dim 0 only, which is rm's dim 0; rm's dim 1 merges the varying dims.
  EXPECT_EQ(Of("rm"), Dims{0});
  // Through the transpose the constant digit is the major part of rm2's dim 0 (9 = 3 x 3) but
  // not all of it: a step along dim 0 changes the varying minor digit.
  EXPECT_EQ(Of("rm2"), Dims{});
}

}  // namespace
}  // namespace hlo

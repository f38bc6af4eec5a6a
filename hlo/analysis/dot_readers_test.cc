// CountDotsReadingAlike: which dots share a reshard of the operand they read.
#include "hlo/analysis/dot_readers.h"

#include <string>

#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"

namespace hlo {
namespace {

// Two layers reading the weight w alike (d1, d2), one reading it with other dimension numbers
// (d3), one with another result shape (d4), and w read as the lhs (d5).
constexpr char kLayers[] = R"(HloModule layers
ENTRY e {
  x = f32[16,64] parameter(0)
  y = f32[16,64] parameter(1)
  z = f32[8,64] parameter(2)
  w = f32[64,64] parameter(3)
  d1 = f32[16,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[16,64] dot(y, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d3 = f32[16,64] dot(y, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  d4 = f32[8,64] dot(z, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d5 = f32[64,16] dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT t = (f32[16,64], f32[16,64], f32[16,64], f32[8,64], f32[64,16]) tuple(d1, d2, d3, d4, d5)
}
)";

const HloInstruction& Find(const HloModule& m, const std::string& name) {
  for (const auto& instr : m.entry_computation()->instructions()) {
    if (instr->name() == name) return *instr;
  }
  ADD_FAILURE() << "no " << name;
  return *m.entry_computation()->instructions().front();
}

TEST(DotReadersTest, CountsTheDotsThatPoseTheSameProblemAboutTheOperand) {
  auto m = ParseHloModule(kLayers);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const auto all = [](const HloInstruction&) { return true; };
  EXPECT_EQ(CountDotsReadingAlike(Find(**m, "d1"), 1, all), 2);
  EXPECT_EQ(CountDotsReadingAlike(Find(**m, "d2"), 1, all), 2);
  EXPECT_EQ(CountDotsReadingAlike(Find(**m, "d3"), 1, all), 1);
  EXPECT_EQ(CountDotsReadingAlike(Find(**m, "d4"), 1, all), 1);
  EXPECT_EQ(CountDotsReadingAlike(Find(**m, "d5"), 0, all), 1);
  // x is read by d1 (as lhs) and d5 (as rhs): not alike.
  EXPECT_EQ(CountDotsReadingAlike(Find(**m, "d1"), 0, all), 1);
  // The caller's filter drops readers (the partitioner: those already partitioned).
  EXPECT_EQ(CountDotsReadingAlike(Find(**m, "d1"), 1, [](const HloInstruction&) { return false; }),
            1);
  EXPECT_FALSE(DotsReadAlike(Find(**m, "d1"), Find(**m, "d3"), 1));
  EXPECT_FALSE(DotsReadAlike(Find(**m, "d1"), Find(**m, "t"), 1));
}

}  // namespace
}  // namespace hlo

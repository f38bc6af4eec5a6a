#include "hlo/analysis/uniform_values.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/parser/hlo_parser.h"

namespace hlo {
namespace {

// A loop over (counter, value): the counter starts at `init` and steps by `step`; the
// condition compares it with 4.
bool Decides(const std::string& init, const std::string& step) {
  const std::string text = R"(HloModule m, num_partitions=4
body {
  t = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  is = s32[] custom-call(i), custom_call_target="Sharding", sharding={replicated}
  step = )" + step + R"(
  i1 = s32[] add(is, step)
  h = f32[8] get-tuple-element(t), index=1
  n = f32[8] negate(h)
  ROOT r = (s32[], f32[8]) tuple(i1, n)
}
cond {
  t = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  four = s32[] constant(4)
  ROOT lt = pred[] compare(i, four), direction=LT
}
ENTRY e {
  x = f32[8] parameter(0)
  p = s32[] parameter(1)
  z = )" + init + R"(
  w0 = (s32[], f32[8]) tuple(z, x)
  ROOT w = (s32[], f32[8]) while(w0), condition=cond, body=body
})";
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return false;
  return LoopDecidesUniformly(*(*m)->entry_computation()->root_instruction());
}

TEST(UniformValuesTest, ACounterFromAConstantDecidesAlikeEverywhere) {
  EXPECT_TRUE(Decides("s32[] constant(0)", "s32[] constant(1)"));
}

TEST(UniformValuesTest, ACounterFromDeviceDataOrTheDeviceIdDoesNot) {
  EXPECT_FALSE(Decides("s32[] copy(p)", "s32[] constant(1)"));
  EXPECT_FALSE(Decides("s32[] constant(0)", "s32[] convert(u32[] partition-id())"));
}

}  // namespace
}  // namespace hlo

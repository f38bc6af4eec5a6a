// The CUDA executor's op handlers, buffer plan use and control flow, run on the host device
// (the kernels' host twins) and compared with the CPU executor on random inputs. Also checks
// that unsupported ops fail naming the op.
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/op_test_cases.h"
#include "runtime/cuda/testing/differential_test_util.h"

namespace runtime {
namespace cuda {
namespace {

using ::testing::HasSubstr;

class ExecutorTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(ExecutorTest, MatchesCpuExecutor) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(OpCaseText(GetParam()));
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status s = CompareWithCpu(**module, HostOptions(1));
  EXPECT_TRUE(s.ok()) << s;
}

INSTANTIATE_TEST_SUITE_P(Ops, ExecutorTest, ::testing::ValuesIn(OpCases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ExecutorTest, LongReductionsAndWrappingSums) {
  std::ifstream in("runtime/cuda/testdata/reductions_1dev.hlo");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(text.str());
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status s = CompareWithCpu(**module, HostOptions(1));
  EXPECT_TRUE(s.ok()) << s;
}

TEST(ExecutorErrors, UnsupportedOpIsNamed) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(R"(HloModule m
ENTRY e {
  x = s32[8] parameter(0)
  ROOT s = s32[8] popcnt(x)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status s = CompareWithCpu(**module, HostOptions(1));
  EXPECT_THAT(std::string(s.message()), HasSubstr("instruction %s: opcode popcnt is not supported by the CUDA executor"));
}

TEST(ExecutorErrors, UnsupportedReducerIsNamed) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(R"(HloModule m
weird {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b)
}
ENTRY e {
  x = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=weird
})");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status s = CompareWithCpu(**module, HostOptions(1));
  EXPECT_THAT(std::string(s.message()), HasSubstr("reducer computation weird is not supported"));
}

}  // namespace
}  // namespace cuda
}  // namespace runtime

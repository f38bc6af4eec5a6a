// End-to-end: spmd-partition + spmd-run on hand-written modules. Each module is partitioned by
// our passes and verified numerically against the unpartitioned module on random inputs; the
// #4062 dot must also be partitioned without all-gathers or full rematerialization.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;

struct Outcome {
  int code = -1;
  std::string output;
};

Outcome RunCommand(const std::string& command) {
  Outcome outcome;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) outcome.output.append(buf, n);
  int status = pclose(pipe);
  outcome.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

class PartitionVerifyTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PartitionVerifyTest, PartitionedProgramMatchesOriginal) {
  const std::string path = std::string("tests/testdata/") + GetParam();
  for (int seed : {0, 7}) {
    Outcome r = RunCommand("tools/spmd-run --verify --passes=partition,cleanup --seed " +
                    std::to_string(seed) + " " + path);
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("verification passed")) << r.output;
  }
}

INSTANTIATE_TEST_SUITE_P(Modules, PartitionVerifyTest,
                         ::testing::Values("xla_4062_dot_small.hlo", "uneven_reduce.hlo",
                                           "data_movement.hlo", "matmul.hlo"));

TEST(PartitionE2eTest, Issue4062DotReshardsTheResultInsteadOfGatheringOperands) {
  Outcome r = RunCommand(
      "tools/spmd-partition --passes=partition,cleanup --stats json "
      "tests/testdata/xla_4062_dot_small.hlo -o " + ::testing::TempDir() + "/4062.hlo");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("\"all-gather\": {\"count\": 0"));
  // The result's [4,2] -> [2,4] reshard: each device's new 32x16 region is two 16x16 cells;
  // the device holding neither receives both (2 x 1 KiB), in two collective-permutes.
  EXPECT_THAT(r.output, HasSubstr("\"collective-permute\": {\"count\": 2, \"bytes\": 2048}"));
  EXPECT_THAT(r.output, HasSubstr("\"all-reduce\": {\"count\": 0"));
  EXPECT_THAT(r.output, HasSubstr("\"full_rematerializations\": 0"));
}

// The full-size module from openxla/xla#4062 (f32[8192,8192] operands; partitioned only: the
// executor would take minutes). Per device: 1/8 of the dot's 2*8192^3 FLOPs, and at most one
// f32[4096,2048] result tile (32 MiB) received; XLA received 320 MiB.
TEST(PartitionE2eTest, Issue4062FullSizeCostsAndExplains) {
  Outcome r = RunCommand(
      "tools/spmd-partition --passes=partition,cleanup --stats json --explain "
      "examples/xla_4062_dot.hlo -o " + ::testing::TempDir() + "/4062_full.hlo");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("\"flops\": 137438953472,"));
  EXPECT_THAT(r.output, HasSubstr("\"comm_bytes\": 33554432,"));
  EXPECT_THAT(r.output, HasSubstr("\"full_rematerializations\": 0"));
  // The explanation lists (d), (e) and XLA's all-gather-both with their costs.
  EXPECT_THAT(r.output, HasSubstr("* operands"));
  EXPECT_THAT(r.output, HasSubstr("(d)"));
  EXPECT_THAT(r.output, HasSubstr("(e)"));
  EXPECT_THAT(r.output, HasSubstr("all-gather both"));
  EXPECT_THAT(r.output, HasSubstr("chose operands: least estimated time"));
}

TEST(PartitionE2eTest, CostOptionsAreCheckedAsUsage) {
  const std::string input = " tests/testdata/xla_4062_dot_small.hlo";
  Outcome bad_strategy = RunCommand("tools/spmd-partition --dot-strategy bogus" + input);
  EXPECT_EQ(bad_strategy.code, 2) << bad_strategy.output;
  EXPECT_THAT(bad_strategy.output, HasSubstr("--dot-strategy: unknown strategy \"bogus\""));
  Outcome bad_model = RunCommand("tools/spmd-partition --device-model abacus" + input);
  EXPECT_EQ(bad_model.code, 2) << bad_model.output;
  EXPECT_THAT(bad_model.output, HasSubstr("built-in models: h100-nvlink"));
  // A model from JSON is used and named in the explanation; forcing a strategy is obeyed.
  const std::string model = ::testing::TempDir() + "/model.json";
  Outcome write = RunCommand(
      "echo '{\"name\": \"lab\", \"flops_per_second\": {\"f32\": 1e12}, \"memory_bytes\": "
      "1e9, \"levels\": [{\"latency_us\": 1, \"bandwidth_gbps\": 10}]}' > " + model);
  ASSERT_EQ(write.code, 0);
  Outcome run = RunCommand("tools/spmd-partition --passes=partition,cleanup --explain "
                           "--dot-strategy replicated --device-model " + model + input +
                           " -o " + ::testing::TempDir() + "/forced.hlo");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("(device model lab)"));
  EXPECT_THAT(run.output, HasSubstr("chose replicated: forced by --dot-strategy=replicated"));
}

TEST(PartitionE2eTest, OutputParsesBackAndExplains) {
  Outcome r = RunCommand(
      "{ tools/spmd-partition --passes=partition,cleanup --explain "
      "tests/testdata/uneven_reduce.hlo | tools/spmd-partition --passes=none -; }");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("all-reduce("));
  EXPECT_THAT(r.output, HasSubstr("explain tests/testdata/uneven_reduce.hlo:"));
}

}  // namespace

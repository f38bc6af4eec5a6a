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
  EXPECT_THAT(r.output, HasSubstr("\"all-to-all\": {\"count\": 2"));
  EXPECT_THAT(r.output, HasSubstr("\"full_rematerializations\": 0"));
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

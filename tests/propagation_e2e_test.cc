// End-to-end: the default pipeline (propagate, partition, cleanup) on modules annotated only at
// their parameters and outputs. The partitioned programs must use exactly the collectives the
// issue expects (Megatron MLP and attention: one all-reduce, nothing else) and compute what the
// unpartitioned module computes (spmd-run --verify on random inputs).
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;

// Runs `command` with stdout and stderr sent to a file under the test's temporary directory;
// returns the exit status (-1 when it did not exit normally) and sets `*output`.
int RunTool(const std::string& command, std::string* output) {
  const std::string log = ::testing::TempDir() + "/propagation_e2e_command.log";
  const int status = std::system((command + " > " + log + " 2>&1").c_str());
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  *output = text.str();
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Collective opcode -> number of instructions in `hlo` (async forms count as their op).
std::map<std::string, int> CountCollectives(const std::string& hlo) {
  std::map<std::string, int> counts;
  for (const char* op : {"all-reduce", "all-gather", "all-to-all", "collective-permute",
                         "reduce-scatter", "collective-broadcast"}) {
    for (const std::string suffix : {"(", "-start("}) {
      const std::string needle = std::string(" ") + op + suffix;
      for (size_t at = hlo.find(needle); at != std::string::npos; at = hlo.find(needle, at + 1)) {
        ++counts[op];
      }
    }
  }
  return counts;
}

class OneAllReduceTest : public ::testing::TestWithParam<const char*> {};

TEST_P(OneAllReduceTest, PropagatedProgramHasOnlyOneAllReduce) {
  const std::string path = std::string("tests/testdata/propagation/") + GetParam();
  std::string out;
  ASSERT_EQ(RunTool("tools/spmd-partition --passes=default " + path, &out), 0) << out;
  const std::map<std::string, int> expected = {{"all-reduce", 1}};
  EXPECT_EQ(CountCollectives(out), expected) << out;
}

TEST_P(OneAllReduceTest, PropagatedProgramMatchesOriginal) {
  const std::string path = std::string("tests/testdata/propagation/") + GetParam();
  for (int seed : {0, 5}) {
    std::string out;
    EXPECT_EQ(RunTool("tools/spmd-run --verify --seed " + std::to_string(seed) + " " + path, &out),
              0)
        << out;
    EXPECT_THAT(out, HasSubstr("verification passed")) << out;
  }
}

INSTANTIATE_TEST_SUITE_P(Modules, OneAllReduceTest,
                         ::testing::Values("megatron_mlp_2dev.hlo", "megatron_mlp_2x2.hlo",
                                           "attention_2dev.hlo"));

TEST(PropagationE2eTest, WithoutPropagationTheMlpGathers) {
  // The same module partitioned with unannotated intermediates left replicated: the check
  // above is not satisfied by the partitioner alone.
  std::string out;
  ASSERT_EQ(RunTool("tools/spmd-partition --passes=partition,cleanup "
                    "tests/testdata/propagation/megatron_mlp_2dev.hlo",
                    &out),
            0)
      << out;
  EXPECT_GT(CountCollectives(out)["all-gather"], 0) << out;
}

TEST(PropagationE2eTest, ExplainSaysWhereEachShardingCameFrom) {
  const std::string dump = ::testing::TempDir() + "/propagation_dump";
  std::string out;
  ASSERT_EQ(RunTool("tools/spmd-partition --explain --dump-dir " + dump +
                        " tests/testdata/propagation/attention_2dev.hlo -o " + dump + ".hlo",
                    &out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("%scores: {devices=[2,1,1]<=[2]} <- %q"));
  EXPECT_THAT(out, HasSubstr("from annotation on %wq"));
  std::string explain;
  ASSERT_EQ(RunTool("cat " + dump + "/explain.txt", &explain), 0);
  EXPECT_THAT(explain, HasSubstr("%p: {devices=[2,1,1]<=[2]} <- %e"));
}

}  // namespace

// The progress display's text: the bar with counts, time so far, time left and the current
// input fitted to the terminal's width, and the heartbeat line for logs.
#include "tools/batch/progress_bar.h"

#include "gtest/gtest.h"

namespace tools {
namespace {

ProgressState State(size_t finished, size_t total, size_t failed, double elapsed,
                    std::string current) {
  ProgressState s;
  s.finished = finished;
  s.total = total;
  s.failed = failed;
  s.elapsed_seconds = elapsed;
  s.current = std::move(current);
  return s;
}

TEST(ProgressBarTest, Durations) {
  EXPECT_EQ(FormatDuration(7.4), "0:07");
  EXPECT_EQ(FormatDuration(754), "12:34");
  EXPECT_EQ(FormatDuration(3723), "1:02:03");
  EXPECT_EQ(FormatDuration(-1), "0:00");
}

TEST(ProgressBarTest, LineSaysCountsTimeLeftAndTheCurrentInput) {
  // 10 of 40 done in 30 s: 90 s left at that pace.
  const std::string line = ProgressLine(State(10, 40, 1, 30, "spmd/Foo.hlo"), 100);
  EXPECT_EQ(line.rfind("[", 0), 0u) << line;
  EXPECT_NE(line.find("] 10/40  1 failed  0:30, about 1:30 left  spmd/Foo.hlo"), std::string::npos)
      << line;
  EXPECT_LE(line.size(), 100u);
}

TEST(ProgressBarTest, LineFitsNarrowTerminalsByCuttingTheNameFromTheLeft) {
  const std::string name = "xla-tests/spmd/AVeryLongModuleNameThatDoesNotFit.hlo";
  const std::string line = ProgressLine(State(3, 550, 0, 5, name), 60);
  EXPECT_LE(line.size(), 60u) << line;
  EXPECT_NE(line.find("~"), std::string::npos) << line;
  EXPECT_NE(line.find("Fit.hlo"), std::string::npos) << line;
  EXPECT_NE(line.find(" 3/550  0:05, about "), std::string::npos) << line;
}

TEST(ProgressBarTest, HeartbeatForLogs) {
  EXPECT_EQ(HeartbeatLine(State(12, 40, 1, 42, "spmd/Foo.hlo")),
            "spmd-partition: 12/40 done, 1 failed, 0:42 elapsed, about 1:38 left; working on "
            "spmd/Foo.hlo");
  EXPECT_EQ(HeartbeatLine(State(0, 5, 0, 31, "")), "spmd-partition: 0/5 done, 0:31 elapsed");
}

}  // namespace
}  // namespace tools

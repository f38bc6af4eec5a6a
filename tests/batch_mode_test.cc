// End-to-end: spmd-partition's batch mode. Directories with and without --recursive, @LIST
// files, one JSON line per input (failed ones included), one error line per failed input, the
// closing `N ok, N failed`, exit codes, --dump-dir per input, the progress bar (only on a
// terminal), and byte-identical outputs for -j1 and -j2 on part of the XLA corpus.
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tool_runner.h"

namespace {

namespace fs = std::filesystem;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using testing_tools::Outcome;
using testing_tools::RunShell;

constexpr char kTool[] = "tools/spmd-partition";
constexpr char kGood[] =
    "HloModule NAME, num_partitions=2\nENTRY e {\n"
    "  ROOT p = f32[8] parameter(0), sharding={devices=[2]0,1}\n}\n";
constexpr char kBad[] = "HloModule b\nENTRY e {\n  ROOT p = f32[] frob(0)\n}\n";

std::string Good(const std::string& name) {
  std::string text = kGood;
  text.replace(text.find("NAME"), 4, name);
  return text;
}

// dir/a.hlo, dir/b.hlo (fails at 3:18), dir/sub/c.hlo, dir/notes.md (not a module).
fs::path MakeTree(const std::string& name) {
  const fs::path dir = testing_tools::FreshDir(name);
  testing_tools::WriteFile(dir / "a.hlo", Good("a"));
  testing_tools::WriteFile(dir / "b.hlo", kBad);
  testing_tools::WriteFile(dir / "sub/c.hlo", Good("c"));
  testing_tools::WriteFile(dir / "notes.md", "not a module\n");
  return dir;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(text.substr(start, nl - start));
  }
  return lines;
}

TEST(BatchModeTest, DirectoryWithoutRecursiveTakesTopLevelModules) {
  const fs::path dir = MakeTree("top");
  const fs::path out = dir.parent_path() / "top-out";
  fs::remove_all(out);
  Outcome r = RunShell(std::string(kTool) + " --passes=none " + dir.string() + " -o " +
                       out.string() + " --stats json --stats-file " + (out.string() + ".jsonl"));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(fs::exists(out / "a.hlo"));
  EXPECT_FALSE(fs::exists(out / "b.hlo"));
  EXPECT_FALSE(fs::exists(out / "sub"));
  const std::vector<std::string> err = Lines(r.err);
  ASSERT_EQ(err.size(), 2u) << r.err;
  EXPECT_EQ(err[0].rfind((dir / "b.hlo").string() + ":3:18: error: unknown opcode 'frob'", 0), 0u)
      << err[0];
  EXPECT_EQ(err[1], "1 ok, 1 failed");
  const std::vector<std::string> stats = Lines(testing_tools::ReadFile(out.string() + ".jsonl"));
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_THAT(stats[0], HasSubstr("\"module\": \"a\""));
  EXPECT_THAT(stats[1], HasSubstr("{\"input\": \"" + (dir / "b.hlo").string() + "\", \"error\": "));
}

TEST(BatchModeTest, RecursiveKeepsSubdirectoriesAndJsonLinesOnStderr) {
  const fs::path dir = MakeTree("rec");
  const fs::path out = dir.parent_path() / "rec-out";
  fs::remove_all(out);
  Outcome r = RunShell(std::string(kTool) + " --passes=none --recursive -j2 " + dir.string() +
                       " -o " + out.string() + " --stats json");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(fs::exists(out / "a.hlo"));
  EXPECT_TRUE(fs::exists(out / "sub/c.hlo"));
  const std::vector<std::string> err = Lines(r.err);
  // a's stats, b's error line, b's error object, c's stats, the summary; in input order.
  ASSERT_EQ(err.size(), 5u) << r.err;
  EXPECT_THAT(err[0], HasSubstr("\"module\": \"a\""));
  EXPECT_THAT(err[1], HasSubstr("b.hlo:3:18: error: unknown opcode 'frob'"));
  EXPECT_THAT(err[2], HasSubstr("\"error\": "));
  EXPECT_THAT(err[3], HasSubstr("\"module\": \"c\""));
  EXPECT_EQ(err[4], "2 ok, 1 failed");
  // Piped stderr: no progress bar.
  EXPECT_THAT(r.err, Not(HasSubstr("\r")));
  EXPECT_THAT(r.err, Not(HasSubstr("\x1b")));
}

TEST(BatchModeTest, ListFileAndMissingInput) {
  const fs::path dir = MakeTree("list");
  const fs::path list = dir / "inputs.txt";
  testing_tools::WriteFile(list, "# modules to check\n\n" + (dir / "sub/c.hlo").string() + "\n  " +
                                     (dir / "missing.hlo").string() + "  \n" +
                                     (dir / "a.hlo").string() + "\n");
  Outcome r = RunShell(std::string(kTool) + " --passes=none @" + list.string());
  EXPECT_EQ(r.code, 1);
  // Outputs to stdout in list order: c, then a.
  EXPECT_LT(r.out.find("HloModule c"), r.out.find("HloModule a"));
  const std::vector<std::string> err = Lines(r.err);
  ASSERT_EQ(err.size(), 2u) << r.err;
  EXPECT_EQ(err[0].rfind((dir / "missing.hlo").string() + ": error: ", 0), 0u) << err[0];
  EXPECT_EQ(err[1], "2 ok, 1 failed");
}

TEST(BatchModeTest, AllOkExitsZero) {
  const fs::path dir = testing_tools::FreshDir("allok");
  testing_tools::WriteFile(dir / "x.hlo", Good("x"));
  testing_tools::WriteFile(dir / "y.hlo", Good("y"));
  Outcome r = RunShell(std::string(kTool) + " --passes=none " + dir.string() + " -o " +
                       (dir / "out").string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "2 ok, 0 failed\n");
}

TEST(BatchModeTest, UsageErrorsExitTwo) {
  const fs::path dir = testing_tools::FreshDir("usage");
  testing_tools::WriteFile(dir / "x/a.hlo", Good("a"));
  testing_tools::WriteFile(dir / "y/a.hlo", Good("a2"));
  testing_tools::WriteFile(dir / "nested.txt", "@other.txt\n");
  fs::create_directories(dir / "empty");
  const std::string tool = std::string(kTool) + " --passes=none ";
  Outcome dup = RunShell(tool + (dir / "x/a.hlo").string() + " " + (dir / "y/a.hlo").string() +
                         " -o " + (dir / "out").string());
  EXPECT_EQ(dup.code, 2);
  EXPECT_THAT(dup.err, HasSubstr("its output would overwrite that of"));
  EXPECT_FALSE(fs::exists(dir / "out"));
  Outcome no_list = RunShell(tool + "@" + (dir / "absent.txt").string());
  EXPECT_EQ(no_list.code, 2);
  EXPECT_THAT(no_list.err, HasSubstr("absent.txt: error: cannot read input list"));
  Outcome nested = RunShell(tool + "@" + (dir / "nested.txt").string());
  EXPECT_EQ(nested.code, 2);
  EXPECT_THAT(nested.err, HasSubstr("nested.txt:1:1: error: an input list cannot name"));
  testing_tools::WriteFile(dir / "blank.txt", "# nothing yet\n\n");
  Outcome blank = RunShell(tool + "@" + (dir / "blank.txt").string());
  EXPECT_EQ(blank.code, 2);
  EXPECT_THAT(blank.err, HasSubstr("blank.txt: error: the input list names no inputs"));
  Outcome empty = RunShell(tool + (dir / "empty").string());
  EXPECT_EQ(empty.code, 2);
  EXPECT_THAT(empty.err, HasSubstr("no .hlo, .txt, .pb or .binpb files"));
  Outcome threshold =
      RunShell(tool + "--windowed-einsum-threshold=-5 " + (dir / "x/a.hlo").string());
  EXPECT_EQ(threshold.code, 2);
}

TEST(BatchModeTest, CostModelFlagsAreAccepted) {
  const fs::path dir = testing_tools::FreshDir("flags");
  testing_tools::WriteFile(dir / "a.hlo", Good("a"));
  Outcome r = RunShell(std::string(kTool) +
                       " --passes=none --no-windowed-einsum "
                       "--windowed-einsum-threshold 1048576 " +
                       (dir / "a.hlo").string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("HloModule a"));
}

TEST(BatchModeTest, DumpDirPerInput) {
  const fs::path dir = MakeTree("dump");
  const fs::path dump = dir.parent_path() / "dump-dumps";
  fs::remove_all(dump);
  Outcome r = RunShell(std::string(kTool) + " --passes=none -r " + dir.string() + " --dump-dir " +
                       dump.string() + " -o " + (dir.parent_path() / "dump-out").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(fs::exists(dump / "a/00.input.hlo"));
  EXPECT_TRUE(fs::exists(dump / "a/stats.json"));
  EXPECT_TRUE(fs::exists(dump / "sub/c/00.input.hlo"));
  EXPECT_THAT(testing_tools::ReadFile(dump / "sub/c/stats.json"), HasSubstr("\"module\": \"c\""));
  EXPECT_FALSE(fs::exists(dump / "b/stats.json"));
}

TEST(BatchModeTest, ProgressBarOnlyOnATerminal) {
  if (RunShell("command -v script").code != 0)
    GTEST_SKIP() << "util-linux 'script' is not installed";
  const fs::path dir = MakeTree("tty");
  // script(1) gives the command a pseudo-terminal for stdout and stderr.
  Outcome r = RunShell("script -qec '" + std::string(kTool) + " --passes=none -r " + dir.string() +
                       " -o " + (dir.parent_path() / "tty-out").string() + "' " +
                       (dir.parent_path() / "typescript").string());
  // The tool always ends with its summary, so empty output means script(1) itself failed.
  if (r.out.empty()) GTEST_SKIP() << "script(1) could not run here: " << r.err;
  EXPECT_THAT(r.out, HasSubstr("] 3/3"));
  EXPECT_THAT(r.out, HasSubstr("\r\x1b[K"));
  EXPECT_THAT(r.out, HasSubstr("2 ok, 1 failed"));
}

// Every 10th module of the corpus through the default pipeline (propagate, partition, cleanup)
// with -j1, -j2 and -j2 again: the output trees are byte-identical, and there is one JSON line
// per input.
TEST(BatchModeTest, ByteIdenticalWhateverJobs) {
  const fs::path corpus = testing_tools::CorpusDir("spmd");
  if (corpus.empty()) GTEST_SKIP() << "../shared/corpus/xla-tests/spmd not found";
  std::vector<fs::path> all;
  for (const auto& e : fs::directory_iterator(corpus)) {
    if (e.path().extension() == ".hlo") all.push_back(e.path());
  }
  std::sort(all.begin(), all.end());
  const fs::path dir = testing_tools::FreshDir("identical");
  std::string list;
  size_t count = 0;
  for (size_t i = 0; i < all.size(); i += 10, ++count) list += all[i].string() + "\n";
  testing_tools::WriteFile(dir / "list.txt", list);
  std::vector<std::string> trees;
  for (const char* run : {"j1", "j2", "j2again"}) {
    const std::string jobs = std::string(run) == "j1" ? "1" : "2";
    Outcome r = RunShell(std::string(kTool) + " -j" + jobs + " @" + (dir / "list.txt").string() +
                         " -o " + (dir / run).string() + " --stats json --stats-file " +
                         (dir / run).string() + ".jsonl");
    EXPECT_THAT(r.err, EndsWith(" failed\n"));
    EXPECT_EQ(Lines(testing_tools::ReadFile((dir / run).string() + ".jsonl")).size(), count);
    trees.push_back(testing_tools::DescribeTree(dir / run));
  }
  EXPECT_GT(trees[0].size(), 1000u);
  EXPECT_TRUE(trees[0] == trees[1]) << "-j1 and -j2 outputs differ";
  EXPECT_TRUE(trees[1] == trees[2]) << "two -j2 runs differ";
}

}  // namespace

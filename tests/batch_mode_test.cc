// End-to-end: spmd-partition's batch mode. Directories with and without --recursive, @LIST
// files, one JSON line per input (failed ones with kind, file, line and column) and a closing
// summary record, one error line per failed input, the closing `N ok, N failed`, exit codes,
// --dump-dir per input, the progress bar (only on a terminal), --baseline (stable keys, growth
// beyond the tolerance exits 1, modules on one side only), --stats-file - (stdout), JSON on
// stderr never mixed with error text, --version on the three tools, and byte-identical outputs
// for -j1 and -j2 on part of the XLA corpus.
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
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_THAT(stats[0], HasSubstr("\"module\": \"a\""));
  EXPECT_THAT(stats[1], HasSubstr("{\"input\": \"" + (dir / "b.hlo").string() + "\", \"error\": "));
  EXPECT_THAT(stats[2], HasSubstr("{\"summary\": {\"modules\": 2, \"ok\": 1, \"failed\": 1"));
}

// A failed input's record says what failed where; the last record sums the run up.
TEST(BatchModeTest, FailureRecordsAndSummaryRecord) {
  const fs::path dir = MakeTree("records");
  const std::string jsonl = dir.string() + ".jsonl";
  Outcome r = RunShell(std::string(kTool) + " --passes=none -r " + dir.string() + " -o " +
                       dir.string() + "-out --stats json --stats-file " + jsonl);
  EXPECT_EQ(r.code, 1) << r.err;
  const std::vector<std::string> stats = Lines(testing_tools::ReadFile(jsonl));
  ASSERT_EQ(stats.size(), 4u);
  EXPECT_THAT(stats[0], HasSubstr("\"key\": \"a.hlo\""));
  EXPECT_THAT(
      stats[1],
      HasSubstr("\"key\": \"b.hlo\", \"kind\": \"parse\", \"file\": \"" + (dir / "b.hlo").string() +
                "\", \"line\": 3, \"column\": 18, \"message\": \"unknown opcode"));
  EXPECT_THAT(stats[2], HasSubstr("\"key\": \"sub/c.hlo\""));
  EXPECT_THAT(stats[3], HasSubstr("{\"summary\": {\"modules\": 3, \"ok\": 2, \"failed\": 1, "
                                  "\"failures_by_kind\": {\"parse\": 1}, \"totals\": {"));
}

// --stats-file - is stdout (never a file named "-"); it needs -o, else modules would share it.
TEST(BatchModeTest, StatsFileDashIsStdout) {
  const fs::path dir = MakeTree("dash");
  Outcome r = RunShell("cd " + dir.string() + " && " + fs::absolute(kTool).string() +
                       " --passes=none a.hlo sub/c.hlo -o out --stats json --stats-file -");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir / "-"));
  const std::vector<std::string> out = Lines(r.out);
  ASSERT_EQ(out.size(), 3u) << r.out;
  EXPECT_THAT(out[0], HasSubstr("\"key\": \"a.hlo\""));
  EXPECT_THAT(out[1], HasSubstr("\"key\": \"sub/c.hlo\""));
  EXPECT_THAT(out[2], HasSubstr("{\"summary\": "));
  EXPECT_EQ(r.err, "2 ok, 0 failed\n");
  Outcome clash = RunShell("cd " + dir.string() + " && " + fs::absolute(kTool).string() +
                           " --passes=none a.hlo --stats json --stats-file -");
  EXPECT_EQ(clash.code, 2);
  EXPECT_THAT(clash.err, HasSubstr("--stats-file -"));
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
  // JSON statistics on stderr: nothing but JSON Lines there (the failed input's record carries
  // its error line; the summary record replaces `N ok, N failed`), in input order.
  ASSERT_EQ(err.size(), 4u) << r.err;
  EXPECT_THAT(err[0], HasSubstr("\"module\": \"a\""));
  EXPECT_THAT(err[1], HasSubstr("b.hlo:3:18: error: unknown opcode 'frob'"));
  EXPECT_THAT(err[1], HasSubstr("\"kind\": \"parse\""));
  EXPECT_THAT(err[2], HasSubstr("\"module\": \"c\""));
  EXPECT_THAT(err[3], HasSubstr("{\"summary\": {\"modules\": 3, \"ok\": 2, \"failed\": 1"));
  for (const std::string& line : err) EXPECT_EQ(line.front(), '{') << line;
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
// per input and the summary record.
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
    EXPECT_EQ(Lines(testing_tools::ReadFile((dir / run).string() + ".jsonl")).size(), count + 1);
    trees.push_back(testing_tools::DescribeTree(dir / run));
  }
  EXPECT_GT(trees[0].size(), 1000u);
  EXPECT_TRUE(trees[0] == trees[1]) << "-j1 and -j2 outputs differ";
  EXPECT_TRUE(trees[1] == trees[2]) << "two -j2 runs differ";
}

// A baseline from one run; the same modules typed another way compare equal; a worse dot
// strategy makes the dot module's bytes grow, which names the module and metric and exits 1
// unless the tolerance allows it; modules on one side only are listed.
TEST(BatchModeTest, BaselineFailsWhenAModuleGrows) {
  const fs::path dir = testing_tools::FreshDir("baseline");
  testing_tools::WriteFile(dir / "corpus/dot.hlo",
                           testing_tools::ReadFile("tests/testdata/xla_4062_dot_small.hlo"));
  testing_tools::WriteFile(dir / "corpus/sub/a.hlo", Good("a"));
  const std::string tool = std::string(kTool) + " --passes=partition,cleanup -r ";
  const std::string base = (dir / "base.jsonl").string();
  Outcome first = RunShell(tool + (dir / "corpus").string() + " -o " + (dir / "o1").string() +
                           " --stats json --stats-file " + base);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_THAT(testing_tools::ReadFile(base), HasSubstr("\"key\": \"dot.hlo\""));
  // The same corpus typed as corpus/../corpus/: same keys, nothing changed.
  Outcome same = RunShell(tool + (dir / "corpus/../corpus/").string() + " -o " +
                          (dir / "o2").string() + " --baseline " + base);
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_THAT(same.err,
              HasSubstr("2 modules compared; none grew by more than 0%"));
  const std::string worse = tool + "--dot-strategy replicated " + (dir / "corpus").string() +
                            " -o " + (dir / "o3").string() + " --baseline " + base;
  Outcome grew = RunShell(worse + " --stats json --stats-file " + (dir / "o3.jsonl").string());
  EXPECT_EQ(grew.code, 1) << grew.err;
  EXPECT_THAT(grew.err, HasSubstr("baseline: dot.hlo: bytes received per device grew 2.0 KiB -> "));
  EXPECT_THAT(grew.err, HasSubstr("over the tolerance of 0%)"));
  EXPECT_THAT(grew.err, Not(HasSubstr("sub/a.hlo:")));
  EXPECT_THAT(grew.err, EndsWith("2 ok, 0 failed\n"));
  const std::vector<std::string> records = Lines(testing_tools::ReadFile(dir / "o3.jsonl"));
  ASSERT_EQ(records.size(), 3u);
  // Gathering both operands also raises the FLOPs and peak memory.
  EXPECT_THAT(records[2], HasSubstr("\"regressions\": 3, \"changes\": [{\"key\": \"dot.hlo\", "
                                    "\"metric\": \"comm_bytes\", \"baseline\": 2048, "
                                    "\"current\": 40960, \"change_percent\": 1900, "
                                    "\"regression\": true}, {\"key\": \"dot.hlo\", \"metric\": "
                                    "\"flops\""));
  Outcome tolerated = RunShell(worse + " --baseline-tolerance 1e9");
  EXPECT_EQ(tolerated.code, 0) << tolerated.err;
  EXPECT_THAT(tolerated.err, HasSubstr("baseline: dot.hlo: bytes received per device 2.0 KiB -> "));
  // One module renamed: one side only each.
  fs::rename(dir / "corpus/sub/a.hlo", dir / "corpus/sub/b.hlo");
  Outcome moved = RunShell(tool + (dir / "corpus").string() + " -o " + (dir / "o4").string() +
                           " --baseline " + base);
  EXPECT_EQ(moved.code, 0) << moved.err;
  EXPECT_THAT(moved.err, HasSubstr("baseline: sub/b.hlo: not in the baseline\n"));
  EXPECT_THAT(moved.err, HasSubstr("baseline: sub/a.hlo: in the baseline but not in this run\n"));
}

// A baseline that cannot be read is a located usage error before any work: no outputs.
TEST(BatchModeTest, BadBaselineIsALocatedUsageError) {
  const fs::path dir = MakeTree("badbase");
  testing_tools::WriteFile(dir.string() + ".jsonl",
                           "{\"key\": \"a.hlo\", \"per_device\": {\"flops\": 0, \"comm_bytes\": 0, "
                           "\"peak_memory_bytes\": 0}}\n{\"key\": \"x\", oops}\n");
  const std::string tool = std::string(kTool) + " --passes=none " + (dir / "a.hlo").string() +
                           " -o " + dir.string() + "-out.hlo --baseline ";
  Outcome r = RunShell(tool + dir.string() + ".jsonl");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err,
              HasSubstr(dir.string() + ".jsonl:2:14: error: baseline: expected a string key"));
  EXPECT_FALSE(fs::exists(dir.string() + "-out.hlo"));
  testing_tools::WriteFile(dir.string() + "-2.jsonl", "{\"key\": \"a.hlo\"}\n");
  r = RunShell(tool + dir.string() + "-2.jsonl");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("-2.jsonl:1:1: error: baseline: the record has no \"per_device\""));
  r = RunShell(tool + (dir / "absent.jsonl").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("absent.jsonl: error: cannot read the baseline"));
  r = RunShell(tool + dir.string() + ".jsonl --baseline-tolerance -1");
  EXPECT_EQ(r.code, 2);
}

TEST(BatchModeTest, VersionOnEveryTool) {
  for (const char* name : {"spmd-partition", "spmd-run", "spmd-inspect"}) {
    Outcome r = RunShell(std::string("tools/") + name + " --version");
    EXPECT_EQ(r.code, 0) << name << r.err;
    EXPECT_THAT(r.out, testing::StartsWith(std::string(name) + " ")) << r.out;
  }
}

}  // namespace

// The partition fuzzer (partition_fuzz.h) as a test.
//
// Short mode (CI): a fixed run seed, 300 mutants of the corpus (when ../shared/corpus is
// beside the workspace), tests/testdata and 40 generated modules; every failing mutant is
// listed with its seed, mutations, first lines and error. Reproduce one (its text is written
// to fuzz-out/partition) from the workspace root with
//   PARTITION_FUZZ_SEED=1 PARTITION_FUZZ_FIRST=I PARTITION_FUZZ_MUTANTS=1
//   PARTITION_FUZZ_GENERATED=40 HLO_CORPUS_DIR=../shared/corpus/xla-tests
//   bazel-bin/tests/partition_fuzz_test --gtest_filter='*LongRun'
// (the seed list, hence mutant I, depends on the corpus and the generated count).
//
// Long mode: fuzz/run_partition_fuzz.sh SECONDS runs the LongRun case of this binary with
//   PARTITION_FUZZ_SECONDS  how long to run (or PARTITION_FUZZ_MUTANTS: how many mutants);
//   PARTITION_FUZZ_SEED     the run seed (default 1); PARTITION_FUZZ_FIRST the first index;
//   PARTITION_FUZZ_OUT      where failing mutants are saved (default fuzz-out/partition);
//   PARTITION_FUZZ_TIMEOUT  seconds per mutant (default 20);
//   PARTITION_FUZZ_GENERATED  generated seed modules (default 200);
//   HLO_CORPUS_DIR, PARTITION_FUZZ_TESTDATA  the seed folders outside `bazel test`.
#include "tests/partition_fuzz.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/tool_runner.h"

namespace partition_fuzz {
namespace {

namespace fs = std::filesystem;

// The short run's seed. Every failure of the current partitioner that this run could meet is
// reported (fuzz-out/ holds the reproducers); a seed is changed only with the reason here.
constexpr uint64_t kShortRunSeed = 1;
constexpr int64_t kShortRunMutants = 300;

std::string Env(const char* name, const std::string& fallback = "") {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

fs::path TestdataDir() {
  const std::string dir = Env("PARTITION_FUZZ_TESTDATA");
  if (!dir.empty()) return dir;
  const std::string srcdir = Env("TEST_SRCDIR"), workspace = Env("TEST_WORKSPACE");
  if (!srcdir.empty() && !workspace.empty()) return fs::path(srcdir) / workspace / "tests/testdata";
  return "tests/testdata";
}

std::vector<SeedModule> Seeds(int64_t generated) {
  SeedOptions options;
  const fs::path spmd = testing_tools::CorpusDir("spmd");
  if (!spmd.empty()) options.corpus_dir = spmd.parent_path();
  options.testdata_dir = TestdataDir();
  options.generated = generated;
  return LoadSeeds(options);
}

std::string FirstLines(const std::string& text, int count) {
  size_t at = 0;
  for (int k = 0; k < count; ++k) {
    at = text.find('\n', at);
    if (at == std::string::npos) return text;
    ++at;
  }
  return text.substr(0, at) + "...\n";
}

// Every failing mutant: what it is, its first lines and the error.
std::string Describe(const Summary& summary) {
  std::string out;
  for (const Failure& f : summary.failures) {
    out += "\n== " + f.signature + "\n" + f.mutant.Describe() + "\n" +
           FirstLines(f.mutant.text, 12) + "--- error (phase " + f.result.phase + ")\n" +
           FirstLines(f.result.detail, 25) +
           (f.saved_path.empty() ? "" : "saved as " + f.saved_path + "\n");
  }
  return out;
}

TEST(PartitionFuzzTest, MutantsDependOnlyOnTheRunSeedAndIndex) {
  const std::vector<SeedModule> seeds = Seeds(10);
  ASSERT_FALSE(seeds.empty());
  for (uint64_t index : {0, 7, 123}) {
    const Mutant a = MakeMutant(seeds, 5, index);
    const Mutant b = MakeMutant(seeds, 5, index);
    EXPECT_EQ(a.text, b.text);
    EXPECT_EQ(a.Describe(), b.Describe());
    EXPECT_EQ(a.passes, b.passes);
  }
  EXPECT_NE(MakeMutant(seeds, 5, 1).Describe(), MakeMutant(seeds, 6, 1).Describe());
}

TEST(PartitionFuzzTest, MutationsApplyAndChangeTheText) {
  const std::vector<SeedModule> seeds = Seeds(20);
  int changed = 0;
  std::map<std::string, int> kinds;
  for (uint64_t index = 0; index < 300; ++index) {
    const Mutant m = MakeMutant(seeds, 11, index);
    for (const std::string& what : m.mutations) ++kinds[what.substr(0, what.find_first_of(" :"))];
    const auto seed = std::find_if(seeds.begin(), seeds.end(),
                                   [&](const SeedModule& s) { return s.name == m.seed_name; });
    changed += seed != seeds.end() && seed->text != m.text ? 1 : 0;
  }
  EXPECT_GE(changed, 270);
  for (const char* kind :
       {"reshard", "strip", "opcode", "resize", "attribute", "line", "partitions", "constant"}) {
    EXPECT_GT(kinds[kind], 0) << kind;
  }
}

TEST(PartitionFuzzTest, IsolationReportsCrashesHangsAndResults) {
  IsolatedRun ok = RunIsolated(
      [](const Progress& progress) {
        progress("work");
        return std::string("done");
      },
      10);
  EXPECT_TRUE(ok.finished);
  EXPECT_EQ(ok.result, "done");
  EXPECT_EQ(ok.last_phase, "work");

  IsolatedRun crash = RunIsolated(
      [](const Progress& progress) -> std::string {
        progress("about to abort");
        std::abort();
      },
      10);
  EXPECT_FALSE(crash.finished);
  EXPECT_EQ(crash.signal, SIGABRT);
  EXPECT_EQ(crash.last_phase, "about to abort");

  IsolatedRun hang = RunIsolated(
      [](const Progress& progress) -> std::string {
        progress("spinning");
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      },
      1);
  EXPECT_FALSE(hang.finished);
  EXPECT_TRUE(hang.timed_out);
  EXPECT_EQ(hang.last_phase, "spinning");
}

TEST(PartitionFuzzTest, ShortSeededRunFindsNoFailure) {
  const std::vector<SeedModule> seeds = Seeds(40);
  ASSERT_FALSE(seeds.empty());
  FuzzOptions options;
  options.seed = kShortRunSeed;
  options.max_mutants = kShortRunMutants;
  options.check.work_dir = ::testing::TempDir();
  // Only a real hang takes this long: the slowest of these mutants needs 7 s on an idle
  // 2-core machine, and CI machines are often busy.
  options.check.timeout_seconds = 120;
  const Summary summary = RunFuzz(seeds, options);
  std::printf("%zu seed modules\n%s", seeds.size(), summary.ToString().c_str());
  EXPECT_TRUE(summary.failures.empty()) << Describe(summary);
  // The run is worth its time only if mutants get through to the oracle.
  EXPECT_GT(summary.accepted, kShortRunMutants / 4);
  EXPECT_GT(summary.verified, kShortRunMutants / 10);
}

// Long mode: skipped unless PARTITION_FUZZ_SECONDS or PARTITION_FUZZ_MUTANTS is set.
TEST(PartitionFuzzTest, LongRun) {
  const double seconds = std::atof(Env("PARTITION_FUZZ_SECONDS", "0").c_str());
  const int64_t mutants = std::atoll(Env("PARTITION_FUZZ_MUTANTS", "0").c_str());
  if (seconds <= 0 && mutants <= 0) GTEST_SKIP() << "set PARTITION_FUZZ_SECONDS to run";
  const std::string generated = Env("PARTITION_FUZZ_GENERATED", "200");
  const std::vector<SeedModule> seeds = Seeds(std::atoll(generated.c_str()));
  FuzzOptions options;
  options.seed = std::strtoull(Env("PARTITION_FUZZ_SEED", "1").c_str(), nullptr, 10);
  options.first_index = std::strtoull(Env("PARTITION_FUZZ_FIRST", "0").c_str(), nullptr, 10);
  options.max_seconds = seconds;
  options.max_mutants = mutants;
  options.out_dir = Env("PARTITION_FUZZ_OUT", "fuzz-out/partition");
  options.check.timeout_seconds = std::atof(Env("PARTITION_FUZZ_TIMEOUT", "20").c_str());
  options.check.work_dir = options.out_dir / "work";
  fs::create_directories(options.check.work_dir);
  options.progress_seconds = 60;
  options.reproduce_env = "PARTITION_FUZZ_GENERATED=" + generated +
                          " HLO_CORPUS_DIR=" + Env("HLO_CORPUS_DIR", "(none)") +
                          " PARTITION_FUZZ_TESTDATA=" + TestdataDir().string();
  std::printf("%zu seed modules, run seed %llu\n", seeds.size(),
              static_cast<unsigned long long>(options.seed));
  const Summary summary = RunFuzz(seeds, options);
  std::printf("SUMMARY\n%s", summary.ToString().c_str());
  EXPECT_TRUE(summary.failures.empty())
      << summary.failures.size() << " failing mutants; see " << options.out_dir;
}

}  // namespace
}  // namespace partition_fuzz

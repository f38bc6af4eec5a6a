// Helpers for the end-to-end tests of the command-line programs: running a command with its
// output captured, small file utilities, and finding the shared XLA corpus.
#ifndef TESTS_TOOL_RUNNER_H_
#define TESTS_TOOL_RUNNER_H_

#include <filesystem>
#include <string>

namespace testing_tools {

struct Outcome {
  int code = -1;    // Exit status; -1 when the command did not exit normally.
  std::string out;  // stdout.
  std::string err;  // stderr.
};

// Runs `command` through the shell with stdout and stderr captured separately (stderr goes
// through a temporary file, so neither is a terminal).
Outcome RunShell(const std::string& command);

std::string ReadFile(const std::filesystem::path& path);
void WriteFile(const std::filesystem::path& path, const std::string& text);

// A fresh empty directory under the test's temporary directory.
std::filesystem::path FreshDir(const std::string& name);

// ../shared/corpus/xla-tests/SUB beside the workspace (found through the runfile link of
// tests/BUILD.bazel), or $HLO_CORPUS_DIR/SUB; empty when neither exists.
std::filesystem::path CorpusDir(const std::string& sub);

// Every regular file under `dir` (relative path -> contents), for comparing output trees.
std::string DescribeTree(const std::filesystem::path& dir);

}  // namespace testing_tools

#endif  // TESTS_TOOL_RUNNER_H_

// popen reads stdout; stderr is redirected into a temporary file read afterwards.
#include "tests/tool_runner.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "gtest/gtest.h"

namespace testing_tools {

namespace fs = std::filesystem;

Outcome RunShell(const std::string& command) {
  static int counter = 0;
  const fs::path err_path =
      fs::path(::testing::TempDir()) / ("stderr." + std::to_string(++counter));
  Outcome outcome;
  FILE* pipe = popen((command + " 2>" + err_path.string()).c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) outcome.out.append(buf, n);
  const int status = pclose(pipe);
  outcome.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.err = ReadFile(err_path);
  fs::remove(err_path);
  return outcome;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path CorpusDir(const std::string& sub) {
  if (const char* dir = std::getenv("HLO_CORPUS_DIR")) return fs::path(dir) / sub;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return {};
  std::error_code ec;
  const fs::path build = fs::canonical(fs::path(srcdir) / workspace / "tests/BUILD.bazel", ec);
  if (ec) return {};
  const fs::path corpus =
      build.parent_path().parent_path().parent_path() / "shared/corpus/xla-tests" / sub;
  return fs::exists(corpus) ? corpus : fs::path();
}

std::string DescribeTree(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path().lexically_relative(dir).string());
  }
  std::sort(files.begin(), files.end());
  std::string out;
  for (const std::string& f : files) out += "== " + f + "\n" + ReadFile(dir / f);
  return out;
}

}  // namespace testing_tools

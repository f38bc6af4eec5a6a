// A fatal signal in the middle of a batch of atomic writes leaves no `*.tmp.<pid>` file: the
// signal handler removes every temp file in flight, including one another thread is about to
// create while the handler runs (CI saw `m38.hlo.tmp.210` left after SIGINT).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/io/module_io.h"

namespace hlo {
namespace {

namespace fs = std::filesystem;

// In a child: `threads` writers rewrite their files until SIGINT, sent after `delay_us`.
[[noreturn]] void WriteUntilInterrupted(const fs::path& dir, int threads, int delay_us) {
  const std::string bytes(16 << 10, 'x');
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t) {
    writers.emplace_back([&dir, &bytes, t] {
      for (int i = 0;; ++i) {
        (void)WriteFileAtomically(
            (dir / ("f" + std::to_string(t) + "_" + std::to_string(i % 8))).string(), bytes);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
  ::kill(::getpid(), SIGINT);
  std::this_thread::sleep_for(std::chrono::seconds(10));
  ::_exit(3);  // The signal did not end the process.
}

int TempFilesIn(const fs::path& dir) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    count += entry.path().filename().string().find(".tmp.") != std::string::npos;
  }
  return count;
}

TEST(AtomicWriteSignalTest, InterruptedWritersLeaveNoTempFiles) {
  const fs::path root = fs::path(::testing::TempDir()) / "atomic_write_signal";
  std::mt19937 rng(20261202);
  constexpr int kRounds = 150;
  int leftovers = 0;
  for (int round = 0; round < kRounds; ++round) {
    const fs::path dir = root / std::to_string(round);
    fs::remove_all(dir);
    fs::create_directories(dir);
    const int delay_us = std::uniform_int_distribution<int>(200, 3000)(rng);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) WriteUntilInterrupted(dir, 4, delay_us);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "status " << status;
    leftovers += TempFilesIn(dir);
    fs::remove_all(dir);
  }
  EXPECT_EQ(leftovers, 0) << "temp files left over " << kRounds << " interrupted rounds";
}

}  // namespace
}  // namespace hlo

// Progress of a batch run on stderr. On a terminal, a one-line bar redrawn in place: how many
// inputs are done and failed, the time so far and the estimated time left, and the input most
// recently started. Off a terminal (a CI log), a heartbeat line every 30 seconds instead,
// unless stderr must carry nothing but JSON Lines. Messages printed while the bar is shown go
// through Print, which clears the bar first and redraws it after, so the two never mix.
#ifndef TOOLS_BATCH_PROGRESS_BAR_H_
#define TOOLS_BATCH_PROGRESS_BAR_H_

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>

namespace tools {

// What one progress report says.
struct ProgressState {
  size_t finished = 0, total = 0, failed = 0;
  double elapsed_seconds = 0;
  std::string current;  // The input most recently started; empty when none.
};

// "[####......] 12/40  1 failed  0:42, about 1:38 left  spmd/Foo.hlo", `width` columns at most
// (the bar shrinks first, then the input's name loses its start).
std::string ProgressLine(const ProgressState& s, int width);
// "spmd-partition: 12/40 done, 1 failed, 0:42 elapsed, about 1:38 left; working on spmd/Foo.hlo"
std::string HeartbeatLine(const ProgressState& s);
// 0:07, 12:34, 1:02:03.
std::string FormatDuration(double seconds);

class ProgressBar {
 public:
  // A bar when `enabled` and stderr is a terminal; heartbeats when `enabled`, stderr is not a
  // terminal and `heartbeat` is allowed; nothing otherwise.
  ProgressBar(size_t total, bool enabled, bool heartbeat);
  bool shown() const { return mode_ == Mode::kBar; }
  // Records that input `name` started (any thread).
  void Started(const std::string& name);
  // Records progress and redraws (or beats): `finished` of total, `failed` of them failed. Also
  // called with unchanged counts to let the clock move.
  void Update(size_t finished, size_t failed);
  // Writes `text` to `stream` (stderr or stdout, which may be the same terminal), with the bar
  // cleared before and redrawn after when shown.
  void Print(const std::string& text, std::FILE* stream = stderr);
  // Removes the bar from the terminal.
  void Finish();

 private:
  enum class Mode { kOff, kBar, kHeartbeat };
  ProgressState State();
  void Draw();
  void Clear();

  using Clock = std::chrono::steady_clock;
  size_t total_;
  size_t finished_ = 0;
  size_t failed_ = 0;
  Mode mode_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_beat_ = start_;
  std::mutex mu_;  // Guards current_.
  std::string current_;
};

}  // namespace tools

#endif  // TOOLS_BATCH_PROGRESS_BAR_H_

// The bar is `\r[#########.........] 123/550  2 failed  1:02, about 0:40 left  NAME` sized to
// the terminal width (TIOCGWINSZ, 80 columns when unknown); `\r\x1b[K` erases it.
#include "tools/batch/progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "hlo/strings.h"

namespace tools {
namespace {

constexpr double kHeartbeatSeconds = 30;

int TerminalWidth() {
  struct winsize ws {};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

// "1:02, about 0:40 left" (no estimate before the first input is done).
std::string Timing(const ProgressState& s, const char* elapsed_word) {
  std::string out = hlo::StrCat(FormatDuration(s.elapsed_seconds), elapsed_word);
  if (s.finished > 0 && s.finished < s.total) {
    const double left = s.elapsed_seconds / static_cast<double>(s.finished) *
                        static_cast<double>(s.total - s.finished);
    hlo::StrAppend(&out, ", about ", FormatDuration(left), " left");
  }
  return out;
}

std::string Counts(const ProgressState& s) {
  return hlo::StrCat(s.finished, "/", s.total,
                     s.failed ? hlo::StrCat("  ", s.failed, " failed") : "");
}

}  // namespace

std::string FormatDuration(double seconds) {
  const int64_t total = static_cast<int64_t>(std::max(0.0, std::round(seconds)));
  const int64_t h = total / 3600, m = total / 60 % 60, sec = total % 60;
  const std::string ss = hlo::StrCat(sec < 10 ? "0" : "", sec);
  if (h > 0) return hlo::StrCat(h, ":", m < 10 ? "0" : "", m, ":", ss);
  return hlo::StrCat(m, ":", ss);
}

std::string ProgressLine(const ProgressState& s, int width) {
  const std::string tail = hlo::StrCat(" ", Counts(s), "  ", Timing(s, ""));
  std::string name = s.current.empty() ? "" : "  " + s.current;
  // The bar takes what is left, between 10 and 40 columns; then the name is cut from the left.
  const int fixed = static_cast<int>(tail.size()) + 2;
  const int bar = std::clamp(width - fixed - static_cast<int>(name.size()), 10, 40);
  const int room = width - fixed - bar;
  if (static_cast<int>(name.size()) > room) {
    name = room > 5 ? "  ~" + s.current.substr(s.current.size() - (room - 3)) : "";
  }
  const int filled = s.total ? static_cast<int>(bar * s.finished / s.total) : bar;
  return "[" + std::string(filled, '#') + std::string(bar - filled, '.') + "]" + tail + name;
}

std::string HeartbeatLine(const ProgressState& s) {
  return hlo::StrCat("spmd-partition: ", s.finished, "/", s.total, " done",
                     s.failed ? hlo::StrCat(", ", s.failed, " failed") : "", ", ",
                     Timing(s, " elapsed"), s.current.empty() ? "" : "; working on " + s.current);
}

ProgressBar::ProgressBar(size_t total, bool enabled, bool heartbeat) : total_(total) {
  const bool tty = isatty(STDERR_FILENO);
  mode_ = !enabled ? Mode::kOff : tty ? Mode::kBar : heartbeat ? Mode::kHeartbeat : Mode::kOff;
}

void ProgressBar::Started(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  current_ = name;
}

ProgressState ProgressBar::State() {
  ProgressState s;
  s.finished = finished_;
  s.total = total_;
  s.failed = failed_;
  s.elapsed_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  if (finished_ < total_) {
    std::lock_guard<std::mutex> lock(mu_);
    s.current = current_;
  }
  return s;
}

void ProgressBar::Update(size_t finished, size_t failed) {
  finished_ = finished;
  failed_ = failed;
  if (mode_ == Mode::kBar) Draw();
  if (mode_ != Mode::kHeartbeat || finished_ >= total_) return;
  const Clock::time_point now = Clock::now();
  if (std::chrono::duration<double>(now - last_beat_).count() < kHeartbeatSeconds) return;
  last_beat_ = now;
  const std::string line = HeartbeatLine(State()) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void ProgressBar::Print(const std::string& text, std::FILE* stream) {
  Clear();
  std::fwrite(text.data(), 1, text.size(), stream);
  std::fflush(stream);
  Draw();
}

void ProgressBar::Finish() {
  Clear();
  mode_ = Mode::kOff;
}

void ProgressBar::Draw() {
  if (mode_ != Mode::kBar) return;
  const std::string line = "\r" + ProgressLine(State(), TerminalWidth() - 1);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void ProgressBar::Clear() {
  if (mode_ != Mode::kBar) return;
  std::fputs("\r\x1b[K", stderr);
}

}  // namespace tools

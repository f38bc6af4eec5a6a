// The bar is `\r[#########.........] 123/550  2 failed` sized to the terminal width
// (TIOCGWINSZ, 80 columns when unknown); `\r\x1b[K` erases it.
#include "tools/batch/progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "hlo/strings.h"

namespace tools {
namespace {

int TerminalWidth() {
  struct winsize ws {};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace

ProgressBar::ProgressBar(size_t total, bool enabled)
    : total_(total), shown_(enabled && isatty(STDERR_FILENO)) {}

void ProgressBar::Update(size_t finished, size_t failed) {
  finished_ = finished;
  failed_ = failed;
  Draw();
}

void ProgressBar::Print(const std::string& text, std::FILE* stream) {
  Clear();
  std::fwrite(text.data(), 1, text.size(), stream);
  std::fflush(stream);
  Draw();
}

void ProgressBar::Finish() {
  Clear();
  shown_ = false;
}

void ProgressBar::Draw() {
  if (!shown_) return;
  const std::string counts = hlo::StrCat(" ", finished_, "/", total_,
                                         failed_ ? hlo::StrCat("  ", failed_, " failed") : "");
  const int width = std::max<int>(10, TerminalWidth() - static_cast<int>(counts.size()) - 3);
  const int filled = total_ ? static_cast<int>(width * finished_ / total_) : width;
  std::string line = "\r[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
  line += counts;
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void ProgressBar::Clear() {
  if (!shown_) return;
  std::fputs("\r\x1b[K", stderr);
}

}  // namespace tools

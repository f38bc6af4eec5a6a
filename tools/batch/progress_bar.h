// A one-line progress bar on stderr for batch runs, drawn only when stderr is a terminal.
// Messages printed while it is shown go through Print, which clears the bar first and
// redraws it after, so the two never mix on one line.
#ifndef TOOLS_BATCH_PROGRESS_BAR_H_
#define TOOLS_BATCH_PROGRESS_BAR_H_

#include <cstddef>
#include <cstdio>
#include <string>

namespace tools {

class ProgressBar {
 public:
  // Shown when `enabled` and stderr is a terminal.
  ProgressBar(size_t total, bool enabled);
  bool shown() const { return shown_; }
  // Records progress and redraws: `finished` of total, `failed` of them failed.
  void Update(size_t finished, size_t failed);
  // Writes `text` to `stream` (stderr or stdout, which may be the same terminal), with the bar
  // cleared before and redrawn after when shown.
  void Print(const std::string& text, std::FILE* stream = stderr);
  // Removes the bar from the terminal.
  void Finish();

 private:
  void Draw();
  void Clear();

  size_t total_;
  size_t finished_ = 0;
  size_t failed_ = 0;
  bool shown_;
};

}  // namespace tools

#endif  // TOOLS_BATCH_PROGRESS_BAR_H_

// Threads with a large stack. Deeply nested programs (thousands of nested calls or
// conditionals) recurse once per level in the parser, the passes and the executor; a default
// 8 MiB thread stack overflows at a few thousand levels. The stack is reserved address space:
// only the pages a deep program touches are committed.
#ifndef HLO_LARGE_STACK_H_
#define HLO_LARGE_STACK_H_

#include <pthread.h>

#include <cstddef>
#include <functional>
#include <memory>

namespace hlo {

// 1 GiB: about 400,000 levels of nested calls at the partitioner's ~2.5 KiB per level.
inline constexpr size_t kLargeStackBytes = size_t{1} << 30;

// A joinable thread running `body` on a stack of `stack_bytes`. Like std::thread, the
// constructor throws std::system_error when no thread can be started; the destructor joins.
class LargeStackThread {
 public:
  explicit LargeStackThread(std::function<void()> body, size_t stack_bytes = kLargeStackBytes);
  LargeStackThread(LargeStackThread&& other) noexcept;
  LargeStackThread(const LargeStackThread&) = delete;
  LargeStackThread& operator=(const LargeStackThread&) = delete;
  LargeStackThread& operator=(LargeStackThread&&) = delete;
  ~LargeStackThread();

  void join();

 private:
  std::unique_ptr<std::function<void()>> body_;
  pthread_t thread_{};
  bool joinable_ = false;
};

// Runs `body` on a LargeStackThread and waits for it (a tool's main work).
int RunOnLargeStack(const std::function<int()>& body);

}  // namespace hlo

#endif  // HLO_LARGE_STACK_H_

#include "hlo/large_stack.h"

#include <system_error>
#include <utility>

namespace hlo {
namespace {

void* RunBody(void* arg) {
  (*static_cast<std::function<void()>*>(arg))();
  return nullptr;
}

}  // namespace

LargeStackThread::LargeStackThread(std::function<void()> body, size_t stack_bytes)
    : body_(std::make_unique<std::function<void()>>(std::move(body))) {
  pthread_attr_t attr;
  int err = pthread_attr_init(&attr);
  if (err == 0) err = pthread_attr_setstacksize(&attr, stack_bytes);
  if (err == 0) err = pthread_create(&thread_, &attr, &RunBody, body_.get());
  pthread_attr_destroy(&attr);
  if (err != 0) throw std::system_error(err, std::generic_category(), "pthread_create");
  joinable_ = true;
}

LargeStackThread::LargeStackThread(LargeStackThread&& other) noexcept
    : body_(std::move(other.body_)), thread_(other.thread_), joinable_(other.joinable_) {
  other.joinable_ = false;
}

LargeStackThread::~LargeStackThread() { join(); }

void LargeStackThread::join() {
  if (!joinable_) return;
  pthread_join(thread_, nullptr);
  joinable_ = false;
}

int RunOnLargeStack(const std::function<int()>& body) {
  int code = 1;
  try {
    LargeStackThread thread([&] { code = body(); });
    thread.join();
  } catch (const std::system_error&) {
    code = body();  // No thread to be had: run here, on the ordinary stack.
  }
  return code;
}

}  // namespace hlo

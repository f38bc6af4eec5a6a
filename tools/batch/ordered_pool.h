// Runs independent jobs on a few threads and hands their results back in job order, so what a
// batch prints and writes does not depend on the thread count.
#ifndef TOOLS_BATCH_ORDERED_POOL_H_
#define TOOLS_BATCH_ORDERED_POOL_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "hlo/large_stack.h"

namespace tools {

// Calls `work(i)` for every i in [0, n) on `threads` worker threads. On the calling thread,
// `emit(i, result)` is called for i = 0, 1, ... in order, each as soon as job i and all jobs
// before it have finished, and `progress(finished)` whenever the number of finished jobs has
// grown (in any order), and at least once a second while waiting (so a progress display's
// clock moves). A result is dropped once emitted. REQUIRES: threads >= 1.
template <typename Result>
void RunInOrder(size_t n, int threads, const std::function<Result(size_t)>& work,
                const std::function<void(size_t, Result&)>& emit,
                const std::function<void(size_t)>& progress) {
  std::vector<std::optional<Result>> results(n);
  std::mutex mu;
  std::condition_variable cv;
  size_t finished = 0;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      Result r = work(i);
      std::lock_guard<std::mutex> lock(mu);
      results[i] = std::move(r);
      ++finished;
      cv.notify_one();
    }
  };
  // Large stacks: a deeply nested module recurses once per level in every pass.
  std::vector<hlo::LargeStackThread> pool;
  for (size_t t = 0; t < std::min<size_t>(threads, n); ++t) pool.emplace_back(worker);
  size_t reported = 0;
  for (size_t i = 0; i < n; ++i) {
    std::optional<Result> ready;
    while (!ready) {
      size_t now = 0;
      bool woke = true;
      {
        std::unique_lock<std::mutex> lock(mu);
        woke = cv.wait_for(lock, std::chrono::seconds(1),
                           [&] { return results[i].has_value() || finished > reported; });
        now = finished;
        ready.swap(results[i]);
      }
      if (now > reported || !woke) progress(reported = now);
    }
    emit(i, *ready);
  }
  for (hlo::LargeStackThread& t : pool) t.join();
}

}  // namespace tools

#endif  // TOOLS_BATCH_ORDERED_POOL_H_

// mallopt calls behind TuneMallocForExecutor (see host_malloc.h for why each one).
#include "runtime/cpu/host_malloc.h"

#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace runtime {

void TuneMallocForExecutor() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, -1);
    mallopt(M_ARENA_MAX, 1);
  });
#endif
}

}  // namespace runtime
